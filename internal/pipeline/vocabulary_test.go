package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

const twinStrategy = `
  - name: omp-twin
    doc: a strategy added in YAML only (a copy of omp-raw)
    backend: omp-raw
    device: omptarget
    requires: [omp_target]
    tunables: {rows_per_team: 32, team_size: 32, vector_size: 1}
`

const twinFigures = `figures:
  - id: twin
    title: Twin
    paper: none
    kernel: axpby
    panel_by: none
    target: any
    variants:
      - {variant: omp-twin}
      - {variant: serial}
`

const twinClaims = `claims:
  - id: twin-faster
    paper: none
    quote: none
    statement: the twin is faster than serial
    type: order
    target: any
    kernels: [axpby]
    numerator: {variants: [omp-twin], families: [gcc]}
    denominator: {variants: [serial], families: [gcc]}
    margin: 0.1
`

// A strategy added to variants/strategies.yaml, with no Go change, shows in
// doctor, in a figure and in a claim: the report's names come from the
// project, recorded in run.json.
func TestStrategyAddedInYAMLOnly(t *testing.T) {
	root := t.TempDir()
	copyInputs(t, root)
	f, err := os.OpenFile(filepath.Join(root, "variants", "strategies.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(twinStrategy)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var log bytes.Buffer
	p, err := Load(context.Background(), Config{Root: root, Kernels: []string{"axpby"}, Toolchains: []string{"gcc-host"}, GPU: "0", Log: &log})
	require.NoError(t, err)
	var doctor bytes.Buffer
	Doctor(p, &doctor)
	assert.Contains(t, doctor.String(), "axpby.omp-twin.gcc-host")

	spec := filepath.Join(root, "templates", "report")
	require.NoError(t, os.WriteFile(filepath.Join(spec, "figures.yaml"), []byte(twinFigures), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(spec, "claims.yaml"), []byte(twinClaims), 0o644))

	// A results folder written by the results writer, as the run stage does.
	dir := filepath.Join(root, "results", "twin")
	w, err := results.Create(dir)
	require.NoError(t, err)
	tc := results.Toolchain{ID: "gcc-host", Family: "gcc", Version: "12.2.0", Command: "g++", Target: "host"}
	require.NoError(t, results.WriteRun(dir, results.Run{ID: "twin", Toolchains: []results.Toolchain{tc},
		Vocabulary: vocabulary.Of(p.Kernels, p.Strategies)}))
	for _, v := range []struct {
		variant, strategy string
		gbps              float64
	}{{"omp-twin", "omp-twin", 20}, {"serial", "serial", 5}} {
		for _, size := range []int64{1000, 100000} {
			require.NoError(t, w.Add(results.Record{Kind: results.KindKernel, Cell: "axpby." + v.variant + ".gcc-host",
				Kernel: "axpby", Variant: v.variant, Strategy: v.strategy, Toolchain: "gcc-host", Target: "host",
				Size: size, Reps: 1, MedianS: 1e-3, MinS: 1e-3, Bytes: v.gbps * 1e6, GBps: v.gbps, Verified: true}))
		}
	}
	require.NoError(t, w.Close())

	sum, err := report.Generate(dir, report.Options{SpecDir: spec})
	require.NoError(t, err)
	require.Len(t, sum.Figures, 1)
	assert.Empty(t, sum.Figures[0].Note, "the figure is drawn")
	require.Len(t, sum.Claims, 1)
	assert.Equal(t, claims.Reproduced, sum.Claims[0].Outcome, sum.Claims[0].Reason)
	assert.Equal(t, 4.0, sum.Claims[0].Value)
}

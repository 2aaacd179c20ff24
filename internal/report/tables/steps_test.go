package tables

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

const stepSpec = `steps:
  - kernel: snap_step
    sections: [snap_ui, snap_yi, snap_duarray, snap_deidrj]
    items: {name: atom, factor: 2, size_power: 3}
    per_steps: 100
`

// stepResults: snap_step at 10 cells (2000 atoms), 100 steps a call, two
// trials of one cell whose sections runs differ, and a cell without sections.
func stepResults() *results.Folder {
	rec := func(variant string, trial int, t float64, sec map[string]results.Section) results.Record {
		return results.Record{Kind: "kernel", Cell: "snap_step." + variant + ".nvcc-sm90", Kernel: "snap_step", Variant: variant,
			Toolchain: "nvcc-sm90", Size: 10, Trial: trial, MedianS: t, Bytes: 1e9, GBps: 1 / t, Verified: true,
			TimesS: []float64{t, t, t}, Sections: sec}
	}
	sec := func(ui float64) map[string]results.Section {
		return map[string]results.Section{
			"snap_ui": {Calls: 100, Seconds: ui}, "snap_yi": {Calls: 100, Seconds: 0.2},
			"snap_duarray": {Calls: 100, Seconds: 0.3}, "snap_deidrj": {Calls: 100, Seconds: 0.05},
		}
	}
	return &results.Folder{
		Run: results.Run{ID: "steps", Toolchains: []results.Toolchain{{ID: "nvcc-sm90", Family: "nvcc", Target: "sm_90"}}},
		Kernel: []results.Record{
			rec("kk-cuda-3lvl", 1, 0.6, sec(0.1)), rec("kk-cuda-3lvl", 2, 0.6, sec(0.3)),
			rec("kk-cuda-2lvl", 1, 1.2, nil),
		},
	}
}

// The grind time is the median time over steps x atoms; each kernel's time
// for 100 steps is its seconds per call (median over trials) times 100.
func TestStepTables(t *testing.T) {
	tf, err := reportspec.ParseTables("t.yaml", []byte(stepSpec), reporttest.Vocab(t))
	require.NoError(t, err)
	tabs := buildStepTables(tf.Steps, dataset.New(stepResults()))
	require.Len(t, tabs, 1)
	require.Len(t, tabs[0].Rows, 1, "a cell without sections has no steps")
	r := tabs[0].Rows[0]
	assert.EqualValues(t, 10, tabs[0].Size)
	assert.Equal(t, 2000.0, r.Items)
	assert.Equal(t, 100, r.P.Steps)
	assert.InDelta(t, 6.0, r.StepMS, 1e-12)
	assert.InDelta(t, 0.6/(100*2000)*1e3, r.Grind, 1e-15)
	assert.InDeltaSlice(t, []float64{0.2, 0.2, 0.3, 0.05}, r.Kernels, 1e-12)
	md := string(stepTablesMarkdown(tabs))
	assert.Contains(t, md, "### SNAP_STEP at size 10: grind time and the kernels' time for 100 steps")
	assert.Contains(t, md, "| kk-cuda-3lvl | nvcc-sm90 | 2000 | 100 | 6 | 0.003 | [0.003, 0.003] | 0.2 | 0.2 | 0.3 | 0.05 | 2 × 3 |")
	assert.Empty(t, stepTablesMarkdown(buildStepTables(tf.Steps, dataset.New(reporttest.MemResults()))), "no step records, no text")
}

func TestStepTablesBadSpec(t *testing.T) {
	_, err := reportspec.ParseTables("t.yaml", []byte(`steps:
  - kernel: snap_stepp
    sections: [snap_ui, snap_xi]
    items: {name: atom, factor: 0}
`), reporttest.Vocab(t))
	require.Error(t, err)
	for _, want := range []string{
		`t.yaml:2:13: step table "snap_stepp": unknown kernel "snap_stepp"`,
		`t.yaml:3:25: step table "snap_stepp" sections: unknown kernel "snap_xi"`,
		`step table "snap_stepp": per_steps must be positive`,
		`step table "snap_stepp": items needs a name, a positive factor and a size_power >= 0`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// The shipped tables.yaml has step tables for TestSNAP.
func TestShippedStepTables(t *testing.T) {
	tf, err := reportspec.LoadTables(filepath.Join(reporttest.SpecDir(t), "tables.yaml"), reporttest.Vocab(t))
	require.NoError(t, err)
	require.NotEmpty(t, tf.Steps)
	assert.Equal(t, "snap_step", tf.Steps[0].Kernel)
	assert.EqualValues(t, 100, tf.Steps[0].PerSteps)
	_, err = os.Stat(filepath.Join(reporttest.Root(t), "templates", "kernels", "snap_step.yaml"))
	assert.NoError(t, err)
}

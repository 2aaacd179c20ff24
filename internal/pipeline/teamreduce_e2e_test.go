package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The team- and league-level reductions, run: atx_team (a team per column,
// its threads' sums combined by team_thread_reduce) and sumsq_team (the
// same per row, then league_add into the kernel's result) under serial,
// omp-host and, through the OpenMP target host fallback with real team
// threads, kk-omp-b and omp-raw; every measurement verified against the
// float64 reference.
func TestCPUPipelineWithTeamReductions(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	testenv.Long(t) // builds and runs programs
	root := t.TempDir()
	copyInputs(t, root)
	kernels := []string{"atx_team", "sumsq_team"}
	variants := []string{"serial", "omp-host", "kk-omp-b", "omp-raw"}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: kernels, Toolchains: []string{"gcc-host"}, Variants: variants,
		Sizes: Sizes{"": {37, 333}}, Reps: 1, Warmup: 1, FlushL2: "off", Out: filepath.Join(root, "results", "reduce"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	raw, err := os.ReadFile(filepath.Join(root, "generated", "sumsq_team", "omp-raw.cpp"))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "pm_team_sum[0] += s;", "the threads' shares meet in the team's slot")
	assert.Contains(t, string(raw), "pm_league_sum[0] += s;", "each team adds to the league's sum")
	_, err = Build(context.Background(), p)
	require.NoError(t, err, log.String())
	dir, err := session.Run(context.Background(), p.Cfg)
	require.NoError(t, err, log.String())
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	verified := map[string]int{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			assert.True(t, r.Verified, "%s: %s", r.Cell, r.Error)
			if r.Verified {
				verified[r.Cell]++
			}
		}
	}
	for _, k := range kernels {
		for _, v := range variants {
			assert.Equal(t, 2, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host: both sizes verified", k, v)
		}
	}
	assert.False(t, strings.Contains(log.String(), "FAILED"), log.String())
}

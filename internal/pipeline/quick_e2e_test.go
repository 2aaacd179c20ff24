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
)

// The quick default end to end with g++ (minutes on 2 cores): paper 002's
// four kernels measured and verified at their sizes under every gcc-host
// variant, no failure, the cells that are off in one line, the CPU figures
// of AXPBY, DOT and SPMV drawn, and the summary at the end.
func TestQuickDefaultEndToEnd(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	var log bytes.Buffer
	out := filepath.Join(root, "results", "quick")
	cfg := Config{Root: root, Toolchains: []string{"gcc-host"}, GPU: "0", Out: out, Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, All(context.Background(), p), log.String())
	text := log.String()
	assert.NotContains(t, text, "FAILED")
	assert.NotContains(t, text, "  OFF ")
	assert.Equal(t, 1, strings.Count(text, "\n  off: "), text)
	assert.Contains(t, text, "omp-lambda with gcc-host")

	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	sizes := map[string]map[int64]bool{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			assert.True(t, r.Verified, "%s size %d: %s", r.Cell, r.Size, r.Error)
			if sizes[r.Cell] == nil {
				sizes[r.Cell] = map[int64]bool{}
			}
			sizes[r.Cell][r.Size] = true
		}
	}
	for _, k := range []string{"axpby", "dot", "spmv", "cgsolve"} {
		assert.Empty(t, sizes[k+".kk-omp-b-wo-num-teams.gcc-host"], "%s: a variation of a form is the wide suite's", k)
		for _, v := range []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw"} {
			want := 2 // CG-Solve's default set has two sizes: the smaller only
			if k == "cgsolve" {
				want = 1
			}
			assert.Len(t, sizes[k+"."+v+".gcc-host"], want, "%s.%s.gcc-host", k, v)
		}
	}
	for _, f := range []string{"cpu-axpby", "cpu-dot", "cpu-spmv", "cpu-cgsolve"} {
		assert.FileExists(t, filepath.Join(out, "figures", f+".svg"))
	}
	assert.Contains(t, text, "GB/s at the largest size measured, % of the best STREAM bandwidth, verified:")
	assert.Contains(t, text, "ran with warm caches", "the summary says the host caches were warm")
	assert.Regexp(t, `\nall: took [^\n]*\n$`, text, "all ends with the summary and its time")
}

package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
)

// outsiders are the kernels a user wrote from docs/kernels.md
// (internal/spec/testdata/outsiders, whose test loads them under the size
// rule).
var outsiders = []string{"gemv", "smooth_rows", "heat2d", "batched_matvec", "histogram"}

// The five outsider kernels, dropped into a copied tree beside a broken
// kernel description, go through `all` with PM_KERNELS naming them:
// generated, built with g++, run and verified; the broken one is reported
// and takes nothing with it.
func TestOutsiderKernelsEndToEnd(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	for _, name := range outsiders {
		src, err := os.ReadFile(filepath.Join("..", "spec", "testdata", "outsiders", name+".yaml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", name+".yaml"), src, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", "broken.yaml"), []byte(brokenKernel), 0o644))

	var log bytes.Buffer
	out := filepath.Join(root, "results", "outsiders")
	cfg := Config{Root: root, Kernels: outsiders, Toolchains: []string{"gcc-host"}, Variants: []string{"serial", "kk-omp-b"},
		Sizes: Sizes{"": {101}}, Reps: 2, Warmup: 1, RepSeconds: testRepSeconds, RepSecondsSet: true, Threads: 2, FlushL2: "off", Out: out, Log: &log}
	require.NoError(t, Stage(context.Background(), "all", cfg), log.String())
	assert.Contains(t, log.String(), "load: 1 kernel descriptions refused (broken), the other kernels go on:")

	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	verified := map[string]int{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			assert.True(t, r.Verified, "%s size %v: %s", r.Cell, r.Size, r.Error)
			if r.Verified {
				verified[r.Kernel]++
			}
		}
	}
	for _, name := range outsiders {
		assert.Positive(t, verified[name], "%s: no verified measurement", name)
	}
}

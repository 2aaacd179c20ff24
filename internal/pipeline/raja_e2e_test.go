package pipeline

import (
	"bytes"
	"context"
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

// The raja backend's programs against RAJA v2025.09.1 itself: LCALS kernels
// of three shapes (a stream, a sum, a 2-D hydro stencil) under rajalib-host-omp (RAJA::omp_parallel_for_exec, its sums
// RAJA::expt::Reduce) and, beside it, raja-host-omp (the same code against
// praja), built with g++ against the OpenMP install and run, every
// measurement verified against the float64 reference (docs/raja.md). It
// needs the install; without one it says where it looked.
func TestRajaLibraryHostCellsVerify(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	testenv.Long(t) // builds and runs 6 programs
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	tmp := t.TempDir()
	variants := []string{"rajalib-host-omp", "raja-host-omp"}
	kernels := []string{"pressure_calc", "inner_prod", "hydro_2d"}
	var log bytes.Buffer
	// generated/ is the checked-in rendering (TestGeneratedIsCurrent in
	// internal/render); the build and results go to a temporary folder.
	cfg := Config{Root: root, Kernels: kernels, Variants: variants, Toolchains: []string{"gcc-host"}, SizeSet: "ci", Suite: "full",
		Reps: 1, Warmup: 1, RepSeconds: testRepSeconds, RepSecondsSet: true, FlushL2: "off", BuildDir: filepath.Join(tmp, "build"), Out: filepath.Join(tmp, "results", "raja"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	skipWithoutInstall(t, p, "raja", "openmp", "gcc-host")
	for _, s := range p.Strategies {
		if s.Name == "rajalib-host" {
			require.Subset(t, s.Kernels, kernels, "rajalib-host's kernels")
		}
	}
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
			assert.Positive(t, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host: measured and verified", k, v)
		}
	}
	assert.False(t, strings.Contains(log.String(), "FAILED"), log.String())
}

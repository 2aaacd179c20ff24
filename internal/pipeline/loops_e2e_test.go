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

// Kernels written as sequential loop nests (docs/loopnest.md), dropped into
// templates/kernels: the mapper lowers them into the pattern tree, and they
// are generated in every backend, and built, run and verified on the CPU in
// the two that lower a team to threads there (the Kokkos layer's form b and
// direct OpenMP). row_recurrence carries a dependence along j: its mapping
// must keep j sequential (the rows go to league, team and vector) and the
// result must verify; col_recurrence's outer loop carries it and moves
// inside the lanes; gemv_acc's inner loop reduces on the vector level.
func TestCPUPipelineWithLoopNestKernels(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs the loop-nest kernels in several backends
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	kernels := []string{"row_recurrence", "col_recurrence", "gemv_acc", "colsum_reg"}
	for _, k := range kernels {
		src, err := os.ReadFile(filepath.Join("testdata", "loops", k+".yaml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", k+".yaml"), src, 0o644))
	}
	variants := []string{"kk-omp-b", "omp-raw"}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: kernels, Toolchains: []string{"gcc-host"}, Variants: variants,
		Sizes: Sizes{"": {37, 333}}, Reps: 1, Warmup: 1, FlushL2: "off", Out: filepath.Join(root, "results", "loops"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)

	rec := p.ByName["row_recurrence"]
	require.NotNil(t, rec.Pattern)
	assert.Contains(t, rec.Mapping, "loop j (")
	assert.Contains(t, rec.Mapping, "loop j -> sequential: sequential: carries flow")
	assert.Contains(t, rec.Mapping, "loop i -> league+team+vector")
	col := p.ByName["col_recurrence"]
	assert.Contains(t, col.Mapping, "loop j -> sequential: sequential: carries flow")
	assert.Contains(t, col.Mapping, "loop j: sequential, moved inside the mapped loops")
	assert.Contains(t, col.Mapping, "loop i -> league+team+vector")
	gemv := p.ByName["gemv_acc"]
	assert.Contains(t, gemv.Mapping, "loop j -> vector")
	assert.Contains(t, gemv.Mapping, "loop i -> league+team")
	assert.Contains(t, gemv.Kinds(), "thread_vector_reduce")
	colsum := p.ByName["colsum_reg"]
	assert.Contains(t, colsum.Mapping, "keep sum's accumulation into y[i] (")
	assert.Contains(t, colsum.Mapping, ") in register pm_acc_0 across loop j: ")

	require.NoError(t, Generate(p))
	serial, err := os.ReadFile(filepath.Join(root, "generated", "row_recurrence", "serial.cpp"))
	require.NoError(t, err)
	assert.Contains(t, string(serial), "for (int64_t j = 1; j < m; ++j) {", "j stays a sequential loop")
	serial, err = os.ReadFile(filepath.Join(root, "generated", "colsum_reg", "serial.cpp"))
	require.NoError(t, err)
	assert.Contains(t, string(serial), "double pm_acc_0 = 0;")
	assert.Contains(t, string(serial), "pm_acc_0 += A[j * n + i] * x[j];")
	assert.Contains(t, string(serial), "y[i] = pm_acc_0;")
	for _, k := range kernels {
		assert.FileExists(t, filepath.Join(root, "generated", k, "kk-cuda-3lvl.cu"))
		assert.FileExists(t, filepath.Join(root, "generated", k, "direct-ompx.cpp"))
	}
	_, err = Build(context.Background(), p)
	require.NoError(t, err, log.String())
	dir, err := session.Run(context.Background(), p.Cfg)
	require.NoError(t, err, log.String())
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	verified := map[string]bool{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			assert.True(t, r.Verified, "%s: %s", r.Cell, r.Error)
			verified[r.Cell] = r.Verified
		}
	}
	for _, k := range kernels {
		for _, v := range variants {
			assert.True(t, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host not verified", k, v)
		}
	}
	assert.False(t, strings.Contains(log.String(), "FAILED"), log.String())
}

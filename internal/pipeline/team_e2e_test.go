package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The GPU lowerings of stencil_tiled (scratch, barrier, 2-D team range,
// vector loops, atomics) compile with the OpenMP offload compilers installed
// here (they run on a GPU host: docs/gpu.md): KK-OMP with level 0 in
// team-shared memory (clang 19) and in omp_target_alloc memory (clang 16),
// OMP-raw and direct-ompx. Every other GPU strategy's team lowering is CI's
// GPU sample's (gpu-quick).
func TestTeamExtensionsCompileForGPUs(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // GPU compile checks take minutes
	want := map[string][]string{
		"clang19-sm90": {"kk-omp-b", "direct-ompx"},
		"clang16-sm90": {"kk-omp-b", "omp-raw"},
	}
	root := t.TempDir()
	copyInputs(t, root)
	if _, err := os.Stat("../../.toolchains"); err == nil {
		abs, _ := filepath.Abs("../../.toolchains")
		require.NoError(t, os.Symlink(abs, filepath.Join(root, ".toolchains")))
	}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: []string{"stencil_tiled"}, Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	var tcs []string
	for _, tc := range p.Toolchains {
		if _, ok := want[tc.ID]; ok && tc.Found() && tc.Broken == "" {
			tcs = append(tcs, tc.ID)
		}
	}
	if len(tcs) == 0 {
		t.Skip("no GPU toolchain installed")
	}
	require.NoError(t, Generate(p))
	// Each toolchain builds its own variants (one build folder), not every
	// variant with every toolchain.
	built := 0
	for _, tc := range tcs {
		cfg.Toolchains, cfg.Variants = []string{tc}, want[tc]
		p, err = Load(context.Background(), cfg)
		require.NoError(t, err)
		res, err := Build(context.Background(), p)
		require.NoError(t, err, log.String())
		for _, r := range res {
			if r.Status == build.Skipped {
				continue
			}
			if assert.True(t, r.OK(), "%s: %s", r.Cell.ID, r.Reason) {
				built++
			}
		}
	}
	t.Logf("%d GPU cells compiled with %s", built, strings.Join(tcs, ", "))
	assert.Positive(t, built)
}

// A kernel one backend cannot render (omp-class keeps the trip count in a
// data member, so a loop end written as an expression cannot be lowered) is
// off in that backend with the reason, in doctor and the build report; every
// other program, of this kernel and of the others, is generated.
func TestUnrenderableCellIsOff(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	copyInputs(t, root)
	src, err := os.ReadFile("testdata/scale.yaml")
	require.NoError(t, err)
	shorter := strings.Replace(string(src), "    end: n\n", "    end: n - 1\n", 1)
	require.NotEqual(t, string(src), shorter)
	require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", "scale.yaml"), []byte(shorter), 0o644))
	var log bytes.Buffer
	p, err := Load(context.Background(), Config{Root: root, Kernels: []string{"axpby"}, Toolchains: []string{"gcc-host"},
		Variants: []string{"omp-class"}, Log: &log})
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	assert.Contains(t, log.String(), "off generated/scale/omp-class.cpp: cannot render: ")
	assert.NoFileExists(t, filepath.Join(root, "generated", "scale", "omp-class.cpp"))
	for _, f := range []string{"scale/serial.cpp", "scale/omp-raw.cpp", "scale/kk-cuda-3lvl.cu", "axpby/omp-class.cpp", "spmv/kk-omp-a.cpp"} {
		assert.FileExists(t, filepath.Join(root, "generated", f))
	}
	why := `cannot render: ` + filepath.Join(root, "templates", "kernels", "scale.yaml") +
		`:13:3: omp-class keeps the trip count in a data member: the loop end "n - 1" must be a scalar parameter`

	p, err = Load(context.Background(), Config{Root: root, Kernels: []string{"scale"}, Toolchains: []string{"gcc-host"},
		Variants: []string{"omp-class"}, Log: &log})
	require.NoError(t, err)
	var doc bytes.Buffer
	Doctor(p, &doc)
	assert.Contains(t, doc.String(), "off   scale.omp-class.gcc-host: "+why)
	log.Reset()
	res, err := Build(context.Background(), p)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, build.Skipped, res[0].Status)
	assert.Equal(t, why, res[0].Reason)
	assert.Contains(t, log.String(), "  OFF scale.omp-class.gcc-host: "+why)
}

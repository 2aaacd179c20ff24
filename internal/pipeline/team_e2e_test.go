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

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The kernels of the team extensions (team scratch, a team barrier, a
// two-dimensional team-thread range, thread-vector loops and an atomic sum in
// stencil_tiled; a two-dimensional range and atomics in stencil_md), end to
// end on the CPU: generated in every backend that lowers them, built, run and
// verified against the float64 reference; the backends that cannot lower
// them are off with the reason.
func TestCPUPipelineWithTeamExtensions(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs two kernels in seven backends
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: []string{"stencil_tiled", "stencil_md"}, Toolchains: []string{"gcc-host"},
		Variants: []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw", "omp-lambda", "omp-class"},
		Sizes:    Sizes{"": {37}}, Reps: 1, Warmup: 1, FlushL2: "off", Out: filepath.Join(root, "results", "team"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	res, err := Build(context.Background(), p)
	require.NoError(t, err, log.String())
	dir, err := session.Run(context.Background(), p.Cfg)
	require.NoError(t, err, log.String())
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	verified := map[string]bool{}
	for _, r := range recs {
		if r.Kind == "kernel" {
			assert.True(t, r.Verified, "%s: %s", r.Cell, r.Error)
			verified[r.Cell] = r.Verified
		}
	}
	for _, k := range []string{"stencil_tiled", "stencil_md"} {
		for _, v := range []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw"} {
			assert.True(t, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host not verified", k, v)
		}
		for _, v := range []string{"direct-ompx", "kk-ompx-shfl", "kk-cuda-3lvl"} {
			assert.FileExists(t, filepath.Join(root, "generated", k, v+map[bool]string{true: ".cu", false: ".cpp"}[strings.HasPrefix(v, "kk-cuda")]))
		}
	}
	off := map[string]string{}
	for _, r := range res {
		if r.Status == build.Skipped {
			off[r.Cell.ID] = r.Reason
		}
	}
	assert.Equal(t, "backend omp-lambda does not lower team_barrier, team_scratch, team_thread_for, thread_vector_for, thread_vector_reduce", off["stencil_tiled.omp-lambda.gcc-host"])
	assert.Equal(t, "backend omp-class does not lower mdrange_for", off["stencil_md.omp-class.gcc-host"])
}

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
	var tcs, variants []string
	for _, tc := range p.Toolchains {
		if vs, ok := want[tc.ID]; ok && tc.Found() && tc.Broken == "" {
			tcs = append(tcs, tc.ID)
			variants = append(variants, vs...)
		}
	}
	if len(tcs) == 0 {
		t.Skip("no GPU toolchain installed")
	}
	cfg.Toolchains, cfg.Variants = tcs, variants
	p, err = Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	res, err := Build(context.Background(), p)
	require.NoError(t, err, log.String())
	built := 0
	for _, r := range res {
		if r.Status == build.Skipped {
			continue
		}
		if !assert.True(t, r.OK(), "%s: %s", r.Cell.ID, r.Reason) {
			continue
		}
		if !strings.Contains(strings.Join(want[r.Cell.Toolchain.ID], " "), r.Cell.Variant.ID) {
			continue
		}
		built++
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

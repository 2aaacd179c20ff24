package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// kokkosHostInstall is where the Kokkos 4.6.01 install of the OpenMP
// backend for gcc-host lies (docs/kokkos.md): a CMake prefix with its
// install.json.
const kokkosHostInstall = ".toolchains/libraries/kokkos-4.6.01/openmp-gcc-host"

// The kokkos backend's user code against real Kokkos (kokkos-openmp, the
// library's OpenMP backend with g++), end to end on the CPU: one kernel of
// each family that has a Kokkos form (002's four, the team extensions,
// TestSNAP, a HOMMEXX operator, a mapped kernel) built against the install,
// run and verified against the float64 reference, as the kk-omp cells are.
func TestKokkosLibraryPipelineOnTheCPU(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs eight programs against the library
	install, err := filepath.Abs(filepath.Join("..", "..", kokkosHostInstall))
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(install, "install.json")); err != nil {
		t.Skipf("no Kokkos install for kokkos-openmp with gcc-host (%s/install.json): the library installer makes it (docs/kokkos.md)", kokkosHostInstall)
	}
	root := t.TempDir()
	copyInputs(t, root)
	abs, err := filepath.Abs(filepath.Join("..", "..", ".toolchains"))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(root, ".toolchains")))
	kernels := []string{"axpby", "dot", "spmv", "cgsolve", "stencil_tiled", "snap_ui", "hommexx_laplace_simple", "atx_mapped"}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: kernels, Toolchains: []string{"gcc-host"}, Variants: []string{"kokkos-openmp"},
		Reps: 1, Warmup: 1, Threads: 2, Out: filepath.Join(root, "results", "kokkos"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	_, err = Build(context.Background(), p)
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
	for _, k := range kernels {
		assert.True(t, verified[k+".kokkos-openmp.gcc-host"], "%s.kokkos-openmp.gcc-host not verified", k)
	}
}

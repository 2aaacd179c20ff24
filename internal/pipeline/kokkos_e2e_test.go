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

// The kokkos backend's user code against real Kokkos (kokkos-openmp, the
// library's OpenMP backend with g++), end to end on the CPU: one kernel of
// each family that has a Kokkos form (002's, a range reduction and a team
// one; the team extensions; TestSNAP; a HOMMEXX operator; a mapped kernel)
// built against the install, run and verified against the float64
// reference, as the kk-omp cells are.
func TestKokkosLibraryPipelineOnTheCPU(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs six programs against the library
	root := t.TempDir()
	copyInputs(t, root)
	abs, err := filepath.Abs(filepath.Join("..", "..", ".toolchains"))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(root, ".toolchains")))
	kernels := []string{"dot", "spmv", "stencil_tiled", "snap_ui", "hommexx_laplace_simple", "atx_mapped"}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: kernels, Toolchains: []string{"gcc-host"}, Variants: []string{"kokkos-openmp"},
		Reps: 1, Warmup: 1, RepSeconds: testRepSeconds, RepSecondsSet: true, Threads: 2, FlushL2: "off", Out: filepath.Join(root, "results", "kokkos"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	skipWithoutInstall(t, p, "kokkos", "openmp", "gcc-host")
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

// skipWithoutInstall skips a test that needs the install of library
// (backend) for the toolchain when the project has none, saying why (the
// library room's reason, with the command that installs it).
func skipWithoutInstall(t *testing.T, p *Project, name, backend, toolchainID string) {
	t.Helper()
	for _, tc := range p.Toolchains {
		if l := p.Libraries.Find(name, backend, tc); tc.ID == toolchainID && l.Install == nil {
			t.Skipf("no %s %s install for %s (the library installer makes it; docs/libraries.md): %s", name, backend, toolchainID, l.Why)
		}
	}
}

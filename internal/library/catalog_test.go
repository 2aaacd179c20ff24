package library

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The project's own libraries file loads against its toolchains, and every
// backend names the toolchains the installs are made for.
func TestProjectLibrariesFile(t *testing.T) {
	root := filepath.Join("..", "..")
	tcs, err := toolchain.Load(layout.Path(root, layout.Toolchains), root)
	require.NoError(t, err)
	var ids []string
	for _, tc := range tcs {
		ids = append(ids, tc.ID)
	}
	c, err := Load(layout.Path(root, layout.Libraries), ids)
	require.NoError(t, err)
	assert.Equal(t, []string{"kokkos", "raja"}, c.Names())
	kk, raja := c.Library("kokkos"), c.Library("raja")
	assert.Equal(t, "4.6.01", kk.Version)
	assert.Equal(t, "kokkos-4.6.01.tar.xz", kk.Source)
	assert.Equal(t, "raja-v2025.09.1-with-blt-camp.tar.xz", raja.Source)
	assert.Equal(t, []string{"openmp", "cuda", "omptarget"}, kk.BackendNames())
	assert.Equal(t, []string{"gcc-host"}, kk.Backend("openmp").Toolchains)
	assert.Equal(t, []string{"nvcc-sm90"}, kk.Backend("cuda").Toolchains)
	assert.Equal(t, []string{"clang19-sm90", "clang22-sm90", "clang19-gfx90a"}, kk.Backend("omptarget").Toolchains)
	assert.Equal(t, []string{"clang19-sm90", "clang22-sm90"}, raja.Backend("omptarget").Toolchains)
	assert.Equal(t, []string{"nvcc-sm90"}, raja.Backend("cuda").Toolchains)
	assert.Len(t, kk.Fixes, 4)
	assert.Len(t, raja.Fixes, 1)
	// Every fix of CUDA 13's calls is a CUDART_VERSION branch that keeps the
	// old call; nvcc_wrapper's default arch is one CUDA 13 still has.
	assert.Equal(t, "default_arch=\"sm_90\"\n", kk.Fixes[0].Replace)
	for _, f := range append(kk.Fixes[1:], raja.Fixes...) {
		assert.Contains(t, f.Replace, "#if CUDART_VERSION >= 13000", f.Name)
		assert.Contains(t, f.Replace, f.Find, f.Name)
	}
	// The smoke program written once serves every Kokkos backend.
	assert.Equal(t, kk.Backend("openmp").Smoke, kk.Backend("cuda").Smoke)
	assert.Contains(t, kk.Backend("cuda").Smoke, "Kokkos::initialize")
}

// Every problem of a bad file is reported at once, positioned (golden).
func TestLoadBadFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "bad.yaml"), []string{"gcc-host", "nvcc-sm90"})
	require.Error(t, err)
	golden(t, filepath.Join("testdata", "bad.golden"), err.Error()+"\n")
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "differs from %s; rerun with -update if intended", file)
}

// A strategy's library: names a library and one of its backends; a typo
// is an error at the strategy's line with the closest name.
func TestCheckRef(t *testing.T) {
	c := testCatalog(t)
	pos := diag.Pos{File: "variants/strategies.yaml", Line: 12, Col: 14}
	assert.NoError(t, c.CheckRef("kokkos", "openmp", pos))
	err := c.CheckRef("kokos", "openmp", pos)
	require.Error(t, err)
	assert.Equal(t, `variants/strategies.yaml:12:14: unknown library "kokos"; did you mean "kokkos"? (known: kokkos; see variants/libraries.yaml)`, err.Error())
	err = c.CheckRef("kokkos", "openmpp", pos)
	require.Error(t, err)
	assert.Equal(t, `variants/strategies.yaml:12:14: library kokkos has no backend "openmpp"; did you mean "openmp"? (known: openmp, cuda)`, err.Error())
}

const testFile = `libraries:
  - name: kokkos
    version: 4.6.01
    source: kokkos-4.6.01.tar.xz
    sha256: 60dc4e7b3f6f9a560d598a2cfb48c3a15a686756c62f3ff6412031eda52a5949
    dir: kokkos-4.6.01
    capabilities:
      - {name: kk_old, when: ">= 4.0", source: test}
      - {name: kk_new, when: ">= 4.7", source: test}
    backends:
      - name: openmp
        toolchains: [gcc-host]
        compile_flags: ["-I${PREFIX}/include"]
        smoke: int main() {}
      - name: cuda
        toolchains: [nvcc-sm90]
        smoke: int main() {}
`

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := Parse("libraries.yaml", []byte(testFile), nil)
	require.NoError(t, err)
	return c
}

// A library's version gates become rows of the capability table, which no
// compiler family meets; an install has those its version meets.
func TestLibraryCapabilities(t *testing.T) {
	c := testCatalog(t)
	tb := &toolchain.Table{}
	c.AddCapabilities(tb)
	assert.True(t, tb.Has("kk_new"))
	assert.Equal(t, "kokkos >= 4.7", tb.Need("kk_new", "gcc"))
	assert.Equal(t, []string{"kk_old"}, c.Library("kokkos").Caps("4.6.01"))
	assert.Equal(t, []string{"kk_new", "kk_old"}, c.Library("kokkos").Caps("4.7.0"))
}

func TestSelection(t *testing.T) {
	c := testCatalog(t)
	found := func(id string) *toolchain.Toolchain { return &toolchain.Toolchain{ID: id} }
	tcs := []*toolchain.Toolchain{found("gcc-host"), found("nvcc-sm90")}
	ids := func(only ...string) []string {
		jobs, err := Jobs(c, tcs, only)
		require.NoError(t, err)
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID())
		}
		return out
	}
	assert.Equal(t, []string{"kokkos/openmp/gcc-host", "kokkos/cuda/nvcc-sm90"}, ids())
	assert.Equal(t, []string{"kokkos/openmp/gcc-host", "kokkos/cuda/nvcc-sm90"}, ids("kokkos"))
	assert.Equal(t, []string{"kokkos/openmp/gcc-host", "kokkos/cuda/nvcc-sm90"}, ids("kokkos/cuda", "kokkos/openmp/gcc-host"))
	assert.Equal(t, []string{"kokkos/cuda/nvcc-sm90"}, ids("*/*/nvcc-*"))
	_, err := Jobs(c, tcs, []string{"kokkos/openmp/gcc-hots"})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `PM_LIBRARIES: "kokkos/openmp/gcc-hots" selects no install; did you mean "kokkos/openmp/gcc-host"?`), err.Error())
}

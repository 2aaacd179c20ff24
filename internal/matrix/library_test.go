package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	version "github.com/hashicorp/go-version"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A library strategy's cell is off, saying which install is missing and the
// command that makes it, until install.json is there; a toolchain its
// backend does not install for makes no cell; the other strategies' cells
// do not change; a library's version gate is required like a compiler's.
func TestLibraryGate(t *testing.T) {
	cat, err := library.Parse("libraries.yaml", []byte(`libraries:
  - name: kokkos
    version: 4.6.01
    source: kokkos-4.6.01.tar.xz
    sha256: 60dc4e7b3f6f9a560d598a2cfb48c3a15a686756c62f3ff6412031eda52a5949
    dir: kokkos-4.6.01
    capabilities:
      - {name: kk_new, when: ">= 4.7", source: test}
      - {name: kk_old, when: ">= 4.0", source: test}
    backends:
      - {name: openmp, toolchains: [gcc-host], smoke: "int main() {}"}
`), []string{"gcc-host", "clang19-host"})
	require.NoError(t, err)
	caps := &toolchain.Table{}
	cat.AddCapabilities(caps)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: kk-lib
    backend: kokkos
    device: host
    library: {name: kokkos, backend: openmp}
  - name: kk-lib-new
    backend: kokkos
    device: host
    requires: [kk_new]
    library: {name: kokkos, backend: openmp}
  - name: kk-lib-old
    backend: kokkos
    device: host
    requires: [kk_old]
    library: {name: kokkos, backend: openmp}
  - name: serial
    backend: serial
    device: host
`), 0o644))
	ss, err := Load(f, caps)
	require.NoError(t, err)
	v12 := version.Must(version.NewVersion("12.2.0"))
	gcc := &toolchain.Toolchain{ID: "gcc-host", Family: "gcc", Target: "host", Devices: []string{"host"}, Version: v12, Path: "/usr/bin/g++"}
	clang := &toolchain.Toolchain{ID: "clang19-host", Family: "llvm", Target: "host", Devices: []string{"host"}, Version: version.Must(version.NewVersion("19.1.7"))}
	dir := t.TempDir()
	set := &library.Set{Catalog: cat, Dir: dir}
	k := &spec.Kernel{Name: "axpby"}
	cells := func() map[string]*Cell {
		out := map[string]*Cell{}
		for _, c := range Expand([]*spec.Kernel{k}, Variants(ss), []*toolchain.Toolchain{gcc, clang}, caps,
			func(*spec.Kernel, *Variant) string { return "" }, false, set) {
			out[c.ID] = c
		}
		return out
	}
	byID := cells()
	assert.NotContains(t, byID, "axpby.kk-lib.clang19-host", "the backend does not install for clang19-host: no cell")
	assert.Contains(t, byID, "axpby.serial.clang19-host")
	assert.True(t, byID["axpby.serial.gcc-host"].On)
	off := byID["axpby.kk-lib.gcc-host"]
	require.NotNil(t, off)
	assert.False(t, off.On)
	assert.Nil(t, off.Library)
	prefix := filepath.Join(dir, "kokkos-4.6.01", "openmp-gcc-host")
	assert.Equal(t, "library kokkos 4.6.01 (backend openmp) for gcc-host is not installed (no "+filepath.Join(prefix, "install.json")+
		"); install it: PM_LIBRARIES=kokkos/openmp/gcc-host PM_DEPS=<folder of the source releases> go run mage.go libraries"+
		" (or: portmatrix -libraries kokkos/openmp/gcc-host -deps <folder> libraries)", off.Reason)

	in := library.Install{Name: "kokkos", Version: "4.6.01", Backend: "openmp", Toolchain: "gcc-host", Compiler: "/usr/bin/g++", CompilerVersion: "12.2.0",
		SHA256:       "60dc4e7b3f6f9a560d598a2cfb48c3a15a686756c62f3ff6412031eda52a5949",
		CompileFlags: []string{"-I" + prefix + "/include"}, LinkFlags: []string{prefix + "/lib/libkokkoscore.a", "-ldl"}}
	b, _ := json.Marshal(in)
	require.NoError(t, os.MkdirAll(prefix, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prefix, "install.json"), b, 0o644))
	byID = cells()
	on := byID["axpby.kk-lib.gcc-host"]
	assert.True(t, on.On, on.Reason)
	require.NotNil(t, on.Library)
	assert.Equal(t, prefix, on.Library.Prefix)
	assert.Equal(t, []string{"kk_old"}, on.Library.Caps)
	assert.True(t, byID["axpby.kk-lib-old.gcc-host"].On)
	assert.Equal(t, "missing kk_new (needs kokkos >= 4.7, have kokkos 4.6.01)", byID["axpby.kk-lib-new.gcc-host"].Reason)

	// An install made with another compiler version is not taken.
	gcc.Version = version.Must(version.NewVersion("13.1.0"))
	assert.Contains(t, cells()["axpby.kk-lib.gcc-host"].Reason,
		"library kokkos 4.6.01 (backend openmp) for gcc-host was installed with gcc 12.2.0, the toolchain is now gcc 13.1.0; reinstall it: PM_LIBRARIES=kokkos/openmp/gcc-host")
}

// A library variant names the layer variants it stands for (the strategy's
// twins and its knob value's); a twin that names no variant, a library
// variant, or twins on a strategy without a library are errors at the name.
func TestTwins(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: kk-cuda
    backend: kokkos
    device: cuda
    twins: [kk-omp]
    knobs:
      - name: levels
        values:
          - {value: "3", suffix: -3lvl}
          - {value: "2", suffix: -2lvl}
  - name: kokkos-cuda
    backend: kokkos
    device: cuda
    library: {name: kokkos, backend: cuda}
    twins: [kk-cuda-3lvl]
    knobs:
      - name: levels
        values:
          - {value: "3", suffix: -3lvl}
          - {value: "2", suffix: -2lvl, twins: [kk-cuda-2lvl, kk-cuda-2lv, kokkos-cuda-3lvl]}
`), 0o644))
	ss, err := Load(f, caps)
	require.Error(t, err)
	assert.Equal(t, f+`:5:13: twins: strategy "kk-cuda" builds against no library (library:), so it stands for no layer variant
`+f+`:20:63: twin "kk-cuda-2lv" of strategy "kokkos-cuda" names no variant; did you mean "kk-cuda-2lvl"?
`+f+`:20:76: twin "kokkos-cuda-3lvl" of strategy "kokkos-cuda" is a library strategy's variant: a twin is a variant of the project's own layer`, err.Error())
	byID := map[string]*Variant{}
	for _, v := range Variants(ss) {
		byID[v.ID] = v
	}
	assert.Equal(t, []string{"kk-cuda-3lvl"}, byID["kokkos-cuda-3lvl"].Twins)
	assert.Equal(t, []string{"kk-cuda-3lvl", "kk-cuda-2lvl", "kk-cuda-2lv", "kokkos-cuda-3lvl"}, byID["kokkos-cuda-2lvl"].Twins)

	// The repository's: every library variant stands for a layer variant.
	ss, err = Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	vs := Variants(ss)
	for _, v := range vs {
		if v.Strategy.Library != nil {
			assert.NotEmpty(t, v.Twins, v.ID)
		}
	}
	// Read the other way (results.Vocabulary.TwinsOf in the report), in variant order.
	tw := map[string][]string{}
	for _, v := range vs {
		for _, t := range v.Twins {
			tw[t] = append(tw[t], v.ID)
		}
	}
	assert.Equal(t, []string{"kokkos-omptarget", "kokkos-openmp"}, tw["kk-omp-b"])
	assert.Equal(t, []string{"kokkos-omptarget"}, tw["kk-omp-a"])
	assert.Equal(t, []string{"kokkos-cuda-3lvl"}, tw["kk-cuda-3lvl"])
	assert.Equal(t, []string{"rajalib-omp", "rajalib-omp-nt"}, tw["raja-omp-teams"])
	assert.Equal(t, []string{"rajalib-cuda", "rajalib-cuda-async"}, tw["raja-cuda"])
	assert.Equal(t, []string{"rajalib-host-omp"}, tw["raja-host-omp"])
	assert.Equal(t, []string{"kokkos-omptarget-l1"}, tw["kk-omp-l1-b"])
	assert.Empty(t, tw["kk-ompx"], "Kokkos has no kernel-mode backend")
}

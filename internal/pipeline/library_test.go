package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// libraryProbe is a throwaway strategy of this test only: the serial
// program, built against the Kokkos host install.
const libraryProbe = `
  - name: lib-probe
    doc: the serial program built against an install (a test's strategy)
    backend: serial
    device: host
    kernels: [axpby]
    library: {name: kokkos, backend: openmp}
`

// A library strategy through the pipeline: doctor lists the install as
// missing and the cell off with the command that installs it; with an
// install record there (a fake install: its flags define a macro and link
// libm), the cell is on, built with the install's flags, and the manifest
// records the install; a strategy naming no known library is refused at
// its line.
func TestLibraryStrategyThroughThePipeline(t *testing.T) {
	testenv.Long(t) // loads, renders and builds a copied tree: about 30 s on 2 busy cores
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	strategies := filepath.Join(root, "variants", "strategies.yaml")
	b, err := os.ReadFile(strategies)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(strategies, append(b, libraryProbe...), 0o644))
	cfg := Config{Root: root, Kernels: []string{"axpby"}, Variants: []string{"lib-probe"}, Toolchains: []string{"gcc-host"}}

	var log bytes.Buffer
	cfg.Log = &log
	cfg.BuildDir = filepath.Join(root, "build")
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	Doctor(p, &log)
	prefix := filepath.Join(root, ".toolchains", "libraries", "kokkos-4.6.01", "openmp-gcc-host")
	assert.Contains(t, log.String(), "libraries:\n")
	assert.Contains(t, log.String(), "  kokkos/openmp/gcc-host           missing: library kokkos 4.6.01 (backend openmp) for gcc-host is not installed (no "+
		filepath.Join(prefix, "install.json")+"); install it: PM_LIBRARIES=kokkos/openmp/gcc-host")
	assert.Contains(t, log.String(), "  off   axpby.lib-probe.gcc-host: library kokkos 4.6.01 (backend openmp) for gcc-host is not installed")
	assert.NotContains(t, log.String(), "axpby.lib-probe.clang19-host", "no cell with a toolchain the backend does not list")

	gcc := p.Toolchains[0]
	for _, tc := range p.Toolchains {
		if tc.ID == "gcc-host" {
			gcc = tc
		}
	}
	require.True(t, gcc.Found(), gcc.Missing)
	kk := p.Libraries.Catalog.Library("kokkos")
	in := library.Install{Name: "kokkos", Version: kk.Version, Backend: "openmp", Toolchain: "gcc-host", Compiler: gcc.Path,
		CompilerVersion: gcc.VersionString(), SHA256: kk.SHA256, CompileFlags: []string{"-DPM_LIBRARY_PROBE=1"}, LinkFlags: []string{"-lm"}}
	jb, _ := json.Marshal(in)
	require.NoError(t, os.MkdirAll(prefix, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prefix, library.InstallFile), jb, 0o644))

	log.Reset()
	require.NoError(t, Generate(p))
	_, err = Build(context.Background(), p) // the cells are expanded again: the install is found now
	require.NoError(t, err, log.String())
	m, err := build.ReadManifest(cfg.BuildDir)
	require.NoError(t, err)
	e, ok := m.Entry("axpby.lib-probe.gcc-host")
	require.True(t, ok)
	assert.Equal(t, build.Built, e.Status, e.Reason)
	require.NotNil(t, e.Library)
	assert.Equal(t, build.Library{Name: "kokkos", Version: "4.6.01", Backend: "openmp", Prefix: prefix, Compiler: gcc.VersionString()}, *e.Library)
	cmdLog, err := os.ReadFile(filepath.Join(cfg.BuildDir, e.Log))
	require.NoError(t, err)
	first := strings.SplitN(string(cmdLog), "\n", 2)[0]
	assert.Contains(t, first, "-DPM_LIBRARY_PROBE=1 -I")
	assert.True(t, strings.HasSuffix(first, ".cpp -lm"), first)

	// A typo in a strategy's library is refused at its line.
	require.NoError(t, os.WriteFile(strategies, append(b, strings.Replace(libraryProbe, "name: kokkos,", "name: kokos,", 1)...), 0o644))
	_, err = Load(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown library "kokos"; did you mean "kokkos"? (known: kokkos, raja; see variants/libraries.yaml)`)
}

package build

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

func cells(t *testing.T, root string) []*matrix.Cell {
	tc := &toolchain.Toolchain{ID: "fake", Family: "gcc", Path: "fakecc", Identity: "fakecc 1", Target: "host",
		Devices: []string{"host"}, Flags: []string{"-O2"}, Caps: map[string]bool{"openmp": true}}
	s := &matrix.Strategy{Name: "serial", Backend: "serial", Device: "host", Lang: "cpp"}
	var out []*matrix.Cell
	for _, k := range []string{"good", "bad", "alsogood"} {
		kern := &spec.Kernel{Name: k}
		v := matrix.Variants([]*matrix.Strategy{s})[0]
		c := &matrix.Cell{ID: matrix.CellID(k, v.ID, tc.ID), Kernel: kern, Variant: v, Toolchain: tc, On: true}
		src := filepath.Join(root, c.Source())
		require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o755))
		require.NoError(t, os.WriteFile(src, []byte("// "+k+"\n"), 0o644))
		out = append(out, c)
	}
	off := &matrix.Cell{ID: "off.serial.fake", Kernel: &spec.Kernel{Name: "off"}, Variant: out[0].Variant, Toolchain: tc,
		Reason: "missing ompx_bare (needs llvm >= 18, have gcc 1)"}
	return append(out, off)
}

// fakeCompiler "compiles" by copying the source, and fails on "bad".
func fakeCompiler(calls *atomic.Int32) func(context.Context, string, string, ...string) ([]byte, error) {
	return func(_ context.Context, _ string, _ string, args ...string) ([]byte, error) {
		calls.Add(1)
		src, out := args[len(args)-1], args[len(args)-2]
		b, _ := os.ReadFile(src)
		if strings.Contains(string(b), "bad") {
			return []byte("bad.cpp:1:1: warning: unused\nbad.cpp:3:7: error: expected ';'\n1 error generated.\n"), errors.New("exit status 1")
		}
		return nil, os.WriteFile(out, b, 0o755)
	}
}

func TestFailureIsARowAndOthersBuild(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "harness"), 0o755))
	cs := cells(t, root)
	var calls atomic.Int32
	var log bytes.Buffer
	opt := Options{Root: root, Dir: filepath.Join(root, "build"), Jobs: 2, Log: &log, Compiler: fakeCompiler(&calls)}
	res, err := Run(context.Background(), cs, opt)
	require.NoError(t, err)
	status := map[string]string{}
	for _, r := range res {
		status[r.Cell.ID] = r.Status + " " + r.Reason
	}
	assert.Equal(t, map[string]string{
		"good.serial.fake":     "built ",
		"bad.serial.fake":      "failed bad.cpp:3:7: error: expected ';'",
		"alsogood.serial.fake": "built ",
		"off.serial.fake":      "skipped missing ompx_bare (needs llvm >= 18, have gcc 1)",
	}, status)
	logText, err := os.ReadFile(res[1].Log)
	require.NoError(t, err)
	assert.Contains(t, string(logText), "error: expected ';'")
	assert.EqualValues(t, 3, calls.Load())

	// Nothing changed: nothing is compiled again, the failure is remembered.
	calls.Store(0)
	res, err = Run(context.Background(), cs, opt)
	require.NoError(t, err)
	assert.Equal(t, Cached, res[0].Status)
	assert.Equal(t, Failed, res[1].Status)
	assert.Equal(t, "bad.cpp:3:7: error: expected ';'", res[1].Reason)
	assert.EqualValues(t, 0, calls.Load())

	// A source edit rebuilds that cell only; so does a new compiler identity.
	require.NoError(t, os.WriteFile(filepath.Join(root, cs[0].Source()), []byte("// good, edited\n"), 0o644))
	calls.Store(0)
	res, err = Run(context.Background(), cs, opt)
	require.NoError(t, err)
	assert.Equal(t, Built, res[0].Status)
	assert.Equal(t, Cached, res[2].Status)
	assert.EqualValues(t, 1, calls.Load())
	cs[0].Toolchain.Identity = "fakecc 2"
	calls.Store(0)
	_, err = Run(context.Background(), cs, opt)
	require.NoError(t, err)
	assert.EqualValues(t, 3, calls.Load())
}

func TestMissingSource(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "harness"), 0o755))
	cs := cells(t, root)
	require.NoError(t, os.Remove(filepath.Join(root, cs[0].Source())))
	var calls atomic.Int32
	res, err := Run(context.Background(), cs[:1], Options{Root: root, Dir: filepath.Join(root, "build"), Compiler: fakeCompiler(&calls)})
	require.NoError(t, err)
	assert.Equal(t, Failed, res[0].Status)
	assert.Contains(t, res[0].Reason, "source missing (run: go run mage.go generate)")
}

// A build on a machine that lacks a toolchain (the GPU host builds only its
// CUDA cells) keeps the provenance recorded where that toolchain was found.
func TestUpdateKeepsFoundToolchains(t *testing.T) {
	dir := t.TempDir()
	found := &toolchain.Toolchain{ID: "clang22-sm90", Family: "llvm", Path: "/usr/bin/clang++-22", Target: "sm_90"}
	_, err := Update(dir, "c1", false, []*toolchain.Toolchain{found}, nil)
	require.NoError(t, err)
	absent := &toolchain.Toolchain{ID: "clang22-sm90", Family: "llvm", Target: "sm_90", Missing: "clang++-22 not found on PATH"}
	nvcc := &toolchain.Toolchain{ID: "nvcc-sm90", Family: "nvcc", Path: "/usr/local/cuda/bin/nvcc", Target: "sm_90",
		Candidates: []string{"/usr/local/cuda/bin/nvcc 13.0.0"}}
	m, err := Update(dir, "c1", false, []*toolchain.Toolchain{absent, nvcc}, nil)
	require.NoError(t, err)
	assert.Equal(t, "/usr/bin/clang++-22", m.Toolchains["clang22-sm90"].Path)
	assert.Empty(t, m.Toolchains["clang22-sm90"].Missing)
	assert.Equal(t, []string{"/usr/local/cuda/bin/nvcc 13.0.0"}, m.Toolchains["nvcc-sm90"].Candidates)
	// Found again: replaced.
	again := &toolchain.Toolchain{ID: "clang22-sm90", Family: "llvm", Path: "/opt/clang++-22", Target: "sm_90"}
	m, err = Update(dir, "c2", false, []*toolchain.Toolchain{again}, nil)
	require.NoError(t, err)
	assert.Equal(t, "/opt/clang++-22", m.Toolchains["clang22-sm90"].Path)
}

// A build failure's reason is the compiler's error line, not the first line
// that holds the word (a path under a folder named for it).
func TestFailureIsTheDiagnostic(t *testing.T) {
	for out, want := range map[string]string{
		"/tmp/build-compile-error/gen.cpp: In function 'void f()':\n/tmp/build-compile-error/gen.cpp:3:5: error: 'w' was not declared in this scope\n": "/tmp/build-compile-error/gen.cpp:3:5: error: 'w' was not declared in this scope",
		"gen.cu(12): error #20-D: identifier \"w\" is undefined\n":                                                                                     "gen.cu(12): error #20-D: identifier \"w\" is undefined",
		"a.o: in function main:\ncollect2: error: ld returned 1 exit status\n":                                                                         "collect2: error: ld returned 1 exit status",
		"gen.cpp:9:1: internal compiler error: in f, at g.cc:1\n":                                                                                      "gen.cpp:9:1: internal compiler error: in f, at g.cc:1",
		"errors.hpp:1: warning: unused\n":                                                                                                              "exit status 1",
	} {
		assert.Equal(t, want, failure(errors.New("exit status 1"), []byte(out), context.Background()))
	}
}

// amdCells is cells' tree with an AMD toolchain (never run here) that
// declares device_only flags, the fake toolchain copied.
func amdCells(t *testing.T) (root string, cs []*matrix.Cell, amd *toolchain.Toolchain) {
	root = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "harness"), 0o755))
	cs = cells(t, root)
	tc := *cs[0].Toolchain
	tc.ID, tc.Target, tc.DeviceOnly = "amd", "gfx90a", []string{"--offload-device-only", "-c"}
	return root, cs, &tc
}

// PM_DEVICE_ONLY compiles a cell that does not run here with its
// toolchain's device_only flags, and the manifest says so; a cell that runs
// here, or whose toolchain declares none, is built whole.
func TestDeviceOnlyBuildsTheDeviceCodeOfCellsNotRunHere(t *testing.T) {
	root, cs, amd := amdCells(t)
	away := *cs[0]
	away.ID, away.Toolchain = "good.serial.amd", amd
	here := *cs[2]
	here.Runnable = true
	here.Toolchain = amd
	plain := *cs[0]
	var args [][]string
	compile := func(ctx context.Context, dir, name string, a ...string) ([]byte, error) {
		args = append(args, a)
		return nil, os.WriteFile(a[len(a)-2], nil, 0o644)
	}
	res, err := Run(context.Background(), []*matrix.Cell{&away, &here, &plain},
		Options{Root: root, Dir: filepath.Join(root, "build"), DeviceOnly: true, Compiler: compile})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false}, []bool{res[0].DeviceOnly, res[1].DeviceOnly, res[2].DeviceOnly})
	assert.Equal(t, []string{"-O2", "--offload-device-only", "-c"}, args[0][:3])
	for _, a := range args[1:] {
		assert.NotContains(t, a, "--offload-device-only")
	}
	m, err := Update(filepath.Join(root, "build"), "abc", false, nil, res)
	require.NoError(t, err)
	e, ok := m.Entry("good.serial.amd")
	require.True(t, ok)
	assert.True(t, e.DeviceOnly)
}

// A device-only build keeps a cell already built whole (CI builds a sample
// whole, then every cell's device code): its device code is compiled, and
// more, so it is cached, not built again, and the manifest counts it whole.
func TestDeviceOnlyKeepsACellBuiltWhole(t *testing.T) {
	root, cs, amd := amdCells(t)
	a, b := *cs[0], *cs[2]
	a.ID, a.Toolchain = "good.serial.amd", amd
	b.ID, b.Toolchain = "alsogood.serial.amd", amd
	var built []string
	compile := func(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
		built = append(built, strings.Join(args, " "))
		return nil, os.WriteFile(args[len(args)-2], nil, 0o644)
	}
	opt := Options{Root: root, Dir: filepath.Join(root, "build"), Compiler: compile}
	_, err := Run(context.Background(), []*matrix.Cell{&a}, opt)
	require.NoError(t, err)
	opt.DeviceOnly = true
	res, err := Run(context.Background(), []*matrix.Cell{&a, &b}, opt)
	require.NoError(t, err)
	assert.Equal(t, []string{Cached, Built}, []string{res[0].Status, res[1].Status})
	assert.Equal(t, []bool{false, true}, []bool{res[0].DeviceOnly, res[1].DeviceOnly})
	require.Len(t, built, 2)
	assert.NotContains(t, built[0], "--offload-device-only")
	assert.Contains(t, built[1], "--offload-device-only")
}

// A cell's team blocks are its team patterns' team_size x vector at the
// tunables it is generated with (the variant's over the kernel's), those
// of the kernels a composite uses included; none where one is no constant.
func TestTeamBlocks(t *testing.T) {
	team := func(size, vector string) *spec.Node {
		return &spec.Node{Kind: "sequence", Body: []*spec.Node{{Kind: "team", League: "n", TeamSize: size, Vector: vector}}}
	}
	part := &spec.Kernel{Name: "part", Tunables: []spec.Tunable{{Name: "pt", Value: 4}}, Pattern: team("pt", "8")}
	k := &spec.Kernel{Name: "k", Uses: []string{"part"}, Tunables: []spec.Tunable{{Name: "ts", Value: 16}, {Name: "vs", Value: 8}},
		Pattern: team("ts", "vs")}
	v := &matrix.Variant{ID: "v", Strategy: &matrix.Strategy{Name: "v"}, Tunables: map[string]int64{"ts": 32}}
	c := &matrix.Cell{Kernel: k, Variant: v}
	assert.Equal(t, []int64{32, 256}, teamBlocks(c, map[string]*spec.Kernel{"part": part}))
	k.Pattern = team("ts", "size / 2")
	assert.Nil(t, teamBlocks(c, nil))
}

// A cell of a library strategy compiles with the install's flags (and the
// library's capabilities as PM_HAS_ macros) before its source and links
// the install's libraries after it; its device hash does not see the
// install's paths, and the manifest records the install.
func TestLibraryCellCommand(t *testing.T) {
	root := t.TempDir()
	c := cells(t, root)[0]
	plain := Command(root, "build", c, false)
	lc := *c
	lc.Library = &library.Install{Name: "kokkos", Version: "4.6.01", Backend: "openmp", Toolchain: "fake", Prefix: "/opt/kk",
		CompilerVersion: "1", Caps: []string{"kk_x"}, CompileFlags: []string{"-I/opt/kk/include"}, LinkFlags: []string{"/opt/kk/lib/libkokkoscore.a", "-ldl"}}
	cmd := Command(root, "build", &lc, false)
	src := filepath.Join(root, c.Source())
	assert.Equal(t, []string{"fakecc", "-O2", "-DPM_HAS_OPENMP=1", "-DPM_HAS_KK_X=1", "-I/opt/kk/include", "-I" + filepath.Join(root, "harness"),
		"-o", Binary("build", c), src, "/opt/kk/lib/libkokkoscore.a", "-ldl"}, cmd)
	assert.Equal(t, append(deviceFlags(plain), "-DPM_HAS_KK_X=1"), deviceFlags(sourceLast(cmd, &lc)))
	assert.NotContains(t, Command(root, "build", &lc, true), "-ldl", "a device-only build links nothing")
	assert.NotEqual(t, Key(c, plain, nil, nil), Key(&lc, plain, nil, nil), "the install is part of the cache key")

	e := entry("build", Result{Cell: &lc, Status: Built})
	require.NotNil(t, e.Library)
	assert.Equal(t, Library{Name: "kokkos", Version: "4.6.01", Backend: "openmp", Prefix: "/opt/kk", Compiler: "1"}, *e.Library)
	assert.Nil(t, entry("build", Result{Cell: c, Status: Built}).Library)
}

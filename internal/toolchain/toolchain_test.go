package toolchain

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVersion(t *testing.T) {
	cases := []struct{ family, out, want string }{
		{"gcc", "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright", "12.2.0"},
		{"gcc", "g++-12 (Debian 12.2.0-14) 12.2.0\n", "12.2.0"},
		{"llvm", "Debian clang version 19.1.7 (3+b1)\nTarget: x86_64-pc-linux-gnu", "19.1.7"},
		{"llvm", "clang version 16.0.6 (15~deb12u1)", "16.0.6"},
		{"nvcc", "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.8, V11.8.89", "11.8.0"},
		{"nvhpc", "\nnvc++ 22.7-0 64-bit target on x86-64 Linux", "22.7.0"},
	}
	for _, c := range cases {
		v, err := ParseVersion(c.family, c.out)
		require.NoError(t, err, c.out)
		assert.Equal(t, c.want, v.String())
	}
	_, err := ParseVersion("llvm", "something else")
	assert.EqualError(t, err, `no llvm version in "something else"`)
}

func table(t *testing.T) *Table {
	tb, err := LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	return tb
}

func tc(family, v, target, cuda string) *Toolchain {
	t := &Toolchain{ID: family + v, Family: family, Target: target, Version: version.Must(version.NewVersion(v))}
	if cuda != "" {
		t.CUDA = version.Must(version.NewVersion(cuda))
	}
	return t
}

// The gates of the papers: the dynamic shared memory clause from 16, level-0
// team scratch in it from 18 (000, Fig. 5), ompx_bare from 18, shuffles from
// 19, multi-dimensional grids from 20.
func TestGates(t *testing.T) {
	tb := table(t)
	cases := []struct {
		t    *Toolchain
		want []string
	}{
		{tc("llvm", "16.0.6", "sm_90", "11.8"), []string{"cxx17", "omp_map_lambda", "omp_target", "omp_target_nowait", "ompx_dyn_cgroup_mem"}},
		{tc("llvm", "18.1.0", "sm_90", "11.8"), []string{"cxx17", "omp_map_lambda", "omp_target", "omp_target_nowait", "ompx_bare", "ompx_dyn_cgroup_mem", "ompx_team_shared_scratch"}},
		{tc("llvm", "19.1.7", "sm_90", "11.8"), []string{"cxx17", "omp_map_lambda", "omp_target", "omp_target_nowait", "ompx_bare", "ompx_dyn_cgroup_mem", "ompx_shfl_down_sync", "ompx_team_shared_scratch"}},
		{tc("llvm", "20.1.0", "sm_90", "12.2"), []string{"cxx17", "omp_map_lambda", "omp_target", "omp_target_nowait", "ompx_bare", "ompx_dyn_cgroup_mem", "ompx_multidim_grid", "ompx_shfl_down_sync", "ompx_team_shared_scratch"}},
		{tc("llvm", "22.1.8", "sm_90", "11.8"), []string{"cxx17", "omp6_dyn_groupprivate", "omp_map_lambda", "omp_target", "omp_target_nowait", "ompx_bare", "ompx_dyn_cgroup_mem", "ompx_multidim_grid", "ompx_shfl_down_sync", "ompx_team_shared_scratch"}},
		{tc("llvm", "19.1.7", "host", ""), []string{"cxx17", "omp_map_lambda", "omp_target", "openmp"}}, // omp_target_nowait has no host row
		{tc("gcc", "12.2.0", "host", ""), []string{"cxx17", "omp_map_lambda", "omp_target", "openmp"}},
		{tc("gcc", "12.2.0", "sm_80", ""), []string{"cxx17", "omp_target", "omp_target_nowait"}}, // no omp_map_lambda on the GPU: measured failing
		{tc("nvcc", "11.8.0", "sm_90", ""), []string{"cublas", "cuda", "cxx17"}},
		{tc("nvcc", "11.3.0", "sm_90", ""), []string{"cuda", "cxx17"}}, // cublasGetStatusString from 11.4
		// AMD: the kernel-mode gates as on NVIDIA; the runtime rows measured
		// on NVIDIA GPUs only (omp_map_lambda, omp_target_nowait) stay off.
		{tc("llvm", "19.1.7", "gfx90a", ""), []string{"cxx17", "omp_target", "ompx_bare", "ompx_dyn_cgroup_mem", "ompx_shfl_down_sync", "ompx_team_shared_scratch"}},
		{tc("llvm", "12.0.1", "gfx90a", ""), []string{"cxx17"}}, // AMDGPU OpenMP offload from LLVM 13
		{tc("rocm", "5.2", "gfx90a", ""), []string{"cuda", "cxx17"}},
	}
	for _, c := range cases {
		Derive(c.t, tb)
		assert.Equal(t, c.want, c.t.CapNames(), c.t.ID)
		assert.Empty(t, c.t.Broken, c.t.ID)
	}
}

// LLVM < 21 with CUDA >= 12.8 ptxas makes images the offload runtime rejects.
func TestKnownBreak(t *testing.T) {
	tb := table(t)
	broken := tc("llvm", "19.1.7", "sm_90", "13.0")
	Derive(broken, tb)
	assert.Contains(t, broken.Broken, "llvm-cubin-elf-flags (llvm 19.1.7 with CUDA 13.0.0)")
	fixed := tc("llvm", "21.1.0", "sm_90", "13.0")
	Derive(fixed, tb)
	assert.Empty(t, fixed.Broken)
	host := tc("llvm", "19.1.7", "host", "13.0")
	Derive(host, tb)
	assert.Empty(t, host.Broken)
}

// A name may have one row for host builds and one for GPU builds, never two
// rows that both apply to one target.
func TestCapabilityRowsPerTarget(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(`capabilities:
  - {name: m, when: {gcc: ">= 7", llvm: ">= 12"}, targets: [host], source: s}
  - {name: m, when: {llvm: ">= 12"}, targets: [gpu], source: s}
  - {name: m, when: {gcc: ">= 13"}, source: s}
`), 0o644))
	_, err := LoadTable(caps)
	require.Error(t, err)
	assert.Equal(t, caps+`:4:12: capability "m" defined twice for the same targets (rows of one name need disjoint targets)`, err.Error())

	require.NoError(t, os.WriteFile(caps, []byte(`capabilities:
  - {name: m, when: {gcc: ">= 7", llvm: ">= 12"}, targets: [host], source: s}
  - {name: m, when: {llvm: ">= 12"}, targets: [gpu], source: s}
`), 0o644))
	tb, err := LoadTable(caps)
	require.NoError(t, err)
	for _, c := range []struct {
		t    *Toolchain
		want []string
	}{
		{tc("gcc", "12.2.0", "host", ""), []string{"m"}},
		{tc("gcc", "12.2.0", "sm_80", ""), nil},
		{tc("llvm", "16.0.6", "sm_90", "11.8"), []string{"m"}},
	} {
		Derive(c.t, tb)
		assert.Equal(t, c.want, c.t.CapNames(), c.t.ID)
	}
	assert.Equal(t, "gcc >= 7 on host; llvm >= 12 on gpu", tb.Need("m", "gcc"))
	assert.Equal(t, []string{"m"}, tb.Names())
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(`capabilities:
  - {name: a, when: {llvm: ">= x"}, source: s}
  - {name: b, when: {icc: ">= 1"}, source: s}
  - {name: c, when: {gcc: ">= 1"}}
`), 0o644))
	_, err := LoadTable(caps)
	require.Error(t, err)
	assert.Equal(t, caps+`:2:28: bad version constraint ">= x": malformed constraint: >= x
`+caps+`:3:22: unknown compiler family "icc" (known: `+strings.Join(Families, ", ")+`)
`+caps+`:4:5: capability needs field "source"`, err.Error())

	tcs := filepath.Join(dir, "toolchains.yaml")
	require.NoError(t, os.WriteFile(tcs, []byte(`toolchains:
  - {id: x, family: gcc, commands: [g++], target: host, devices: [gpu]}
  - {id: x, family: gcc, commands: [g++], target: host, devices: [host], speed: fast}
`), 0o644))
	loaded, err := Load(tcs, dir)
	require.Error(t, err)
	assert.Equal(t, tcs+`:3:10: toolchain "x" defined twice
`+tcs+`:3:74: unknown field "speed" in toolchain (known: commands, cuda_from, device_only, devices, enabled, env, family, flags, id, needs, pick, runtime_libs, target, version)`, err.Error())
	assert.EqualError(t, CheckDevices(loaded, []string{"host", "omptarget"}), tcs+`:2:66: unknown device "gpu" (known: host, omptarget)`)

	require.NoError(t, os.WriteFile(tcs, []byte(`toolchains:
  - {id: a, family: rocm, commands: [hipcc], target: mi250x, devices: [cuda], env: [HIP_PLATFORM]}
`), 0o644))
	_, err = Load(tcs, dir)
	require.Error(t, err)
	assert.Equal(t, tcs+`:2:54: target is host or a GPU architecture (sm_*, gfx*), not "mi250x"
`+tcs+`:2:84: env entries are NAME=value, not "HIP_PLATFORM"`, err.Error())
}

// The devices are the harness's device headers.
func TestHarnessDevices(t *testing.T) {
	devs, err := HarnessDevices("../../harness")
	require.NoError(t, err)
	assert.Subset(t, devs, []string{"cuda", "host", "omptarget"})
	dir := t.TempDir()
	_, err = HarnessDevices(dir)
	assert.EqualError(t, err, dir+": no devices (pm/device_<name>.hpp)")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pm"), 0o755))
	for _, f := range []string{"device_fpga.hpp", "device_host.hpp", "harness.hpp"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "pm", f), nil, 0o644))
	}
	devs, err = HarnessDevices(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"fpga", "host"}, devs)
}

// A family is one whose version the package reads.
func TestFamiliesHaveVersionPatterns(t *testing.T) {
	assert.Contains(t, Families, "llvm")
	for _, f := range Families {
		_, err := ParseVersion(f, "")
		assert.NotContains(t, err.Error(), "no version pattern", f)
	}
}

func TestMissingCommand(t *testing.T) {
	tb := table(t)
	tcs := []*Toolchain{{ID: "none", Family: "llvm", Commands: []string{"clang++-no-such-version"}, Target: "sm_90", Enabled: true}}
	Discover(context.Background(), tcs, tb, ExecProbe)
	assert.Equal(t, "clang++-no-such-version not found on PATH", tcs[0].Missing)
	assert.False(t, tcs[0].Found())
}

// pick: newest takes the highest version among the commands found, globs
// included, and records what it chose among.
func TestPickNewest(t *testing.T) {
	dir := t.TempDir()
	out := map[string]string{}
	for _, v := range []string{"11.8", "13.0", "12.4"} {
		p := filepath.Join(dir, "cuda-"+v, "bin", "nvcc")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		out[p] = "Cuda compilation tools, release " + v + ", V" + v + ".1"
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "cuda-13.0"), filepath.Join(dir, "cuda")))
	probe := func(_ context.Context, name string, _ ...string) (string, error) {
		real, _ := filepath.EvalSymlinks(name)
		return out[real], nil
	}
	tb := table(t)
	mk := func(pick string) *Toolchain {
		return &Toolchain{ID: "nvcc", Family: "nvcc", Target: "sm_90", Enabled: true, Pick: pick,
			Commands: []string{"no-such-nvcc", filepath.Join(dir, "cuda-11.8/bin/nvcc"), filepath.Join(dir, "cuda/bin/nvcc"), filepath.Join(dir, "cuda-*/bin/nvcc")}}
	}
	newest := mk("newest")
	Discover(context.Background(), []*Toolchain{newest}, tb, probe)
	require.True(t, newest.Found(), newest.Missing)
	assert.Equal(t, filepath.Join(dir, "cuda/bin/nvcc"), newest.Path)
	assert.Equal(t, "13.0.0", newest.VersionString())
	// The symlinked cuda/ and cuda-13.0/ are one candidate.
	assert.Equal(t, []string{filepath.Join(dir, "cuda-11.8/bin/nvcc") + " 11.8.0", filepath.Join(dir, "cuda/bin/nvcc") + " 13.0.0",
		filepath.Join(dir, "cuda-12.4/bin/nvcc") + " 12.4.0"}, newest.Candidates)
	first := mk("")
	Discover(context.Background(), []*Toolchain{first}, tb, probe)
	assert.Equal(t, "11.8.0", first.VersionString())
	assert.Empty(t, first.Candidates)
}

// AMD targets never run; a toolchain with env runs its compiler through
// env(1), for its builds and its --version alike.
func TestAMDTarget(t *testing.T) {
	assert.Equal(t, "amd", Vendor("gfx90a"))
	assert.Equal(t, "nvidia", Vendor("sm_90"))
	assert.Equal(t, "", Vendor("host"))
	assert.Equal(t, NoAMDGPU, NotRun("gfx90a"))
	assert.Empty(t, NotRun("sm_90"))
	assert.Empty(t, NotRun("host"))

	hip := &Toolchain{ID: "hip", Family: "rocm", Commands: []string{"sh"}, Target: "gfx90a", Env: []string{"HIP_PLATFORM=amd"}, Enabled: true}
	var asked []string
	probe := func(_ context.Context, name string, args ...string) (string, error) {
		asked = append([]string{name}, args...)
		return "HIP version: 5.2.21153-0\nDebian clang version 15.0.6\n", nil
	}
	Discover(context.Background(), []*Toolchain{hip}, table(t), probe)
	require.True(t, hip.Found(), hip.Missing)
	assert.Equal(t, []string{"env", "HIP_PLATFORM=amd", hip.Path, "--version"}, asked)
	assert.Equal(t, "5.2.0", hip.VersionString())
	assert.Equal(t, []string{"env", "HIP_PLATFORM=amd", hip.Path, "-O3"}, hip.Command("-O3"))
	plain := &Toolchain{Path: "/usr/bin/g++"}
	assert.Equal(t, []string{"/usr/bin/g++", "-O3"}, plain.Command("-O3"))
}

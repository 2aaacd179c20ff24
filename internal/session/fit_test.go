package session

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// An H200 host: 141 GiB of GPU memory, as nvidia-smi reports it, and the
// host's memory.
var h200 = Room{Host: host.MemInfo{Total: 2 << 40, Available: 1900 << 30}, HostFrom: "/proc/meminfo",
	Device: 143771 << 20, DeviceFrom: "NVIDIA H200 as the driver reports it"}

func footprintsOf(t *testing.T, names ...string) map[string]spec.Footprint {
	ks, err := spec.LoadDir("../../templates/kernels")
	require.NoError(t, err)
	out := map[string]spec.Footprint{}
	for _, n := range names {
		out[n] = spec.ByName(ks)[n].Footprint()
	}
	return out
}

// The sizes that died on an H200 after their builds (std::bad_alloc,
// cudaMalloc: out of memory) are refused before anything runs, with the
// bytes they need and what the host or the GPU has; the gpu set's sizes fit.
func TestSizesThatCannotFitAreRefused(t *testing.T) {
	fp := footprintsOf(t, "del_dot_vec_2d", "vol3d_calc", "axpby")
	items := []FitItem{
		{Cell: "del_dot_vec_2d.serial.gcc-host", Kernel: "del_dot_vec_2d", Target: "host", Sizes: []int64{4421700}, From: "PM_SIZES"},
		{Cell: "vol3d_calc.raja-cuda.nvcc-sm90", Kernel: "vol3d_calc", Target: "sm_90", Sizes: []int64{4421700}, From: "PM_SIZES"},
		{Cell: "axpby.kk-cuda-3lvl.nvcc-sm90", Kernel: "axpby", Target: "sm_90", Sizes: []int64{4_000_000_000}, From: "PM_SIZES"},
	}
	err := CheckFit(items, fp, h200)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "3 sizes do not fit this machine; nothing was run")
	assert.Contains(t, msg, "kernel del_dot_vec_2d at size 4421700 (PM_SIZES; del_dot_vec_2d.serial.gcc-host): needs ")
	assert.Contains(t, msg, "PiB of host memory (")
	assert.Contains(t, msg, "this host has 1.9 TiB available of 2.0 TiB (/proc/meminfo)")
	assert.Contains(t, msg, "kernel vol3d_calc at size 4421700 (PM_SIZES; vol3d_calc.raja-cuda.nvcc-sm90): its arrays cannot be sized: ")
	assert.Contains(t, msg, "integer overflow")
	assert.Contains(t, msg, "kernel axpby at size 4000000000 (PM_SIZES; axpby.kk-cuda-3lvl.nvcc-sm90): needs 149.0 GiB of GPU memory (59.6 GiB of arrays, held 2.5 times")
	assert.Contains(t, msg, "the GPU has 140.4 GiB (NVIDIA H200 as the driver reports it)")

	// Every kernel's gpu set fits the H200 (host and GPU programs alike).
	ks, err := spec.LoadDir("../../templates/kernels")
	require.NoError(t, err)
	all := map[string]spec.Footprint{}
	items = nil
	for _, k := range ks {
		all[k.Name] = k.Footprint()
		for _, target := range []string{"host", "sm_90"} {
			items = append(items, FitItem{Cell: k.Name + "." + target, Kernel: k.Name, Target: target, Sizes: k.Size.Sets["gpu"], From: "size set gpu"})
		}
	}
	assert.NoError(t, CheckFit(items, all, h200))
}

// The run stage refuses such a size from the build folder alone (its
// project.json), before a results folder is made.
func TestRunRefusesASizeThatCannotFit(t *testing.T) {
	bd := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(bd, "gcc-host"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bd, "gcc-host", "axpby.serial"), []byte(fakeProgram), 0o755))
	m := build.Manifest{Toolchains: map[string]build.ToolchainInfo{"gcc-host": {ID: "gcc-host", Family: "gcc", Target: "host"}},
		Cells: []build.Entry{{ID: "axpby.serial.gcc-host", Kernel: "axpby", Variant: "serial", Strategy: "serial", Toolchain: "gcc-host",
			Target: "host", Binary: "gcc-host/axpby.serial", Status: build.Built, Sizes: map[string][]int64{"ci": {5}}}}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(build.ManifestFile(bd), b, 0o644))
	b, err = json.Marshal(BuildInfo{Footprints: footprintsOf(t, "axpby")})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bd, BuildInfoFile), b, 0o644))
	out := filepath.Join(t.TempDir(), "run")
	cfg := config.Config{Root: t.TempDir(), BuildDir: bd, Out: out, GPU: "0", Log: io.Discard,
		Sizes: config.Sizes{"axpby": {1 << 60}}}
	_, err = Run(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kernel axpby at size 1152921504606846976 (PM_SIZES; axpby.serial.gcc-host): needs ")
	assert.Contains(t, err.Error(), "of host memory")
	assert.NoDirExists(t, out)
	// Its own sizes run.
	cfg.Sizes = nil
	_, err = Run(context.Background(), cfg)
	require.NoError(t, err)
}

package session

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// recorded is the entry of cell (kernel.variant.toolchain) of a build of
// the repository's tree, with the tuning space the build stage records
// (tune.Spaces.RecordCell): what the tune stage and run -tuned read.
func recorded(t *testing.T, cell string) build.Entry {
	t.Helper()
	tree, err := repositoryTree()
	require.NoError(t, err)
	kernel, variant, _, ok := matrix.SplitCellID(cell)
	require.True(t, ok, cell)
	k, v := tree.Kernels[kernel], tree.Variants[variant]
	require.NotNil(t, k, kernel)
	require.NotNil(t, v, variant)
	return build.Entry{ID: cell, Kernel: kernel, Variant: variant,
		Space: tree.Spaces.RecordCell(&matrix.Cell{ID: cell, Kernel: k, Variant: v}, tree.Kernels)}
}

// repositoryTree is the repository's tree for the tuner, loaded once for the
// tests that read it (a load lowers every loop kernel: seconds each).
var repositoryTree = sync.OnceValues(func() (tune.Tree, error) { return tune.LoadTree("../..") })

// space is the recorded space of cell at size, read back from its entry.
func space(t *testing.T, cell string, size int64) *tune.CellSpace {
	t.Helper()
	rec, err := tune.SpaceOf(recorded(t, cell))
	require.NoError(t, err)
	return rec.At(size)
}

// A kernel written as loops gets its launch tunables from the mapper: the
// tuner must see them (it once read the descriptions unlowered, and tuned
// the mapped HOMMEXX laplace at its one default configuration).
func TestTuningSeesTheMapperTunables(t *testing.T) {
	s := space(t, "hommexx_laplace_simple_mapped.kk-cuda-3lvl.nvcc-sm90", 1001)
	assert.Contains(t, s.Names, "map_team_size")
	assert.Contains(t, s.Names, "map_vector_size")
	assert.Greater(t, s.Len(), 1, "the mapper's sizes are searched, not held")
}

// The staged multiply's step is a constant of the program (a run-time
// step cost the register form a third of its speed on an H200): the tuner
// holds it at the value the strategy's program is generated with, 64 where
// the micro-tiles stay in registers (item_registers), 16 where they live in
// team scratch, and never passes it to the program's --config; the
// searched team and vector start from the form's own block (8 x 32 in
// registers, 8 x 16 in team scratch).
func TestTuningHoldsTheStep(t *testing.T) {
	for cell, want := range map[string]int64{"gemm_mapped.kk-cuda-3lvl.nvcc-sm90": 64, "gemm_mapped.kk-omp-b.clang22-sm90": 16} {
		s := space(t, cell, 2001)
		assert.Contains(t, s.Names, "map_step", cell)
		assert.Equal(t, want, s.Default["map_step"], cell)
		assert.Equal(t, map[int64]int64{64: 32, 16: 16}[want], s.Default["map_vector_size"], cell)
		assert.Equal(t, []int64{want}, s.Values["map_step"], cell)
		assert.Contains(t, s.Fixed["map_step"], "a constant of the program", cell)
		assert.NotContains(t, s.Flag(s.Default), "map_step", cell)
	}
}

// max_teams is a launch parameter of kernel-mode team launches without team
// scratch: a launch with scratch takes its teams by occupancy and its
// program refuses a max_teams configuration (the H100 tuning's 120 failed
// evaluations of the HOMMEXX kernels under kk-ompx and direct-ompx).
func TestMaxTeamsOnlyWhereTheProgramReadsIt(t *testing.T) {
	names := func(kernel, variant string) []string {
		return space(t, kernel+"."+variant+".clang22-sm90", 1001).Names
	}
	for _, v := range []string{"kk-ompx-opt", "direct-ompx"} {
		assert.Contains(t, names("spmv", v), "max_teams", v)
		assert.NotContains(t, names("hommexx_laplace_simple", v), "max_teams", v)
		assert.NotContains(t, names("hommexx_laplace_simple_mapped", v), "max_teams", v)
	}
}

// run -tuned passes a tuned best without its render-time tunables: the
// scratch level is the binary's own and its program refuses it as a flag
// (the H100's Fig. 2 run stopped on "scratch_level is no run-time tunable").
func TestTunedRunDropsRenderTimeTunables(t *testing.T) {
	dir, bd := t.TempDir(), t.TempDir()
	cell := "hommexx_laplace_simple.kk-cuda-2lvl.nvcc-sm90"
	require.NoError(t, os.WriteFile(filepath.Join(dir, tune.CacheFile), []byte(
		`{"cell":"`+cell+`","size":1001,"config":"scratch_level=0,team_size=32,vector_size=1","build_key":"k1","device":"GPU-1","device_name":"NVIDIA H100 80GB HBM3","median_s":0.001,"lo_s":0.001,"hi_s":0.001,"verified":true}`+"\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(bd, "nvcc-sm90"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bd, "nvcc-sm90", "bin.key"), []byte("k1\n"), 0o644))
	e := recorded(t, cell)
	e.Target, e.Binary = "sm_90", "nvcc-sm90/bin"
	jobs := []run.Job{{Entry: e, Sizes: []int64{1001}}}
	n, err := tunedJobs(config.Config{Root: t.TempDir(), BuildDir: bd, Tuned: dir}, jobs, host.Info{GPUs: []host.GPU{{Name: "NVIDIA H100 80GB HBM3"}}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "team_size=32,vector_size=1", jobs[0].Tuned[1001])
}

// run -tuned finds a GPU cell's tuned best by its device code when the
// binary was built again with another harness (another build key, the same
// device code), and not for a binary of other device code.
func TestTunedRunFindsTheBestOfTheSameDeviceCode(t *testing.T) {
	dir, bd := t.TempDir(), t.TempDir()
	cell := "spmv.kk-cuda-3lvl.nvcc-sm90"
	require.NoError(t, os.WriteFile(filepath.Join(dir, tune.CacheFile), []byte(
		`{"cell":"`+cell+`","size":150,"config":"team_size=16,vector_size=8","build_key":"old","device":"GPU-1","device_name":"NVIDIA H100 80GB HBM3","median_s":0.001,"lo_s":0.001,"hi_s":0.001,"verified":true,"device_hash":"d1"}`+"\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(bd, "nvcc-sm90"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bd, "nvcc-sm90", "bin.key"), []byte("new\n"), 0o644))
	job := func(hash string) []run.Job {
		return []run.Job{{Entry: build.Entry{ID: cell, Kernel: "spmv", Variant: "kk-cuda-3lvl", Target: "sm_90", Binary: "nvcc-sm90/bin", DeviceHash: hash},
			Sizes: []int64{150}}}
	}
	gpu := host.Info{GPUs: []host.GPU{{Name: "NVIDIA H100 80GB HBM3"}}}
	same, other := job("d1"), job("d2")
	n, err := tunedJobs(config.Config{Root: "../..", BuildDir: bd, Tuned: dir}, same, gpu)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "team_size=16,vector_size=8", same[0].Tuned[150])
	n, err = tunedJobs(config.Config{Root: "../..", BuildDir: bd, Tuned: dir}, other, gpu)
	require.NoError(t, err)
	assert.Zero(t, n, "another device code: nothing tuned applies")
}

// A tuning measures each configuration with its first run as warm-up,
// timed calls bounded to tune.TuneRepSeconds, no sections run, and one
// reference folder for all its processes; PM_WARMUP and PM_REP_SECONDS,
// when given, still say what they say.
func TestTuneProtocol(t *testing.T) {
	base := run.Options{Reps: 5, Warmup: 1, RepSeconds: config.DefaultRepSeconds}
	p := tuneProtocol(base, config.Config{}, "/tmp/refs")
	assert.Equal(t, 0, p.Warmup)
	assert.Equal(t, tune.TuneRepSeconds, p.RepSeconds)
	assert.True(t, p.NoSections)
	assert.Equal(t, "/tmp/refs", p.RefCache)
	assert.Equal(t, 5, p.Reps)

	given := tuneProtocol(base, config.Config{WarmupSet: true, RepSecondsSet: true}, "/tmp/refs")
	assert.Equal(t, 1, given.Warmup, "PM_WARMUP given")
	assert.Equal(t, config.DefaultRepSeconds, given.RepSeconds, "PM_REP_SECONDS given")
}

// PM_TUNE_TARGETS keeps the (cell, size) targets another tuning tuned; a
// folder that tuned nothing is an error naming it.
func TestTuneTargetsOfAnotherTuning(t *testing.T) {
	like := t.TempDir()
	c, err := tune.OpenCache(like)
	require.NoError(t, err)
	require.NoError(t, c.Put(tune.Key{Cell: "dot.kk-cuda-3lvl.nvcc-sm90", Size: 100000000, Config: "range_block=256", BuildKey: "k", Device: "GPU-1"}, "",
		tune.Measurement{MedianS: 1e-3, Verified: true}))
	require.NoError(t, c.Close())
	targets := []tune.Target{
		{Cell: "dot.kk-cuda-3lvl.nvcc-sm90", Size: 100000000},
		{Cell: "dot.kk-cuda-3lvl.nvcc-sm90", Size: 1000},
		{Cell: "axpby.kk-cuda-3lvl.nvcc-sm90", Size: 100000000},
	}
	kept, err := tuneLike(targets, like)
	require.NoError(t, err)
	assert.Equal(t, targets[:1], kept)

	_, err = tuneLike(targets, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PM_TUNE_TARGETS")
	assert.Contains(t, err.Error(), "has tuned nothing")
}

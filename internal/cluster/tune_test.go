package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/tune"
	"github.com/portmatrix/portmatrix/internal/work"
)

// TestJoinTuning: the shards' evaluations join into one cache, each key
// once (the later shard's), torn last lines left out, the reports one after
// the other.
func TestJoinTuning(t *testing.T) {
	dir := t.TempDir()
	write := func(shard, file, text string) {
		p := filepath.Join(dir, "shards", shard, file)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	row := func(cell, config string, median string) string {
		return `{"cell":"` + cell + `","size":1,"config":"` + config + `","build_key":"b","device":"GPU-0","median_s":` + median + `,"verified":true}` + "\n"
	}
	write("gpu0", "tuning.jsonl", row("a", "x=1", "1")+row("a", "x=2", "2")+`{"cell":"a","si`)
	write("gpu0", "tuning.md", "table 0\n")
	write("gpu0", "run.json", "{}\n")
	write("gpu1", "tuning.jsonl", row("b", "x=1", "3")+row("a", "x=2", "4"))
	write("gpu1", "tuning.md", "table 1\n")
	write("gpu1", "tuning-kernels.json", `{"b": [{"Kernel": "spmv", "Registers": 40}]}`)
	n, err := JoinTuning(dir)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	got, err := os.ReadFile(filepath.Join(dir, "tuning.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, row("a", "x=1", "1")+row("a", "x=2", "4")+row("b", "x=1", "3"), string(got))
	md, err := os.ReadFile(filepath.Join(dir, "tuning.md"))
	require.NoError(t, err)
	assert.True(t, strings.Index(string(md), "# gpu0") < strings.Index(string(md), "# gpu1"))
	assert.FileExists(t, filepath.Join(dir, "run.json"))
	kernels, err := tune.ReadKernels(dir)
	require.NoError(t, err)
	assert.Equal(t, 40, kernels["b"][0].Registers, "the shards' kernels join the folder's")
}

// TestResumedTuningReadsTheFolder: a tuning resumed under the gpus
// scheduler measures nothing the folder already holds. Here the folder was
// first tuned in one process (its own tuning.jsonl) and by two workers
// (shards/gpu0 and gpu1); resumed on GPU 1 alone, that worker is shard 0
// of 1, whose targets are every target: before it starts, its shard's
// cache holds every evaluation of the folder, and the join keeps them all.
func TestResumedTuningReadsTheFolder(t *testing.T) {
	dir := t.TempDir()
	row := func(cell, config string) string {
		return `{"cell":"` + cell + `","size":150,"config":"` + config + `","build_key":"b","device":"GPU-1","median_s":1,"verified":true}` + "\n"
	}
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("tuning.jsonl", row("cgsolve.kk-omp-b.clang22", "x=1")+row("spmv.kk-ompx-opt.clang22", "x=1"))
	write("shards/gpu0/tuning.jsonl", row("cgsolve.kk-ompx-opt.clang22", "x=1"))
	write("shards/gpu1/tuning.jsonl", row("spmv.kk-ompx-opt.clang22", "x=2")+`{"cell":"spmv.kk`)
	require.NoError(t, seedShards(dir, []work.GPU{{Index: "1", UUID: "GPU-1"}}))
	c, err := tune.OpenCache(filepath.Join(dir, "shards", "gpu1"))
	require.NoError(t, err)
	for _, k := range []struct{ cell, config string }{
		{"cgsolve.kk-omp-b.clang22", "x=1"}, {"spmv.kk-ompx-opt.clang22", "x=1"},
		{"cgsolve.kk-ompx-opt.clang22", "x=1"}, {"spmv.kk-ompx-opt.clang22", "x=2"},
	} {
		_, ok := c.Get(tune.Key{Cell: k.cell, Size: 150, Config: k.config, BuildKey: "b", Device: "GPU-1"})
		assert.True(t, ok, "%s %s: in the resumed worker's cache, not measured again", k.cell, k.config)
	}
	assert.Equal(t, 4, c.Len(), "each evaluation once")
	require.NoError(t, c.Close())
	require.NoError(t, seedShards(dir, []work.GPU{{Index: "1", UUID: "GPU-1"}}))
	again, err := os.ReadFile(filepath.Join(dir, "shards", "gpu1", "tuning.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(again), "\n"), "seeding again adds nothing")
	n, err := JoinTuning(dir)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "the folder's own evaluations survive the join")
}

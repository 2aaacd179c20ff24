package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/tune"
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

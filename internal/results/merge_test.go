package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeBatch(t *testing.T, dir, runJSON string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "logs", "run"), 0o755))
	if runJSON != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(runJSON), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logs", "run", filepath.Base(dir)+".log"), []byte("log"), 0o644))
	require.NoError(t, WriteBuildCSV(dir, []BuildRow{{Cell: "k.v.tc", Kernel: "k", Variant: "v", Toolchain: "tc", Status: "built"}}))
}

// A later batch's measurement of a (cell, size) replaces an earlier one, and
// a batch stopped before writing run.json still counts, named as interrupted.
func TestMergeKeepsTheLatestMeasurement(t *testing.T) {
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	writeBatch(t, a, `{"id":"a","started":"2026-01-01T00:00:00Z","finished":"2026-01-01T01:00:00Z","commit":"aaa",
		"gpus":[{"name":"G","driver":"1","memory_mib":"80"}],"toolchains":[{"id":"tc","family":"llvm","version":"19","path":"/cc"}]}`,
		`{"kind":"kernel","cell":"k.v.tc","size":1,"verified":false,"error":"wrong"}`,
		`{"kind":"kernel","cell":"k.v.tc","toolchain":"tc","size":2,"verified":true,"gbps":2}`,
		`{"kind":"copy","toolchain":"tc","gbps":99999}`)
	writeBatch(t, b, "",
		`{"kind":"kernel","cell":"k.v.tc","size":1,"verified":true,"gbps":1,"commit":"bbb","dirty":true}`)
	writeBatch(t, c, `{"id":"c","started":"2026-01-01T02:00:00Z","finished":"2026-01-01T03:00:00Z","commit":"ccc","dirty":true,"build_dirty":true,"gpus":[{"name":"G","driver":"1","memory_mib":80,"uuid":"GPU-1"}]}`,
		`{"kind":"copy","toolchain":"tc","gbps":3000,"target":"sm_90"}`,
		`{"kind":"kernel","cell":"k.v.tc","size":2,"trial":2,"verified":true,"gbps":2.1,"target":"sm_90"}`)
	out := filepath.Join(root, "merged")
	require.NoError(t, Merge(out, []string{a, b, c}))

	recs, err := ReadJSONL(out)
	require.NoError(t, err)
	require.Len(t, recs, 4, "trial 2 of size 2 is a measurement of its own (a record without trial is trial 1)")
	assert.Equal(t, 2.0, float64(recs[0].Size))
	assert.True(t, recs[1].Verified)
	assert.Equal(t, 3000.0, recs[2].GBps)

	// Provenance record by record: each batch's, where the record had none.
	assert.Equal(t, []string{"a", "a", "aaa", "19"}, []string{recs[0].BatchID, recs[0].RunID, recs[0].Commit, recs[0].ToolchainVersion})
	assert.False(t, recs[0].Dirty)
	assert.Equal(t, []string{"b", "bbb"}, []string{recs[1].BatchID, recs[1].Commit})
	assert.True(t, recs[1].Dirty, "the record's own dirty flag stays")
	assert.Equal(t, []string{"c", "ccc", "GPU-1"}, []string{recs[3].BatchID, recs[3].Commit, recs[3].GPUUUID})
	assert.True(t, recs[3].Dirty)
	assert.Equal(t, 2, recs[3].Trial)

	b2, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err)
	js := string(b2)
	assert.Contains(t, js, `"commit": "ccc"`)
	assert.Contains(t, js, `"started": "2026-01-01T00:00:00Z"`)
	assert.Contains(t, js, `"finished": "2026-01-01T03:00:00Z"`)
	assert.Contains(t, js, `"b (interrupted: no run.json)"`)
	assert.Contains(t, js, `"command": "/cc"`)
	assert.Contains(t, js, `"verified": 1`)
	run, err := ReadRun(out)
	require.NoError(t, err)
	assert.True(t, run.Dirty, "batch c ran from a dirty tree")
	assert.Equal(t, []Batch{{ID: "a", Commit: "aaa"}, {ID: "b", Interrupted: true}, {ID: "c", Commit: "ccc", Dirty: true, BuildDirty: true}}, run.Batches)
	assert.True(t, run.BuildDirty, "batch c's binaries came from a dirty tree")
	for _, f := range []string{"results.csv", "build.csv", "logs/run/a.log", "logs/run/c.log"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	assert.Error(t, Merge(out, []string{a}))
}

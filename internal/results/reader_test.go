package results

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run killed while writing leaves a torn last line: every reader skips it
// (docs/results-format.md): ReadJSONL, Load, Finished, Merge, and a resumed
// writer, which also cuts it off before appending.
func TestTornLastLineIsSkippedEverywhere(t *testing.T) {
	var warn bytes.Buffer
	old := Warnings
	Warnings = &warn
	defer func() { Warnings = old }()
	root := t.TempDir()
	torn := func(name string) string {
		dir := filepath.Join(root, name)
		writeBatch(t, dir, `{"id":"`+name+`","finished":"2026-01-01T01:00:00Z"}`,
			`{"kind":"kernel","cell":"k.v.tc","toolchain":"tc","size":1,"verified":true,"gbps":1}`)
		f, err := os.OpenFile(filepath.Join(dir, JSONLFile), os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(`{"kind":"kernel","cell":"k.v.tc","si`)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		return dir
	}
	a, b := torn("a"), torn("b")
	recs, err := ReadJSONL(a)
	require.NoError(t, err)
	assert.Len(t, recs, 1)
	fin, err := Finished(a)
	require.NoError(t, err)
	assert.Len(t, fin, 1)
	f, err := Load(a)
	require.NoError(t, err)
	assert.Len(t, f.Kernel, 1)
	out := filepath.Join(root, "merged")
	require.NoError(t, Merge(out, []string{a, b}))
	merged, err := ReadJSONL(out)
	require.NoError(t, err)
	assert.Len(t, merged, 1, "one (cell, size, trial): the later batch's")
	assert.Contains(t, warn.String(), "torn last line")
	w, err := Open(b)
	require.NoError(t, err)
	assert.Len(t, w.Records(), 1, "the writer holds the folder's records, read once")
	require.NoError(t, w.Add(Record{Kind: KindKernel, Cell: "k.v.tc", Size: 2, Verified: true}))
	require.NoError(t, w.Close())
	recs, err = ReadJSONL(b)
	require.NoError(t, err)
	assert.Len(t, recs, 2)
}

// Two runs started in the same second get two folders.
func TestNewFolderIsUniqueWithinASecond(t *testing.T) {
	parent := filepath.Join(t.TempDir(), RunsDir)
	now := time.Date(2026, 11, 25, 9, 40, 50, 0, time.UTC)
	const n = 8
	dirs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := NewFolder(parent, now, "NVIDIA H200", "bundle-p")
			assert.NoError(t, err)
			dirs[i] = d
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, d := range dirs {
		assert.False(t, seen[d], "%s twice", d)
		seen[d] = true
		assert.DirExists(t, d)
	}
	assert.True(t, seen[filepath.Join(parent, "20261125-094050-nvidia-h200-bundle-p")])
	assert.True(t, seen[filepath.Join(parent, "20261125-094050-nvidia-h200-bundle-p-2")])
	// A reserved folder holds no run yet: a run may be written into it.
	assert.False(t, Exists(dirs[0]))
}

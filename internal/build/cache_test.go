package build

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two checkouts with the same sources and a shared cache: the second one's
// programs come from the first's builds, not the compiler; a failure is
// compiled again; an edited source or another compiler misses.
func TestSharedCacheAcrossCheckouts(t *testing.T) {
	cache := t.TempDir()
	var calls atomic.Int32
	build := func(root string) []Result {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "harness"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "harness", "h.hpp"), []byte("// the harness\n"), 0o644))
		res, err := Run(context.Background(), cells(t, root)[:3],
			Options{Root: root, Dir: filepath.Join(root, "build"), Compiler: fakeCompiler(&calls), Cache: cache})
		require.NoError(t, err)
		return res
	}
	first := build(t.TempDir())
	assert.EqualValues(t, 3, calls.Load(), "good, bad and alsogood compiled")
	calls.Store(0)
	second := build(t.TempDir())
	assert.EqualValues(t, 1, calls.Load(), "only the failure is compiled again")
	for i, r := range second {
		assert.Equal(t, first[i].Status, r.Status, r.Cell.ID)
		if r.OK() {
			a, err := os.ReadFile(first[i].Binary)
			require.NoError(t, err)
			b, err := os.ReadFile(r.Binary)
			require.NoError(t, err)
			assert.Equal(t, a, b, "%s: the first checkout's program", r.Cell.ID)
			log, err := os.ReadFile(r.Log)
			require.NoError(t, err)
			assert.Contains(t, string(log), CacheEnv)
		}
	}
	// The program is current in the second build folder: nothing to do again.
	calls.Store(0)
	root := t.TempDir()
	build(root)
	calls.Store(0)
	res := build(root)
	assert.Equal(t, Cached, res[0].Status)
	assert.EqualValues(t, 0, calls.Load(), "current programs and the remembered failure: nothing compiled")

	// Another harness: every cell is compiled.
	other := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(other, "harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "harness", "h.hpp"), []byte("// another harness\n"), 0o644))
	calls.Store(0)
	_, err := Run(context.Background(), cells(t, other)[:3],
		Options{Root: other, Dir: filepath.Join(other, "build"), Compiler: fakeCompiler(&calls), Cache: cache})
	require.NoError(t, err)
	assert.EqualValues(t, 3, calls.Load())
}

package build

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
)

var treeMachines = filepath.Join("..", "..", machine.Dir)

// The build folder's machines/ is the tree's, file for file: an unchanged
// file is not rewritten, a model the tree no longer has is removed, and a
// tree without machines/ leaves the build folder none.
func TestCopyMachinesMirrorsTheTree(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(MachinesDir(dir), "gone.yaml")
	require.NoError(t, os.MkdirAll(MachinesDir(dir), 0o755))
	require.NoError(t, os.WriteFile(stale, []byte("name: gone\n"), 0o644))
	require.NoError(t, CopyMachines(dir, treeMachines))

	want, err := filepath.Glob(filepath.Join(treeMachines, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, want)
	got, err := filepath.Glob(filepath.Join(MachinesDir(dir), "*.yaml"))
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for _, f := range want {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		dst, err := os.ReadFile(filepath.Join(MachinesDir(dir), filepath.Base(f)))
		require.NoError(t, err)
		assert.Equal(t, string(src), string(dst), f)
	}
	assert.NoFileExists(t, stale)

	one := filepath.Join(MachinesDir(dir), filepath.Base(want[0]))
	old := time.Unix(1, 0)
	require.NoError(t, os.Chtimes(one, old, old))
	require.NoError(t, CopyMachines(dir, treeMachines))
	st, err := os.Stat(one)
	require.NoError(t, err)
	assert.True(t, st.ModTime().Equal(old), "an unchanged model is not rewritten")

	require.NoError(t, CopyMachines(dir, filepath.Join(t.TempDir(), machine.Dir)))
	assert.NoDirExists(t, MachinesDir(dir))
}

// A model that does not load stops the build with its position, and the
// build folder keeps the models it had.
func TestCopyMachinesRefusesABadModel(t *testing.T) {
	src := t.TempDir()
	data, err := os.ReadFile(filepath.Join(treeMachines, "h200-sxm-141gb.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "h200-sxm-141gb.yaml"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "bad.yaml"), []byte("vendor: nvidia\nkind: gpu\nwarp: [\n"), 0o644))
	dir := t.TempDir()
	require.NoError(t, CopyMachines(dir, treeMachines))
	err = CopyMachines(dir, src)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(src, "bad.yaml")+":")
	_, err = os.Stat(filepath.Join(MachinesDir(dir), "x86-64-generic.yaml"))
	assert.NoError(t, err, "the carried models stay")
}

// A build folder moved away from the tree loads the same models from its
// own machines/; one made before the build carried them reads the tree's,
// and the note says so.
func TestMachinesFromTheBuildFolderAlone(t *testing.T) {
	built := filepath.Join(t.TempDir(), "build")
	require.NoError(t, CopyMachines(built, treeMachines))
	moved := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.Rename(built, moved))

	tree, err := machine.Load(treeMachines)
	require.NoError(t, err)
	own, note, err := Machines(moved, filepath.Join(t.TempDir(), "no-tree"))
	require.NoError(t, err)
	assert.Empty(t, note)
	assert.Equal(t, tree.Names(), own.Names())

	old := t.TempDir()
	set, note, err := Machines(old, filepath.Join("..", ".."))
	require.NoError(t, err)
	assert.Equal(t, tree.Names(), set.Names())
	assert.Contains(t, note, old+" has no machine models")

	_, note, err = Machines(old, filepath.Join(t.TempDir(), "no-tree"))
	require.Error(t, err)
	assert.NotEmpty(t, note)
}

package build

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Bundle copies a GPU toolchain's runtime libraries, with the unversioned
// name beside each versioned one, and bundles nothing for a toolchain whose
// binaries never run (an AMD target).
func TestBundle(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	lib := filepath.Join(src, "libomptarget.so.19.1")
	require.NoError(t, os.WriteFile(lib, []byte("elf"), 0o644))

	nv := &toolchain.Toolchain{ID: "nv", Target: "sm_90", RuntimeLibs: []string{lib}}
	require.NoError(t, Bundle(dir, nv))
	b, err := os.ReadFile(filepath.Join(dir, "nv", "lib", "libomptarget.so.19.1"))
	require.NoError(t, err)
	assert.Equal(t, "elf", string(b))
	link, err := os.Readlink(filepath.Join(dir, "nv", "lib", "libomptarget.so"))
	require.NoError(t, err)
	assert.Equal(t, "libomptarget.so.19.1", link)

	amd := &toolchain.Toolchain{ID: "amd", Target: "gfx90a", RuntimeLibs: []string{lib}}
	require.NoError(t, Bundle(dir, amd))
	assert.NoDirExists(t, filepath.Join(dir, "amd"))
}

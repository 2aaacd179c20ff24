package tune

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// A second tuning into the folder adds its binaries and keeps the first's;
// a folder without the file has no kernels; a broken file names itself.
func TestKernelsFileAccumulates(t *testing.T) {
	dir := t.TempDir()
	k, err := ReadKernels(dir)
	require.NoError(t, err)
	assert.Nil(t, k)
	require.NoError(t, WriteKernels(dir, Kernels{}))
	assert.NoFileExists(t, filepath.Join(dir, KernelsFile), "nothing recorded, no file")
	require.NoError(t, WriteKernels(dir, Kernels{"a": {{Kernel: "spmv", Registers: 40}}}))
	require.NoError(t, WriteKernels(dir, Kernels{"b": {{Kernel: "spmv", Registers: 38, StaticSharedBytes: 512}}}))
	k, err = ReadKernels(dir)
	require.NoError(t, err)
	assert.Equal(t, Kernels{"a": {{Kernel: "spmv", Registers: 40}}, "b": {{Kernel: "spmv", Registers: 38, StaticSharedBytes: 512}}}, k)
	assert.Equal(t, []machine.Resources{{Kernel: "spmv", Registers: 40}}, k["a"])

	require.NoError(t, os.WriteFile(filepath.Join(dir, KernelsFile), []byte("{"), 0o644))
	_, err = ReadKernels(dir)
	assert.ErrorContains(t, err, KernelsFile)
}

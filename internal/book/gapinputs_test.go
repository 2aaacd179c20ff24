package book

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/tune"
)

// The gap reasons' inputs from the source tree: SPMV at N = 150 has
// (N+1)^3 = 3442951 rows and (3N+1)^3 = 91733851 non-zeros, so 16 rows per
// team launch ceil(3442951 / 16) = 215185 teams and a row has 26.64
// non-zeros; the H200 is modelled; registers come from the folder.
func TestGapInputsFromTheSourceTree(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, tune.WriteKernels(dir, tune.Kernels{"key": {{Kernel: "spmv", Registers: 38}}}))
	in := gapInputs("../..", dir)
	assert.Equal(t, 38, in.Resources["key"][0].Registers, "the tuned binaries' registers from the folder")
	require.NotNil(t, in.League)
	n, ok := in.League("spmv.kk-ompx-warp.clang19-sm90", 150, tune.Config{"rows_per_team": 16, "team_size": 16, "vector_size": 8})
	require.True(t, ok)
	assert.Equal(t, int64(215185), n)
	n, ok = in.League("spmv.kk-ompx-warp.clang19-sm90", 150, tune.Config{"rows_per_team": 128})
	require.True(t, ok, "tunables the configuration leaves out take the cell's defaults")
	assert.Equal(t, int64(26899), n)
	l, ok := in.RowLength("spmv.kk-ompx-warp.clang19-sm90", 150)
	require.True(t, ok)
	assert.InDelta(t, 91733851.0/3442951, l, 1e-9)
	_, ok = in.League("nosuch.kernel.tc", 150, tune.Config{})
	assert.False(t, ok)
	m := in.Model("NVIDIA H200")
	require.NotNil(t, m)
	assert.Equal(t, int64(132), m.GPU.SMCount)
}

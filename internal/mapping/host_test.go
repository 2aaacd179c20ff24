package mapping

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// The host sizes come from the CPU model: a simd register's doubles for the
// vector, the team that covers a cache line; cut where the GPU mapping's
// vector or team is cut by a short loop.
func TestHostShape(t *testing.T) {
	set, err := machine.Load(filepath.Join("../..", machine.Dir))
	require.NoError(t, err)
	for _, c := range []struct {
		model              string
		maxVector, maxTeam int64
		team, vector       int64
		why                string
	}{
		{"x86-64-generic", 0, 0, 4, 2, "vector 2 = simd_bits 128 / 64 (source psabi: System V Application Binary Interface"},
		{"build-host-xeon-kvm", 0, 0, 1, 8, "vector 8 = simd_bits 512 / 64 (source cpuinfo"},
		{"build-host-xeon-kvm", 4, 0, 2, 4, "vector cut to 4: no longer than the GPU mapping's vector length 4"},
		{"x86-64-generic", 0, 1, 1, 2, "team cut to 1"},
	} {
		m, err := set.Get(c.model)
		require.NoError(t, err)
		team, vector, why := hostShape(m, c.maxVector, c.maxTeam)
		assert.Equal(t, []int64{c.team, c.vector}, []int64{team, vector}, c.model)
		assert.Contains(t, why, c.why)
	}
}

// A lowered kernel carries both sizes: the GPU's as the tunables' values,
// the CPU model's as their Host values, and explain says where each comes from.
func TestHostSizesOfAKernel(t *testing.T) {
	k := shipped(t)["gemv_mapped"]
	require.NotNil(t, k)
	got := map[string][2]int64{}
	for _, tu := range k.Tunables {
		got[tu.Name] = [2]int64{tu.On("cuda"), tu.On("host")}
	}
	assert.Equal(t, [2]int64{4, 4}, got[TeamTunable])
	assert.Equal(t, [2]int64{32, 2}, got[VectorTunable])
	assert.Contains(t, k.Mapping, "on the host: team size 4, vector length 2 from x86-64-generic")
	assert.Contains(t, k.Mapping, "team 4 = cache_line_bytes 64 / (2 x 8 bytes) (source intel-opt")
}

package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/matrix"
)

// A kernel written as loops gets its launch tunables from the mapper: the
// tuner must see them (it once read the descriptions unlowered, and tuned
// the mapped HOMMEXX laplace at its one default configuration).
func TestTuningSeesTheMapperTunables(t *testing.T) {
	b, err := loadBuilt(config.Config{Root: "../.."}, &build.Manifest{})
	require.NoError(t, err)
	k := b.Kernels["hommexx_laplace_simple_mapped"]
	require.NotNil(t, k)
	v := b.Variants["kk-cuda-3lvl"]
	require.NotNil(t, v)
	target, err := b.Spaces.Target(&matrix.Cell{ID: "hommexx_laplace_simple_mapped.kk-cuda-3lvl.nvcc-sm90", Kernel: k, Variant: v}, b.Kernels, 1001, "key")
	require.NoError(t, err)
	assert.Contains(t, target.Space.Names, "map_team_size")
	assert.Contains(t, target.Space.Names, "map_vector_size")
	assert.Greater(t, target.Space.Len(), 1, "the mapper's sizes are searched, not held")
}

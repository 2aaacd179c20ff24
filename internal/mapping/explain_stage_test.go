package mapping

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The explain stage prints, for a shipped loop-nest kernel, each loop's
// verdict and level with the reason, the sizes from the machine model and
// the tree the backends lower; it needs no toolchain.
func TestExplainStage(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, ExplainKernels("../..", []string{"atx_mapped"}, &out))
	s := out.String()
	for _, want := range []string{
		"kernel atx_mapped (",
		"loop j (", "parallel with reduction: + into y[i]",
		"loop i -> league+team+vector: parallel; stride-1 score 3",
		"loop j -> sequential: parallel with reduction; stride-1 score 1, not the vector loop's (i: 3), and league and team reductions are not patterns yet: sequential",
		"vector length 32, team size 4: on h100-sxm5-80gb, Kokkos' recommended team",
		"pattern tree:\n  team: league",
		"| for (int64_t j = 0; j < m; ++j) {",
	} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "stencil3d_mapped", "PM_KERNELS narrows the kernels")
	err := ExplainKernels("../..", []string{"atx_maped"}, &out)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), `PM_KERNELS: unknown kernel "atx_maped"; did you mean "atx_mapped"?`), err.Error())
}

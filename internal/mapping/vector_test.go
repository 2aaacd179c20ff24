package mapping

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Where every width keeps an SM resident enough (no scratch, no cut team),
// the vector is the one that leaves the fewest lanes idle.
func TestTeamShapeLeavesFewestLanesIdle(t *testing.T) {
	m := gpuModel(t)
	for _, c := range []struct {
		trips []int64
		want  int64
	}{
		{nil, 32},            // no constant trip count: the warp
		{[]int64{72}, 8},     // HOMMEXX's levels: 9 full trips of 8
		{[]int64{64}, 32},    // divides the warp: the widest
		{[]int64{16}, 16},    // shorter than the warp: no wider than the loop
		{[]int64{3}, 2},      // shorter than 8: the widest power of two within it
		{[]int64{72, 16}, 8}, // every phase counts
		{[]int64{100}, 8},    // 13 trips of 8 idle 4 lanes, of 32 28
		{[]int64{72, 3}, 8},  // a short phase beside a long one
	} {
		_, got, _ := teamShape(m, c.trips, 0, 0)
		assert.Equal(t, c.want, got, "trips %v", c.trips)
	}
}

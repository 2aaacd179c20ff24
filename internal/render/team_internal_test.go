package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The indices of a flattened range come back from the flat number, the last
// index fastest, begins added.
func TestUnflatten(t *testing.T) {
	assert.Equal(t, "n * m", count([]string{"0", "0"}, []string{"n", "m"}))
	assert.Equal(t, "(n + 1) * (m - 2)", count([]string{"-1", "2"}, []string{"n", "m"}))
	assert.Equal(t, "const int64_t i = k / m;\nconst int64_t j = k % m;",
		unflatten("k", []string{"i", "j"}, []string{"0", "0"}, []string{"n", "m"}))
	assert.Equal(t, "const int64_t i = -1 + k / ((m - 2) * 4);\nconst int64_t j = 2 + (k / 4) % (m - 2);\nconst int64_t l = k % 4;",
		unflatten("k", []string{"i", "j", "l"}, []string{"-1", "2", "0"}, []string{"n", "m", "4"}))
	// The arithmetic itself, for every point of a 3 x 2 x 4 range starting at (-1, 2, 0).
	k := int64(0)
	for i := int64(-1); i < 2; i++ {
		for j := int64(2); j < 4; j++ {
			for l := int64(0); l < 4; l++ {
				assert.Equal(t, [3]int64{i, j, l}, [3]int64{-1 + k/(2*4), 2 + (k/4)%2, k % 4})
				k++
			}
		}
	}
}

package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// outsiders are kernels a user wrote from docs/kernels.md
// (testdata/outsiders): a gemv whose A has m (m + 13) elements, a global
// scratch tile of league x (rows + 2) x n doubles, a 2-D stencil, a batched
// 4 x 4 matrix-vector product and a histogram with atomic updates. None has
// a size at which every array's extent is a multiple of no loop width;
// every one loads. (internal/pipeline's TestOutsiderKernelsEndToEnd builds,
// runs and verifies them.)
const outsiders = "testdata/outsiders"

func strategyWidths(t *testing.T) []int64 {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	ss, err := matrix.Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	return matrix.TunableValues(ss)
}

func TestOutsiderKernelsLoad(t *testing.T) {
	ks, err := spec.LoadDir(outsiders)
	require.NoError(t, err)
	require.Len(t, ks, 5)
	notes, err := spec.CheckSizes(ks, strategyWidths(t))
	require.NoError(t, err)
	// Two loops no size can give a remainder: they are said, not refused.
	var said []string
	for _, n := range notes {
		said = append(said, n.Error())
	}
	require.Len(t, said, 2, strings.Join(said, "\n"))
	assert.Contains(t, said[0], "batched_matvec.yaml:")
	assert.Contains(t, said[0], "loop r (range_for at line 13, over y): its trip count 4 * nb is a multiple of a loop width (4 at nb = 1001)")
	assert.Contains(t, said[1], "smooth_rows.yaml:")
	assert.Contains(t, said[1], "loop [a, b] (team_thread_for at line 28, over u): its trip count (rows + 2) * (n) is a multiple of a loop width (2 at n = 101)")
	assert.Contains(t, said[1], "the size rule does not refuse the kernel for it")
}

// A size set without a size where a loop shows its remainder is refused at
// the set's position, naming the loop, its arrays and a size to add; with
// that size added the kernel loads.
func TestOutsiderSizeToAdd(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(outsiders, "histogram.yaml"))
	require.NoError(t, err)
	load := func(ci string) error {
		text := strings.Replace(string(src), "ci: [1001, 4096], default: [100001], gpu: [1000001]", "ci: "+ci, 1)
		var errs diag.List
		k := spec.Parse("histogram.yaml", []byte(text), &errs)
		require.NoError(t, errs.Err())
		_, err := spec.CheckSizes([]*spec.Kernel{k}, strategyWidths(t))
		return err
	}
	err = load("[1024, 4096], default: [100001], gpu: [1000001]")
	require.Error(t, err)
	assert.Equal(t, `histogram.yaml:6:35: size set "ci" [1024, 4096]: loop i (range_for at line 13, over x, w) has a trip count (n) `+
		`that is a multiple of a loop width at every size of the set (at n = 1024: 1024 is a multiple of 1024), `+
		`where a dropped remainder or an overrun does not show; add a size at which it is not: 1023 `+
		`(widths: 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 65536, 2147483647)`, err.Error())
	assert.NoError(t, load("[1024, 4096, 1023], default: [100001], gpu: [1000001]"))
	// The benchmark sets are never refused for it.
	assert.NoError(t, load("[1023], default: [65536], gpu: [1048576]"))
}

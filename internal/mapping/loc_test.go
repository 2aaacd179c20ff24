package mapping

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelLines(t *testing.T) {
	src := []byte("namespace dev {\n\nvoid k_kernel(int n) {\n  // why\n  for (;;) {\n\n    f();\n  }\n}\n\nvoid k(int n) {\n  k_kernel(n);\n}\n")
	n, err := KernelLines(src, "k")
	require.NoError(t, err)
	assert.Equal(t, 5, n, "signature, for, f, the loop's brace and the function's")
	_, err = KernelLines(src, "other")
	assert.Error(t, err)
}

// The lines of the mapped laplace_simple against the hand-written HOMMEXX
// form, per backend, from the checked-in generated programs (004: 1.5-2x).
func TestLaplaceLines(t *testing.T) {
	for _, v := range []string{"kk-cuda-3lvl.cu", "kk-omp-b.cpp", "omp-raw.cpp", "direct-ompx.cpp", "omp-host.cpp"} {
		count := func(kernel string) int {
			src, err := os.ReadFile(filepath.Join("..", "..", "generated", kernel, v))
			require.NoError(t, err)
			n, err := KernelLines(src, kernel)
			require.NoError(t, err)
			return n
		}
		hand, mapped := count("hommexx_laplace_simple"), count("hommexx_laplace_simple_mapped")
		t.Logf("%s: hand-written %d lines, mapped %d: %.2fx", v, hand, mapped, float64(mapped)/float64(hand))
		assert.Positive(t, hand)
		assert.Positive(t, mapped)
	}
}

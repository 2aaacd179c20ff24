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

// The lines of each mapped HOMMEXX operator against its hand-written
// HOMMEXX form, per backend, from the checked-in generated programs (004:
// 1.5-2x for laplace_simple).
func TestHommexxLines(t *testing.T) {
	for _, op := range []string{"laplace_simple", "gradient_sphere", "divergence_sphere", "vorticity_sphere"} {
		for _, v := range []string{"kk-cuda-3lvl.cu", "kk-omp-b.cpp", "omp-raw.cpp", "direct-ompx.cpp", "omp-host.cpp"} {
			count := func(kernel string) int {
				src, err := os.ReadFile(filepath.Join("..", "..", "generated", kernel, v))
				require.NoError(t, err)
				n, err := KernelLines(src, kernel)
				require.NoError(t, err)
				return n
			}
			hand, mapped := count("hommexx_"+op), count("hommexx_"+op+"_mapped")
			t.Logf("%s %s: hand-written %d lines, mapped %d: %.2fx", op, v, hand, mapped, float64(mapped)/float64(hand))
			assert.Positive(t, hand)
			assert.Positive(t, mapped)
		}
	}
}

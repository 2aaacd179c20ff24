package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

const loopsKernel = `kernel: lk
size: {name: n, ci: [3], default: [5], gpu: [7]}
args:
  - {name: n, type: int64, value: size}
  - {name: A, type: "double[]", extent: n * n, init: {random: [0, 1]}, intent: in}
  - {name: y, type: "double[]", extent: EXTENT, intent: out}
loops:
  params: [n]
  arrays: {A: [n, n], y: [n]}
  body:
    - for:
        index: i
        to: n
        body:
          - stmt: {reads: "A[i][0]", writes: "y[i]", code: "y[i] = A[i * n];"}
reference: "for (int64_t i = 0; i < n; ++i) y[i] = A[i * n];"
bytes: n
flops: n
tolerance: eps
`

func TestLoopsKernel(t *testing.T) {
	var errs diag.List
	k := Parse("lk.yaml", []byte(strings.Replace(loopsKernel, "EXTENT", "n", 1)), &errs)
	require.NoError(t, errs.Err())
	require.NotNil(t, k.Loops)
	assert.Nil(t, k.Pattern, "the mapper sets the pattern after loading")
	assert.Equal(t, []string{"n"}, k.Loops.Params)
	assert.Len(t, k.Loops.Loops, 1)
}

func TestLoopsKernelErrors(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"extent", "EXTENT", "n + 1", `lk.yaml:9:23: loops: array "y" has 3 elements at n=3 (size set ci), but argument y's extent n + 1 is 4`},
		{"notarg", "y: [n]}", "y: [n], z: [n]}", `lk.yaml:9:31: loops: array "z" must be a double[] argument of the kernel`},
		{"param", "params: [n]", "params: [n, m]", `lk.yaml:8:3: loops: parameter "m" must be an int64 scalar argument of the kernel`},
		{"affine", `writes: "y[i]"`, `writes: "y[i*n]"`, `lk.yaml:15:49: non-affine expression i*n: a product of i and n (only a constant may multiply)`},
		{"both", "reference:", "pattern: {range_for: {index: i, end: n, body: \";\"}}\nreference:", `lk.yaml:7:1: a kernel has loops (to be mapped) or a pattern or a driver, one of them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(strings.Replace(loopsKernel, c.from, c.to, 1), "EXTENT", "n", 1)
			var errs diag.List
			Parse("lk.yaml", []byte(src), &errs)
			require.Error(t, errs.Err())
			assert.Equal(t, c.want, errs.Err().Error())
		})
	}
}

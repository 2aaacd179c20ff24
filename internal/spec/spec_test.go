package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

func TestShippedKernelsLoad(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	byName := ByName(ks)
	require.Contains(t, byName, "spmv")
	assert.Equal(t, []string{"code", "team", "team_thread_for", "thread_vector_reduce"}, byName["spmv"].Kinds())
	assert.Equal(t, []string{"axpby", "dot", "spmv"}, byName["cgsolve"].Uses)
	assert.Equal(t, "double", byName["dot"].Result)
}

// Each bad description gives exactly these messages, with positions.
func TestBadDescriptions(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"syntax", "kernel: [a\n", "syntax.yaml:1: invalid YAML: did not find expected ',' or ']'"},
		{"unknownfield", `kernel: unknownfield
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}]
pattern: {range_for: {index: i, end: n, body: ";"}}
reference: ";"
bytes: n
flops: n
tolerance: 1e-9
colour: red
`, `unknownfield.yaml:9:1: unknown field "colour" in kernel description (known: args, bytes, doc, driver, flops, kernel, pattern, reference, result, size, tolerance, tunables, uses)`},
		{"badpattern", `kernel: badpattern
size: {name: n, ci: [1], default: [1], gpu: [0]}
args:
  - {name: x, type: "float[]", extent: n}
  - {name: y, type: "double[]", extent: n, intent: out, init: {zero: true}}
pattern:
  team_thread_for: {index: i, end: n, body: ";"}
reference: ";"
bytes: n
flops: n
tolerance: -1
`, strings.Join([]string{
			`badpattern.yaml:2:46: sizes must be positive, not 0`,
			`badpattern.yaml:4:21: unknown argument type "float[]" (known: csr, double, double[], int64, int64[], snap)`,
			`badpattern.yaml:5:63: array "y" is an output: it is poisoned, not initialised`,
			`badpattern.yaml:7:3: team_thread_for cannot appear in top (only in team)`,
			`badpattern.yaml:11:12: tolerance must be positive`,
		}, "\n")},
		{"reduce", `kernel: reduce
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}]
pattern: {range_reduce: {index: i, end: n, body: ";"}}
reference: ";"
bytes: n
flops: n
tolerance: 1
`, strings.Join([]string{
			`reduce.yaml:4:1: range_reduce returns its sum: add result: double`,
			`reduce.yaml:4:25: range_reduce needs field "acc": the accumulator its body adds to`,
		}, "\n")},
		{"wrongname", `kernel: other
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64}]
driver: "f();"
bytes: n
flops: n
tolerance: 1
`, strings.Join([]string{
			`wrongname.yaml:1:9: kernel "other" must be described in other.yaml`,
			`wrongname.yaml:3:8: scalar "n" needs field "value"`,
			`wrongname.yaml:4:1: a driver needs uses: the kernels it calls`,
		}, "\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errs diag.List
			Parse(c.name+".yaml", []byte(c.src), &errs)
			require.Error(t, errs.Err())
			assert.Equal(t, c.want, errs.Err().Error())
		})
	}
}

func TestUsesUnknownKernel(t *testing.T) {
	dir := t.TempDir()
	src := `kernel: comp
size: {name: n, ci: [1], default: [1], gpu: [1]}
uses: [nosuch]
args: [{name: n, type: int64, value: size}]
driver: "return;"
bytes: n
flops: n
tolerance: 1
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comp.yaml"), []byte(src), 0o644))
	_, err := LoadDir(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "comp.yaml")+`:1:1: kernel "comp" uses unknown kernel "nosuch"`, err.Error())
}

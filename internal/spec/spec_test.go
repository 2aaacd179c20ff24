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
	// A composite may give its own reference (snap_step: one step for all).
	require.Contains(t, byName, "snap_step")
	assert.Nil(t, byName["snap_step"].Pattern)
	assert.Contains(t, byName["snap_step"].Reference, "accumulate_forces")
	assert.Empty(t, byName["cgsolve"].Reference)
	// A composite and the kernels it uses come from one paper: one family.
	for _, u := range byName["cgsolve"].Uses {
		assert.Equal(t, byName["cgsolve"].Family, byName[u].Family, u)
	}
}

// family is optional: a kernel without one is a family of its own.
func TestFamilyDefaultsToTheName(t *testing.T) {
	var errs diag.List
	src := "kernel: k\nfamily: mine\nsize: {name: n, ci: [3], default: [3], gpu: [3]}\nargs: []\n" +
		"pattern: {code: \"\"}\nreference: \"\"\nbytes: \"0\"\nflops: \"0\"\ntolerance: eps\n"
	k := Parse("k.yaml", []byte(src), &errs)
	require.NotNil(t, k)
	assert.Equal(t, "mine", k.Family)
	k = Parse("k.yaml", []byte(strings.Replace(src, "family: mine\n", "", 1)), &errs)
	require.NotNil(t, k)
	assert.Equal(t, "k", k.Family)
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
`, `unknownfield.yaml:9:1: unknown field "colour" in kernel description (known: args, bytes, bytes_min, doc, driver, family, flops, kernel, loops, pattern, reference, result, size, tolerance, tolerance_why, tunables, uses, vendor)`},
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
			`badpattern.yaml:11:12: tolerance is -1 at n=1 (size set ci): it must be positive and finite`,
		}, "\n")},
		{"reduce", `kernel: reduce
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}]
pattern: {range_reduce: {index: i, end: n, body: ";"}}
reference: ";"
bytes: n
flops: n
tolerance: 1e-9
`, strings.Join([]string{
			`reduce.yaml:4:1: range_reduce (or a team with acc) returns its sum: add result: double`,
			`reduce.yaml:4:25: range_reduce needs field "acc": the accumulator its body adds to`,
		}, "\n")},
		{"wrongname", `kernel: other
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64}]
driver: "f();"
bytes: n
flops: n
tolerance: 1e-9
`, strings.Join([]string{
			`wrongname.yaml:1:9: kernel "other" must be described in other.yaml`,
			`wrongname.yaml:3:8: scalar "n" needs field "value"`,
			`wrongname.yaml:4:1: a driver needs uses: the kernels it calls`,
		}, "\n")},
		{"loose", `kernel: loose
size: {name: n, ci: [10], default: [10], gpu: [10, 1000000]}
args:
  - {name: n, type: int64, value: size}
  - {name: y, type: "double[]", extent: n, intent: out}
pattern: {range_for: {index: i, end: n, body: "y[i] = 1;"}}
reference: ";"
bytes: 8.0 * n
bytes_min: 8.0 * n - 80
flops: n
tolerance: n * n * eps
`, strings.Join([]string{
			`loose.yaml:9:12: bytes_min is 0 at n=10 (size set ci): it must be positive and finite`,
			`loose.yaml:11:12: tolerance 0.000222 at n=1000000 (size set gpu) is loose (>= 1e-06): derive a bound from the kernel's arithmetic or give tolerance_why`,
		}, "\n")},
		{"infinite", `kernel: infinite
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}, {name: y, type: "double[]", extent: n, intent: out}]
pattern: {range_for: {index: i, end: n, body: "y[i] = 1;"}}
reference: ";"
bytes: n
flops: n
tolerance: 1.0 / (n - 1)
tolerance_why: ""
`, strings.Join([]string{
			`infinite.yaml:8:12: tolerance is +Inf at n=1 (size set ci): it must be positive and finite`,
			`infinite.yaml:9:16: tolerance_why must say why`,
		}, "\n")},
		{"unevaluable", `kernel: unevaluable
size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}, {name: y, type: "double[]", extent: n, intent: out}]
pattern: {range_for: {index: i, end: n, body: "y[i] = 1;"}}
reference: ";"
bytes: n
bytes_min: y
flops: n
tolerance: std::max(n, m) * eps
`, strings.Join([]string{
			`unevaluable.yaml:7:12: bytes_min: unknown name "y" (known: eps, n, size)`,
			`unevaluable.yaml:9:12: tolerance: cannot parse "std::max(n, m) * eps" as an arithmetic expression`,
		}, "\n")},
		{"indexlist", `kernel: indexlist
size: {name: n, ci: [3], default: [3], gpu: [3]}
args:
  - {name: n, type: int64, value: size}
  - {name: idx, type: "int64[]", extent: n, init: {formula: ""}, intent: in}
  - {name: out, type: "int64[]", extent: n, intent: out}
pattern: {range_for: {index: i, end: n, body: ";"}}
reference: ";"
bytes: n
flops: n
tolerance: eps
`, strings.Join([]string{
			`indexlist.yaml:5:61: formula needs a C++ expression of the element number k`,
			`indexlist.yaml:6:53: int64[] array "out" must be an input (the harness checks double outputs only)`,
		}, "\n")},
		{"requires", `kernel: requires
size: {name: n, ci: [1], default: [1], gpu: [1]}
args:
  - {name: A, type: csr, init: {minife27: size, requires: symmetric}}
  - {name: y, type: "double[]", extent: A.nrows, intent: in, init: {zero: true, requires: spd}}
pattern: {range_for: {index: i, end: A.nrows, body: ";"}}
reference: ";"
bytes: n
flops: n
tolerance: eps
`, strings.Join([]string{
			`requires.yaml:4:59: requires: spd goes with minife27: <grid> (a csr matrix a user may replace), not "symmetric"`,
			`requires.yaml:5:91: requires: spd goes with minife27: <grid> (a csr matrix a user may replace), not "spd"`,
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

// formula fills an array from its element number k: the real_zones list.
func TestFormulaInit(t *testing.T) {
	var errs diag.List
	src, err := os.ReadFile("../../templates/kernels/del_dot_vec_2d_zones.yaml")
	require.NoError(t, err)
	k := Parse("del_dot_vec_2d_zones.yaml", src, &errs)
	require.NoError(t, errs.Err())
	for _, a := range k.Args {
		if a.Name == "real_zones" {
			assert.Equal(t, Init{Kind: "formula", Expr: "2 + k % rows + (2 + k / rows) * jp"}, a.Init)
			return
		}
	}
	t.Fatal("no real_zones argument")
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
tolerance: 1e-9
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comp.yaml"), []byte(src), 0o644))
	_, err := LoadDir(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "comp.yaml")+`:1:1: kernel "comp" uses unknown kernel "nosuch"`, err.Error())
}

package spec

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The size rule, as the project load applies it (the repository's own
// kernels with its strategies' tunables: matrix.TestRepositoryKeepsTheSizeRule).
func TestSizeSetRule(t *testing.T) {
	kernel := func(ci, end string) string {
		return "kernel: k\nsize: {name: n, ci: " + ci + ", default: [1024], gpu: [4096]}\n" +
			"tunables: {tile: 3}\n" +
			"args:\n  - {name: n, type: int64, value: size}\n  - {name: x, type: \"double[]\", extent: 2 * n + 2, init: {random: [-1, 1]}, intent: inout}\n" +
			"pattern:\n  range_for:\n    index: i\n    end: " + end + "\n    body: x[i] = 2*x[i];\nreference: \"for (int64_t i = 0; i < n; ++i) x[i] = 2*x[i];\"\n" +
			"bytes: 16.0 * n\nflops: 1.0 * n\ntolerance: 4 * eps\n"
	}
	load := func(ci, end string, tunables ...int64) (diag.List, error) {
		var errs diag.List
		k := Parse("k.yaml", []byte(kernel(ci, end)), &errs)
		require.NoError(t, errs.Err())
		return CheckSizes([]*Kernel{k}, tunables)
	}
	// x's extent 2n + 2 is even at every size: only the loop's trip count
	// counts. 1001 = 7 x 11 x 13; the default and gpu sets are never refused.
	notes, err := load("[1001, 1000]", "n")
	assert.NoError(t, err)
	assert.Empty(t, notes)
	_, err = load("[1024, 1000]", "n", 7)
	assert.EqualError(t, err,
		`k.yaml:2:21: size set "ci" [1024, 1000]: loop i (range_for at line 8, over x) has a trip count (n) that is a multiple of a loop width `+
			`at every size of the set (at n = 1024: 1024 is a multiple of 1024), where a dropped remainder or an overrun does not show; `+
			`add a size at which it is not: 1025 (widths: 2, 3, 4, 7, 8, 16, 32, 64, 128, 256, 512, 1024)`)
	// The kernel's own tunable (3) is a width: 1023 = 3 x 11 x 31.
	_, err = load("[1023]", "n")
	assert.ErrorContains(t, err, "(at n = 1023: 1023 is a multiple of 3)")
	// A trip count of 2n is even at every size: a note at the loop, no refusal.
	notes, err = load("[1024]", "2 * n")
	assert.NoError(t, err)
	assert.EqualError(t, notes.Err(), `k.yaml:8:3: note: loop i (range_for at line 8, over x): its trip count 2 * n is a multiple of a loop width `+
		`(1024 at n = 1024) at every size from 1 to 1000, so no size shows a dropped remainder in it; the size rule does not refuse the kernel for it`)
	// A trip count that never changes is not checked; nor is a loop whose
	// body subscripts no array.
	notes, err = load("[1024]", "16")
	assert.NoError(t, err)
	assert.Empty(t, notes)
}

// A result off by a relative 1e-9 fails at every size of every kernel, and
// every tolerance is a bound above double rounding (> eps).
func TestTolerancesCatchOneInABillion(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	for _, k := range ks {
		for _, set := range SizeSets {
			for _, size := range k.Size.Sets[set] {
				tol, err := k.ToleranceAt(size)
				require.NoError(t, err)
				assert.Less(t, tol, 1e-9, "%s at %d", k.Name, size)
				assert.Greater(t, tol, Eps, "%s at %d", k.Name, size)
			}
		}
	}
}

func TestEval(t *testing.T) {
	env := Env{"n": intVal(7), "x": floatVal(0.5), "A.nrows": intVal(27)}
	cases := map[string]float64{
		"n / 2":             3,
		"n / 2.0":           3.5,
		"-n % 4":            -3,
		"(n + 1) * x":       4,
		"sqrt(A.nrows - 2)": 5,
		"1e-9 * n":          7e-9,
		"2 * 27 * eps":      54 * Eps,
	}
	env["eps"] = floatVal(Eps)
	for expr, want := range cases {
		v, err := Eval(expr, env)
		require.NoError(t, err, expr)
		assert.InDelta(t, want, v.Float(), 1e-15*math.Abs(want), expr)
	}
	for expr, want := range map[string]string{
		"n ? 1 : 2": `cannot parse "n ? 1 : 2" as an arithmetic expression`,
		"m * 2":     `unknown name "m" (known: A.nrows, eps, n, x)`,
		"pow(n, 2)": `unsupported expression CallExpr (use numbers, names, + - * / %, parentheses and sqrt)`,
		"n / 0":     `integer division by zero`,
		"x % 2":     `unsupported operator %`,
		"A.ncols":   `unknown name "A.ncols" (known: A.nrows, eps, n, x)`,
	} {
		_, err := Eval(expr, env)
		assert.EqualError(t, err, want, expr)
	}
}

func TestEnvOfCSR(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	env := ByName(ks)["cgsolve"].Env(10)
	assert.Equal(t, intVal(11*11*11), env["A.nrows"])
	assert.Equal(t, intVal(31*31*31), env["A.nnz"])
	assert.Equal(t, intVal(20), env["iters"])
	assert.Equal(t, intVal(10), env["size"])
}

func TestHolds(t *testing.T) {
	env := Env{"team_size": intVal(16), "vector_size": intVal(8), "max_threads_per_block": intVal(1024), "half": floatVal(0.5)}
	for cond, want := range map[string]bool{
		"team_size * vector_size <= max_threads_per_block":       true,
		"team_size * vector_size > 128":                          false,
		"team_size == 16 && vector_size != 8":                    false,
		"team_size == 16 && (vector_size != 8 || half < 1)":      true,
		"max_threads_per_block % (team_size * vector_size) == 0": true,
		"(team_size + 1) / 2 >= 8":                               true,
		"half * team_size == 8":                                  true,
	} {
		got, err := Holds(cond, env)
		if err != nil || got != want {
			t.Errorf("Holds(%q) = %v, %v; want %v", cond, got, err, want)
		}
	}
	for _, bad := range []string{"team_size * 2", "team_size <= warp_size", "team_size & 1 == 0", "team_size <="} {
		if _, err := Holds(bad, env); err == nil {
			t.Errorf("Holds(%q) accepted", bad)
		}
	}
	names, err := Names("sqrt(A.nnz) * team_size <= max_threads_per_block + team_size")
	if err != nil || strings.Join(names, " ") != "A.nnz max_threads_per_block team_size" {
		t.Errorf("Names = %v, %v", names, err)
	}
}

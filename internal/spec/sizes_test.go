package spec

import (
	"math"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Hardware widths a loop may be split by: SIMD lanes, warps, CUDA blocks.
var hardwareWidths = []int64{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

// widths are every tunable value of the kernel and of every strategy, and
// the hardware widths.
func widths(t *testing.T, k *Kernel) []int64 {
	seen := map[int64]bool{}
	for _, w := range hardwareWidths {
		seen[w] = true
	}
	for _, tu := range k.Tunables {
		seen[tu.Value] = true
	}
	data, err := os.ReadFile("../../variants/strategies.yaml")
	require.NoError(t, err)
	var doc struct {
		Strategies []struct {
			Tunables map[string]int64 `yaml:"tunables"`
			Knobs    []struct {
				Values []struct {
					Tunables map[string]int64 `yaml:"tunables"`
				} `yaml:"values"`
			} `yaml:"knobs"`
		} `yaml:"strategies"`
	}
	require.NoError(t, yaml.Unmarshal(data, &doc))
	for _, s := range doc.Strategies {
		for _, v := range s.Tunables {
			seen[v] = true
		}
		for _, kn := range s.Knobs {
			for _, val := range kn.Values {
				for _, v := range val.Tunables {
					seen[v] = true
				}
			}
		}
	}
	var out []int64
	for w := range seen {
		if w > 1 {
			out = append(out, w)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// checkedExtent is what the size check looks at for an array at a size: its
// extent, or the size itself where the extent is c * size at every size (a
// fixed block per unit of the size, e.g. HOMMEXX's NP x NP x NUM_LEV values
// per element: only the loop over the units can leave a remainder, and no
// size makes c * size odd when c is even); ok is false for an extent that
// is the same at every size (a table, e.g. a derivative matrix), which no
// choice of sizes changes.
func checkedExtent(t *testing.T, k *Kernel, a Arg, size int64) (v int64, ok bool) {
	at := func(s int64) int64 {
		x, err := Eval(a.Extent, k.Env(s))
		require.NoError(t, err, "%s: extent of %s", k.Name, a.Name)
		require.True(t, x.Int, "%s: extent of %s is not an integer", k.Name, a.Name)
		return x.I
	}
	one := at(1)
	constant, proportional := at(2) == one, at(2) == 2*one
	for _, set := range SizeSets {
		for _, s := range k.Size.Sets[set] {
			constant = constant && at(s) == one
			proportional = proportional && at(s) == s*one
		}
	}
	switch {
	case constant:
		return 0, false
	case proportional:
		return size, true
	}
	return at(size), true
}

// Every size set of every kernel holds a size at which no array's extent is
// a multiple of any team, vector or hardware width: a dropped remainder or an
// overrun shows there.
func TestSizesAreNotMultiplesOfWidths(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	for _, k := range ks {
		if slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Type == "snap" }) {
			// TestSNAP's extents follow from its generated system (atoms of a
			// bcc lattice, their neighbours), not from arithmetic on the size.
			t.Logf("%s: extents of a snap system are not checked here", k.Name)
			continue
		}
		ws := widths(t, k)
		for _, set := range SizeSets {
			ok := false
			for _, size := range k.Size.Sets[set] {
				clean := true
				for _, a := range k.Args {
					if !a.IsArray() {
						continue
					}
					v, ok := checkedExtent(t, k, a, size)
					if !ok {
						continue
					}
					for _, w := range ws {
						if v%w == 0 {
							clean = false
						}
					}
				}
				ok = ok || clean
			}
			assert.True(t, ok, "%s: size set %s %v: every size has an extent that is a multiple of one of %v",
				k.Name, set, k.Size.Sets[set], ws)
		}
	}
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

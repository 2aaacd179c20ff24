package spec

import (
	"math"
	"os"
	"slices"
	"sort"
	"strings"
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
				env := k.Env(size)
				clean := true
				for _, a := range k.Args {
					if !a.IsArray() {
						continue
					}
					v, err := Eval(a.Extent, env)
					require.NoError(t, err, "%s: extent of %s", k.Name, a.Name)
					require.True(t, v.Int, "%s: extent of %s is not an integer", k.Name, a.Name)
					for _, w := range ws {
						if v.I%w == 0 {
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

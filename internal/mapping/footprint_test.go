package mapping

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// flat is the element's index in the array's row-major layout.
func flat(a *loopnest.Array, env map[string]int64, addr []int64) int64 {
	x := int64(0)
	for d, i := range addr {
		x = x*a.Extent[d].Eval(env) + i
	}
	return x
}

// offsetAt evaluates the run's first element for one league index.
func offsetAt(f *footprint, env map[string]int64, league int64) int64 {
	e := map[string]int64{f.league: league}
	for k, v := range env {
		e[k] = v
	}
	x := int64(0)
	for d := range f.dims {
		stride := int64(1)
		for _, ext := range f.array.Extent[d+1:] {
			stride *= ext.Eval(e)
		}
		x += f.start(d).Eval(e) * stride
	}
	return x
}

// TestFootprintCoversAccesses: for random phased programs and the laplace
// kernel's loops, every element an iteration of the league loop touches lies
// in its footprint's run (the shifted pointer reaches only the team's own
// scratch), the run is as long as the box it holds, and a run that does not
// depend on the league index is the same for every iteration.
func TestFootprintCoversAccesses(t *testing.T) {
	sources := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 200 {
		sources[fmt.Sprintf("random %d", i)] = randomPhased(rng)
	}
	n := 0
	for name, src := range sources {
		p := loopnestOf(t, name, src)
		outer := p.Body[0].Loop
		for _, size := range []int64{3, 5} {
			consts := map[string]int64{"n": size}
			env := map[string]int64{"ne": 3, "n": size}
			for _, a := range p.Arrays {
				f, why := footprintOf(p, outer, a, consts)
				if f == nil {
					assert.Equal(t, "not accessed", why, name)
					continue
				}
				n++
				box := int64(1)
				for _, d := range f.dims {
					box *= d.hi - d.lo + 1
				}
				assert.GreaterOrEqual(t, f.elems, box, "%s: %s", name, f)
				p.Walk(env, func(in loopnest.Instance) {
					for _, acc := range in.Stmt.Accesses {
						if acc.Array != a {
							continue
						}
						league := in.Iter[outer.Depth]
						at := flat(a, env, acc.Address(env, in.Iter)) - offsetAt(f, env, league)
						if at < 0 || at >= f.elems {
							t.Errorf("%s: %s at %v is element %d of the run %s of %d", name, acc.Text, in.Iter, at, f, f.elems)
						}
						if f.invariant() {
							assert.Equal(t, offsetAt(f, env, 0), offsetAt(f, env, league))
						}
					}
				})
			}
		}
	}
	assert.Greater(t, n, 200)
}

// The footprints of the laplace kernel's arrays, their runs and offsets.
func TestFootprintLaplace(t *testing.T) {
	p := loopnestOf(t, "laplace", string(readKernel(t, "hommexx_laplace_simple_mapped")))
	outer := p.Body[0].Loop
	consts := map[string]int64{"np": 4, "nlev": 72}
	want := map[string]struct {
		run, offset  string
		elems, width int64
		invariant    bool
	}{
		"dvv":      {"dvv[0:4][0:4]", "0", 16, 4, true},
		"dinv":     {"dinv[ie][0:4][0:4][0:4]", "ie * 4 * np * np", 64, 4, false},
		"spheremp": {"spheremp[ie][0:4][0:4]", "ie * np * np", 16, 4, false},
		"field":    {"field[ie][0:4][0:4][0:72]", "ie * np * np * nlev", 1152, 72, false},
		"laplace":  {"laplace[ie][0:4][0:4][0:72]", "ie * np * np * nlev", 1152, 72, false},
		"work":     {"work[ie][0:2][0:4][0:4][0:72]", "ie * 2 * np * np * nlev", 2304, 72, false},
	}
	for _, a := range p.Arrays {
		f, why := footprintOf(p, outer, a, consts)
		require.Empty(t, why, a.Name)
		w := want[a.Name]
		assert.Equal(t, w.run, f.String(), a.Name)
		assert.Equal(t, w.offset, f.offset(), a.Name)
		assert.Equal(t, w.elems, f.elems, a.Name)
		assert.Equal(t, w.width, f.width, a.Name)
		assert.Equal(t, w.invariant, f.invariant(), a.Name)
	}
	// without nlev's value the levels have no constant range
	_, why := footprintOf(p, outer, p.Arrays[3], map[string]int64{"np": 4})
	assert.Contains(t, why, "uses nlev, which has no constant value")
}

// A part of a dimension: the run starts inside the array's slice.
func TestFootprintPartialRun(t *testing.T) {
	p := parse(t, "part.yaml", []byte(`loops:
  params: [ne, n]
  arrays: {X: [ne, n, n], Y: [ne, n]}
  body:
    - for:
        index: e
        to: ne
        body:
          - for:
              index: j
              from: 1
              to: n - 1
              body:
                - stmt: {reads: "X[e][2][j], X[e][3][j+1]", writes: "Y[e][j]"}
`))
	f, why := footprintOf(p, p.Body[0].Loop, p.Arrays[0], map[string]int64{"n": 6})
	require.Empty(t, why)
	assert.Equal(t, "X[e][2:4][0:6]", f.String())
	assert.Equal(t, "e * n * n + 2 * n", f.offset())
	assert.Equal(t, int64(12), f.elems)
	f, _ = footprintOf(p, p.Body[0].Loop, p.Arrays[1], map[string]int64{"n": 6})
	assert.Equal(t, "Y[e][1:5]", f.String())
	assert.Equal(t, "e * n + 1", f.offset())
	assert.Equal(t, int64(4), f.elems)
}

func readKernel(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "templates", "kernels", name+".yaml"))
	require.NoError(t, err)
	return data
}

package mapping

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// pairOfPhases: phase 1 writes B from A, phase 2 reads B at the given
// subscripts into C.
func pairOfPhases(read string) string {
	return program(`params: [ne, n]
assume: [ne >= 1, n >= 2]
arrays: {A: [ne, n, n], B: [ne, n, n], C: [ne, n, n]}`,
		loop("e", "ne",
			loop("i", "n - 1", loop("j", "n - 1", stmt(`name: first, reads: "A[e][i][j]", writes: "B[e][i][j]", code: ";"`))),
			loop("r", "n - 1", loop("c", "n - 1", stmt(`name: second, reads: "`+read+`", writes: "C[e][r][c]", code: "C[0] = B[0];"`)))))
}

// order numbers each statement instance in program order, keyed by the
// statement's source position and its iteration: the same key in a program
// and its fused copy.
func order(p *loopnest.Program, params map[string]int64) map[string]int {
	out := map[string]int{}
	p.Walk(params, func(in loopnest.Instance) {
		out[fmt.Sprint(in.Stmt.Pos, in.Iter)] = len(out)
	})
	return out
}

// sameDependences is an error unless every pair of instances touching one element
// (one writing) runs in the same order in the fused program as in p.
func sameDependences(p, fused *loopnest.Program, sizes []map[string]int64) error {
	for _, params := range sizes {
		before, after := order(p, params), order(fused, params)
		if len(after) != len(before) {
			return fmt.Errorf("%v: %d instances, fused %d", params, len(before), len(after))
		}
		type touch struct {
			key   string
			write bool
		}
		byElem := map[string][]touch{}
		p.Walk(params, func(in loopnest.Instance) {
			for _, a := range in.Stmt.Accesses {
				el := a.Array.Name + fmt.Sprint(a.Address(params, in.Iter))
				byElem[el] = append(byElem[el], touch{fmt.Sprint(in.Stmt.Pos, in.Iter), a.Write})
			}
		})
		for el, ts := range byElem {
			for i, x := range ts {
				for _, y := range ts[i+1:] {
					if (x.write || y.write) && (before[x.key] < before[y.key]) != (after[x.key] < after[y.key]) {
						return fmt.Errorf("%v: fusion reorders %s and %s on %s", params, x.key, y.key, el)
					}
				}
			}
		}
	}
	return nil
}

// A legal pair fuses (the barrier goes) and keeps every dependence's
// order; a pair that depend calls legal on the outer loops but that the
// inner band loops would reverse, one depend refutes, and one whose fusion
// would serialise a loop stay apart, behind their barrier.
func TestFusePhases(t *testing.T) {
	cases := []struct {
		name, read string
		fused      bool
		why        string
	}{
		{"same point", "B[e][r][c]", true, "fuse i and r: legal with the same bounds, and fusing the whole band (i, j) reverses no dependence; the team barrier before r goes"},
		{"a later column", "B[e][r][c+1]", false, "keep i and r apart: illegal for the whole band: in the fused nest anti read B[e][r][c+1] (second, k.yaml:27:54) -> write B[e][i][j] (first, k.yaml:18:75), loops (e,i,j) direction (=,=,<) distance (0,0,1) (second -> first)"},
		{"a later row", "B[e][r+1][c]", false, "keep i and r apart: illegal: flow write B[e][i][j]"},
		{"an earlier column", "B[e][r][c-1]", false, "keep i and r apart: legal, but the fused phase would map only 1 of the 2 loops each nest maps alone"},
	}
	sizes := []map[string]int64{{"ne": 2, "n": 2}, {"ne": 2, "n": 3}, {"ne": 2, "n": 5}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := pairOfPhases(c.read)
			if strings.Contains(c.read, "-1") {
				src = strings.Replace(src, "index: c\n                    to: n - 1", "index: c\n                    from: 1\n                    to: n - 1", 1)
				src = strings.Replace(src, "index: j\n                    to: n - 1", "index: j\n                    from: 1\n                    to: n - 1", 1)
			}
			p := parse(t, "k.yaml", []byte(src))
			r := depend.Analyze(p)
			fr, outer, decs := fusePhases(r, p.Body[0].Loop, 32, nil)
			require.Len(t, decs, 1)
			var b strings.Builder
			explainFusions(&b, decs)
			assert.Contains(t, b.String(), c.why)
			assert.Equal(t, c.fused, decs[0].fused)
			phases := mapPhases(fr, outer, 32, nil)
			if c.fused {
				require.Len(t, phases, 1)
				require.NoError(t, sameDependences(p, fr.Program, sizes))
				assert.Len(t, phases[0].mapped(), 2, "the fused phase keeps both loops parallel")
			} else {
				assert.Same(t, r, fr)
				require.Len(t, phases, 2)
				assert.NotNil(t, phases[1].barrier)
				if c.name == "a later column" { // the check sees what the fusion would break
					forced := fuseNests(p, p.Body[0].Loop.Body[0].Loop, p.Body[0].Loop.Body[1].Loop, 2)
					assert.Error(t, sameDependences(p, forced.p, sizes))
				}
			}
			// no two instances touching one element race under the mapping
			sizesOf(fr.Program, func(params map[string]int64) {
				require.NoError(t, checkPhaseRaces(fr.Program, phases, params))
			})
		})
	}
}

// laplace_simple's gradient and its contravariant components fuse (the
// second reads only its own point); the weak divergence reads the
// neighbours' and stays a phase behind a barrier; the fused program keeps
// every dependence's order.
func TestFuseLaplaceSimple(t *testing.T) {
	src, err := os.ReadFile("../../templates/kernels/hommexx_laplace_simple_mapped.yaml")
	require.NoError(t, err)
	p := loopnestOf(t, "laplace.yaml", string(src))
	r := depend.Analyze(p)
	fr, outer, decs := fusePhases(r, p.Body[0].Loop, 32, map[string]int64{"np": 4, "nlev": 72})
	require.Len(t, decs, 2)
	assert.True(t, decs[0].fused)
	assert.False(t, decs[1].fused)
	assert.Len(t, mapPhases(fr, outer, 32, nil), 2)
	require.NoError(t, sameDependences(p, fr.Program, []map[string]int64{{"num_elem": 2, "np": 3, "nlev": 2}, {"num_elem": 1, "np": 4, "nlev": 3}}))
}

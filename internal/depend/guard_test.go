package depend

import (
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// A statement's guard narrows its instances exactly: S1 writing b[i] and
// S2 reading b[i-1] in one loop from 1 is a dependence carried by i
// (distance 1); guarded to i = 1, S2 reads only b[0], which S1 never
// writes, and the dependence goes. Walk runs only the instances the guard
// allows.
func TestGuardNarrowsTheDomain(t *testing.T) {
	const src = `loops:
  params: [n]
  assume: [n >= 3]
  arrays: {b: [n], c: [n]}
  body:
    - for:
        index: i
        from: 1
        to: n
        body:
          - stmt: {name: S1, writes: "b[i]"}
          - stmt: {name: S2, reads: "b[i-1]", writes: "c[i]"}
`
	var errs diag.List
	p := loopnest.Parse("g.yaml", []byte(src), &errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	carried := func() int {
		n := 0
		for _, d := range Analyze(p).Deps {
			if d.Src.Stmt.Name == "S1" && d.Sink.Stmt.Name == "S2" {
				n++
				if d.Dists[0] != (Distance{Known: true, Value: 1}) {
					t.Errorf("distance %v, want 1", d.Dists[0])
				}
			}
		}
		return n
	}
	if n := carried(); n != 1 {
		t.Fatalf("%d dependences S1 -> S2 without guards, want 1", n)
	}
	// S2 only where i < 2 (1 - i >= 0): it reads b[0], which S1 never writes
	p.Stmts[1].Guard = []loopnest.Affine{{Const: 1, Terms: map[string]int64{"i": -1}}}
	if n := carried(); n != 0 {
		t.Errorf("%d dependences S1 -> S2 with S2 guarded to i = 1, want 0", n)
	}
	runs := 0
	p.Walk(map[string]int64{"n": 5}, func(in loopnest.Instance) {
		if in.Stmt.Name == "S2" {
			runs++
		}
	})
	if runs != 1 {
		t.Errorf("S2 ran %d times under its guard, want 1", runs)
	}
}

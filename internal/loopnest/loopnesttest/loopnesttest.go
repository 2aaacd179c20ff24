// Package loopnesttest holds what the tests of the loop-nest pipeline
// (depend, mapping) share: the brute-force enumeration of the pairs of
// instances that touch one element, default parameter values, and random
// programs.
package loopnesttest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// Event is one access of one statement instance.
type Event struct {
	Acc  *loopnest.Access
	Seq  int // instance number in program order
	Iter []int64
}

// Conflicts runs p at params and calls f for every pair of accesses to one
// element, one of them a write, by different instances, x's first: the
// true dependences at these values.
func Conflicts(p *loopnest.Program, params map[string]int64, f func(x, y Event)) {
	byAddr := map[string][]Event{}
	var order []string
	seq := 0
	p.Walk(params, func(in loopnest.Instance) {
		for _, a := range in.Stmt.Accesses {
			key := fmt.Sprint(a.Array.Name, a.Address(params, in.Iter))
			if byAddr[key] == nil {
				order = append(order, key)
			}
			byAddr[key] = append(byAddr[key], Event{Acc: a, Seq: seq, Iter: slices.Clone(in.Iter)})
		}
		seq++
	})
	for _, key := range order {
		events := byAddr[key]
		for i, x := range events {
			for _, y := range events[i+1:] {
				if x.Seq != y.Seq && (x.Acc.Write || y.Acc.Write) {
					f(x, y)
				}
			}
		}
	}
}

// Sizes are parameter values to enumerate a program at: every parameter
// over a few small values, jointly.
func Sizes(params int) [][]int64 {
	values := [][]int64{nil, {1, 2, 3, 4, 6}, {1, 2, 3, 5}, {1, 2, 4}}[min(params, 3)]
	out := [][]int64{{}}
	for range params {
		var next [][]int64
		for _, prefix := range out {
			for _, v := range values {
				next = append(next, append(append([]int64(nil), prefix...), v))
			}
		}
		out = next
	}
	return out
}

// RandomProgram returns a random program: the value of a loops: block
// (parameters n and maybe m, both assumed >= 1; arrays A[n], B[n][n] and a
// scalar s), nests up to depth 3 with triangular, skewed and min/max bounds,
// subscripts with coefficients up to 2 and accumulations.
func RandomProgram(rng *rand.Rand) string {
	g := &generator{rng: rng, params: []string{"n"}}
	if rng.IntN(3) == 0 {
		g.params = append(g.params, "m")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "params: [%s]\nassume: [n >= 1, %s >= 1]\narrays: {A: [n], B: [n, n], s: []}\nbody:\n", strings.Join(g.params, ", "), g.params[len(g.params)-1])
	for range 1 + rng.IntN(2) {
		b.WriteString("  - " + g.item(nil) + "\n")
	}
	return b.String()
}

type generator struct {
	rng    *rand.Rand
	params []string
}

func (g *generator) pick(list ...string) string { return list[g.rng.IntN(len(list))] }

func (g *generator) item(vars []string) string {
	if len(vars) < 3 && (len(vars) == 0 || g.rng.IntN(2) == 0) {
		return g.loop(vars)
	}
	return g.stmt(vars)
}

func (g *generator) loop(vars []string) string {
	index := []string{"i", "j", "k"}[len(vars)]
	lower, upper := g.pick("0", "1"), g.pick("n", "n - 1", g.params[len(g.params)-1])
	if len(vars) > 0 {
		v := vars[g.rng.IntN(len(vars))]
		lower = g.pick(lower, v, v+" - 1", "["+lower+", "+v+" - 1]")
		upper = g.pick(upper, v+" + 2", "["+upper+", "+v+" + 3]", "2*"+v+" + 1", v+" + n")
	}
	inner := append(append([]string(nil), vars...), index)
	items := []string{g.item(inner)}
	if g.rng.IntN(3) == 0 {
		items = append(items, g.item(inner))
	}
	return fmt.Sprintf("for: {index: %s, from: %s, to: %s, body: [%s]}", index, lower, upper, strings.Join(items, ", "))
}

func (g *generator) stmt(vars []string) string {
	var reads, writes []string
	for range 1 + g.rng.IntN(3) {
		if a := g.access(vars); g.rng.IntN(2) == 0 {
			writes = append(writes, a)
		} else {
			reads = append(reads, a)
		}
	}
	fields := []string{}
	if len(reads) > 0 {
		fields = append(fields, fmt.Sprintf("reads: %q", strings.Join(reads, ", ")))
	}
	if len(writes) > 0 {
		fields = append(fields, fmt.Sprintf("writes: %q", strings.Join(writes, ", ")))
	}
	if g.rng.IntN(4) == 0 {
		fields = append(fields, fmt.Sprintf("accumulate: %q", g.access(vars)))
	}
	return "stmt: {" + strings.Join(fields, ", ") + "}"
}

func (g *generator) access(vars []string) string {
	switch g.rng.IntN(5) {
	case 0:
		return "s"
	case 1, 2:
		return "A[" + g.affine(vars) + "]"
	}
	return "B[" + g.affine(vars) + "][" + g.affine(vars) + "]"
}

func (g *generator) affine(vars []string) string {
	var terms []string
	for _, v := range append(append([]string(nil), vars...), g.params...) {
		if c := []int{-2, -1, 0, 0, 0, 1, 1, 2}[g.rng.IntN(8)]; c != 0 {
			terms = append(terms, fmt.Sprintf("%d*%s", c, v))
		}
	}
	terms = append(terms, fmt.Sprint(g.rng.IntN(5)-2))
	return strings.Join(terms, " + ")
}

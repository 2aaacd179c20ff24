package mapping

// Fusion of two adjacent top-level nests with a shift (loop alignment) and
// guards: the second nest's iteration v runs with the first's v+s, over the
// union of the first's range and the second's shifted one, each body under
// a guard where its own range is not the whole. Where every dependence
// between the two nests has one constant distance d on the fused loop, the
// shift s = -d makes each loop-independent, so the fused loop stays
// parallel (a producer writing b[i] and a consumer reading b[i+1]: s = 1).
// Where the fused loop runs sequentially in both nests anyway, the least
// shift that reverses no dependence costs no parallelism (and the bands
// below fuse too where the lowering needs one band). Bounds that differ
// without a shift get the same guards.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// guard is one fact g >= 0 on the fused index, and its C++ condition.
type guard struct {
	fact loopnest.Affine
	cond string
}

// fusedRange is the fused loop's range for a shift: the union of a's
// range and b's shifted by s, and the guards of each body.
type fusedRange struct {
	lo, hi loopnest.Affine
	ga, gb []guard
}

// unionRange is the union of a's range and b's shifted by s, with each
// body's guards; an error when a bound is a list (a maximum or minimum) or
// two bounds differ by more than a constant (the union would be no affine
// range).
func unionRange(a, b *loopnest.Loop, s int64) (*fusedRange, error) {
	if len(a.Lower) != 1 || len(a.Upper) != 1 || len(b.Lower) != 1 || len(b.Upper) != 1 {
		return nil, fmt.Errorf("a bound of %s or %s is a list (a maximum or a minimum)", a.ID, b.ID)
	}
	t := a.Index
	la, ha := a.Lower[0], a.Upper[0]
	lb, hb := shiftBy(b.Lower[0], s), shiftBy(b.Upper[0], s)
	dl, okl := constDiff(la, lb)
	dh, okh := constDiff(ha, hb)
	if !okl || !okh {
		return nil, fmt.Errorf("their bounds differ by more than a constant (%s from %s to %s, %s shifted from %s to %s)", a.ID, la, ha, b.ID, lb, hb)
	}
	r := &fusedRange{lo: la, hi: ha}
	if dl > 0 { // b starts first
		r.lo = lb
	}
	if dh < 0 { // b ends last
		r.hi = hb
	}
	bounds := func(lo, hi loopnest.Affine) []guard {
		var out []guard
		if lo.String() != r.lo.String() { // t - lo >= 0
			out = append(out, guard{fact: minusAffine(index(t), lo), cond: fmt.Sprintf("%s >= %s", t, paren(lo.String()))})
		}
		if hi.String() != r.hi.String() { // hi - 1 - t >= 0
			out = append(out, guard{fact: shiftBy(minusAffine(hi, index(t)), -1), cond: fmt.Sprintf("%s < %s", t, paren(hi.String()))})
		}
		return out
	}
	r.ga, r.gb = bounds(la, ha), bounds(lb, hb)
	return r, nil
}

// describe says the fused loop's range and where each body runs.
func (r *fusedRange) describe(a, b *loopnest.Loop) string {
	where := func(gs []guard) string {
		if len(gs) == 0 {
			return "in every iteration"
		}
		var cs []string
		for _, g := range gs {
			cs = append(cs, g.cond)
		}
		return "where " + strings.Join(cs, " && ")
	}
	return fmt.Sprintf("the fused loop runs %s from %s to %s, %s's body %s, %s's %s", a.Index, r.lo, r.hi, a.ID, where(r.ga), b.ID, where(r.gb))
}

// shiftedFusion is a copy of p in which the top-level nests a and b are one
// loop over r: a's index, a's body then b's, b's index i read as a's minus
// s (in its subscripts, its loops' bounds and, through an alias, its C++),
// each body's statements under its guards (their facts for the analysis, an
// if around their C++), every loop keeping its ID. With depth d > 1 the
// bands below fuse too, d loops deep (b's band indices renamed to a's):
// their bounds must be the same. An error when a loop of b would take the
// name of one of a's fused indices, or the bands' bounds differ.
func shiftedFusion(p *loopnest.Program, a, b *loopnest.Loop, s int64, r *fusedRange, depth int) (*fusedProgram, error) {
	ab, bb := band(a), band(b)
	if depth > len(ab) || depth > len(bb) {
		return nil, fmt.Errorf("their bands are not %d loops deep", depth)
	}
	// b's band indices as a's: the outer one shifted
	type target struct {
		to  string
		off int64
	}
	sub := map[string]target{}
	taken := map[string]bool{}
	for k := 0; k < depth; k++ {
		off := int64(0)
		if k == 0 {
			off = -s
		}
		if bb[k].Index != ab[k].Index || off != 0 {
			sub[bb[k].Index] = target{to: ab[k].Index, off: off}
		}
		taken[ab[k].Index] = true
	}
	var inner func(body []loopnest.Node) error
	inner = func(body []loopnest.Node) error {
		for _, n := range body {
			if n.Loop == nil {
				continue
			}
			if !slices.Contains(bb[:depth], n.Loop) && taken[n.Loop.Index] {
				return fmt.Errorf("loop %s inside %s uses the name of a fused index (%s)", n.Loop.ID, b.ID, n.Loop.Index)
			}
			if err := inner(n.Loop.Body); err != nil {
				return err
			}
		}
		return nil
	}
	if err := inner(b.Body); err != nil {
		return nil, err
	}
	f := &fusedProgram{p: &loopnest.Program{Params: p.Params, Assume: p.Assume, Assumptions: p.Assumptions, Arrays: p.Arrays, Pos: p.Pos, Promote: p.Promote},
		stmtOrig: map[*loopnest.Stmt]*loopnest.Stmt{}, loopOrig: map[*loopnest.Loop]*loopnest.Loop{}}
	rewrite := func(xs []loopnest.Affine, on bool) []loopnest.Affine {
		if !on {
			return slices.Clone(xs)
		}
		out := make([]loopnest.Affine, len(xs))
		for i, x := range xs {
			out[i] = loopnest.Affine{Const: x.Const, Terms: map[string]int64{}}
			for name, c := range x.Terms {
				if t, ok := sub[name]; ok {
					name = t.to
					out[i].Const += c * t.off
				}
				out[i].Terms[name] += c
				if out[i].Terms[name] == 0 {
					delete(out[i].Terms, name)
				}
			}
		}
		return out
	}
	for k := 1; k < depth; k++ {
		if affines(rewrite(bb[k].Lower, true)) != affines(ab[k].Lower) || affines(rewrite(bb[k].Upper, true)) != affines(ab[k].Upper) {
			return nil, fmt.Errorf("band loops %s and %s have different bounds", ab[k].ID, bb[k].ID)
		}
	}
	newLoop := func(l, parent *loopnest.Loop, lower, upper []loopnest.Affine) *loopnest.Loop {
		n := &loopnest.Loop{Index: l.Index, ID: l.ID, Lower: lower, Upper: upper, Parent: parent, Pos: l.Pos, Order: len(f.p.Loops)}
		if parent != nil {
			n.Depth = parent.Depth + 1
		}
		f.p.Loops = append(f.p.Loops, n)
		f.loopOrig[n] = l
		return n
	}
	var copyBody func(body []loopnest.Node, parent *loopnest.Loop, on bool, gs []guard, alias string) []loopnest.Node
	copyBody = func(body []loopnest.Node, parent *loopnest.Loop, on bool, gs []guard, alias string) []loopnest.Node {
		var out []loopnest.Node
		for _, n := range body {
			if n.Loop != nil {
				l := newLoop(n.Loop, parent, rewrite(n.Loop.Lower, on), rewrite(n.Loop.Upper, on))
				l.Body = copyBody(n.Loop.Body, l, on, gs, alias)
				out = append(out, loopnest.Node{Loop: l})
				continue
			}
			o := n.Stmt
			st := &loopnest.Stmt{Name: o.Name, Loops: enclosingLoops(parent), Code: o.Code, Term: o.Term, Value: o.Value, Order: len(f.p.Stmts), Pos: o.Pos,
				Guard: rewrite(o.Guard, on)}
			var conds []string
			for _, g := range gs {
				st.Guard = append(st.Guard, g.fact)
				conds = append(conds, g.cond)
			}
			if alias != "" || len(conds) > 0 {
				// its code in its own names, under its guard (a term or
				// value becomes code, as in a fusion with aliases)
				code := stmtCode(o)
				if alias != "" {
					code = "{\n" + alias + indent(code) + "\n}"
				}
				if len(conds) > 0 {
					code = "if (" + strings.Join(conds, " && ") + ") {\n" + indent(code) + "\n}"
				}
				st.Code, st.Term, st.Value = code, "", ""
			}
			for _, acc := range o.Accesses {
				c := *acc
				c.Stmt, c.Subs = st, rewrite(acc.Subs, on)
				st.Accesses = append(st.Accesses, &c)
			}
			f.p.Stmts = append(f.p.Stmts, st)
			f.stmtOrig[st] = o
			out = append(out, loopnest.Node{Stmt: st})
		}
		return out
	}
	for i := 0; i < len(p.Body); i++ {
		n := p.Body[i]
		if n.Loop != a {
			f.p.Body = append(f.p.Body, copyBody(p.Body[i:i+1], nil, false, nil, "")...)
			continue
		}
		top := newLoop(a, nil, []loopnest.Affine{r.lo}, []loopnest.Affine{r.hi})
		in := top
		for _, l := range ab[1:depth] {
			c := newLoop(l, in, slices.Clone(l.Lower), slices.Clone(l.Upper))
			in.Body = []loopnest.Node{{Loop: c}}
			in = c
		}
		in.Body = copyBody(ab[depth-1].Body, in, false, r.ga, "")
		in.Body = append(in.Body, copyBody(bb[depth-1].Body, in, len(sub) > 0, r.gb, bandAlias(bb[:depth], ab[:depth], s))...)
		f.p.Body = append(f.p.Body, loopnest.Node{Loop: top})
		i++ // b is in it
	}
	return f, nil
}

// bandAlias declares the second nest's band indices under their own names:
// the outer one as the fused index minus s, the others as the first's. One
// alias that does not read its own name is written directly; others go
// through temporaries (a declaration cannot read the name it declares, and
// a later one must not read a name an earlier one declared).
func bandAlias(from, to []*loopnest.Loop, s int64) string {
	type alias struct{ name, value, reads string }
	var as []alias
	for k := range from {
		value := to[k].Index
		if k == 0 && s > 0 {
			value = fmt.Sprintf("%s - %d", value, s)
		} else if k == 0 && s < 0 {
			value = fmt.Sprintf("%s + %d", value, -s)
		}
		if value != from[k].Index {
			as = append(as, alias{from[k].Index, value, to[k].Index})
		}
	}
	if len(as) == 1 && as[0].reads != as[0].name {
		return fmt.Sprintf("  const int64_t %s = %s;\n", as[0].name, as[0].value)
	}
	var out string
	for _, a := range as {
		out += fmt.Sprintf("  const int64_t pm_shifted_%s = %s;\n", a.name, a.value)
	}
	for _, a := range as {
		out += fmt.Sprintf("  const int64_t %s = pm_shifted_%s;\n", a.name, a.name)
	}
	return out
}

// shiftDeps are the dependences of the program fused with a shift between
// a statement of the first nest and one of the second (reductions aside),
// each with the second's iteration minus the first's on the fused loop
// (Known false where not constant), in the fused program's order: a
// dependence from the second's statement to the first's runs backward.
type shiftDep struct {
	dep      *depend.Dep
	dist     depend.Distance
	backward bool
}

func shiftDeps(fr *depend.Result, f *fusedProgram, a, b *loopnest.Loop) []shiftDep {
	var out []shiftDep
	for _, d := range fr.Deps {
		src, sink := f.stmtOrig[d.Src.Stmt], f.stmtOrig[d.Sink.Stmt]
		if d.Reduction || src == nil || sink == nil || len(d.Loops) == 0 {
			continue
		}
		switch {
		case within(src, a) && within(sink, b):
			out = append(out, shiftDep{dep: d, dist: d.Dists[0]})
		case within(src, b) && within(sink, a):
			dist := d.Dists[0]
			dist.Value = -dist.Value
			out = append(out, shiftDep{dep: d, dist: dist, backward: true})
		}
	}
	return out
}

// chooseShift is the shift for fusing a and b, from the dependences of the
// fusion without a shift (deps): where every distance is one constant d and
// the fused loop may run in parallel (parallel), -d, which makes each
// loop-independent; otherwise the least shift that runs none backward (0
// when none does). false when a distance is not constant and a dependence
// runs backward. dists are the distinct distances, in order.
func chooseShift(deps []shiftDep, parallel bool) (s int64, dists []int64, ok bool) {
	known, backward := true, false
	for _, d := range deps {
		backward = backward || d.backward
		if !d.dist.Known {
			known = false
			continue
		}
		if !slices.Contains(dists, d.dist.Value) {
			dists = append(dists, d.dist.Value)
		}
	}
	slices.Sort(dists)
	switch {
	case !known:
		return 0, dists, !backward
	case len(dists) == 1 && parallel:
		return -dists[0], dists, true
	case len(dists) > 0:
		return max(0, -dists[0]), dists, true
	}
	return 0, dists, true
}

// shiftText says a shift: "i#2's iteration v run with i#1's v+1".
func shiftText(a, b *loopnest.Loop, s int64) string {
	switch {
	case s > 0:
		return fmt.Sprintf("%s's iteration v run with %s's v+%d", b.ID, a.ID, s)
	case s < 0:
		return fmt.Sprintf("%s's iteration v run with %s's v-%d", b.ID, a.ID, -s)
	}
	return fmt.Sprintf("%s's iteration v run with %s's v", b.ID, a.ID)
}

func shiftBy(x loopnest.Affine, c int64) loopnest.Affine {
	out := loopnest.Affine{Const: x.Const + c, Terms: map[string]int64{}}
	for n, v := range x.Terms {
		out.Terms[n] = v
	}
	return out
}

func minusAffine(x, y loopnest.Affine) loopnest.Affine {
	out := shiftBy(x, -y.Const)
	for n, v := range y.Terms {
		out.Terms[n] -= v
		if out.Terms[n] == 0 {
			delete(out.Terms, n)
		}
	}
	return out
}

func index(name string) loopnest.Affine {
	return loopnest.Affine{Terms: map[string]int64{name: 1}}
}

// constDiff is x - y when it is a constant.
func constDiff(x, y loopnest.Affine) (int64, bool) {
	d := minusAffine(x, y)
	return d.Const, len(d.Terms) == 0
}

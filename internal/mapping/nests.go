package mapping

// Several top-level nests: a kernel whose loops are two or more nests one
// after the other (a producer and its consumer; a sweep and its copy back).
// Each nest is mapped on its own, as a kernel of one nest is, and the nests
// run as launches in order, the way a composite kernel runs its parallel
// loops. Two adjacent nests become one launch only where fusing their outer
// loops is legal (no dependence between them would run backward), with a
// shift where every dependence between them has one constant distance (the
// second nest's iteration v run with the first's v+s, each dependence
// loop-independent) and guards where the ranges differ (shift.go), and the
// fused nest runs as many loops in parallel as each did alone: the outer
// loop then goes to the league once, and where the second nest reads what
// other points of the first wrote in the same iteration the fused loop is
// phased, a team barrier between the two (phases.go). Where the distances
// are mixed, no shift keeps the fused loop parallel: explain names them,
// and the nests stay apart.

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// launchInfo is what the lowering of one nest tells the choice among
// fusions: how many loops it runs in parallel (a band: its mapped loops;
// phased: the outer loop and the fewest any phase maps), whether it is
// phased, and the dependences its team barriers order.
type launchInfo struct {
	parallel int
	phased   bool
	barriers []*depend.Dep
}

// launch is one top-level nest of the kernel as it will run: its loop in
// the current program, the original nests it fuses, and its lowering.
type launch struct {
	loop   *loopnest.Loop
	nests  []*loopnest.Loop // the kernel's own top-level loops, in order
	kernel *spec.Kernel     // the kernel of this nest alone, lowered
	info   launchInfo
}

// nestDecision is the choice for two adjacent nests (as the fusions so far
// left them).
type nestDecision struct {
	first, second string
	fused         bool
	why           string
}

// lowerNests lowers a kernel of two or more top-level nests.
func lowerNests(k *spec.Kernel, m *machine.Model, errs *diag.List) {
	p := k.Loops
	var tops []*loopnest.Loop
	for _, n := range p.Body {
		if n.Stmt != nil {
			errs.Add(n.Stmt.Pos, "loops: kernel %s: statement %s is outside every loop; a kernel of several top-level nests is lowered a launch per nest (put the statement in a loop from 0 to 1)", k.Name, n.Stmt.Name)
			return
		}
		tops = append(tops, n.Loop)
	}
	r := depend.Analyze(p)

	// Each nest alone: a nest that cannot be lowered refuses the kernel.
	cur := copyProgram(p, p.Body)
	var launches []*launch
	for i, n := range cur.Body {
		l := &launch{loop: n.Loop, nests: []*loopnest.Loop{tops[i]}}
		sk := subKernel(k, copyProgram(p, cur.Body[i:i+1]))
		if err := lowerOne(sk, m, &l.info); err != nil {
			errs.Add(tops[i].Pos, "loops: kernel %s: nest %s: %v", k.Name, tops[i].ID, err)
			return
		}
		l.kernel = sk
		launches = append(launches, l)
	}

	// Fusions, first to last, a fused nest trying its next neighbour.
	var decisions []nestDecision
	for i := 0; i+1 < len(launches); {
		a, b := launches[i], launches[i+1]
		rc := depend.Analyze(cur)
		next, fused, why := tryFuseNests(k, m, p, cur, rc, a, b)
		decisions = append(decisions, nestDecision{first: a.loop.ID, second: b.loop.ID, fused: fused != nil, why: why})
		if fused == nil {
			i++
			continue
		}
		cur = next
		fused.nests = append(slices.Clone(a.nests), b.nests...)
		launches = slices.Replace(launches, i, i+2, fused)
		for j, l := range launches {
			l.loop = cur.Body[j].Loop
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "kernel of %d top-level loop nests:", len(tops))
	for _, t := range tops {
		fmt.Fprintf(&b, " %s (%s)", t.ID, t.Pos)
	}
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "  dependences between nests (every instance of the first runs before every instance of the second):")
	for i, x := range tops {
		for _, y := range tops[i+1:] {
			deps := nestDeps(r, x, y)
			fmt.Fprintf(&b, "    %s -> %s: ", x.ID, y.ID)
			if len(deps) == 0 {
				fmt.Fprintln(&b, "none")
				continue
			}
			fmt.Fprintln(&b, count(len(deps), "dependence"))
			for j, d := range deps {
				if j == 3 {
					fmt.Fprintf(&b, "      and %d more\n", len(deps)-3)
					break
				}
				fmt.Fprintf(&b, "      %s\n", d)
			}
		}
	}
	for _, d := range decisions {
		fmt.Fprintf(&b, "  %s and %s: %s\n", d.first, d.second, d.why)
	}
	if len(launches) == 1 {
		l := launches[0]
		fmt.Fprintf(&b, "one launch: nest %s (%s), fused from %s\n", l.loop.ID, l.loop.Pos, ids(l.nests))
		b.WriteString(indent(strings.TrimRight(l.kernel.Mapping, "\n")) + "\n")
		k.Pattern = l.kernel.Pattern
		k.Tunables = l.kernel.Tunables
		k.Mapping = b.String()
		return
	}
	// The tuner knows one pair of mapper tunables per kernel (a search space
	// each, variants/tuning.yaml): they are the first launch's sizes, and
	// every launch whose model chose the same; a launch whose sizes differ
	// has them as constants.
	first := launchSizes(launches[0].kernel, len(k.Tunables))
	fmt.Fprintf(&b, "%d launches in order, each mapped on its own; the tunables %s and %s are the first launch's sizes (team %d, vector %d) and every launch's with the same, another launch's are constants\n",
		len(launches), TeamTunable, VectorTunable, first[TeamTunable], first[VectorTunable])
	top := &spec.Node{Kind: spec.Launches, Pos: p.Pos}
	for g, l := range launches {
		from := ""
		if len(l.nests) > 1 {
			from = ", fused from " + ids(l.nests)
		}
		fmt.Fprintf(&b, "launch %d of %d: nest %s (%s)%s\n", g+1, len(launches), l.loop.ID, l.loop.Pos, from)
		mine := launchSizes(l.kernel, len(k.Tunables))
		text := l.kernel.Mapping
		if mine[TeamTunable] != first[TeamTunable] || mine[VectorTunable] != first[VectorTunable] {
			names := map[string]string{TeamTunable: fmt.Sprint(mine[TeamTunable]), VectorTunable: fmt.Sprint(mine[VectorTunable])}
			renameTree(l.kernel.Pattern, names)
			text += fmt.Sprintf("  its sizes differ from the first launch's: team %d and vector %d are constants of its code\n", mine[TeamTunable], mine[VectorTunable])
		}
		b.WriteString(indent(strings.TrimRight(text, "\n")) + "\n")
		top.Body = append(top.Body, l.kernel.Pattern)
	}
	k.Tunables = launches[0].kernel.Tunables
	k.Pattern = top
	k.Mapping = b.String()
}

// tryFuseNests fuses the outer loops of the adjacent nests a and b of cur
// when that is legal, with a shift where every dependence between them has
// one constant distance on the fused loop (it becomes loop-independent) or
// where the fused loop runs sequentially in both anyway, with guards where
// the ranges differ, and the fused nest runs as many loops in parallel as
// each did alone. It returns the new program and the fused launch, or nil,
// and why.
func tryFuseNests(k *spec.Kernel, m *machine.Model, orig, cur *loopnest.Program, rc *depend.Result, a, b *launch) (*loopnest.Program, *launch, string) {
	i := slices.IndexFunc(rc.Fusions, func(f depend.Fusion) bool { return f.First == a.loop && f.Second == b.loop })
	if i < 0 {
		return nil, nil, "separate launches, in order: fusion not judged by the dependence analysis"
	}
	p := &nestPair{k: k, m: m, orig: orig, cur: cur, a: a, b: b, f: rc.Fusions[i],
		parallel: rc.Verdict(a.loop).Parallel || rc.Verdict(b.loop).Parallel,
		ia:       slices.IndexFunc(cur.Body, func(n loopnest.Node) bool { return n.Loop == a.loop })}
	p.illegal = illegalFusion(p.f, a.loop, b.loop)
	sh, why := p.shift()
	if sh == nil {
		return nil, nil, why
	}
	if sh.s == 0 && p.f.SameBounds && p.f.Legal {
		return fuseSame(k, m, orig, cur, a, b, p.ia)
	}
	fp, r, why := p.fusedAt(sh)
	if fp == nil {
		return nil, nil, why
	}
	l, fp, deep, why := p.lower(sh, fp, r)
	if l == nil {
		return nil, nil, why
	}
	if want := max(a.info.parallel, b.info.parallel); l.info.parallel < want {
		return nil, nil, fmt.Sprintf("separate launches, in order: fusing with %s is legal, but the fused nest would run %d loops in parallel where each alone runs up to %d", sh.shifted, l.info.parallel, want)
	}
	return fp.p, l, p.fusedText(sh, r, fp.p.Body[p.ia].Loop, deep, l.info)
}

// nestPair is two adjacent nests a and b of cur (the kernel's program orig
// as the fusions so far left it) that may become one launch: the
// dependence analysis's judgement of fusing them, why that fusion is
// illegal ("" where it is legal), whether either outer loop runs in
// parallel alone, and a's place among cur's top-level nests (the fused
// nest's).
type nestPair struct {
	k         *spec.Kernel
	m         *machine.Model
	orig, cur *loopnest.Program
	a, b      *launch
	f         depend.Fusion
	illegal   string
	parallel  bool
	ia        int
}

// nestShift is the shift for fusing a pair, said as in the explanation
// ("a shift of 1 (...)"), and the fusion without a shift it was chosen
// from: the distinct distances on its fused loop, its range, program and
// analysis (nil where that fusion was not built).
type nestShift struct {
	s       int64
	shifted string
	dists   []int64
	r0      *fusedRange
	f0      *fusedProgram
	fr0     *depend.Result
}

// illegalFusion says why fusing a and b is illegal, the first dependence
// that would run backward; "" when the fusion is legal.
func illegalFusion(f depend.Fusion, a, b *loopnest.Loop) string {
	if f.Legal {
		return ""
	}
	return fmt.Sprintf("separate launches, in order: fusing %s and %s is illegal: %s would run backward (%s)", a.ID, b.ID, count(len(f.Preventing), "dependence"), f.Preventing[0])
}

// shiftPhrase says the shift s: "a shift of 1 (i#2's iteration v run with
// i#1's v+1)".
func shiftPhrase(a, b *loopnest.Loop, s int64) string {
	return fmt.Sprintf("a shift of %d (%s)", s, shiftText(a, b, s))
}

// shift is the shift for fusing the pair, chosen from the dependences of
// the fusion without one (guards where the ranges differ), or nil and why
// the nests stay apart: that fusion cannot be built, a distance is not
// constant, or the distances differ on a fused loop that either nest ran
// in parallel alone. Where the union of the ranges is no affine range,
// only a legal fusion with the same bounds goes on: the shift is 0 and no
// fusion is built.
func (p *nestPair) shift() (*nestShift, string) {
	a, b := p.a.loop, p.b.loop
	r0, err := unionRange(a, b, 0)
	if err != nil {
		switch {
		case !p.f.Legal:
			if s, ok := fusionShift(p.f); ok {
				return nil, fmt.Sprintf("%s; %s would make it legal, but %v", p.illegal, shiftPhrase(a, b, s), err)
			}
			return nil, p.illegal + "; no constant shift makes it legal (a distance that is not constant)"
		case !p.f.SameBounds:
			return nil, fmt.Sprintf("separate launches, in order: fusing is legal, but %v", err)
		}
		return &nestShift{s: 0, shifted: shiftPhrase(a, b, 0)}, ""
	}
	f0, err := shiftedFusion(p.cur, a, b, 0, r0, 1)
	if err != nil {
		return nil, "separate launches, in order: " + err.Error()
	}
	fr0 := depend.Analyze(f0.p)
	s, dists, ok := chooseShift(shiftDeps(fr0, f0, a, b), p.parallel)
	if !ok {
		return nil, p.illegal + "; no constant shift makes it legal (a distance that is not constant)"
	}
	sh := &nestShift{s: s, shifted: shiftPhrase(a, b, s), dists: dists, r0: r0, f0: f0, fr0: fr0}
	if v := fr0.Verdict(f0.p.Body[p.ia].Loop); s == 0 && p.parallel && !v.Parallel {
		return nil, p.mixedDistances(sh, v)
	}
	return sh, ""
}

// mixedDistances says why a fused loop that carries a dependence (v's
// first) keeps the nests apart where either ran in parallel alone: the
// distances of the dependences between them differ, so no one shift makes
// them all loop-independent.
func (p *nestPair) mixedDistances(sh *nestShift, v depend.LoopVerdict) string {
	why := p.illegal
	if why == "" {
		why = fmt.Sprintf("separate launches, in order: fusing %s and %s is legal", p.a.loop.ID, p.b.loop.ID)
	}
	if sh.s != 0 {
		why += fmt.Sprintf("; %s would make it legal", sh.shifted)
	}
	return fmt.Sprintf("%s, but the dependences between them have distances %s on the fused loop, so no one shift makes them all loop-independent: the fused loop would carry %s and could not run in parallel",
		why, distances(sh.dists), v.Carried[0])
}

// fusedAt is the pair fused with the shift sh (the fusion without a shift
// where sh is 0) and its range, when no dependence between them runs
// backward and, where either nest's loop ran in parallel, the fused loop
// carries none; or nil and why not.
func (p *nestPair) fusedAt(sh *nestShift) (*fusedProgram, *fusedRange, string) {
	a, b := p.a.loop, p.b.loop
	fp, r, fr := sh.f0, sh.r0, sh.fr0
	if sh.s != 0 || fp == nil {
		var err error
		if r, err = unionRange(a, b, sh.s); err != nil {
			return nil, nil, fmt.Sprintf("separate launches, in order: fusing with %s: %v", sh.shifted, err)
		}
		if fp, err = shiftedFusion(p.cur, a, b, sh.s, r, 1); err != nil {
			return nil, nil, fmt.Sprintf("separate launches, in order: fusing with %s: %v", sh.shifted, err)
		}
		fr = depend.Analyze(fp.p)
	}
	for _, d := range shiftDeps(fr, fp, a, b) {
		if d.backward {
			return nil, nil, fmt.Sprintf("separate launches, in order: fused with %s, %s would run backward", sh.shifted, d.dep)
		}
	}
	if v := fr.Verdict(fp.p.Body[p.ia].Loop); p.parallel && !v.Parallel {
		return nil, nil, p.mixedDistances(sh, v)
	}
	return fp, r, ""
}

// lower lowers the fused nest of fp. Where it is not lowered and neither
// nest's outer loop ran in parallel alone, their bands fuse too, as one
// nest (fuseBands). It returns the launch, the program it came from and what
// fused below the outer loop ("" when only that loop did), or nil and why
// not.
func (p *nestPair) lower(sh *nestShift, fp *fusedProgram, r *fusedRange) (*launch, *fusedProgram, string, string) {
	fp.p.Assumptions, fp.p.Promote = p.orig.Assumptions, p.orig.Promote
	l := &launch{}
	sk := subKernel(p.k, copyProgram(p.orig, fp.p.Body[p.ia:p.ia+1]))
	deep := ""
	if err := lowerOne(sk, p.m, &l.info); err != nil {
		if p.parallel {
			return nil, nil, "", fmt.Sprintf("separate launches, in order: fusing with %s is legal, but the fused nest is not lowered (%v)", sh.shifted, err)
		}
		// A sequential fused loop around the two nests' bands is not
		// lowered; with the bands fused too it may be, as one nest.
		dp, dsk, dinfo, d := fuseBands(p.k, p.m, p.orig, p.cur, p.a.loop, p.b.loop, sh.s, r, p.ia)
		if dp == nil {
			return nil, nil, "", fmt.Sprintf("separate launches, in order: %s and %s each run sequentially alone, so a shift costs no parallelism; fusing with %s is legal, but the fused nest is not lowered (%v), nor with their bands fused", p.a.loop.ID, p.b.loop.ID, sh.shifted, err)
		}
		fp, sk, l.info = dp, dsk, dinfo
		deep = fmt.Sprintf("the bands fused %d loops deep (%s), as one nest; ", d, ids(band(fp.p.Body[p.ia].Loop)[:d]))
	}
	l.kernel = sk
	return l, fp, deep, ""
}

// fusedText says why the pair is one launch with the shift sh: what the
// shift or the fusion keeps, the fused loop fl's range r and each body's
// guards, what fused below the outer loop (deep) and how the fused nest
// runs the two bodies.
func (p *nestPair) fusedText(sh *nestShift, r *fusedRange, fl *loopnest.Loop, deep string, info launchInfo) string {
	a, b := p.a.loop, p.b.loop
	var why string
	switch {
	case sh.s != 0 && p.parallel:
		why = fmt.Sprintf("one launch: fusing with %s makes every dependence between them loop-independent (distance %d becomes 0), so the fused loop stays parallel; ", sh.shifted, -sh.s)
	case sh.s != 0:
		why = fmt.Sprintf("one launch: fusing with %s runs no dependence between them backward; %s and %s each run sequentially alone, so the fused loop loses no parallelism; ", sh.shifted, a.ID, b.ID)
	case p.parallel:
		why = "one launch: fusing is legal (no dependence between them runs backward) and keeps the loops parallel; their bounds differ: "
	default:
		why = fmt.Sprintf("one launch: fusing is legal (no dependence between them runs backward); %s and %s each run sequentially alone; their bounds differ: ", a.ID, b.ID)
	}
	return why + r.describe(fl, b) + "; " + deep + bodiesText(a, info)
}

// fuseBands fuses the sequential nests a and b with the shift s and their
// bands below the outer loop too, as deep as their bounds agree, when no
// dependence between them then runs backward and the fused nest lowers:
// the program, its kernel, its lowering and the depth, or nil.
func fuseBands(k *spec.Kernel, m *machine.Model, orig, cur *loopnest.Program, a, b *loopnest.Loop, s int64, r *fusedRange, ia int) (*fusedProgram, *spec.Kernel, launchInfo, int) {
	best := 0
	for d := 2; ; d++ {
		if _, err := shiftedFusion(cur, a, b, s, r, d); err != nil {
			break
		}
		best = d
	}
	for d := best; d >= 2; d-- {
		fp, _ := shiftedFusion(cur, a, b, s, r, d)
		fr := depend.Analyze(fp.p)
		if slices.ContainsFunc(shiftDeps(fr, fp, a, b), func(x shiftDep) bool { return x.backward }) {
			continue
		}
		fp.p.Assumptions, fp.p.Promote = orig.Assumptions, orig.Promote
		var info launchInfo
		sk := subKernel(k, copyProgram(orig, fp.p.Body[ia:ia+1]))
		if lowerOne(sk, m, &info) == nil {
			return fp, sk, info, d
		}
	}
	return nil, nil, launchInfo{}, 0
}

// fuseSame fuses a and b, legal with the same bounds and no shift, when the
// fused nest (at ia among the top-level nests) lowers and keeps the loops
// parallel.
func fuseSame(k *spec.Kernel, m *machine.Model, orig, cur *loopnest.Program, a, b *launch, ia int) (*loopnest.Program, *launch, string) {
	fp := fuseNests(cur, a.loop, b.loop, 1)
	for n, o := range fp.loopOrig {
		n.ID = o.ID
	}
	fp.p.Assumptions, fp.p.Promote = orig.Assumptions, orig.Promote
	l := &launch{}
	sk := subKernel(k, copyProgram(orig, fp.p.Body[ia:ia+1]))
	if err := lowerOne(sk, m, &l.info); err != nil {
		return nil, nil, fmt.Sprintf("separate launches, in order: fusing is legal, but the fused nest is not lowered (%v)", err)
	}
	l.kernel = sk
	if want := max(a.info.parallel, b.info.parallel); l.info.parallel < want {
		return nil, nil, fmt.Sprintf("separate launches, in order: fusing is legal with the same bounds, but the fused nest would run %d loops in parallel where each alone runs up to %d", l.info.parallel, want)
	}
	why := "one launch: fusing is legal with the same bounds (no dependence between them runs backward) and the fused nest runs as many loops in parallel as each alone; "
	return fp.p, l, why + bodiesText(a.loop, l.info)
}

// bodiesText says how the fused nest runs the two bodies.
func bodiesText(a *loopnest.Loop, info launchInfo) string {
	switch {
	case info.phased && len(info.barriers) > 0:
		return fmt.Sprintf("%s on the league, a team per iteration, the nests phases of the team with a team barrier where a dependence crosses them (%s stays within the team)", a.ID, info.barriers[0])
	case info.phased:
		return fmt.Sprintf("%s on the league, a team per iteration, the nests phases of the team with no barrier needed", a.ID)
	}
	return "each iteration runs both bodies in the same thread and lane"
}

// distances writes distinct distances: "-1 and 1", "0, 1 and 2".
func distances(ds []int64) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprint(d))
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// fusionShift is the least s such that fusing with the second loop's
// iteration v run together with the first's v+s reverses no dependence:
// each preventing dependence goes from the first's iteration u to the
// second's w < u, so s is the largest u - w; false when a distance is not
// constant.
func fusionShift(f depend.Fusion) (int64, bool) {
	s := int64(0)
	for _, d := range f.Preventing {
		dist := d.Dists[len(d.Dists)-1]
		if !dist.Known {
			return 0, false
		}
		s = max(s, -dist.Value)
	}
	return s, s > 0
}

// nestDeps are the dependences from a statement of nest x to one of nest y.
func nestDeps(r *depend.Result, x, y *loopnest.Loop) []*depend.Dep {
	var out []*depend.Dep
	for _, d := range r.Deps {
		if within(d.Src.Stmt, x) && within(d.Sink.Stmt, y) {
			out = append(out, d)
		}
	}
	return out
}

// subKernel is a copy of k whose loops are q, not yet lowered.
func subKernel(k *spec.Kernel, q *loopnest.Program) *spec.Kernel {
	c := *k
	c.Loops, c.Pattern, c.Mapping = q, nil, ""
	c.Tunables = slices.Clone(k.Tunables)
	return &c
}

// copyProgram is a program of p's parameters, assumptions and arrays whose
// body is a copy of items (loops and statements numbered afresh, each loop
// keeping its ID and position).
func copyProgram(p *loopnest.Program, items []loopnest.Node) *loopnest.Program {
	q := &loopnest.Program{Params: p.Params, Assume: p.Assume, Assumptions: p.Assumptions, Arrays: p.Arrays, Pos: p.Pos, Promote: p.Promote}
	var cp func(body []loopnest.Node, parent *loopnest.Loop) []loopnest.Node
	cp = func(body []loopnest.Node, parent *loopnest.Loop) []loopnest.Node {
		var out []loopnest.Node
		for _, n := range body {
			if n.Stmt != nil {
				s := &loopnest.Stmt{Name: n.Stmt.Name, Loops: enclosingLoops(parent), Code: n.Stmt.Code, Term: n.Stmt.Term, Value: n.Stmt.Value, Order: len(q.Stmts), Pos: n.Stmt.Pos, Guard: n.Stmt.Guard}
				for _, acc := range n.Stmt.Accesses {
					c := *acc
					c.Stmt = s
					s.Accesses = append(s.Accesses, &c)
				}
				q.Stmts = append(q.Stmts, s)
				out = append(out, loopnest.Node{Stmt: s})
				continue
			}
			l := &loopnest.Loop{Index: n.Loop.Index, ID: n.Loop.ID, Lower: n.Loop.Lower, Upper: n.Loop.Upper, Parent: parent, Pos: n.Loop.Pos, Order: len(q.Loops)}
			if parent != nil {
				l.Depth = parent.Depth + 1
			}
			q.Loops = append(q.Loops, l)
			l.Body = cp(n.Loop.Body, l)
			out = append(out, loopnest.Node{Loop: l})
		}
		return out
	}
	q.Body = cp(items, nil)
	return q
}

// launchSizes are the mapper's tunables a lowered kernel added after its own n.
func launchSizes(k *spec.Kernel, n int) map[string]int64 {
	out := map[string]int64{}
	for _, t := range k.Tunables[n:] {
		out[t.Name] = t.Value
	}
	return out
}

// renameTunables replaces the mapper's tunables in C++ text (by a launch's
// constants).
func renameTunables(s string, names map[string]string) string {
	return tunableRe.ReplaceAllStringFunc(s, func(x string) string { return names[x] })
}

var tunableRe = regexp.MustCompile(`\b(` + TeamTunable + `|` + VectorTunable + `)\b`)

// renameTree replaces the mapper's tunables in every C++ text of the tree.
func renameTree(n *spec.Node, names map[string]string) {
	for _, s := range []*string{&n.Code, &n.Begin, &n.End, &n.League, &n.TeamSize, &n.Vector, &n.Target, &n.Value, &n.Cond} {
		*s = renameTunables(*s, names)
	}
	for _, xs := range [][]string{n.Begins, n.Ends} {
		for i := range xs {
			xs[i] = renameTunables(xs[i], names)
		}
	}
	for i := range n.Scratch {
		n.Scratch[i].Size = renameTunables(n.Scratch[i].Size, names)
	}
	for _, c := range n.Body {
		renameTree(c, names)
	}
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

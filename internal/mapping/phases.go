package mapping

// Phases: a parallel outermost loop whose body is several loop nests, as
// HOMMEXX's operators are per element (the gradient into a per-element
// temporary, then its divergence). R-Stream maps such a nest with the outer
// loop on the league and each inner nest as a phase of the team: its
// parallel band loops on the team threads and the vector lanes, with a team
// barrier between phases where a dependence crosses them. The band-only
// mapping (lower.go) would put the whole body in one lane (the outer-loop
// baseline).

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// phase is one inner nest of a phased kernel and its mapping.
type phase struct {
	outer   *loopnest.Loop
	band    []*loopnest.Loop
	team    []*loopnest.Loop // team-thread loops, outermost first (one flattened range)
	vector  *loopnest.Loop
	inner   []*loopnest.Loop // band loops not mapped: sequential inside the lanes, in order
	why     map[*loopnest.Loop]string
	barrier *depend.Dep // a dependence from an earlier phase: a team barrier before this one
}

// phased reports whether outer is a parallel loop (no reduction) whose body
// is loop nests and nothing else: two or more, or one whose band holds more
// loops a phase can run in parallel than the team and vector levels take one
// each (HOMMEXX's gradient_sphere: i, j and k per element). The band mapping
// would run the extra loop sequentially in each lane; a phase flattens the
// loops other than the vector one onto the team threads.
func phased(r *depend.Result, outer *loopnest.Loop) bool {
	v := r.Verdict(outer)
	if !v.Parallel || v.Reduction || len(outer.Body) == 0 {
		return false
	}
	for _, n := range outer.Body {
		if n.Loop == nil {
			return false
		}
	}
	if len(outer.Body) > 1 {
		return true
	}
	n := 0
	for _, l := range band(outer.Body[0].Loop) {
		if v := r.Verdict(l); v.Parallel && !v.Reduction && rectangular(r, outer, l) {
			n++
		}
	}
	return n > 2
}

// rectangular reports whether l's bounds use only the parameters and the
// outer loop's index: a loop a phase may put on the team or the vector.
func rectangular(r *depend.Result, outer, l *loopnest.Loop) bool {
	for _, b := range append(slices.Clone(l.Lower), l.Upper...) {
		for name := range b.Terms {
			if name != outer.Index && !slices.Contains(r.Program.Params, name) {
				return false
			}
		}
	}
	return true
}

// within reports whether the statement runs inside loop l.
func within(s *loopnest.Stmt, l *loopnest.Loop) bool { return slices.Contains(s.Loops, l) }

// mapPhases maps each inner nest of outer: the vector level to the parallel
// band loop with the most stride-1 accesses, the team level to the other
// parallel band loops (a flattened range, as HOMMEXX's TeamThreadRange over
// NP x NP), each whose bounds use only the parameters and the outer loop; a
// loop whose concurrency a dependence inside the phase refutes runs
// sequentially inside the lanes instead.
func mapPhases(r *depend.Result, outer *loopnest.Loop, warp int64, consts map[string]int64) []*phase {
	var out []*phase
	for _, n := range outer.Body {
		p := &phase{outer: n.Loop, band: band(n.Loop), why: map[*loopnest.Loop]string{}}
		var cands []*loopnest.Loop
		for _, l := range p.band {
			v := r.Verdict(l)
			switch {
			case !v.Parallel:
				p.why[l] = sequentialWhy(v, true)
			case v.Reduction:
				p.why[l] = "parallel with reduction: sequential in each lane (the team-level reduction is a pattern, the mapper does not use it yet)"
			case !rectangular(r, outer, l):
				p.why[l] = "parallel, but its bounds use a loop inside the outer one: sequential"
			default:
				cands = append(cands, l)
			}
		}
		for {
			p.assign(cands, warp, consts)
			d := p.race(r)
			if d == nil {
				break
			}
			for _, m := range p.mapped() {
				if d.Dirs[m.Depth] != depend.Eq {
					cands = slices.DeleteFunc(cands, func(x *loopnest.Loop) bool { return x == m })
					p.why[m] = "parallel, but running it concurrently with the phase's other mapped loops would break " + d.String() + ": sequential"
					break
				}
			}
		}
		out = append(out, p)
	}
	// A barrier before a phase that a dependence from an earlier phase
	// reaches (within one iteration of the outer loop), since the last one.
	from := 0
	for i, p := range out {
		for _, d := range r.Deps {
			if p.barrier != nil || len(d.Loops) == 0 || d.Loops[0] != outer || d.Dirs[0] != depend.Eq || !within(d.Sink.Stmt, p.outer) {
				continue
			}
			for _, q := range out[from:i] {
				if within(d.Src.Stmt, q.outer) {
					p.barrier = d
					break
				}
			}
		}
		if p.barrier != nil {
			from = i
		}
	}
	return out
}

// assign puts on the vector level the candidate with the best stride-1
// score among those that fill a warp (a trip count not known, or at least
// warp lanes), the innermost among equals: a loop of 4 points would leave 28
// of 32 lanes idle however coalesced its accesses. The others, up to three,
// go to the team level.
func (p *phase) assign(cands []*loopnest.Loop, warp int64, consts map[string]int64) {
	p.vector, p.team, p.inner = nil, nil, nil
	best, bestFills := -1, false
	for _, l := range cands {
		c, known := tripKnown(l, consts)
		fills := !known || c >= warp
		if s := strideOne(l); fills && !bestFills || fills == bestFills && s >= best {
			p.vector, best, bestFills = l, s, fills
		}
	}
	for _, l := range cands {
		if l != p.vector && len(p.team) < 3 {
			p.team = append(p.team, l)
		}
	}
	for _, l := range p.band {
		if l != p.vector && !slices.Contains(p.team, l) {
			p.inner = append(p.inner, l)
		}
	}
	if p.vector != nil {
		p.why[p.vector] = fmt.Sprintf("parallel; stride-1 score %d, the highest of the phase's parallel loops", best)
		if bestFills {
			p.why[p.vector] = fmt.Sprintf("parallel; stride-1 score %d, the highest of the phase's parallel loops that fill a warp of %d", best, warp)
		}
	}
	for _, l := range p.team {
		p.why[l] = "parallel; the phase's team-thread range"
		if len(p.team) > 1 {
			p.why[l] += " (" + ids(p.team) + " flattened, as HOMMEXX's TeamThreadRange over the points)"
		}
	}
}

func (p *phase) mapped() []*loopnest.Loop {
	out := slices.Clone(p.team)
	if p.vector != nil {
		out = append(out, p.vector)
	}
	return out
}

// race returns a dependence between two instances of the phase that the
// mapped loops would run concurrently (or reorder against a sequential band
// loop inside them), or nil: the mapped loops must have = in every
// dependence of the phase.
func (p *phase) race(r *depend.Result) *depend.Dep {
	for _, d := range r.Deps {
		if !within(d.Src.Stmt, p.outer) || !within(d.Sink.Stmt, p.outer) {
			continue
		}
		for _, m := range p.mapped() {
			if m.Depth < len(d.Dirs) && d.Dirs[m.Depth] != depend.Eq {
				return d
			}
		}
	}
	return nil
}

// lowerPhased lowers a phased kernel: one team per iteration of the outer
// loop, each phase a team_thread_for (flattened over its team loops) around
// a thread_vector_for, a team barrier where a dependence crosses phases.
func lowerPhased(k *spec.Kernel, r *depend.Result, outer *loopnest.Loop, m *machine.Model, info *launchInfo) (string, error) {
	consts := map[string]int64{}
	for _, a := range k.Args {
		if v, err := strconv.ParseInt(a.Value, 10, 64); err == nil && a.Type == "int64" && slices.Contains(r.Program.Params, a.Name) {
			consts[a.Name] = v
		}
	}
	var b bytes.Buffer
	r.Explain(&b)
	nests := len(outer.Body)
	r, outer, fusions := fusePhases(r, outer, m.GPU.WarpSize, consts)
	phases := mapPhases(r, outer, m.GPU.WarpSize, consts)
	if info != nil {
		info.phased = true
		info.parallel = 1 << 20
		for _, p := range phases {
			info.parallel = min(info.parallel, 1+len(p.mapped()))
			if p.barrier != nil {
				info.barriers = append(info.barriers, p.barrier)
			}
		}
	}
	if nests == 1 {
		fmt.Fprintf(&b, "nest %s (%s): phased (its body is one loop nest with more parallel loops than the team and vector levels take one each)\n", outer.ID, outer.Pos)
	} else {
		fmt.Fprintf(&b, "nest %s (%s): phased (its body is %d loop nests", outer.ID, outer.Pos, nests)
		if len(phases) < nests {
			fmt.Fprintf(&b, ", %d after fusion", len(phases))
		}
		fmt.Fprintln(&b, ")")
	}
	if len(consts) > 0 {
		var cs []string
		for _, name := range r.Program.Params {
			if v, ok := consts[name]; ok {
				cs = append(cs, fmt.Sprintf("%s = %d", name, v))
			}
		}
		fmt.Fprintf(&b, "  trip counts with the kernel's constant parameters: %s\n", strings.Join(cs, ", "))
	}
	explainFusions(&b, fusions)
	fmt.Fprintf(&b, "  loop %s -> league: parallel; the outer loop, a team per iteration\n", outer.ID)
	for i, p := range phases {
		fmt.Fprintf(&b, "  phase %d, nest %s (%s):\n", i+1, p.outer.ID, p.outer.Pos)
		if p.barrier != nil {
			fmt.Fprintf(&b, "    team barrier before it: %s crosses from an earlier phase\n", p.barrier)
		}
		for _, l := range p.band {
			where := "sequential"
			switch {
			case l == p.vector:
				where = Vector
			case slices.Contains(p.team, l):
				where = Team
			}
			fmt.Fprintf(&b, "    loop %s -> %s: %s\n", l.ID, where, p.why[l])
		}
	}
	// Accumulations kept in registers across the sequential loops first:
	// an output then written once per element stays global.
	mapped := map[*loopnest.Loop]bool{outer: true}
	for _, p := range phases {
		for _, x := range p.mapped() {
			mapped[x] = true
		}
	}
	regs := planRegisters(k, r, outer, func(x *loopnest.Loop) bool { return !mapped[x] })
	regs.explain(&b)
	// Promotions first: the team scratch they take is part of Kokkos'
	// choice of the team size.
	prs := promotions(k, r, outer, phases, consts, m)
	done, used := map[*loopnest.Array]bool{}, int64(0)
	for _, pr := range prs {
		done[pr.array] = true
		if pr.ok {
			used += 8 * pr.elems
		}
	}
	ios := promoteIO(k, r, outer, phases, consts, m, used, done, regs)
	for _, pr := range ios {
		if pr.ok {
			used += 8 * pr.fp.elems
		}
	}

	// Sizes: from the machine model, for the phases' constant vector trip
	// counts, the largest team range and the promoted arrays' scratch.
	var trips []int64
	vectors, teamMax := false, int64(0)
	for _, p := range phases {
		if p.vector != nil {
			vectors = true
			if c, ok := tripKnown(p.vector, consts); ok {
				trips = append(trips, c)
			}
		}
		prod, ok := int64(1), true
		for _, t := range p.team {
			c, isConst := tripKnown(t, consts)
			prod, ok = prod*c, ok && isConst
		}
		if !ok {
			prod = 1 << 20
		}
		if len(p.team) > 0 {
			teamMax = max(teamMax, prod)
		}
	}
	team, vector := int64(1), int64(1)
	if vectors || teamMax > 0 {
		if !vectors {
			trips = []int64{1}
		}
		var why string
		team, vector, why = teamShape(m, trips, teamMax, used)
		fmt.Fprintf(&b, "  vector length %d, team size %d: on %s, Kokkos' recommended team for each vector length (registers not known before the build)%s, the shape with the most lanes busy among those resident enough: %s\n",
			vector, team, m.Name, map[bool]string{true: fmt.Sprintf(", at most the largest team range (%d)", teamMax), false: ""}[teamMax > 0 && teamMax < 1<<20], why)
	}
	explainPromotions(&b, outer, prs)
	explainIO(&b, outer, ios)
	if used > 0 {
		explainOccupancy(&b, m, team*vector, used)
	}
	league := tripOf(outer)
	if lo := lowerOf(outer); lo != "0" {
		league = fmt.Sprintf("%s > 0 ? %s : 0", league, league)
	}
	body := []*spec.Node{{Kind: "code", Code: fmt.Sprintf("const int64_t %s = %s;", outer.Index, plus(lowerOf(outer), "league_rank"))}}
	var scratch []spec.Scratch
	for _, pr := range prs {
		if !pr.ok {
			continue
		}
		// The code keeps indexing the array's flat global layout: its name
		// becomes the scratch view shifted back by the team's slice offset.
		scratch = append(scratch, spec.Scratch{Name: scratchName(pr.array), Type: "double", Size: sliceExpr(pr.array), Level: "0", Pos: pr.array.Pos})
		body = append(body, &spec.Node{Kind: "code", Code: shifted("double", pr.array.Name, scratchName(pr.array), outer.Index+" * ("+sliceExpr(pr.array)+")")})
	}
	// Inputs: copied in (the parts every team shares first), then one
	// barrier; outputs: the argument's pointer kept for the copy out; then
	// the code's names point into scratch, shifted by the part's offset.
	var ins, outs []*ioPromotion
	for _, pr := range ios {
		if !pr.ok {
			continue
		}
		scratch = append(scratch, spec.Scratch{Name: scratchName(pr.array), Type: "double", Size: fmt.Sprint(pr.fp.elems), Level: "0", Pos: pr.array.Pos})
		if pr.kind == "inputs" {
			ins = append(ins, pr)
		} else {
			outs = append(outs, pr)
			body = append(body, &spec.Node{Kind: "code", Code: fmt.Sprintf("double* const %s = %s;", globalName(pr.array), pr.array.Name)})
		}
	}
	slices.SortStableFunc(ins, func(a, b *ioPromotion) int {
		return map[bool]int{true: 0, false: 1}[a.fp.invariant()] - map[bool]int{true: 0, false: 1}[b.fp.invariant()]
	})
	for _, pr := range ins {
		body = append(body, copyNodes(pr, true))
	}
	if len(ins) > 0 {
		body = append(body, &spec.Node{Kind: "team_barrier"})
	}
	for _, pr := range append(slices.Clone(ins), outs...) {
		elem := map[string]string{"inputs": "const double", "outputs": "double"}[pr.kind]
		body = append(body, &spec.Node{Kind: "code", Code: shifted(elem, pr.array.Name, scratchName(pr.array), pr.fp.offset())})
	}
	for _, p := range phases {
		if p.barrier != nil {
			body = append(body, &spec.Node{Kind: "team_barrier"})
		}
		code := regs.bodyCode(p.band[len(p.band)-1].Body)
		for i := len(p.inner) - 1; i >= 0; i-- {
			code = regs.loopCode(p.inner[i], code)
		}
		vec := &spec.Node{Kind: "thread_vector_for", Index: "pm_v", Begin: "0", End: "1"}
		if v := p.vector; v != nil {
			vec.Index, vec.Begin, vec.End = v.Index, lowerOf(v), upperOf(v)
		}
		vec.Body = []*spec.Node{{Kind: "code", Code: code}}
		tf := &spec.Node{Kind: "team_thread_for", Index: "pm_t", Begin: "0", End: "1", Body: []*spec.Node{vec}}
		switch len(p.team) {
		case 0:
		case 1:
			tf.Index, tf.Begin, tf.End = p.team[0].Index, lowerOf(p.team[0]), upperOf(p.team[0])
		default:
			tf.Index, tf.Begin, tf.End = "", "", ""
			for _, t := range p.team {
				tf.Indices = append(tf.Indices, t.Index)
				tf.Begins = append(tf.Begins, lowerOf(t))
				tf.Ends = append(tf.Ends, upperOf(t))
			}
		}
		body = append(body, tf)
	}
	if len(outs) > 0 {
		body = append(body, &spec.Node{Kind: "team_barrier"})
	}
	for _, pr := range outs {
		body = append(body, copyNodes(pr, false))
	}
	k.Pattern = &spec.Node{Kind: "team", League: league, TeamSize: TeamTunable, Vector: VectorTunable, Scratch: scratch, Body: body}
	k.Tunables = append(k.Tunables, spec.Tunable{Name: TeamTunable, Value: team}, spec.Tunable{Name: VectorTunable, Value: vector})
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// tripKnown is a loop's trip count where its bounds are one affine bound
// each in parameters the kernel gives a constant value (np: 4), as R-Stream
// knows HOMMEXX's NP at compile time.
func tripKnown(x *loopnest.Loop, consts map[string]int64) (int64, bool) {
	if len(x.Lower) != 1 || len(x.Upper) != 1 {
		return 0, false
	}
	eval := func(a loopnest.Affine) (int64, bool) {
		v := a.Const
		for name, c := range a.Terms {
			x, ok := consts[name]
			if !ok {
				return 0, false
			}
			v += c * x
		}
		return v, true
	}
	hi, ok1 := eval(x.Upper[0])
	lo, ok2 := eval(x.Lower[0])
	return hi - lo, ok1 && ok2
}

// shifted declares name, indexed as the global array, over the team's part in
// scratch that starts at element offset of it. A nonzero offset goes through
// pm::TeamSlice, not a pointer shifted back (scratch - offset): that points
// outside the scratch buffer, undefined behaviour that LLVM turns into a
// shared address outside the window on NVPTX
// (docs/repro/scratch-rebase-out-of-window).
func shifted(elem, name, scratch, offset string) string {
	if offset == "0" {
		return fmt.Sprintf("%s* const %s = %s;", elem, name, scratch)
	}
	return fmt.Sprintf("const pm::TeamSlice<%s> %s{%s, %s};", elem, name, scratch, offset)
}

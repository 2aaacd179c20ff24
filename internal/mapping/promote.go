package mapping

// Promotion to team scratch: an array that a phased kernel writes in one
// phase and reads in a later one of the same league iteration (HOMMEXX's
// per-element gradient) lives in a global array unless it is moved into the
// team's level-0 scratch (shared memory on a GPU), as the hand-written
// HOMMEXX form keeps it and as R-Stream promotes data reused by a team's
// threads. The phases' barriers already order its writes and reads.

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// promotion is the mapper's decision for one array that crosses phases.
type promotion struct {
	array *loopnest.Array
	from  int    // the phase that first writes it (0-based)
	reads []int  // later phases that read it
	elems int64  // its part per league iteration, in elements (0: not known)
	ok    bool   // promoted to level-0 team scratch
	why   string // the reason either way
}

// scratchName is the team scratch view that holds a promoted array; the
// code's own name for the array becomes a pm::TeamSlice of it (shifted).
func scratchName(a *loopnest.Array) string { return "pm_team_" + a.Name }

// promotions decides, for each array written in one phase and read in a
// later one, whether it moves to level-0 team scratch: the kernel declares it
// a temporary (intent: scratch), the league index is its first subscript and
// no other subscript or extent uses it (each team owns one contiguous slice,
// no other team reads it), its slice has a constant size, no read of the
// slice comes before a write to it in the iteration (its global values
// would be lost), and the slices promoted so far fit the model's shared
// memory per block.
func promotions(k *spec.Kernel, r *depend.Result, outer *loopnest.Loop, phases []*phase, consts map[string]int64, m *machine.Model) []*promotion {
	var out []*promotion
	used := int64(0)
	limit := m.GPU.SharedMemoryPerBlockBytes
	for _, a := range r.Program.Arrays {
		pr := &promotion{array: a, from: -1}
		for i, p := range phases {
			w, rd := false, false
			for _, s := range r.Program.Stmts {
				if !within(s, p.outer) {
					continue
				}
				for _, acc := range s.Accesses {
					if acc.Array == a {
						w, rd = w || acc.Write, rd || !acc.Write
					}
				}
			}
			if w && pr.from < 0 {
				pr.from = i
			}
			if rd && pr.from >= 0 && i > pr.from {
				pr.reads = append(pr.reads, i)
			}
		}
		if len(pr.reads) == 0 {
			continue // not reused across phases: nothing to keep in the team
		}
		pr.why = keepGlobal(k, r, outer, a, consts)
		if pr.why == "" && !k.Loops.Promotes("temporaries") {
			pr.why = "the loops' promote: leaves temporaries out"
		}
		if pr.why == "" {
			pr.elems = 1
			for _, e := range a.Extent[1:] {
				pr.elems *= e.Eval(consts)
			}
			bytes := 8 * pr.elems
			if used+bytes > limit {
				pr.why = fmt.Sprintf("too big: %d bytes per team, with the %d bytes promoted before it, over %s's %d bytes of shared memory per block", bytes, used, m.Name, limit)
			} else {
				used += bytes
				pr.ok = true
				pr.why = fmt.Sprintf("%d doubles = %d bytes per team; the team's scratch %d bytes <= %s's %d bytes of shared memory per block", pr.elems, bytes, used, m.Name, limit)
			}
		}
		out = append(out, pr)
	}
	return out
}

// keepGlobal says why array a must stay a global array, or "".
func keepGlobal(k *spec.Kernel, r *depend.Result, outer *loopnest.Loop, a *loopnest.Array, consts map[string]int64) string {
	i := slices.IndexFunc(k.Args, func(x spec.Arg) bool { return x.Name == a.Name })
	if i < 0 || k.Args[i].Intent != "scratch" {
		intent := "in"
		if i >= 0 && k.Args[i].Intent != "" {
			intent = k.Args[i].Intent
		}
		return fmt.Sprintf("escapes the league iteration: argument %s is intent %s, its values enter or leave the kernel (a temporary is intent: scratch)", a.Name, intent)
	}
	if a.Rank() == 0 {
		return "escapes the league iteration: a scalar is shared by every team"
	}
	for _, s := range r.Program.Stmts {
		for _, acc := range s.Accesses {
			if acc.Array != a {
				continue
			}
			if !within(s, outer) {
				return fmt.Sprintf("escapes the league iteration: %s (%s) is outside loop %s", acc.Text, acc.Pos, outer.ID)
			}
			first := acc.Subs[0]
			if len(first.Terms) != 1 || first.Coef(outer.Index) != 1 || first.Const != 0 {
				return fmt.Sprintf("read by another team: the first subscript of %s (%s) is not %s, so the teams' parts are not one slice each", acc.Text, acc.Pos, outer.Index)
			}
			for _, sub := range acc.Subs[1:] {
				if sub.Uses(outer.Index) {
					return fmt.Sprintf("read by another team: %s (%s) uses %s after the first subscript", acc.Text, acc.Pos, outer.Index)
				}
			}
		}
	}
	for _, e := range a.Extent[1:] {
		for name := range e.Terms {
			if _, ok := consts[name]; !ok {
				return fmt.Sprintf("its part per iteration of %s has no constant size: extent %s uses %s, not a constant argument of the kernel", outer.Index, e, name)
			}
		}
	}
	for _, d := range r.Deps {
		if d.Src.Array == a && len(d.Dirs) > 0 && d.Loops[0] == outer && d.Dirs[0] != depend.Eq {
			return "read by another team: " + d.String()
		}
	}
	return liveIn(r.Program, outer, a, consts)
}

// liveIn runs two iterations of the outer loop (the parameters that are not
// constant set to 2) and says which read of a comes before any write of the
// element in its iteration: its value would come from the global array, which
// promotion no longer fills. "" when every read follows a write.
func liveIn(p *loopnest.Program, outer *loopnest.Loop, a *loopnest.Array, consts map[string]int64) string {
	params := map[string]int64{}
	for _, name := range p.Params {
		params[name] = 2
		if v, ok := consts[name]; ok {
			params[name] = v
		}
	}
	written := map[string]bool{}
	iter := int64(-1)
	var bad *loopnest.Access
	p.Walk(params, func(in loopnest.Instance) {
		if bad != nil || !within(in.Stmt, outer) {
			return
		}
		if v := in.Iter[outer.Depth]; v != iter {
			iter, written = v, map[string]bool{}
		}
		for _, acc := range in.Stmt.Accesses {
			if acc.Array != a {
				continue
			}
			key := fmt.Sprint(acc.Address(params, in.Iter))
			if acc.Write {
				written[key] = true
			} else if !written[key] {
				bad = acc
				return
			}
		}
	})
	if bad != nil {
		return fmt.Sprintf("escapes the league iteration: %s (%s) reads an element before the iteration writes it", bad.Text, bad.Pos)
	}
	return ""
}

// explainPromotions prints each decision.
func explainPromotions(b io.Writer, outer *loopnest.Loop, prs []*promotion) {
	for _, pr := range prs {
		var rs []string
		for _, i := range pr.reads {
			rs = append(rs, fmt.Sprint(i+1))
		}
		where := fmt.Sprintf("written in phase %d, read in phase %s of the same iteration of %s", pr.from+1, strings.Join(rs, ", "), outer.Index)
		if pr.ok {
			fmt.Fprintf(b, "  promote %s to level-0 team scratch %s: %s; its part per iteration, %s, is %s; the phases' barriers order it; argument %s is not used\n",
				pr.array.Name, scratchName(pr.array), where, slicePart(pr.array, outer), pr.why, pr.array.Name)
		} else {
			fmt.Fprintf(b, "  keep %s global: %s; %s\n", pr.array.Name, where, pr.why)
		}
	}
}

// slicePart writes the promoted part: work[ie][0:2][0:np]...
func slicePart(a *loopnest.Array, outer *loopnest.Loop) string {
	s := a.Name + "[" + outer.Index + "]"
	for _, e := range a.Extent[1:] {
		s += "[0:" + e.String() + "]"
	}
	return s
}

// sliceExpr is the C++ product of the extents after the first: a slice's
// elements.
func sliceExpr(a *loopnest.Array) string {
	var fs []string
	for _, e := range a.Extent[1:] {
		fs = append(fs, "("+e.String()+")")
	}
	if len(fs) == 0 {
		return "1"
	}
	return strings.Join(fs, " * ")
}

// ioPromotion is the mapper's decision for an array the team reads or
// writes that is not a temporary crossing phases: a read-only input reused
// by the team's threads and lanes (copied into scratch before the first
// phase), or an output the team updates more than once (its updates stay in
// scratch, one copy leaves after the last phase).
type ioPromotion struct {
	array *loopnest.Array
	kind  string // inputs or outputs (loopnest.PromoteKinds)
	fp    *footprint
	use   string // how the team uses the part
	ok    bool
	why   string
}

// globalName is the argument's own pointer, kept for an output's copy out
// once the code's name points into scratch.
func globalName(a *loopnest.Array) string { return "pm_global_" + a.Name }

// elemUse is how one iteration of the league loop uses one element.
type elemUse struct {
	pairs    map[string]bool // the (phase, team-thread, lane) instances that touch it
	accesses int
	written  bool
}

// teamUses walks the first iteration of the league loop (parameters without
// a constant value set to 2) and records, per array and element, which team
// threads and vector lanes of which phase touch it.
func teamUses(p *loopnest.Program, outer *loopnest.Loop, phases []*phase, consts map[string]int64, regs *registers) map[*loopnest.Array]map[string]*elemUse {
	params := map[string]int64{}
	for _, name := range p.Params {
		params[name] = 2
		if v, ok := consts[name]; ok {
			params[name] = v
		}
	}
	out := map[*loopnest.Array]map[string]*elemUse{}
	seen := map[string]bool{} // the registers' runs counted
	first, started := int64(0), false
	p.Walk(params, func(in loopnest.Instance) {
		if !within(in.Stmt, outer) {
			return
		}
		if v := in.Iter[outer.Depth]; !started {
			first, started = v, true
		} else if v != first {
			return
		}
		pair := ""
		for i, ph := range phases {
			if within(in.Stmt, ph.outer) {
				pair = fmt.Sprint(i)
				for _, l := range ph.mapped() {
					pair += fmt.Sprintf(",%d", in.Iter[l.Depth])
				}
			}
		}
		for _, acc := range in.Stmt.Accesses {
			if out[acc.Array] == nil {
				out[acc.Array] = map[string]*elemUse{}
			}
			addr := acc.Address(params, in.Iter)
			key := fmt.Sprint(addr)
			u := out[acc.Array][key]
			if u == nil {
				u = &elemUse{pairs: map[string]bool{}}
				out[acc.Array][key] = u
			}
			u.pairs[pair] = true
			if regs.counted(acc, in.Iter, addr, seen) {
				u.accesses++
			}
			u.written = u.written || acc.Write
		}
	})
	return out
}

// promoteIO decides, after the temporaries (done, whose promoted slices
// take used bytes), for each other array the league loop touches: an input
// (never written) is promoted when a thread or lane of the team reads an
// element another one reads too; an output (intent out) when the iteration
// writes every element of its part, reads none before writing it, and
// touches an element more than once. Either needs a footprint per team
// (footprintOf) and room in the model's shared memory per block; outputs
// go first (their repeated updates would each reach global memory), then
// inputs, each in the order of the arrays.
func promoteIO(k *spec.Kernel, r *depend.Result, outer *loopnest.Loop, phases []*phase, consts map[string]int64, m *machine.Model, used int64, done map[*loopnest.Array]bool, regs *registers) []*ioPromotion {
	uses := teamUses(r.Program, outer, phases, consts, regs)
	var outs, ins []*ioPromotion
	for _, a := range r.Program.Arrays {
		if done[a] || uses[a] == nil {
			continue
		}
		pr := &ioPromotion{array: a, kind: "inputs"}
		written := false
		for _, s := range r.Program.Stmts {
			for _, acc := range s.Accesses {
				written = written || acc.Array == a && acc.Write
			}
		}
		intent := "in"
		if i := slices.IndexFunc(k.Args, func(x spec.Arg) bool { return x.Name == a.Name }); i >= 0 && k.Args[i].Intent != "" {
			intent = k.Args[i].Intent
		}
		if written {
			pr.kind = "outputs"
			if intent != "out" {
				pr.why = fmt.Sprintf("argument %s is intent %s: only an output (intent out) or a temporary read after its writes may leave through scratch", a.Name, intent)
			}
		}
		if pr.why == "" && !k.Loops.Promotes(pr.kind) {
			pr.why = fmt.Sprintf("the loops' promote: leaves %s out", pr.kind)
		}
		if pr.why == "" {
			pr.fp, pr.why = footprintOf(r.Program, outer, a, consts)
			if pr.why != "" {
				pr.why = "no footprint per team: " + pr.why
			}
		}
		if pr.why == "" {
			pr.use, pr.why = pr.judge(r.Program, outer, uses[a], consts)
		}
		if pr.kind == "outputs" {
			outs = append(outs, pr)
		} else {
			ins = append(ins, pr)
		}
	}
	limit := m.GPU.SharedMemoryPerBlockBytes
	for _, pr := range append(outs, ins...) {
		if pr.why != "" {
			continue
		}
		bytes := 8 * pr.fp.elems
		if used+bytes > limit {
			pr.why = fmt.Sprintf("too big: %d bytes per team, with the %d bytes promoted before it, over %s's %d bytes of shared memory per block", bytes, used, m.Name, limit)
			continue
		}
		used += bytes
		pr.ok = true
		pr.why = fmt.Sprintf("%d doubles = %d bytes per team; the team's scratch %d bytes <= %s's %d bytes of shared memory per block", pr.fp.elems, bytes, used, m.Name, limit)
	}
	return append(outs, ins...)
}

// judge says how the team uses the array's part and why it stays global
// ("" when it may be promoted).
func (pr *ioPromotion) judge(p *loopnest.Program, outer *loopnest.Loop, uses map[string]*elemUse, consts map[string]int64) (use, why string) {
	most, accesses, written := 0, 0, 0
	for _, u := range uses {
		most = max(most, len(u.pairs))
		accesses += u.accesses
		if u.written {
			written++
		}
	}
	if pr.kind == "inputs" {
		use = fmt.Sprintf("%d reads of %d elements, an element by up to %d (phase, thread, lane) instances of the team", accesses, len(uses), most)
		if most < 2 {
			return use, "not reused across the team: each element is read by one thread and lane, a copy would only add traffic"
		}
		return use, ""
	}
	use = fmt.Sprintf("%d reads and writes of %d elements, %.3g per element", accesses, len(uses), float64(accesses)/float64(len(uses)))
	if s := liveIn(p, outer, pr.array, consts); s != "" {
		return use, s + ": it would need a copy in too"
	}
	if int64(written) != pr.fp.elems {
		return use, fmt.Sprintf("the iteration writes %d of the %d elements of its part %s: a copy out would overwrite the others", written, pr.fp.elems, pr.fp)
	}
	if accesses <= written {
		return use, "each element is written once: a copy out would only add traffic"
	}
	return use, ""
}

// explainIO prints each decision about inputs and outputs.
func explainIO(b io.Writer, outer *loopnest.Loop, ios []*ioPromotion) {
	for _, pr := range ios {
		what := map[string]string{"inputs": "read-only input", "outputs": "output"}[pr.kind]
		if !pr.ok {
			if pr.use != "" {
				fmt.Fprintf(b, "  keep %s global (%s): %s; %s\n", pr.array.Name, what, pr.use, pr.why)
			} else {
				fmt.Fprintf(b, "  keep %s global (%s): %s\n", pr.array.Name, what, pr.why)
			}
			continue
		}
		fmt.Fprintf(b, "  promote %s (%s) to level-0 team scratch %s: %s; its part per iteration of %s, %s, is %s; ",
			pr.array.Name, what, scratchName(pr.array), pr.use, outer.Index, pr.fp, pr.why)
		if pr.kind == "inputs" {
			fmt.Fprintf(b, "copied in by the team's threads and lanes before the first phase, then a team barrier\n")
			if pr.fp.invariant() {
				fmt.Fprintf(b, "  hoist %s's copy: its part does not depend on %s (the same for every team), so it is copied once per team launch, first, for every phase; out of a backend's own league loop it is not moved (the pattern tree has no per-team prologue yet)\n", pr.array.Name, outer.Index)
			}
		} else {
			fmt.Fprintf(b, "its updates stay in scratch; after the last phase a team barrier, then the team's threads and lanes copy it out through %s\n", globalName(pr.array))
		}
	}
}

// copyNodes is the copy of a promoted part between the argument's global
// array and scratch, spread over the team's threads (rows) and vector lanes
// (a row's elements, consecutive in both): in copies into scratch.
func copyNodes(pr *ioPromotion, in bool) *spec.Node {
	f := pr.fp
	at := fmt.Sprintf("pm_row * %d + pm_col", f.width)
	dst, src := scratchName(pr.array)+"["+at+"]", pr.array.Name+"["+plus(f.offset(), at)+"]"
	if !in {
		dst, src = globalName(pr.array)+"["+plus(f.offset(), at)+"]", scratchName(pr.array)+"["+at+"]"
	}
	vec := &spec.Node{Kind: "thread_vector_for", Index: "pm_col", Begin: "0", End: fmt.Sprint(f.width),
		Body: []*spec.Node{{Kind: "code", Code: dst + " = " + src + ";"}}}
	return &spec.Node{Kind: "team_thread_for", Index: "pm_row", Begin: "0", End: fmt.Sprint(f.elems / f.width), Body: []*spec.Node{vec}}
}

// explainOccupancy prints what the team's scratch leaves of an SM: the
// promotions trade shared memory for teams resident at once (registers are
// not known before the build, so this is the shared memory's bound only).
func explainOccupancy(b io.Writer, m *machine.Model, threads, bytes int64) {
	o, err := m.Occupancy(machine.Launch{BlockThreads: int(threads), DynamicSharedBytes: bytes})
	if err != nil || o.BySharedMemory == 0 {
		return
	}
	fmt.Fprintf(b, "  team scratch %d bytes: %s's shared memory holds %d teams of %d threads per SM (its warps would hold %d; registers not known before the build)\n",
		bytes, m.Name, o.BySharedMemory, threads, o.ByWarps)
}

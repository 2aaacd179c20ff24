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
// code's own name for the array becomes a pointer into it.
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

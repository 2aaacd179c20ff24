package mapping

// Fusion of adjacent phases (for locality): two sibling nests inside the
// outer loop whose bands have the same shape become one nest, the second's
// body after the first's in the innermost band loop, so that what the first
// writes at a point is read at that point by the same thread and lane, from
// registers or cache, and the team barrier between them goes. R-Stream fuses
// such nests where the dependences allow.

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// fusedProgram is a copy of p in which the sibling nests a and b, whose
// bands are d loops deep, are one nest: a's band loops, the innermost
// holding a's body then b's, with b's band indices renamed to a's. orig maps
// each new statement and loop to the one it copies.
type fusedProgram struct {
	p        *loopnest.Program
	stmtOrig map[*loopnest.Stmt]*loopnest.Stmt
	loopOrig map[*loopnest.Loop]*loopnest.Loop
}

func fuseNests(p *loopnest.Program, a, b *loopnest.Loop, d int) *fusedProgram {
	f := &fusedProgram{p: &loopnest.Program{Params: p.Params, Assume: p.Assume, Arrays: p.Arrays, Pos: p.Pos},
		stmtOrig: map[*loopnest.Stmt]*loopnest.Stmt{}, loopOrig: map[*loopnest.Loop]*loopnest.Loop{}}
	rename := map[string]string{}
	for i, l := range band(b)[:d] {
		rename[l.Index] = band(a)[i].Index
	}
	alias := "" // the second nest's band indices as the first's, before its statements' code
	var copyBody func(body []loopnest.Node, parent *loopnest.Loop, rn map[string]string) []loopnest.Node
	copyLoop := func(l, parent *loopnest.Loop, rn map[string]string) *loopnest.Loop {
		n := &loopnest.Loop{Index: l.Index, Lower: renamed(l.Lower, rn), Upper: renamed(l.Upper, rn), Parent: parent, Pos: l.Pos, Order: len(f.p.Loops)}
		if parent != nil {
			n.Depth = parent.Depth + 1
		}
		f.p.Loops = append(f.p.Loops, n)
		f.loopOrig[n] = l
		return n
	}
	copyBody = func(body []loopnest.Node, parent *loopnest.Loop, rn map[string]string) []loopnest.Node {
		var out []loopnest.Node
		for i := 0; i < len(body); i++ {
			n := body[i]
			if n.Stmt != nil {
				s := &loopnest.Stmt{Name: n.Stmt.Name, Loops: enclosingLoops(parent), Code: n.Stmt.Code, Term: n.Stmt.Term, Value: n.Stmt.Value, Order: len(f.p.Stmts), Pos: n.Stmt.Pos, Guard: renamed(n.Stmt.Guard, rn)}
				if alias != "" {
					// its code in the old names, under the aliases (a term
					// or value becomes code: a register would need them too)
					s.Code = "{\n" + alias + indent(stmtCode(n.Stmt)) + "\n}"
					s.Term, s.Value = "", ""
				}
				for _, acc := range n.Stmt.Accesses {
					c := *acc
					c.Stmt, c.Subs = s, renamed(acc.Subs, rn)
					s.Accesses = append(s.Accesses, &c)
				}
				f.p.Stmts = append(f.p.Stmts, s)
				f.stmtOrig[s] = n.Stmt
				out = append(out, loopnest.Node{Stmt: s})
				continue
			}
			if n.Loop != a {
				l := copyLoop(n.Loop, parent, rn)
				l.Body = copyBody(n.Loop.Body, l, rn)
				out = append(out, loopnest.Node{Loop: l})
				continue
			}
			// a's band, then both bodies in its innermost loop; b is skipped
			ab, bb := band(a), band(b)
			var top, in *loopnest.Loop
			for _, l := range ab[:d] {
				if top == nil {
					top = copyLoop(l, parent, rn)
					in = top
					continue
				}
				c := copyLoop(l, in, rn)
				in.Body = []loopnest.Node{{Loop: c}}
				in = c
			}
			in.Body = copyBody(ab[d-1].Body, in, rn)
			alias = aliases(bb[:d], rename)
			in.Body = append(in.Body, copyBody(bb[d-1].Body, in, rename)...)
			alias = ""
			out = append(out, loopnest.Node{Loop: top})
			i++
		}
		return out
	}
	f.p.Body = copyBody(p.Body, nil, nil)
	nameLoops(f.p.Loops)
	return f
}

// aliases declares the renamed band indices under their old names, so
// that the second nest's C++ keeps its own names.
func aliases(loops []*loopnest.Loop, rename map[string]string) string {
	var s string
	for _, l := range loops {
		if to := rename[l.Index]; to != l.Index {
			s += fmt.Sprintf("  const int64_t %s = %s;\n", l.Index, to)
		}
	}
	return s
}

func renamed(xs []loopnest.Affine, rn map[string]string) []loopnest.Affine {
	out := make([]loopnest.Affine, len(xs))
	for i, x := range xs {
		out[i] = loopnest.Affine{Const: x.Const, Terms: map[string]int64{}}
		for name, c := range x.Terms {
			if to, ok := rn[name]; ok {
				name = to
			}
			out[i].Terms[name] += c
		}
	}
	return out
}

func enclosingLoops(l *loopnest.Loop) []*loopnest.Loop {
	var out []*loopnest.Loop
	for ; l != nil; l = l.Parent {
		out = append(out, l)
	}
	slices.Reverse(out)
	return out
}

// nameLoops gives each loop its ID as the loop-nest reader does: the index,
// with #k where several loops share it.
func nameLoops(loops []*loopnest.Loop) {
	count, seen := map[string]int{}, map[string]int{}
	for _, l := range loops {
		count[l.Index]++
	}
	for _, l := range loops {
		seen[l.Index]++
		l.ID = l.Index
		if count[l.Index] > 1 {
			l.ID = fmt.Sprintf("%s#%d", l.Index, seen[l.Index])
		}
	}
}

// fuseDecision is one attempt to fuse two adjacent phases.
type fuseDecision struct {
	first, second string // the loops' IDs in the program as the attempt found it
	fused         bool
	why           string
}

// fusePhases fuses adjacent phases of outer, first to last, while the
// dependence analysis allows it and the mapping keeps its parallel loops:
// depend says fusing the nests' outer loops is legal with the same bounds;
// the bands have the same depth and bounds (the second's indices renamed);
// in the fused program no dependence runs from the second nest's statements
// back to the first's (fusing the inner band loops reverses none); and the
// fused phase maps as many loops to the team and the vector as each nest
// did alone. It returns the analysis of the fused program (r itself when
// nothing fused), its outer loop, and each decision.
func fusePhases(r *depend.Result, outer *loopnest.Loop, warp int64, consts map[string]int64) (*depend.Result, *loopnest.Loop, []fuseDecision) {
	var out []fuseDecision
	for i := 0; i+1 < len(outer.Body); {
		a, b := outer.Body[i].Loop, outer.Body[i+1].Loop
		dec := fuseDecision{first: a.ID, second: b.ID}
		fr, why := tryFuse(r, outer, a, b, warp, consts)
		if fr == nil {
			dec.why = why
			out = append(out, dec)
			i++
			continue
		}
		dec.fused, dec.why = true, why
		out = append(out, dec)
		r = fr
		outer = fr.Program.Loops[outer.Order]
	}
	return r, outer, out
}

// tryFuse returns the analysis of the program with a and b fused and why,
// or nil and why not.
func tryFuse(r *depend.Result, outer, a, b *loopnest.Loop, warp int64, consts map[string]int64) (*depend.Result, string) {
	i := slices.IndexFunc(r.Fusions, func(f depend.Fusion) bool { return f.First == a && f.Second == b })
	if i < 0 {
		return nil, "not judged by the dependence analysis"
	}
	switch f := r.Fusions[i]; {
	case !f.Legal:
		return nil, fmt.Sprintf("illegal: %s would run backward", f.Preventing[0])
	case !f.SameBounds:
		return nil, "their bounds differ (the fused loop would need guards)"
	}
	ab, bb := band(a), band(b)
	if len(ab) != len(bb) {
		return nil, fmt.Sprintf("their bands differ in depth (%s: %d loops, %s: %d)", a.ID, len(ab), b.ID, len(bb))
	}
	rename := map[string]string{}
	for k := range ab {
		lo, hi := renamed(bb[k].Lower, rename), renamed(bb[k].Upper, rename)
		if affines(lo) != affines(ab[k].Lower) || affines(hi) != affines(ab[k].Upper) {
			return nil, fmt.Sprintf("band loops %s and %s have different bounds", ab[k].ID, bb[k].ID)
		}
		rename[bb[k].Index] = ab[k].Index
	}
	f := fuseNests(r.Program, a, b, len(ab))
	fr := depend.Analyze(f.p)
	fouter := fr.Program.Loops[outer.Order]
	for _, d := range fr.Deps {
		src, sink := f.stmtOrig[d.Src.Stmt], f.stmtOrig[d.Sink.Stmt]
		if d.Reduction || len(d.Loops) == 0 || d.Loops[0] != fouter || d.Dirs[0] != depend.Eq {
			continue
		}
		if within(src, b) && within(sink, a) {
			return nil, fmt.Sprintf("illegal for the whole band: in the fused nest %s (%s -> %s)", d, src.Name, sink.Name)
		}
	}
	// the fused phase must keep each nest's mapped loops
	before := mapPhases(r, outer, warp, consts)
	after := mapPhases(fr, fouter, warp, consts)
	ia := slices.IndexFunc(outer.Body, func(n loopnest.Node) bool { return n.Loop == a })
	if n, m := len(after[ia].mapped()), min(len(before[ia].mapped()), len(before[ia+1].mapped())); n < m {
		return nil, fmt.Sprintf("legal, but the fused phase would map only %d of the %d loops each nest maps alone to the team and the vector (a dependence inside it serialises one)", n, m)
	}
	return fr, fmt.Sprintf("legal with the same bounds, and fusing the whole band (%s) reverses no dependence; %s", ids(ab), barrierGone(before[ia+1]))
}

func barrierGone(p *phase) string {
	if p.barrier != nil {
		return "the team barrier before " + p.outer.ID + " goes: its reads follow the writes in the same thread and lane"
	}
	return "no barrier was between them"
}

func affines(xs []loopnest.Affine) string {
	var s []string
	for _, x := range xs {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

func explainFusions(w io.Writer, decs []fuseDecision) {
	for _, d := range decs {
		if d.fused {
			fmt.Fprintf(w, "  fuse %s and %s: %s\n", d.first, d.second, d.why)
		} else {
			fmt.Fprintf(w, "  keep %s and %s apart: %s\n", d.first, d.second, d.why)
		}
	}
}

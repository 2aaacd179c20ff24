// Package mapping chooses, for each loop nest of a program, which loops run
// on the league, team and vector levels of a hierarchical parallel machine
// (Kokkos' TeamPolicy, CUDA's grid, block and warp lanes), from the
// dependence analysis (internal/depend): the first steps of paper 004's
// mapper. Each decision carries its reason. lower.go turns a kernel's
// mapping into the pattern tree, with the levels' sizes from a machine
// model.
package mapping

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// The levels, outermost first.
const (
	League = "league"
	Team   = "team"
	Vector = "vector"
)

// Decision is the levels one loop runs on (none: sequential; several: the
// loop is split over them) and why.
type Decision struct {
	Loop   *loopnest.Loop
	Levels []string
	Reason string
}

// Nest is the mapping of one outermost loop and the loops inside it.
type Nest struct {
	Outer     *loopnest.Loop
	Decisions []Decision // in textual order of the loops
}

// Map maps every outermost loop of r's program. A nest whose band has no
// parallel loop (a time loop around several sweeps) stays outside, and the
// loops inside it are mapped as nests of their own.
func Map(r *depend.Result) []Nest {
	var out []Nest
	for _, n := range r.Program.Body {
		if n.Loop != nil {
			out = append(out, mapTree(r, n.Loop)...)
		}
	}
	return out
}

func mapTree(r *depend.Result, outer *loopnest.Loop) []Nest {
	n := mapNest(r, outer)
	loops := band(outer)
	var inner []*loopnest.Loop
	for _, c := range loops[len(loops)-1].Body {
		if c.Loop != nil {
			inner = append(inner, c.Loop)
		}
	}
	for _, d := range n.Decisions {
		if len(d.Levels) > 0 || len(inner) == 0 {
			return []Nest{n}
		}
	}
	head := Nest{Outer: outer}
	for _, d := range n.Decisions[:len(loops)] {
		d.Reason += "; stays outside, around the nests inside it"
		head.Decisions = append(head.Decisions, d)
	}
	out := []Nest{head}
	for _, c := range inner {
		out = append(out, mapTree(r, c)...)
	}
	return out
}

// band is the perfect part of a nest: the outer loop and each loop that is
// its parent's whole body. Only the band's loops may be reordered
// (interchange) to put the levels in order.
func band(outer *loopnest.Loop) []*loopnest.Loop {
	out := []*loopnest.Loop{outer}
	for l := outer; len(l.Body) == 1 && l.Body[0].Loop != nil; l = l.Body[0].Loop {
		out = append(out, l.Body[0].Loop)
	}
	return out
}

func mapNest(r *depend.Result, outer *loopnest.Loop) Nest {
	n, below := mapNestBelow(r, outer, true)
	if below {
		for _, b := range band(outer) {
			for _, d := range n.Decisions {
				if d.Loop == b && len(d.Levels) == 0 {
					// a band loop the league and team did not take: the
					// reduction's single store per team thread would race
					n, _ = mapNestBelow(r, outer, false)
					return n
				}
			}
		}
	}
	return n
}

// mapNestBelow maps a nest; with below, a reduction loop just below the band
// (belowBand) may take the vector level, and the result says whether it did.
func mapNestBelow(r *depend.Result, outer *loopnest.Loop, below bool) (Nest, bool) {
	loops := band(outer)
	inBand := map[*loopnest.Loop]bool{}
	// (a loop below the band runs inside the band's innermost loop)
	for _, l := range loops {
		inBand[l] = true
	}
	levels := map[*loopnest.Loop][]string{}
	reasons := map[*loopnest.Loop]string{}

	// Vector: the parallel loop with the most stride-1 accesses (coalesced
	// on GPUs, simd on CPUs), the innermost among equals. A reduction loop
	// may take it (thread_vector_reduce).
	var vector *loopnest.Loop
	bestScore := -1
	for _, l := range loops {
		v := r.Verdict(l)
		if !v.Parallel {
			continue
		}
		s := strideOne(l)
		if s > bestScore || s == bestScore && !v.Reduction {
			vector, bestScore = l, s
		}
	}
	// A reduction loop below the band with more stride-1 accesses than any
	// band loop (a row sum written after its zero) takes the vector level.
	took := false
	if rr, why := belowBand(r, loops); rr != nil {
		// both scored over the loop's statements, which run the most
		x, s := rr.loop, strideOne(rr.loop)
		bandScore := 0
		for _, b := range loops {
			bandScore = max(bandScore, strideOneIn(b, x.Stmts()))
		}
		switch {
		case why != "":
			reasons[x] = "parallel with reduction, below the band; not on the vector lanes (" + why + "): sequential"
		case !below:
			reasons[x] = "parallel with reduction, below the band; not on the vector lanes (a band loop would stay off the league and team levels): sequential"
		case s <= bandScore:
			reasons[x] = fmt.Sprintf("parallel with reduction, below the band; stride-1 score %d, not above the band's %d over its statements: sequential", s, bandScore)
		default:
			levels[x] = []string{Vector}
			reasons[x] = fmt.Sprintf("parallel with reduction, below the band; stride-1 score %d, above the band's %d over its statements: on the vector lanes (thread_vector_reduce, consecutive lanes read consecutive elements), the band on the league and team levels", s, bandScore)
			vector, took = x, true
		}
	}
	if vector != nil && !took {
		levels[vector] = []string{Vector}
		reasons[vector] = fmt.Sprintf("%s; stride-1 score %d, the highest of the parallel loops", parallelWhy(r.Verdict(vector)), bestScore)
		if r.Verdict(vector).Reduction {
			reasons[vector] += " (thread_vector_reduce)"
		}
	}

	// League, then team: the outermost remaining parallel loops (not
	// reductions: there is no league or team reduction pattern yet) that
	// may run concurrently with the loops already chosen.
	var chosen []*loopnest.Loop
	for _, l := range loops {
		v := r.Verdict(l)
		switch {
		case l == vector || !v.Parallel:
			continue
		case v.Reduction && vector != nil:
			reasons[l] = fmt.Sprintf("parallel with reduction; stride-1 score %d, not the vector loop's (%s: %d), and league and team reductions are not patterns yet: sequential", strideOne(l), vector.ID, strideOne(vector))
			continue
		case v.Reduction:
			reasons[l] = "parallel with reduction, but league and team reductions are not patterns yet: sequential"
			continue
		case len(chosen) == 2:
			reasons[l] = "parallel; the league and team levels are taken by outer loops: sequential"
			continue
		}
		mapped := append(append([]*loopnest.Loop(nil), chosen...), l)
		if vector != nil {
			mapped = append(mapped, vector)
		}
		if d := race(r, loops, mapped, vector); d != nil {
			reasons[l] = fmt.Sprintf("parallel, but not together with %s: sequential; %s", ids(mapped[:len(mapped)-1]), d)
			continue
		}
		chosen = append(chosen, l)
	}
	for i, l := range chosen {
		levels[l] = []string{[]string{League, Team}[i]}
		reasons[l] = "parallel; the " + []string{"outermost", "next"}[i] + " parallel loop of the band"
	}
	// Fewer parallel loops than levels: split one over the free levels.
	switch {
	case vector == nil:
	case len(chosen) == 0:
		levels[vector] = []string{League, Team, Vector}
		reasons[vector] += "; the only parallel loop: split over league, team and vector"
	case len(chosen) == 1 && r.Verdict(vector).Reduction:
		levels[chosen[0]] = []string{League, Team}
		reasons[chosen[0]] += "; no third parallel loop, and the vector loop reduces: split over league and team threads"
	case len(chosen) == 1:
		levels[vector] = []string{Team, Vector}
		reasons[vector] += "; no third parallel loop: split over team threads and vector lanes"
	}

	n := Nest{Outer: outer}
	var walk func(l *loopnest.Loop)
	walk = func(l *loopnest.Loop) {
		d := Decision{Loop: l, Levels: levels[l], Reason: reasons[l]}
		if d.Reason == "" {
			d.Reason = sequentialWhy(r.Verdict(l), inBand[l])
		}
		n.Decisions = append(n.Decisions, d)
		for _, c := range l.Body {
			if c.Loop != nil {
				walk(c.Loop)
			}
		}
	}
	walk(outer)
	return n, took
}

// race returns a dependence that running the mapped loops concurrently
// would break, or nil. The mapped loops run as the outermost levels, the
// band's loops outside the outermost of them stay outside (sequential, in
// order), the other loops run sequentially inside. So a dependence is kept
// when a loop outside carries it, or when every mapped loop has = in it
// (the sequential loops inside then keep its order); the vector loop may
// carry an accumulation when it is a reduction loop.
func race(r *depend.Result, band, mapped []*loopnest.Loop, vector *loopnest.Loop) *depend.Dep {
	top := mapped[0].Depth
	for _, m := range mapped {
		top = min(top, m.Depth)
	}
	reduces := vector != nil && r.Verdict(vector).Reduction
	for _, d := range r.Deps {
		last := band[len(band)-1]
		if len(d.Loops) <= last.Depth || d.Loops[last.Depth] != last {
			continue // not within this nest's band
		}
		outside := false
		for k := 0; k < top; k++ {
			outside = outside || d.Dirs[k] != depend.Eq
		}
		if outside {
			continue
		}
		for _, m := range mapped {
			if m.Depth >= len(d.Dirs) {
				continue // a loop below the band that d is not inside: one team thread runs both ends in order
			}
			if d.Dirs[m.Depth] != depend.Eq && !(m == vector && reduces && d.Reduction) {
				return d
			}
		}
	}
	return nil
}

func ids(loops []*loopnest.Loop) string {
	out := make([]string, len(loops))
	for i, l := range loops {
		out[i] = l.ID
	}
	return strings.Join(out, ", ")
}

// strideOne scores l for the vector level: each distinct access inside l
// whose last subscript steps by one element with l's index (l's index in no
// other subscript) counts the number of indices its subscripts use, so that
// the large arrays' coalescing weighs most.
func strideOne(l *loopnest.Loop) int { return strideOneIn(l, l.Stmts()) }

// strideOneIn is l's stride-1 score over the given statements only.
func strideOneIn(l *loopnest.Loop, stmts []*loopnest.Stmt) int {
	n := 0
	for _, s := range stmts {
		seen := map[string]bool{}
		for _, a := range s.Accesses {
			if len(a.Subs) == 0 || seen[a.Text] {
				continue
			}
			seen[a.Text] = true
			last := a.Subs[len(a.Subs)-1]
			ok := last.Coef(l.Index) == 1 || last.Coef(l.Index) == -1
			for _, sub := range a.Subs[:len(a.Subs)-1] {
				ok = ok && !sub.Uses(l.Index)
			}
			if ok {
				n += indicesUsed(a)
			}
		}
	}
	return n
}

func indicesUsed(a *loopnest.Access) int {
	n := 0
	for _, l := range a.Stmt.Loops {
		for _, sub := range a.Subs {
			if sub.Uses(l.Index) {
				n++
				break
			}
		}
	}
	return n
}

func parallelWhy(v depend.LoopVerdict) string {
	if v.Reduction {
		return "parallel with reduction"
	}
	return "parallel"
}

func sequentialWhy(v depend.LoopVerdict, inBand bool) string {
	switch {
	case !inBand && v.Parallel:
		return parallelWhy(v) + ", but below the perfect band (only the band is mapped): sequential"
	case v.Parallel:
		return parallelWhy(v) + ", no level left: sequential"
	}
	for _, d := range v.Carried {
		if !d.Reduction {
			return "sequential: carries " + d.String()
		}
	}
	return "sequential"
}

// Explain prints each nest's decisions.
func Explain(w io.Writer, nests []Nest) {
	for _, n := range nests {
		fmt.Fprintf(w, "nest %s (%s):\n", n.Outer.ID, n.Outer.Pos)
		for _, d := range n.Decisions {
			where := "sequential"
			if len(d.Levels) > 0 {
				where = strings.Join(d.Levels, "+")
			}
			fmt.Fprintf(w, "  loop %s -> %s: %s\n", d.Loop.ID, where, d.Reason)
		}
	}
}

// ExplainFile reads a loop-nest file (a mapping with loops:, see
// docs/loopnest.md) and prints its dependence verdicts, then its mapping.
func ExplainFile(file string, w io.Writer) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var errs diag.List
	p := loopnest.Parse(file, data, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	r := depend.Analyze(p)
	r.Explain(w)
	Explain(w, Map(r))
	return nil
}

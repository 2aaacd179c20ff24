// Package depend analyses the dependences of a loop-nest program
// (internal/loopnest): flow, anti and output dependences between statement
// instances with their direction and distance per common loop, which loops
// are parallel (carry no dependence) or parallel with a reduction, and
// whether adjacent loops may be fused and loops of a perfect nest
// interchanged. The tests are exact integer tests on the affine forms
// loopnest accepts (system.go); where they cannot decide they assume a
// dependence, so a loop called parallel is parallel. See docs/loopnest.md.
package depend

import (
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// Kind is the kind of a dependence.
type Kind int

const (
	Flow   Kind = iota // write, then read
	Anti               // read, then write
	Output             // write, then write
)

func (k Kind) String() string { return [...]string{"flow", "anti", "output"}[k] }

// Dir is the direction of a dependence on one loop: the sink's iteration
// compared with the source's.
type Dir int

const (
	Lt Dir = iota // sink in a later iteration: <
	Eq            // the same iteration: =
	Gt            // an earlier iteration: >
)

func (d Dir) String() string { return [...]string{"<", "=", ">"}[d] }

// Distance is the sink's iteration minus the source's on one loop, when it
// is the same for every instance pair.
type Distance struct {
	Known bool
	Value int64
}

// Dep is one dependence: instances of Src run before instances of Sink and
// touch the same element, one of them writing. Dirs and Dists are per
// common loop (Loops, outermost first).
type Dep struct {
	Kind      Kind
	Src, Sink *loopnest.Access
	Loops     []*loopnest.Loop
	Dirs      []Dir
	Dists     []Distance
	// Reduction: both accesses accumulate into the same array with the same
	// operator, so the instances may run in any order (up to rounding).
	Reduction bool
}

// Level is the index in Loops of the loop that carries d (its first
// direction that is not =), or -1 for a loop-independent dependence.
func (d *Dep) Level() int {
	for i, dir := range d.Dirs {
		if dir != Eq {
			return i
		}
	}
	return -1
}

// Carrier is the loop that carries d, or nil.
func (d *Dep) Carrier() *loopnest.Loop {
	if l := d.Level(); l >= 0 {
		return d.Loops[l]
	}
	return nil
}

// LoopVerdict says whether a loop may run its iterations in parallel.
type LoopVerdict struct {
	Loop     *loopnest.Loop
	Parallel bool // no dependence carried, or only reductions (Reduction)
	// Reduction: parallel with a reduction: every dependence the loop
	// carries is an accumulation into a target whose subscripts do not use
	// the loop's index.
	Reduction bool
	Carried   []*Dep // the dependences the loop carries
}

// Fusion says whether two adjacent sibling loops may be fused (iteration v
// of both running together, First's body first).
type Fusion struct {
	First, Second *loopnest.Loop
	Legal         bool
	SameBounds    bool // otherwise the fused loop needs guards
	// Preventing are the dependences fusion would reverse: from First in
	// iteration v to Second in an iteration before v. Their last loop is
	// the fused one (First), direction >.
	Preventing []*Dep
}

// Interchange says whether two loops of a perfect nest may be swapped.
type Interchange struct {
	Outer, Inner *loopnest.Loop
	Legal        bool
	Preventing   []*Dep // dependences whose direction vector would turn negative
}

// Result is the analysis of one program.
type Result struct {
	Program      *loopnest.Program
	Deps         []*Dep
	Loops        []LoopVerdict // per loop, in textual order
	Fusions      []Fusion      // per pair of adjacent sibling loops
	Interchanges []Interchange // per pair of loops of a perfect nest
}

// Verdict returns the verdict of loop l.
func (r *Result) Verdict(l *loopnest.Loop) LoopVerdict {
	for _, v := range r.Loops {
		if v.Loop == l {
			return v
		}
	}
	return LoopVerdict{Loop: l}
}

// Analyze computes every dependence of p and the verdicts.
func Analyze(p *loopnest.Program) *Result {
	r := &Result{Program: p}
	var accesses []*loopnest.Access
	for _, s := range p.Stmts {
		accesses = append(accesses, s.Accesses...)
	}
	for _, x := range accesses {
		for _, y := range accesses {
			if x.Array == y.Array && (x.Write || y.Write) {
				r.Deps = append(r.Deps, newPair(p, x, y, nil, nil).deps()...)
			}
		}
	}
	for _, l := range p.Loops {
		r.Loops = append(r.Loops, r.verdict(l))
	}
	r.Fusions = fusions(p, p.Body)
	for _, outer := range p.Loops {
		for inner := onlyLoop(outer); inner != nil; inner = onlyLoop(inner) {
			r.Interchanges = append(r.Interchanges, r.interchange(outer, inner))
		}
	}
	return r
}

func (r *Result) verdict(l *loopnest.Loop) LoopVerdict {
	v := LoopVerdict{Loop: l, Parallel: true}
	for _, d := range r.Deps {
		if d.Carrier() != l {
			continue
		}
		v.Carried = append(v.Carried, d)
		if d.Reduction && !usesIndex(d.Src, l) && !usesIndex(d.Sink, l) {
			v.Reduction = true
		} else {
			v.Parallel = false
		}
	}
	if !v.Parallel {
		v.Reduction = false
	}
	return v
}

func usesIndex(a *loopnest.Access, l *loopnest.Loop) bool {
	for _, s := range a.Subs {
		if s.Uses(l.Index) {
			return true
		}
	}
	return false
}

// onlyLoop is the loop that is l's whole body, or nil: the next level of
// a perfect nest.
func onlyLoop(l *loopnest.Loop) *loopnest.Loop {
	if len(l.Body) == 1 && l.Body[0].Loop != nil {
		return l.Body[0].Loop
	}
	return nil
}

func (r *Result) interchange(outer, inner *loopnest.Loop) Interchange {
	x := Interchange{Outer: outer, Inner: inner, Legal: true}
	for _, d := range r.Deps {
		if d.Reduction || len(d.Loops) <= inner.Depth || d.Loops[inner.Depth] != inner {
			continue
		}
		dirs := append([]Dir(nil), d.Dirs...)
		dirs[outer.Depth], dirs[inner.Depth] = dirs[inner.Depth], dirs[outer.Depth]
		for _, dir := range dirs {
			if dir == Gt {
				x.Legal = false
				x.Preventing = append(x.Preventing, d)
			}
			if dir != Eq {
				break
			}
		}
	}
	return x
}

// fusions tests each pair of adjacent loops in body, and recursively.
func fusions(p *loopnest.Program, body []loopnest.Node) []Fusion {
	var out []Fusion
	for i, n := range body {
		if n.Loop == nil {
			continue
		}
		if i+1 < len(body) && body[i+1].Loop != nil {
			out = append(out, fusion(p, n.Loop, body[i+1].Loop))
		}
		out = append(out, fusions(p, n.Loop.Body)...)
	}
	return out
}

func fusion(p *loopnest.Program, first, second *loopnest.Loop) Fusion {
	f := Fusion{First: first, Second: second, Legal: true, SameBounds: sameBounds(first, second)}
	for _, s := range first.Stmts() {
		for _, t := range second.Stmts() {
			for _, x := range s.Accesses {
				for _, y := range t.Accesses {
					if x.Array != y.Array || !(x.Write || y.Write) || reduction(x, y) {
						continue
					}
					if d := newPair(p, x, y, first, second).fusionPreventing(); d != nil {
						f.Legal = false
						f.Preventing = append(f.Preventing, d)
					}
				}
			}
		}
	}
	return f
}

func sameBounds(a, b *loopnest.Loop) bool {
	same := func(x, y []loopnest.Affine) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].String() != y[i].String() { // siblings: the same names in scope
				return false
			}
		}
		return true
	}
	return same(a.Lower, b.Lower) && same(a.Upper, b.Upper)
}

func reduction(x, y *loopnest.Access) bool {
	return x.Accum && y.Accum && x.Array == y.Array && x.Op == y.Op
}

func kind(x, y *loopnest.Access) Kind {
	switch {
	case x.Write && y.Write:
		return Output
	case x.Write:
		return Flow
	}
	return Anti
}

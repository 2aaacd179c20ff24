package mapping

// Footprints: the elements of an array that one iteration of the league
// loop (one team) touches, as a box computed from the affine subscripts and
// the bounds of the loops inside it (interval arithmetic), each dimension an
// interval shifted by a multiple of the league index. The promoted part is
// the contiguous run of the array's flat layout that holds the box, so that
// the code's flat indices stay valid through a pm::TeamSlice with the run's
// offset (phases.go, shifted).

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// span is one dimension of a footprint: the indices coef * league + [lo, hi].
type span struct {
	coef   int64
	lo, hi int64
}

// footprint is the part of an array a team touches.
type footprint struct {
	array  *loopnest.Array
	league string  // the league loop's index
	dims   []span  // the box of the subscripts
	at     int     // the run: dimensions before at one index each, at [lo, hi], after it whole
	elems  int64   // the run's elements
	width  int64   // its last dimension's part: a row of the copy loop
	whole  []int64 // the extents of the dimensions after at
}

// invariant reports whether the run is the same for every team (dvv): its
// copy may be hoisted out of the league loop.
func (f *footprint) invariant() bool {
	for _, d := range f.dims[:f.at+1] {
		if d.coef != 0 {
			return false
		}
	}
	return true
}

// start is the first index of the run in dimension d, as an affine
// expression of the league index.
func (f *footprint) start(d int) loopnest.Affine {
	if d > f.at {
		return loopnest.Affine{Terms: map[string]int64{}}
	}
	a := loopnest.Affine{Const: f.dims[d].lo, Terms: map[string]int64{}}
	if f.dims[d].coef != 0 {
		a.Terms[f.league] = f.dims[d].coef
	}
	return a
}

// offset is the C++ of the run's first element in the flat layout.
func (f *footprint) offset() string {
	var terms []string
	for d := range f.dims {
		s := f.start(d)
		if s.Const == 0 && len(s.Terms) == 0 {
			continue
		}
		var stride []string
		for _, e := range f.array.Extent[d+1:] {
			stride = append(stride, paren(e.String()))
		}
		if len(stride) == 0 {
			terms = append(terms, paren(s.String()))
		} else {
			terms = append(terms, paren(s.String())+" * "+strings.Join(stride, " * "))
		}
	}
	if len(terms) == 0 {
		return "0"
	}
	return strings.Join(terms, " + ")
}

// String writes the run: field[ie][0:4][0:4][0:72].
func (f *footprint) String() string {
	s := f.array.Name
	for d := range f.dims {
		switch {
		case d < f.at:
			s += "[" + f.start(d).String() + "]"
		case d == f.at:
			st, end := f.start(d), f.start(d)
			end.Const += f.dims[d].hi - f.dims[d].lo + 1
			s += fmt.Sprintf("[%s:%s]", st, end)
		default:
			s += fmt.Sprintf("[0:%d]", f.whole[d-f.at-1])
		}
	}
	return s
}

// footprintOf computes array a's footprint per iteration of outer, or says
// why it has none: an access outside the loop, a bound or subscript using a
// parameter without a constant value, a bound using the league index (the
// box would change its shape), or dimensions that move differently with it.
func footprintOf(p *loopnest.Program, outer *loopnest.Loop, a *loopnest.Array, consts map[string]int64) (*footprint, string) {
	if a.Rank() == 0 {
		return nil, "a scalar"
	}
	f := &footprint{array: a, league: outer.Index}
	seen := false
	for _, s := range p.Stmts {
		for _, acc := range s.Accesses {
			if acc.Array != a {
				continue
			}
			if !within(s, outer) {
				return nil, fmt.Sprintf("%s (%s) is outside loop %s", acc.Text, acc.Pos, outer.ID)
			}
			iv := intervals{outer: outer, consts: consts}
			empty, why := iv.enter(s.Loops[outer.Depth+1:])
			if why != "" {
				return nil, why
			}
			if empty {
				continue // never runs
			}
			for d, sub := range acc.Subs {
				lo, hi, why := iv.of(sub)
				if why != "" {
					return nil, fmt.Sprintf("subscript %d of %s (%s) %s", d+1, acc.Text, acc.Pos, why)
				}
				sp := span{coef: sub.Coef(outer.Index), lo: lo, hi: hi}
				if !seen {
					f.dims = append(f.dims, sp)
					continue
				}
				if f.dims[d].coef != sp.coef {
					return nil, fmt.Sprintf("subscript %d of %s (%s) moves with %s by %d, another access's by %d: the teams' parts are not one box each", d+1, acc.Text, acc.Pos, outer.Index, sp.coef, f.dims[d].coef)
				}
				f.dims[d].lo, f.dims[d].hi = min(f.dims[d].lo, lo), max(f.dims[d].hi, hi)
			}
			seen = true
		}
	}
	if !seen {
		return nil, "not accessed"
	}
	f.at = len(f.dims) - 1
	for d, sp := range f.dims {
		if sp.lo != sp.hi {
			f.at = d
			break
		}
	}
	f.elems = f.dims[f.at].hi - f.dims[f.at].lo + 1
	f.width = f.elems
	for d := f.at + 1; d < len(f.dims); d++ {
		e := a.Extent[d]
		for name := range e.Terms {
			if _, ok := consts[name]; !ok {
				return nil, fmt.Sprintf("no constant size: extent %s of dimension %d uses %s, not a constant argument of the kernel", e, d+1, name)
			}
		}
		n := e.Eval(consts)
		if sp := f.dims[d]; sp.lo < 0 || sp.hi >= n {
			return nil, fmt.Sprintf("dimension %d's subscripts reach [%d, %d], outside the extent %d", d+1, sp.lo, sp.hi, n)
		}
		f.whole = append(f.whole, n)
		f.elems *= n
		f.width = n
	}
	return f, ""
}

// intervals bounds the loop indices inside the league loop by constants:
// a loop's lower bound the largest of its lower bounds' smallest values, its
// upper the smallest of its upper bounds' largest values.
type intervals struct {
	outer  *loopnest.Loop
	consts map[string]int64
	scope  []*loopnest.Loop
	lo, hi []int64
}

// enter adds the loops, outermost first; empty: one never runs.
func (iv *intervals) enter(loops []*loopnest.Loop) (empty bool, why string) {
	for _, l := range loops {
		lo, hi := int64(0), int64(0)
		for i, b := range l.Lower {
			if b.Uses(iv.outer.Index) {
				return false, fmt.Sprintf("loop %s's bounds use %s: the part per team changes its shape", l.ID, iv.outer.Index)
			}
			v, _, w := iv.of(b)
			if w != "" {
				return false, fmt.Sprintf("loop %s's lower bound %s", l.ID, w)
			}
			if i == 0 || v > lo {
				lo = v
			}
		}
		for i, b := range l.Upper {
			if b.Uses(iv.outer.Index) {
				return false, fmt.Sprintf("loop %s's bounds use %s: the part per team changes its shape", l.ID, iv.outer.Index)
			}
			_, v, w := iv.of(b)
			if w != "" {
				return false, fmt.Sprintf("loop %s's upper bound %s", l.ID, w)
			}
			if i == 0 || v-1 < hi {
				hi = v - 1
			}
		}
		empty = empty || lo > hi
		iv.scope, iv.lo, iv.hi = append(iv.scope, l), append(iv.lo, lo), append(iv.hi, hi)
	}
	return empty, ""
}

// of is the interval of e without its league-index term.
func (iv *intervals) of(e loopnest.Affine) (lo, hi int64, why string) {
	lo, hi = e.Const, e.Const
	for name, c := range e.Terms {
		if name == iv.outer.Index {
			continue
		}
		var a, b int64
		if v, ok := iv.consts[name]; ok {
			a, b = v, v
		} else if i := iv.find(name); i >= 0 {
			a, b = iv.lo[i], iv.hi[i]
		} else {
			return 0, 0, fmt.Sprintf("uses %s, which has no constant value", name)
		}
		if c > 0 {
			lo, hi = lo+c*a, hi+c*b
		} else {
			lo, hi = lo+c*b, hi+c*a
		}
	}
	return lo, hi, ""
}

// find is the innermost loop in scope with index name, or -1.
func (iv *intervals) find(name string) int {
	for i := len(iv.scope) - 1; i >= 0; i-- {
		if iv.scope[i].Index == name {
			return i
		}
	}
	return -1
}

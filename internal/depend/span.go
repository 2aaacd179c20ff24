package depend

import (
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// Span is the range of an affine expression over the iterations of a
// statement at given parameter values: the smallest and largest value it
// takes (Lo, Hi), or Empty when no iteration runs. Exact when the
// elimination is (unit coefficients, as the loop bounds and subscripts of
// the shipped nests have); otherwise the range may be wider than the values
// taken, never narrower. Known is false when the solver gave up (limits of
// system.go): nothing is known of the values.
type Span struct {
	Lo, Hi int64
	Empty  bool
	Known  bool
}

// SpanOf is the range of e, an affine expression in the parameters and the
// indices of loops (a statement's enclosing loops, outermost first), over
// those loops' iterations with the parameters at params (every parameter
// e and the bounds use must have a value).
func SpanOf(loops []*loopnest.Loop, e loopnest.Affine, params map[string]int64) Span {
	n := len(loops) + 1
	t := n - 1
	s := newSystem(n)
	add := func(r []int64, a loopnest.Affine, scale int64, depth int) {
		r[n] += scale * a.Const
		for name, c := range a.Terms {
			k := -1
			for i := depth - 1; i >= 0; i-- {
				if loops[i].Index == name {
					k = i
					break
				}
			}
			if k >= 0 {
				r[k] += scale * c
				continue
			}
			v, ok := params[name]
			if !ok {
				panic("depend: no value for " + name)
			}
			r[n] += scale * c * v
		}
	}
	for k, l := range loops {
		for _, lb := range l.Lower { // index - lb >= 0
			r := s.row()
			r[k] = 1
			add(r, lb, -1, k)
			s.geqs = append(s.geqs, r)
		}
		for _, ub := range l.Upper { // ub - 1 - index >= 0
			r := s.row()
			r[k] = -1
			add(r, ub, 1, k)
			r[n]--
			s.geqs = append(s.geqs, r)
		}
	}
	r := s.row() // t - e == 0
	r[t] = 1
	add(r, e, -1, len(loops))
	s.eqs = append(s.eqs, r)
	lo, hi, hasLo, hasHi, ok := s.bounds(t)
	switch {
	case !ok:
		return Span{Empty: true, Known: true}
	case !hasLo || !hasHi:
		return Span{}
	}
	return Span{Lo: lo, Hi: hi, Known: true}
}

package depend

import (
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// pair is the dependence problem of two accesses: their statements'
// iteration domains, equal subscripts, over the columns
// [parameters | x's loop indices | y's loop indices | t], where t is a
// spare column for projecting a distance.
type pair struct {
	p      *loopnest.Program
	x, y   *loopnest.Access
	common []*loopnest.Loop
	// fused: for a fusion test, the sibling loops (x's, y's) at depth
	// len(common) that run together.
	fusedX, fusedY *loopnest.Loop
	base           *system
	t              int
}

func newPair(p *loopnest.Program, x, y *loopnest.Access, fusedX, fusedY *loopnest.Loop) *pair {
	xs, ys := x.Stmt.Loops, y.Stmt.Loops
	pr := &pair{p: p, x: x, y: y, fusedX: fusedX, fusedY: fusedY}
	for i := 0; i < len(xs) && i < len(ys) && xs[i] == ys[i]; i++ {
		pr.common = append(pr.common, xs[i])
	}
	n := len(p.Params) + len(xs) + len(ys) + 1
	pr.t = n - 1
	s := newSystem(n)
	for _, a := range p.Assume {
		r := s.row()
		pr.add(r, 0, a, 1)
		s.geqs = append(s.geqs, r)
	}
	pr.domain(s, 0)
	pr.domain(s, 1)
	for i := range x.Subs {
		r := s.row()
		pr.add(r, 0, x.Subs[i], 1)
		pr.add(r, 1, y.Subs[i], -1)
		s.eqs = append(s.eqs, r)
	}
	pr.base = s
	return pr
}

// col is the column of loop depth k on side 0 (x) or 1 (y).
func (pr *pair) col(side, k int) int {
	c := len(pr.p.Params) + k
	if side == 1 {
		c += len(pr.x.Stmt.Loops)
	}
	return c
}

// add adds scale*a to row r, a's loop indices read on side.
func (pr *pair) add(r []int64, side int, a loopnest.Affine, scale int64) {
	loops := pr.x.Stmt.Loops
	if side == 1 {
		loops = pr.y.Stmt.Loops
	}
	r[len(r)-1] += scale * a.Const
	for name, c := range a.Terms {
		found := false
		for k, l := range loops {
			if l.Index == name {
				r[pr.col(side, k)] += scale * c
				found = true
			}
		}
		for i, prm := range pr.p.Params {
			if prm == name && !found {
				r[i] += scale * c
				found = true
			}
		}
		if !found {
			panic("depend: name out of scope: " + name) // loopnest checked scopes
		}
	}
}

// domain adds the loop bounds of one side's statement, and its guard.
func (pr *pair) domain(s *system, side int) {
	loops := pr.x.Stmt.Loops
	if side == 1 {
		loops = pr.y.Stmt.Loops
	}
	for k, l := range loops {
		for _, lb := range l.Lower { // index - lb >= 0
			r := s.row()
			r[pr.col(side, k)] = 1
			pr.add(r, side, lb, -1)
			s.geqs = append(s.geqs, r)
		}
		for _, ub := range l.Upper { // ub - 1 - index >= 0
			r := s.row()
			r[pr.col(side, k)] = -1
			pr.add(r, side, ub, 1)
			r[len(r)-1]--
			s.geqs = append(s.geqs, r)
		}
	}
	st := pr.x.Stmt
	if side == 1 {
		st = pr.y.Stmt
	}
	for _, g := range st.Guard { // g >= 0
		r := s.row()
		pr.add(r, side, g, 1)
		s.geqs = append(s.geqs, r)
	}
}

// direct constrains y's iteration at depth ky against x's at depth kx.
func (pr *pair) direct(s *system, kx, ky int, d Dir) {
	r := s.row()
	switch d {
	case Lt: // y - x - 1 >= 0
		r[pr.col(1, ky)], r[pr.col(0, kx)], r[len(r)-1] = 1, -1, -1
		s.geqs = append(s.geqs, r)
	case Gt: // x - y - 1 >= 0
		r[pr.col(1, ky)], r[pr.col(0, kx)], r[len(r)-1] = -1, 1, -1
		s.geqs = append(s.geqs, r)
	case Eq:
		r[pr.col(1, ky)], r[pr.col(0, kx)] = 1, -1
		s.eqs = append(s.eqs, r)
	}
}

// distance is y's iteration minus x's at the depths, if constant.
func (pr *pair) distance(s *system, kx, ky int) Distance {
	c := s.clone()
	r := c.row() // t - (y - x) == 0
	r[pr.t], r[pr.col(1, ky)], r[pr.col(0, kx)] = 1, -1, 1
	c.eqs = append(c.eqs, r)
	lo, hi, hasLo, hasHi, ok := c.bounds(pr.t)
	if ok && hasLo && hasHi && lo == hi {
		return Distance{Known: true, Value: lo}
	}
	return Distance{}
}

// deps refines the direction vectors over the common loops, keeping those
// in which x's instance runs first, and returns one dependence per vector.
func (pr *pair) deps() []*Dep {
	if !pr.base.feasible() {
		return nil
	}
	var out []*Dep
	var refine func(s *system, dirs []Dir)
	refine = func(s *system, dirs []Dir) {
		k := len(dirs)
		allEq := true
		for _, d := range dirs {
			allEq = allEq && d == Eq
		}
		if k == len(pr.common) {
			if allEq && pr.x.Stmt.Order >= pr.y.Stmt.Order {
				return // the same instance, or y's statement runs first
			}
			out = append(out, pr.dep(s, dirs, pr.common))
			return
		}
		options := []Dir{Lt, Eq, Gt}
		if allEq {
			options = options[:2] // a first > would make y run first
		}
		for _, d := range options {
			c := s.clone()
			pr.direct(c, k, k, d)
			if c.feasible() {
				refine(c, append(append([]Dir(nil), dirs...), d))
			}
		}
	}
	refine(pr.base, nil)
	return out
}

func (pr *pair) dep(s *system, dirs []Dir, loops []*loopnest.Loop) *Dep {
	d := &Dep{Kind: kind(pr.x, pr.y), Src: pr.x, Sink: pr.y, Loops: loops, Dirs: dirs,
		Reduction: reduction(pr.x, pr.y)}
	for k := range dirs {
		if dirs[k] == Eq {
			d.Dists = append(d.Dists, Distance{Known: true})
		} else {
			d.Dists = append(d.Dists, pr.distance(s, k, k))
		}
	}
	return d
}

// fusionPreventing returns the dependence that fusing fusedX and fusedY
// would reverse: same iteration of the common loops, y's fused iteration
// before x's; nil when there is none.
func (pr *pair) fusionPreventing() *Dep {
	s := pr.base.clone()
	for k := range pr.common {
		pr.direct(s, k, k, Eq)
	}
	k := len(pr.common)
	pr.direct(s, k, k, Gt)
	if !s.feasible() {
		return nil
	}
	dirs := make([]Dir, k+1)
	for i := range dirs[:k] {
		dirs[i] = Eq
	}
	dirs[k] = Gt
	return pr.dep(s, dirs, append(append([]*loopnest.Loop(nil), pr.common...), pr.fusedX))
}

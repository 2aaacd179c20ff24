package depend

// system is a conjunction of integer linear constraints over n variables:
// each row holds n coefficients and a constant, read as
// sum(row[i]*x[i]) + row[n] == 0 (eqs) or >= 0 (geqs).
//
// Deciding it is Omega-test-like: equalities are solved exactly over the
// integers (a unit coefficient is substituted; otherwise unimodular column
// operations, Euclid's algorithm on the coefficients, make one), then
// inequalities are eliminated by Fourier-Motzkin with integer tightening
// (each row divided by the gcd of its coefficients, the constant rounded
// down), and opposite rows that meet become equalities again. Every step
// keeps all integer solutions, so "infeasible" is a proof; "feasible" may
// be a rational solution without an integer one (an inexact elimination),
// which the analysis takes as a possible dependence: sound, conservative.
type system struct {
	n    int
	eqs  [][]int64
	geqs [][]int64
	keep int // the variable eliminate projects onto, never solved for; -1: none
}

// limits beyond which the solver gives up and answers "feasible".
const (
	maxCoef = 1 << 30 // products of two stay far from int64 overflow
	maxRows = 1000
)

func newSystem(n int) *system { return &system{n: n, keep: -1} }

func (s *system) row() []int64 { return make([]int64, s.n+1) }

func (s *system) clone() *system {
	c := &system{n: s.n, keep: -1}
	for _, r := range s.eqs {
		c.eqs = append(c.eqs, append([]int64(nil), r...))
	}
	for _, r := range s.geqs {
		c.geqs = append(c.geqs, append([]int64(nil), r...))
	}
	return c
}

// feasible reports false only when s has no integer solution.
func (s *system) feasible() bool {
	ok, _ := s.clone().eliminate(-1)
	return ok
}

// bounds projects s onto variable v: the integer range [lo, hi] that
// contains v in every solution (hasLo, hasHi false when unbounded), and
// false when s has no integer solution.
func (s *system) bounds(v int) (lo, hi int64, hasLo, hasHi, ok bool) {
	ok, rows := s.clone().eliminate(v)
	if !ok {
		return 0, 0, false, false, false
	}
	for _, r := range rows {
		a, c := r[v], r[s.n]
		switch {
		case a > 0: // a*v + c >= 0: v >= ceil(-c/a)
			if b := -floorDiv(c, a); !hasLo || b > lo {
				lo, hasLo = b, true
			}
		case a < 0: // v <= floor(c/-a)
			if b := floorDiv(c, -a); !hasHi || b < hi {
				hi, hasHi = b, true
			}
		}
	}
	if hasLo && hasHi && lo > hi {
		return 0, 0, false, false, false
	}
	return lo, hi, hasLo, hasHi, true
}

// eliminate removes every variable except keep (-1: all); it returns false
// on a proof of infeasibility, else the remaining rows (over keep only).
func (s *system) eliminate(keep int) (bool, [][]int64) {
	s.keep = keep
	for {
		if s.tooLarge() {
			return true, nil
		}
		if !s.solveEqualities() {
			return false, nil
		}
		ok, moved := s.tighten()
		if !ok {
			return false, nil
		}
		if moved {
			continue // opposite rows became an equality
		}
		if len(s.geqs) > maxRows {
			return true, nil
		}
		v := s.pick(keep)
		if v < 0 {
			return true, s.geqs
		}
		if !s.fourierMotzkin(v) {
			return true, nil // coefficients too large: give up, conservatively
		}
	}
}

func (s *system) tooLarge() bool {
	for _, rows := range [][][]int64{s.eqs, s.geqs} {
		for _, r := range rows {
			for _, a := range r {
				if abs(a) > maxCoef {
					return true
				}
			}
		}
	}
	return false
}

// solveEqualities substitutes every equality away.
func (s *system) solveEqualities() bool {
	for len(s.eqs) > 0 {
		e := s.eqs[len(s.eqs)-1]
		g := gcdRow(e[:s.n])
		if g == 0 {
			if e[s.n] != 0 {
				return false
			}
			s.eqs = s.eqs[:len(s.eqs)-1]
			continue
		}
		if e[s.n]%g != 0 {
			return false // the gcd test
		}
		for i := range e {
			e[i] /= g
		}
		unit, small := -1, -1
		for i, a := range e[:s.n] {
			if a == 0 || i == s.keep {
				continue // keep's meaning must not change: never solve for it
			}
			if a == 1 || a == -1 {
				unit = i
				break
			}
			if small < 0 || abs(a) < abs(e[small]) {
				small = i
			}
		}
		if unit < 0 && small >= 0 && !s.onlyOther(e, small) {
			// x_small = y - q*x_j for each other j: a unimodular change of
			// variables that leaves a_j mod a_small in this row (x_j keeps
			// its meaning, so j may be keep).
			k := small
			for j, a := range e[:s.n] {
				if j == k || a == 0 {
					continue
				}
				q := floorDiv(a, e[k])
				s.columnOp(j, k, q)
			}
			continue
		}
		if unit < 0 {
			// Only keep and one other variable, no unit coefficient: keep
			// it as two inequalities (rational, so conservative).
			s.eqs = s.eqs[:len(s.eqs)-1]
			neg := make([]int64, len(e))
			for i := range e {
				neg[i] = -e[i]
			}
			s.geqs = append(s.geqs, e, neg)
			continue
		}
		s.eqs = s.eqs[:len(s.eqs)-1]
		sign := e[unit] // x_unit = -sign*(rest)
		for _, rows := range [][][]int64{s.eqs, s.geqs} {
			for _, r := range rows {
				if f := r[unit]; f != 0 {
					for i := range r {
						r[i] -= f * sign * e[i]
					}
				}
			}
		}
	}
	return true
}

// onlyOther reports whether e's only non-zero coefficients besides k's are
// keep's, and k's cannot shrink further by reducing keep's (keep's is
// already smaller in magnitude, or zero).
func (s *system) onlyOther(e []int64, k int) bool {
	for i, a := range e[:s.n] {
		if i != k && i != s.keep && a != 0 {
			return false
		}
	}
	return s.keep < 0 || e[s.keep] == 0 || abs(e[s.keep]) < abs(e[k])
}

// columnOp replaces column j by column j - q*column k in every row.
func (s *system) columnOp(j, k int, q int64) {
	for _, rows := range [][][]int64{s.eqs, s.geqs} {
		for _, r := range rows {
			r[j] -= q * r[k]
		}
	}
}

// tighten normalises the inequalities, drops duplicates and trivial rows,
// and finds contradictions and equalities between opposite rows.
func (s *system) tighten() (ok, moved bool) {
	byCoef := map[string]int{}
	var kept [][]int64
	for _, r := range s.geqs {
		g := gcdRow(r[:s.n])
		if g == 0 {
			if r[s.n] < 0 {
				return false, false
			}
			continue
		}
		for i := range r[:s.n] {
			r[i] /= g
		}
		r[s.n] = floorDiv(r[s.n], g)
		key := coefKey(r[:s.n], 1)
		if i, dup := byCoef[key]; dup {
			kept[i][s.n] = min(kept[i][s.n], r[s.n])
			continue
		}
		byCoef[key] = len(kept)
		kept = append(kept, r)
	}
	s.geqs = kept
	var rest [][]int64
	dropped := map[int]bool{}
	for i, r := range kept {
		j, ok := byCoef[coefKey(r[:s.n], -1)]
		if !ok || dropped[i] {
			continue
		}
		switch sum := r[s.n] + kept[j][s.n]; {
		case sum < 0:
			return false, false
		case sum == 0 && (s.keep < 0 || r[s.keep] == 0):
			s.eqs = append(s.eqs, r)
			dropped[i], dropped[j] = true, true
			moved = true
		}
	}
	if moved {
		for i, r := range kept {
			if !dropped[i] {
				rest = append(rest, r)
			}
		}
		s.geqs = rest
	}
	return true, moved
}

// pick chooses the next variable to eliminate: one bounded on a single
// side first (its rows simply go), then an exact one (unit coefficients on
// one side), then the fewest new rows; -1 when only keep is left.
func (s *system) pick(keep int) int {
	best, bestCost, bestExact := -1, 0, false
	for v := 0; v < s.n; v++ {
		if v == keep {
			continue
		}
		var lower, upper int
		lowerUnit, upperUnit := true, true
		for _, r := range s.geqs {
			switch a := r[v]; {
			case a > 0:
				lower++
				lowerUnit = lowerUnit && a == 1
			case a < 0:
				upper++
				upperUnit = upperUnit && a == -1
			}
		}
		if lower+upper == 0 {
			continue
		}
		cost := lower * upper
		exact := lowerUnit || upperUnit
		if lower == 0 || upper == 0 {
			cost, exact = -1, true
		}
		if best < 0 || exact && !bestExact || exact == bestExact && cost < bestCost {
			best, bestCost, bestExact = v, cost, exact
		}
	}
	return best
}

// fourierMotzkin eliminates v: each lower bound a*v + L >= 0 with each upper
// bound -b*v + U >= 0 gives b*L + a*U >= 0. False when numbers grow too big.
func (s *system) fourierMotzkin(v int) bool {
	var lower, upper, rest [][]int64
	for _, r := range s.geqs {
		switch {
		case r[v] > 0:
			lower = append(lower, r)
		case r[v] < 0:
			upper = append(upper, r)
		default:
			rest = append(rest, r)
		}
	}
	for _, lo := range lower {
		for _, up := range upper {
			a, b := lo[v], -up[v]
			r := make([]int64, s.n+1)
			for i := range r {
				r[i] = b*lo[i] + a*up[i]
				if abs(r[i]) > maxCoef {
					return false
				}
			}
			rest = append(rest, r)
		}
	}
	s.geqs = rest
	return true
}

func coefKey(c []int64, sign int64) string {
	b := make([]byte, 0, len(c)*4)
	for _, x := range c {
		x *= sign
		for i := 0; i < 8; i++ {
			b = append(b, byte(x>>(8*i)))
		}
	}
	return string(b)
}

func gcdRow(r []int64) int64 {
	var g int64
	for _, a := range r {
		g = gcd(g, abs(a))
	}
	return g
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// floorDiv rounds a/b towards minus infinity (b != 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

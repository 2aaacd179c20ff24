package mapping

// A reduction loop just below the band, on the vector lanes: a row sum
// (y[i] = sum_j A[i][j] x[j], row-major, j stride-1) written with its
// initial value before the loop (`y[i] = 0`) makes the band imperfect, so
// the band mapping would split the rows over league, team and vector and
// each lane would walk its own row (a stride of a row between lanes: not
// coalesced on a GPU, no simd on a CPU). When the reduced loop has more
// stride-1 accesses than any band loop, the mapper instead runs it on the
// vector level as a thread_vector_reduce (consecutive lanes read
// consecutive elements of the row) and the band's loops on the league and
// team levels; the statements around the loop run once per team thread.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// rowReduce is the reduction loop below a band that may take the vector
// level, and the statements of the band's innermost body around it.
type rowReduce struct {
	loop   *loopnest.Loop
	target *loopnest.Access // the accumulation target of every statement in it
	before []*loopnest.Stmt // the statements before it, in order
	after  []*loopnest.Stmt // and after it
}

// belowBand returns the reduction loop below the band and whether it may
// run on the vector lanes with the band on league and team: why is "" when
// it may, else the reason not; nil when the band's innermost loop holds no
// such loop. It needs:
//   - the band's innermost loop to hold statements and one loop, whose body
//     is statements only;
//   - that loop parallel with reduction, each of its statements a +
//     accumulation (term:, or code `target += value;`) into one target
//     that does not use its index;
//   - every band loop parallel without reduction, at most two (league and
//     team), so that each band iteration is one team thread's;
//   - no access of the loop reads an array the statements around it write,
//     or the target's array other than by the accumulation (the lanes read
//     only what no lane of the team thread writes).
func belowBand(r *depend.Result, loops []*loopnest.Loop) (*rowReduce, string) {
	last := loops[len(loops)-1]
	rr := &rowReduce{}
	for _, n := range last.Body {
		switch {
		case n.Loop != nil && rr.loop != nil:
			return nil, ""
		case n.Loop != nil:
			rr.loop = n.Loop
		case rr.loop == nil:
			rr.before = append(rr.before, n.Stmt)
		default:
			rr.after = append(rr.after, n.Stmt)
		}
	}
	x := rr.loop
	if x == nil || !r.Verdict(x).Parallel || !r.Verdict(x).Reduction {
		return nil, ""
	}
	for _, n := range x.Body {
		if n.Loop != nil {
			return rr, fmt.Sprintf("loop %s is inside it", n.Loop.ID)
		}
	}
	for _, b := range loops {
		if v := r.Verdict(b); !v.Parallel || v.Reduction {
			return rr, fmt.Sprintf("band loop %s is not parallel without reduction", b.ID)
		}
	}
	if len(loops) > 2 {
		return rr, fmt.Sprintf("the band has %d loops, more than the league and team levels", len(loops))
	}
	for _, s := range x.Stmts() {
		acc := accumTarget(s)
		if acc == nil || acc.Op != "+" {
			return rr, fmt.Sprintf("statement %s is not a + accumulation", s.Name)
		}
		if s.Term == "" && plusAssign.FindStringSubmatch(s.Code) == nil {
			return rr, fmt.Sprintf("the code of %s is not one `target += value;`", s.Name)
		}
		if rr.target != nil && rr.target.Text != acc.Text {
			return rr, fmt.Sprintf("statements accumulate into %s and %s", rr.target.Text, acc.Text)
		}
		rr.target = acc
		for _, sub := range acc.Subs {
			if sub.Uses(x.Index) {
				return rr, fmt.Sprintf("the target %s changes with loop %s", acc.Text, x.ID)
			}
		}
	}
	if rr.target == nil {
		return rr, "it holds no statement"
	}
	written := map[*loopnest.Array]bool{}
	for _, s := range append(slices.Clone(rr.before), rr.after...) {
		for _, a := range s.Accesses {
			if a.Write {
				written[a.Array] = true
			}
		}
	}
	for _, s := range x.Stmts() {
		for _, a := range s.Accesses {
			switch {
			case a.Accum:
			case a.Array == rr.target.Array:
				return rr, fmt.Sprintf("%s (%s) reads the target's array", a.Text, a.Pos)
			case written[a.Array]:
				return rr, fmt.Sprintf("%s (%s) reads an array the statements around the loop write", a.Text, a.Pos)
			}
		}
	}
	return rr, ""
}

// foldInit is the statement before the loop that assigns the target its
// initial value (`value:` on exactly the target's element), when it is the
// only statement before the loop: the lowering then adds the sum to that
// value and stores the target once (nothing between them reads or writes
// the element but the accumulation).
func (rr *rowReduce) foldInit() *loopnest.Stmt {
	if len(rr.before) != 1 {
		return nil
	}
	s := rr.before[0]
	if s.Value != "" && sameElement(writeOf(s), rr.target) {
		return s
	}
	return nil
}

// single is a one-trip thread_vector_for: its body runs once per team
// thread, in one lane (Kokkos' single(PerThread)), in every backend.
func single(code string) *spec.Node {
	return &spec.Node{Kind: "thread_vector_for", Index: "pm_one", Begin: "0", End: "1",
		Body: []*spec.Node{{Kind: "code", Code: code}}}
}

// around is the team thread's code before the reduction (the statements
// before the loop, once per team thread; nil when there are none or the
// one there is folded) and after it: the sum added to the target (or the
// folded initial value plus the sum stored), then the statements after the
// loop, once per team thread.
func (rr *rowReduce) around(target, acc string) (pre, post *spec.Node) {
	var before, after []string
	store := fmt.Sprintf("%s += %s;", target, acc)
	if init := rr.foldInit(); init != nil {
		store = fmt.Sprintf("%s = %s;", target, plusValue(init.Value, acc))
	} else {
		for _, s := range rr.before {
			before = append(before, stmtCode(s))
		}
	}
	after = append(after, store)
	for _, s := range rr.after {
		after = append(after, stmtCode(s))
	}
	if len(before) > 0 {
		pre = single(strings.Join(before, "\n"))
	}
	return pre, single(strings.Join(after, "\n"))
}

// plusValue is init + acc in C++, acc alone for a zero.
func plusValue(init, acc string) string {
	switch strings.TrimSpace(init) {
	case "0", "0.0", "0.":
		return acc
	}
	return "(" + init + ") + " + acc
}

package mapping

// Scalar replacement of accumulations: an accumulation whose target does not
// change in the sequential loop around it is kept in a register across that
// loop (`T pm_acc_N = init; for (...) pm_acc_N += term; target = pm_acc_N;`),
// as R-Stream and every optimising compiler do, and as HOMMEXX's hand-written
// form sums over l. In memory each iteration would load and store the target
// (the compiler cannot prove that the loads of the other arrays, possibly
// carved from one scratch buffer, do not alias it), and the output would look
// updated many times to the promotion (promote.go).

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// accReg is one accumulation kept in a register across a sequential loop.
type accReg struct {
	name   string           // pm_acc_N
	typ    string           // the array's element type
	stmt   *loopnest.Stmt   // the accumulation (its term: is added to the register)
	target *loopnest.Access // its write
	loop   *loopnest.Loop   // the sequential loop around it
	init   *loopnest.Stmt   // the write of the target before the loop whose value starts it (no longer stored), or nil: a load
	tail   []*loopnest.Stmt // accumulations into the target with term: after the loop, applied to the register before its store
}

// registers are a lowering's scalar replacements and its notes on them.
type registers struct {
	byStmt map[*loopnest.Stmt]*accReg
	byLoop map[*loopnest.Loop][]*accReg
	inits  map[*loopnest.Stmt]*accReg
	tails  map[*loopnest.Stmt]*accReg
	notes  []string
}

// planRegisters decides, for each accumulation with term: inside outer (nil:
// anywhere), whether it is kept in a register across its innermost loop:
// that loop must be sequential (sequential(l)), the target's subscripts must
// use neither its index nor an index of a loop inside it, and no other access
// in the loop may touch the target's element in the same run of the loop (no
// dependence between them with = on every loop around it; the dependence
// analysis answers "maybe" when unsure, which refuses).
func planRegisters(k *spec.Kernel, r *depend.Result, outer *loopnest.Loop, sequential func(*loopnest.Loop) bool) *registers {
	regs := &registers{byStmt: map[*loopnest.Stmt]*accReg{}, byLoop: map[*loopnest.Loop][]*accReg{}, inits: map[*loopnest.Stmt]*accReg{}, tails: map[*loopnest.Stmt]*accReg{}}
	for _, s := range r.Program.Stmts {
		if s.Term == "" || outer != nil && !within(s, outer) || regs.tails[s] != nil {
			continue // a tail applies to an earlier statement's register
		}
		target := accumTarget(s)
		if len(s.Loops) == 0 {
			continue
		}
		l := s.Loops[len(s.Loops)-1]
		if why := regs.refuse(r, s, target, l, sequential); why != "" {
			regs.notes = append(regs.notes, fmt.Sprintf("keep %s's accumulation into %s (%s) in memory: %s", s.Name, target.Text, target.Pos, why))
			continue
		}
		reg := &accReg{name: fmt.Sprintf("pm_acc_%d", len(regs.byStmt)), typ: elemType(k, target.Array), stmt: s, target: target, loop: l}
		reg.init = regs.initOf(r, reg)
		regs.byStmt[s] = reg
		reg.tail = regs.tailOf(r, reg)
		stored := "after the loop"
		for _, t := range reg.tail {
			regs.tails[t] = reg
			stored = fmt.Sprintf("after %s (%s), whose %s applies to the register", t.Name, t.Pos, accumTarget(t).Op)
		}
		regs.byLoop[l] = append(regs.byLoop[l], reg)
		from := "a load of " + target.Text + " before it"
		if reg.init != nil {
			regs.inits[reg.init] = reg
			from = fmt.Sprintf("the value of %s (%s), which is no longer stored", reg.init.Name, reg.init.Pos)
		}
		regs.notes = append(regs.notes, fmt.Sprintf("keep %s's accumulation into %s (%s) in register %s across loop %s: the target does not change in the loop and no other access in it touches the element; it starts from %s, and is stored once %s",
			s.Name, target.Text, target.Pos, reg.name, l.ID, from, stored))
	}
	return regs
}

// refuse says why s's accumulation cannot be kept in a register across l.
func (regs *registers) refuse(r *depend.Result, s *loopnest.Stmt, target *loopnest.Access, l *loopnest.Loop, sequential func(*loopnest.Loop) bool) string {
	if !sequential(l) {
		return fmt.Sprintf("its loop %s is mapped, not a sequential loop", l.ID)
	}
	for _, x := range s.Loops[l.Depth:] {
		for _, sub := range target.Subs {
			if sub.Uses(x.Index) {
				return fmt.Sprintf("the target changes with loop %s", x.ID)
			}
		}
	}
	mine := func(a *loopnest.Access) bool { return a.Stmt == s && a.Accum }
	for _, d := range r.Deps {
		if mine(d.Src) == mine(d.Sink) {
			continue // both the accumulation's own, or neither
		}
		other := d.Src
		if mine(other) {
			other = d.Sink
		}
		if !l.Encloses(other.Stmt) || !sameRun(d, l) {
			continue
		}
		return fmt.Sprintf("%s (%s, %s) may touch the same element in the loop: %s", other.Text, other.Stmt.Name, other.Pos, d)
	}
	return ""
}

// sameRun reports whether dependence d may join two instances in one run of
// loop l: = on every loop around l.
func sameRun(d *depend.Dep, l *loopnest.Loop) bool {
	for i := 0; i < l.Depth && i < len(d.Dirs); i++ {
		if d.Dirs[i] != depend.Eq {
			return false
		}
	}
	return true
}

// initOf finds the statement that writes exactly the register's target with
// value: among the statements just before its loop (no loop between), so
// that the register starts from that value and the store goes; nil when
// there is none, or when a statement between them touches an element it
// touches (moving its value down to the loop could change what it reads).
func (regs *registers) initOf(r *depend.Result, reg *accReg) *loopnest.Stmt {
	body, at := siblings(r.Program, reg.loop)
	for j := at - 1; j >= 0 && body[j].Stmt != nil; j-- {
		s := body[j].Stmt
		if s.Value == "" || regs.inits[s] != nil || !sameElement(writeOf(s), reg.target) {
			continue
		}
		var between []*loopnest.Stmt
		for _, n := range body[j+1 : at] {
			between = append(between, n.Stmt)
		}
		for _, d := range r.Deps {
			for _, o := range between {
				if (d.Src.Stmt == s && d.Sink.Stmt == o || d.Src.Stmt == o && d.Sink.Stmt == s) && sameRun(d, reg.loop) {
					return nil
				}
			}
		}
		return s
	}
	return nil
}

// tailOf finds the accumulations into exactly the register's target with
// term: among the statements just after its loop (no loop between): they
// apply to the register and the store follows the last of them (divergence's
// scaling by 1/metdet). A statement between them, or a tail's own other
// accesses, must not touch the element; the search stops at the first that
// may.
func (regs *registers) tailOf(r *depend.Result, reg *accReg) []*loopnest.Stmt {
	body, at := siblings(r.Program, reg.loop)
	var tail, between []*loopnest.Stmt
	for j := at + 1; j < len(body) && body[j].Stmt != nil; j++ {
		s := body[j].Stmt
		candidate := s.Term != "" && regs.byStmt[s] == nil && sameElement(accumTarget(s), reg.target)
		held := func(a *loopnest.Access) bool { // an access the register stands for
			return a.Accum && (a.Stmt == reg.stmt || candidate && a.Stmt == s)
		}
		touches := false
		for _, d := range r.Deps {
			if !sameRun(d, reg.loop) || held(d.Src) == held(d.Sink) {
				continue
			}
			other := d.Src
			if held(other) {
				other = d.Sink
			}
			if other.Stmt == s || slices.Contains(between, other.Stmt) {
				touches = true
				break
			}
		}
		if touches {
			break
		}
		if candidate {
			tail = append(tail, s)
		}
		between = append(between, s)
	}
	return tail
}

// siblings is the body that holds loop l and l's place in it.
func siblings(p *loopnest.Program, l *loopnest.Loop) ([]loopnest.Node, int) {
	body := p.Body
	if l.Parent != nil {
		body = l.Parent.Body
	}
	return body, slices.IndexFunc(body, func(n loopnest.Node) bool { return n.Loop == l })
}

// accumTarget is the write of a statement's accumulation.
func accumTarget(s *loopnest.Stmt) *loopnest.Access {
	for _, a := range s.Accesses {
		if a.Accum && a.Write {
			return a
		}
	}
	return nil
}

// writeOf is the one plain write of a value: statement.
func writeOf(s *loopnest.Stmt) *loopnest.Access {
	for _, a := range s.Accesses {
		if a.Write && !a.Accum {
			return a
		}
	}
	return nil
}

func sameElement(a, b *loopnest.Access) bool {
	if a == nil || b == nil || a.Array != b.Array || len(a.Subs) != len(b.Subs) {
		return false
	}
	for i := range a.Subs {
		x, y := a.Subs[i], b.Subs[i]
		if x.Const != y.Const || len(x.Terms) != len(y.Terms) {
			return false
		}
		for n, c := range x.Terms {
			if y.Terms[n] != c {
				return false
			}
		}
	}
	return true
}

// elemType is the element type of the kernel argument behind array a
// (double for double[]).
func elemType(k *spec.Kernel, a *loopnest.Array) string {
	if k != nil {
		if i := slices.IndexFunc(k.Args, func(x spec.Arg) bool { return x.Name == a.Name }); i >= 0 {
			return strings.TrimSuffix(k.Args[i].Type, "[]")
		}
	}
	return "double"
}

// flatIndex is the C++ of an access's element in the array's row-major flat
// layout, from its subscripts and the declared shape:
// ((s0 * e1 + s1) * e2 + s2).
func flatIndex(a *loopnest.Access) string {
	if len(a.Subs) == 0 {
		return "0"
	}
	x := a.Subs[0].String()
	for d := 1; d < len(a.Subs); d++ {
		if x != "0" {
			x = paren(x) + " * " + paren(a.Array.Extent[d].String())
		}
		if sub := a.Subs[d].String(); sub != "0" {
			x = plus(x, sub)
		}
	}
	return x
}

// lvalue is the C++ element an access names.
func lvalue(a *loopnest.Access) string { return a.Array.Name + "[" + flatIndex(a) + "]" }

// stmtCode is a statement's C++: its code:, or the statement written from
// its term: (target op= term) or value: (target = value).
func stmtCode(s *loopnest.Stmt) string {
	switch {
	case s.Term != "":
		return fmt.Sprintf("%s %s= %s;", lvalue(accumTarget(s)), accumTarget(s).Op, s.Term)
	case s.Value != "":
		return fmt.Sprintf("%s = %s;", lvalue(writeOf(s)), s.Value)
	}
	return strings.TrimRight(s.Code, "\n")
}

// bodyCode is a body's C++: statements, and loops as plain C++ loops, with
// the registers' accumulations kept in them (regs may be nil).
func (regs *registers) bodyCode(nodes []loopnest.Node) string {
	var parts []string
	for _, n := range nodes {
		switch {
		case n.Loop != nil:
			parts = append(parts, regs.loopCode(n.Loop, regs.bodyCode(n.Loop.Body)))
		case regs != nil && regs.inits[n.Stmt] != nil:
			// its value starts the register, before the loop
		case regs != nil && regs.byStmt[n.Stmt] != nil:
			reg := regs.byStmt[n.Stmt]
			parts = append(parts, fmt.Sprintf("%s %s= %s;", reg.name, reg.target.Op, n.Stmt.Term))
		case regs != nil && regs.tails[n.Stmt] != nil:
			reg := regs.tails[n.Stmt]
			parts = append(parts, fmt.Sprintf("%s %s= %s;", reg.name, accumTarget(n.Stmt).Op, n.Stmt.Term))
			if reg.tail[len(reg.tail)-1] == n.Stmt {
				parts = append(parts, fmt.Sprintf("%s = %s;", lvalue(reg.target), reg.name))
			}
		default:
			parts = append(parts, stmtCode(n.Stmt))
		}
	}
	return strings.Join(parts, "\n")
}

// loopCode is a plain C++ loop around body, between the loads and the
// stores of the registers kept across it.
func (regs *registers) loopCode(x *loopnest.Loop, body string) string {
	loop := fmt.Sprintf("for (int64_t %s = %s; %s < %s; ++%s) {\n%s\n}", x.Index, lowerOf(x), x.Index, upperOf(x), x.Index, indent(body))
	if regs == nil || len(regs.byLoop[x]) == 0 {
		return loop
	}
	var before, after []string
	for _, reg := range regs.byLoop[x] {
		init := lvalue(reg.target)
		if reg.init != nil {
			init = reg.init.Value
		}
		before = append(before, fmt.Sprintf("%s %s = %s;", reg.typ, reg.name, init))
		if len(reg.tail) == 0 { // else after the last of them (bodyCode)
			after = append(after, fmt.Sprintf("%s = %s;", lvalue(reg.target), reg.name))
		}
	}
	return strings.Join(append(append(before, loop), after...), "\n")
}

// explain prints each replacement and refusal.
func (regs *registers) explain(w io.Writer) {
	for _, n := range regs.notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// counted reports whether an access of an instance reaches memory once the
// registers are in place, and so counts as a use of its element: an
// initialising store does not, a kept accumulation's write does once per
// run of its loop and its read (the load before the loop) once when no
// value starts it; an accumulation after the loop applied to the register
// does not. seen records the runs already counted.
func (regs *registers) counted(acc *loopnest.Access, iter []int64, addr []int64, seen map[string]bool) bool {
	if regs == nil {
		return true
	}
	if reg := regs.inits[acc.Stmt]; reg != nil && acc.Write {
		return false
	}
	if regs.tails[acc.Stmt] != nil && acc.Accum {
		return false
	}
	reg := regs.byStmt[acc.Stmt]
	if reg == nil || !acc.Accum {
		return true
	}
	if !acc.Write && reg.init != nil {
		return false
	}
	key := fmt.Sprint(reg.name, acc.Write, iter[:reg.loop.Depth], addr)
	if seen[key] {
		return false
	}
	seen[key] = true
	return true
}

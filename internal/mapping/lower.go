package mapping

// Lowering a mapped loop nest into the pattern tree hand-written kernels use
// (docs/kernels.md), so that every backend builds it: one team whose league,
// team-thread and thread-vector levels are all explicit, their sizes from a
// machine model.

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// DefaultGPU is the machine model the sizes come from unless one is named:
// the H100 of the GPU hosts (the H200 has the same sm_90 limits, so the same
// sizes).
const DefaultGPU = "h100-sxm5-80gb"

// The tunables a mapped kernel gets: the team size and vector length the
// model chose. They are the launch's sizes; the index arithmetic uses them
// too, so a strategy or the tuner may override them and the kernel stays
// correct.
const (
	TeamTunable   = "map_team_size"
	VectorTunable = "map_vector_size"
	// StepTunable is the staged multiply's step along its reduction loop
	// (tilestage.go): the scratch sizes and the loops use it, so any value
	// stays correct.
	StepTunable = "map_step"
)

// LowerAll maps every loop-nest kernel (spec.Kernel.Loops) with the model
// and sets its Pattern, Tunables and Mapping; problems come back positioned
// and together.
func LowerAll(kernels []*spec.Kernel, m *machine.Model) error {
	var errs diag.List
	for _, k := range kernels {
		if k.Loops != nil && k.Pattern == nil {
			Lower(k, m, &errs)
		}
	}
	return errs.Err()
}

// Lower maps one loop-nest kernel. It first checks the nest at every
// declared size (checkSound: assumptions, accesses inside their arrays and
// dimensions); a kernel that fails is refused before any code is made.
func Lower(k *spec.Kernel, m *machine.Model, errs *diag.List) {
	if !checkSound(k, errs) {
		return
	}
	if !mapperTunablesFree(k, errs) {
		return
	}
	if len(k.Loops.Body) > 1 {
		lowerNests(k, m, errs)
		return
	}
	if err := lowerOne(k, m, nil); err != nil {
		errs.Add(k.Loops.Pos, "loops: kernel %s: %v", k.Name, err)
	}
}

// lowerOne maps a kernel whose loops are one top-level nest into one team:
// phased (a parallel outer loop around nests) or by its band. It sets
// k.Pattern, k.Tunables and k.Mapping; info, when not nil, gets how many
// loops the mapping runs in parallel and whether it is phased.
func lowerOne(k *spec.Kernel, m *machine.Model, info *launchInfo) error {
	r := depend.Analyze(k.Loops)
	nests := Map(r)
	p := k.Loops
	if len(p.Body) == 1 && p.Body[0].Loop != nil && phased(r, p.Body[0].Loop) {
		text, err := lowerPhased(k, r, p.Body[0].Loop, m, info)
		if err != nil {
			return err
		}
		k.Mapping = text
		return nil
	}
	if len(p.Body) != 1 || p.Body[0].Loop == nil || len(nests) != 1 {
		return fmt.Errorf("a top-level statement, or a loop whose band holds no parallel loop (a launch per iteration of it), is not lowered yet; this has %d top-level items and %d nests", len(p.Body), len(nests))
	}
	if lowerTiled(k, r, nests[0], m, info) { // a transpose or a matrix multiply: tile.go
		return nil
	}
	l := &lowering{r: r, nest: nests[0], model: m}
	var notes []string
	l.note = func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	if err := l.plan(); err != nil {
		return err
	}
	if l.reduce == nil { // a reduction's statements add to pm_sum
		l.regs = planRegisters(k, r, nil, func(x *loopnest.Loop) bool { return len(l.levels[x]) == 0 })
		notes = append(notes, l.regs.notes...)
	}
	k.Pattern = l.tree()
	k.Tunables = append(k.Tunables, spec.Tunable{Name: TeamTunable, Value: l.team}, spec.Tunable{Name: VectorTunable, Value: l.vector})
	if info != nil {
		for _, b := range l.band {
			if len(l.levels[b]) > 0 {
				info.parallel++
			}
		}
	}
	var b bytes.Buffer
	r.Explain(&b)
	Explain(&b, []Nest{l.nest})
	for _, n := range notes {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	k.Mapping = b.String()
	return nil
}

// mapperTunablesFree refuses a kernel that declares the mapper's tunables.
func mapperTunablesFree(k *spec.Kernel, errs *diag.List) bool {
	for _, t := range []string{TeamTunable, VectorTunable, StepTunable} {
		if slices.ContainsFunc(k.Tunables, func(x spec.Tunable) bool { return x.Name == t }) {
			errs.Add(k.Loops.Pos, "loops: tunable %s is the mapper's; choose another name", t)
			return false
		}
	}
	return true
}

type lowering struct {
	r     *depend.Result
	nest  Nest
	model *machine.Model
	note  func(format string, args ...any)

	band   []*loopnest.Loop
	at     map[string]*loopnest.Loop // level -> the loop holding it (nil: none)
	levels map[*loopnest.Loop][]string
	inner  []*loopnest.Loop // band loops not mapped, run inside the innermost level in order
	reduce *reduction       // the vector loop's reduction, or nil
	below  *rowReduce       // the vector loop's reduction when it lies below the band, or nil
	regs   *registers       // accumulations kept in registers across sequential loops
	team   int64
	vector int64
}

// reduction is a vector loop whose body is accumulations into one target:
// thread_vector_reduce into a register, then one atomic update per team
// thread (the target may be shared by team threads or teams when the loop is
// split over them).
type reduction struct {
	target string   // the C++ lvalue the code adds to
	values []string // each statement's right-hand side, in order
}

var plusAssign = regexp.MustCompile(`^\s*([^;=+]+?)\s*\+=\s*([^;]+?)\s*;\s*$`)

func (l *lowering) plan() error {
	l.band = band(l.nest.Outer)
	l.at = map[string]*loopnest.Loop{}
	l.levels = map[*loopnest.Loop][]string{}
	for _, d := range l.nest.Decisions {
		l.levels[d.Loop] = d.Levels
		for _, lv := range d.Levels {
			l.at[lv] = d.Loop
		}
	}
	// The band loops outside the outermost mapped one would run around the
	// launch (a kernel per iteration, not lowered yet) unless they can run
	// inside the mapped loops: when every dependence in the band is within
	// one iteration of each mapped loop.
	var mapped []*loopnest.Loop
	for _, b := range l.band {
		if len(l.levels[b]) > 0 {
			mapped = append(mapped, b)
		}
	}
	for _, b := range l.band {
		if len(l.levels[b]) > 0 || len(mapped) == 0 {
			break
		}
		if d := l.across(mapped); d != nil {
			return fmt.Errorf("loop %s (%s) encloses the mapped loops sequentially and cannot move inside them (%s); that needs a kernel launch per iteration, not lowered yet", b.ID, b.Pos, d)
		}
		l.note("loop %s: sequential, moved inside the mapped loops (each dependence it carries stays within one iteration of them)", b.ID)
	}
	for _, b := range l.band {
		if len(l.levels[b]) == 0 {
			l.inner = append(l.inner, b)
		}
	}
	// A mapped loop's bounds may use only the parameters and the loops at
	// outer levels (the levels are reordered: league, team, vector).
	defined := map[string]bool{}
	for _, lv := range []string{League, Team, Vector} {
		x := l.at[lv]
		if x == nil || defined[x.Index] {
			continue
		}
		for _, b := range append(slices.Clone(x.Lower), x.Upper...) {
			for name := range b.Terms {
				if !slices.Contains(l.r.Program.Params, name) && !defined[name] {
					return fmt.Errorf("loop %s (%s) runs on the %s level but its bounds use %s, which runs inside it", x.ID, x.Pos, lv, name)
				}
			}
		}
		if last := l.levels[x]; last[len(last)-1] == lv {
			defined[x.Index] = true
		}
	}
	if v := l.at[Vector]; v != nil && !slices.Contains(l.band, v) {
		rr, why := belowBand(l.r, l.band)
		if rr == nil || why != "" || rr.loop != v || len(l.inner) > 0 {
			if why == "" {
				why = "a band loop runs inside the levels"
			}
			return fmt.Errorf("loop %s (%s) below the band is on the vector level but cannot reduce there (%s)", v.ID, v.Pos, why)
		}
		l.below = rr
	}
	if v := l.at[Vector]; v != nil && l.r.Verdict(v).Reduction {
		red, why := l.reduction(v)
		if red == nil {
			// keep it correct: the vector loop runs sequentially inside
			l.note("loop %s: not lowered as thread_vector_reduce (%s): it runs sequentially inside the innermost level", v.ID, why)
			for _, lv := range l.levels[v] {
				delete(l.at, lv)
			}
			l.levels[v] = nil
			l.inner = nil
			for _, b := range l.band {
				if len(l.levels[b]) == 0 {
					l.inner = append(l.inner, b)
				}
			}
		}
		l.reduce = red
	}
	if l.below != nil && l.reduce != nil {
		v := l.below.loop
		how := "adds the sum to " + l.reduce.target
		if init := l.below.foldInit(); init != nil {
			how = fmt.Sprintf("stores %s = %s once (the value of %s (%s) starts the sum)", l.reduce.target, plusValue(init.Value, "pm_sum"), init.Name, init.Pos)
		} else if len(l.below.before) > 0 {
			how = "runs the statements before it, then " + how
		}
		if len(l.below.after) > 0 {
			how += ", then the statements after it"
		}
		l.note("loop %s: below the band, a thread_vector_reduce into pm_sum (each team thread a row, its lanes consecutive elements of it); one lane of each team thread %s: no atomic, the team thread owns the row", v.ID, how)
	}
	l.sizes()
	return nil
}

// across returns a dependence of the band between different iterations of
// a mapped loop (other than an accumulation on a reducing vector loop), or
// nil: then the mapped loops may run outermost and concurrently with every
// other band loop inside them, in order.
func (l *lowering) across(mapped []*loopnest.Loop) *depend.Dep {
	last := l.band[len(l.band)-1]
	v := l.at[Vector]
	reduces := v != nil && l.r.Verdict(v).Reduction
	for _, d := range l.r.Deps {
		if len(d.Loops) <= last.Depth || d.Loops[last.Depth] != last {
			continue
		}
		for _, m := range mapped {
			if d.Dirs[m.Depth] != depend.Eq && !(m == v && reduces && d.Reduction) {
				return d
			}
		}
	}
	return nil
}

// reduction recognises the vector loop's body as accumulations `T += e;`
// into one target that does not change inside the loop.
func (l *lowering) reduction(v *loopnest.Loop) (*reduction, string) {
	red := &reduction{}
	var target *loopnest.Access
	last := l.band[len(l.band)-1]
	for _, n := range last.Body {
		if n.Loop != nil && n.Loop != v {
			return nil, "loop " + n.Loop.ID + " below the band"
		}
	}
	for _, s := range v.Stmts() {
		var acc *loopnest.Access
		for _, a := range s.Accesses {
			if a.Accum && a.Write {
				acc = a
			}
		}
		if acc == nil || acc.Op != "+" {
			return nil, fmt.Sprintf("statement %s is not a + accumulation", s.Name)
		}
		if target != nil && target.Text != acc.Text {
			return nil, fmt.Sprintf("statements accumulate into %s and %s", target.Text, acc.Text)
		}
		target = acc
		m := []string{"", lvalue(acc), s.Term}
		if s.Term == "" {
			m = plusAssign.FindStringSubmatch(s.Code)
		}
		if m == nil {
			return nil, fmt.Sprintf("the code of %s is not one `target += value;`", s.Name)
		}
		if red.target != "" && red.target != m[1] {
			return nil, fmt.Sprintf("the code adds to %s and %s", red.target, m[1])
		}
		red.target = m[1]
		red.values = append(red.values, m[2])
		for _, sub := range acc.Subs {
			for _, in := range append(slices.Clone(l.inner), s.Loops[v.Depth:]...) {
				if sub.Uses(in.Index) {
					return nil, fmt.Sprintf("the target %s changes with loop %s", acc.Text, in.ID)
				}
			}
		}
	}
	if target == nil {
		return nil, "no statement"
	}
	return red, ""
}

// sizes chooses the vector length and team size from the machine model:
// the warp width for the vector level (rounded down to a power of 2 no
// larger than a constant trip count), and the team size Kokkos recommends
// for that vector length (no larger than a constant trip count).
func (l *lowering) sizes() {
	l.team, l.vector = 1, 1
	v, t := l.at[Vector], l.at[Team]
	if v == nil && t == nil {
		return
	}
	trips := []int64{1}
	if v != nil {
		trips = nil
		if c, ok := tripConst(v); ok && len(l.levels[v]) == 1 {
			trips = append(trips, c)
		}
	}
	teamMax := int64(0)
	if t != nil {
		teamMax = 1 << 20
		if c, ok := tripConst(t); ok && len(l.levels[t]) == 1 {
			teamMax = max(c, 1)
		}
	}
	var why string
	l.team, l.vector, why = teamShape(l.model, trips, teamMax, 0)
	if t == nil {
		l.team = 1
	}
	l.note("vector length %d, team size %d: on %s, Kokkos' recommended team for each vector length (registers not known before the build)%s, the shape with the most lanes busy among those resident enough: %s",
		l.vector, l.team, l.model.Name, map[bool]string{true: fmt.Sprintf(", at most loop %s's trip count (%d)", idOf(t), teamMax), false: ""}[teamMax > 0 && teamMax < 1<<20], why)
}

func idOf(x *loopnest.Loop) string {
	if x == nil {
		return ""
	}
	return x.ID
}

func tripConst(x *loopnest.Loop) (int64, bool) {
	if len(x.Lower) != 1 || len(x.Upper) != 1 {
		return 0, false
	}
	d := x.Upper[0]
	lo := x.Lower[0]
	if len(d.Terms) != 0 || len(lo.Terms) != 0 {
		return 0, false
	}
	return d.Const - lo.Const, true
}

// C++ of a loop's bounds: the maximum of its lower bounds, the minimum of
// its upper bounds.
func lowerOf(x *loopnest.Loop) string { return fold(x.Lower, ">") }
func upperOf(x *loopnest.Loop) string { return fold(x.Upper, "<") }

func fold(bs []loopnest.Affine, cmp string) string {
	out := paren(bs[0].String())
	for _, b := range bs[1:] {
		e := paren(b.String())
		out = fmt.Sprintf("(%s %s %s ? %s : %s)", out, cmp, e, out, e)
	}
	return out
}

var simple = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*|[0-9]+)$`)

// tripOf is the C++ of a loop's trip count (before clamping at 0): upper
// minus lower, simplified when each is one affine bound.
func tripOf(x *loopnest.Loop) string {
	if len(x.Lower) != 1 || len(x.Upper) != 1 {
		return minus(upperOf(x), lowerOf(x))
	}
	d := loopnest.Affine{Const: x.Upper[0].Const - x.Lower[0].Const, Terms: map[string]int64{}}
	for _, a := range []struct {
		e    loopnest.Affine
		sign int64
	}{{x.Upper[0], 1}, {x.Lower[0], -1}} {
		for name, c := range a.e.Terms {
			if d.Terms[name] += a.sign * c; d.Terms[name] == 0 {
				delete(d.Terms, name)
			}
		}
	}
	return paren(d.String())
}

// paren parenthesises a C++ expression unless it is a name or a number.
func paren(e string) string {
	if simple.MatchString(e) {
		return e
	}
	return "(" + e + ")"
}

// minus is a - b for C++ expressions, a alone when b is 0.
func minus(a, b string) string {
	if b == "0" {
		return a
	}
	return "(" + a + " - " + b + ")"
}

// plus is a + b, b alone when a is 0.
func plus(a, b string) string {
	if a == "0" {
		return b
	}
	return a + " + " + b
}

func minExpr(a, b string) string { return fmt.Sprintf("(%s < %s ? %s : %s)", a, b, a, b) }

// tree builds: team { league code; team_thread_for { team code;
// thread_vector_for|reduce { vector code; statements } ; atomic } }.
// A level no loop holds is a one-trip loop; a loop split over several
// levels is cut into chunks of team x vector (league), vector (team)
// iterations with exact ranges.
func (l *lowering) tree() *spec.Node {
	T, V := TeamTunable, VectorTunable
	var leagueCode, teamCode, vecCode []string
	league := "1"
	teamIdx, teamBegin, teamEnd := "pm_t", "0", "1"
	vecIdx, vecBegin, vecEnd := "pm_v", "0", "1"
	decl := func(to *[]string, format string, args ...any) { *to = append(*to, fmt.Sprintf(format, args...)) }
	seen := map[*loopnest.Loop]bool{}
	for _, lv := range []string{League, Team, Vector} {
		x := l.at[lv]
		if x == nil || seen[x] {
			continue
		}
		seen[x] = true
		lo, hi, i := lowerOf(x), upperOf(x), x.Index
		trip := tripOf(x)
		switch strings.Join(l.levels[x], "+") {
		case League:
			league = fmt.Sprintf("%s > 0 ? %s : 0", trip, trip)
			if lo == "0" {
				league = trip // a loop from 0: its end is not negative (an extent)
			}
			decl(&leagueCode, "const int64_t %s = %s;", i, plus(lo, "league_rank"))
		case Team:
			teamIdx, teamBegin, teamEnd = i, lo, hi
		case Vector:
			vecIdx, vecBegin, vecEnd = i, lo, hi
		case League + "+" + Team:
			league = fmt.Sprintf("%s > 0 ? (%s + %s - 1) / %s : 0", trip, trip, T, T)
			if lo == "0" {
				league = fmt.Sprintf("(%s + %s - 1) / %s", trip, T, T)
			}
			decl(&leagueCode, "const int64_t %s_base = %s;", i, plus(lo, "league_rank * "+T))
			teamIdx, teamEnd = i+"_t", minExpr(T, minus(hi, i+"_base"))
			decl(&teamCode, "const int64_t %s = %s_base + %s_t;", i, i, i)
		case Team + "+" + Vector:
			teamIdx, teamEnd = i+"_t", fmt.Sprintf("(%s + %s - 1) / %s", trip, V, V)
			decl(&teamCode, "const int64_t %s_base = %s;", i, plus(lo, i+"_t * "+V))
			vecIdx, vecEnd = i+"_v", minExpr(V, minus(hi, i+"_base"))
			decl(&vecCode, "const int64_t %s = %s_base + %s_v;", i, i, i)
		case League + "+" + Team + "+" + Vector:
			league = fmt.Sprintf("%s > 0 ? (%s + %s * %s - 1) / (%s * %s) : 0", trip, trip, T, V, T, V)
			if lo == "0" {
				league = fmt.Sprintf("(%s + %s * %s - 1) / (%s * %s)", trip, T, V, T, V)
			}
			decl(&leagueCode, "const int64_t %s_league = %s;", i, plus(lo, "league_rank * "+T+" * "+V))
			teamIdx, teamEnd = i+"_t", fmt.Sprintf("(%s - %s_league + %s - 1) / %s", minExpr(fmt.Sprintf("%s_league + %s * %s", i, T, V), hi), i, V, V)
			decl(&teamCode, "const int64_t %s_base = %s_league + %s_t * %s;", i, i, i, V)
			vecIdx, vecEnd = i+"_v", minExpr(V, minus(hi, i+"_base"))
			decl(&vecCode, "const int64_t %s = %s_base + %s_v;", i, i, i)
		}
	}
	body := l.innerCode()
	code := func(lines []string) *spec.Node { return &spec.Node{Kind: "code", Code: strings.Join(lines, "\n")} }
	var vec, pre *spec.Node
	var after []*spec.Node
	if l.reduce != nil {
		acc := "pm_sum"
		var adds []string
		for _, v := range l.reduce.values {
			adds = append(adds, fmt.Sprintf("%s += %s;", acc, v))
		}
		body = l.wrapInner(strings.Join(adds, "\n"))
		vec = &spec.Node{Kind: "thread_vector_reduce", Index: vecIdx, Begin: vecBegin, End: vecEnd, Acc: acc,
			Body: []*spec.Node{code(append(vecCode, body))}}
		if l.below != nil {
			var store *spec.Node
			pre, store = l.below.around(l.reduce.target, acc)
			after = append(after, store)
		} else {
			after = append(after, &spec.Node{Kind: "atomic_add", Target: l.reduce.target, Value: acc})
		}
	} else {
		vec = &spec.Node{Kind: "thread_vector_for", Index: vecIdx, Begin: vecBegin, End: vecEnd,
			Body: []*spec.Node{code(append(vecCode, body))}}
	}
	var teamBody []*spec.Node
	if len(teamCode) > 0 {
		teamBody = append(teamBody, code(teamCode))
	}
	if pre != nil {
		teamBody = append(teamBody, pre)
	}
	teamBody = append(append(teamBody, vec), after...)
	tf := &spec.Node{Kind: "team_thread_for", Index: teamIdx, Begin: teamBegin, End: teamEnd, Body: teamBody}
	var top []*spec.Node
	if len(leagueCode) > 0 {
		top = append(top, code(leagueCode))
	}
	return &spec.Node{Kind: "team", League: league, TeamSize: T, Vector: V, Body: append(top, tf)}
}

// innerCode is the body of the band's innermost loop, wrapped in the band
// loops that are not mapped (in their order): plain C++ loops.
func (l *lowering) innerCode() string {
	last := l.band[len(l.band)-1]
	return l.wrapInner(l.regs.bodyCode(last.Body))
}

func (l *lowering) wrapInner(s string) string {
	for i := len(l.inner) - 1; i >= 0; i-- {
		s = l.regs.loopCode(l.inner[i], s)
	}
	return s
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// PrintTree writes a pattern tree one node a line, as the description's
// fields would name them, code indented below its node.
func PrintTree(w io.Writer, n *spec.Node, prefix string) {
	if n == nil {
		return
	}
	switch n.Kind {
	case "code":
		for _, line := range strings.Split(n.Code, "\n") {
			fmt.Fprintf(w, "%s| %s\n", prefix, line)
		}
		return
	case "team":
		fmt.Fprintf(w, "%steam: league %s, team_size %s, vector %s\n", prefix, n.League, n.TeamSize, n.Vector)
	case "atomic_add":
		fmt.Fprintf(w, "%satomic_add: %s += %s\n", prefix, n.Target, n.Value)
	case "team_barrier":
		fmt.Fprintf(w, "%steam_barrier\n", prefix)
	case spec.Launches:
		fmt.Fprintf(w, "%slaunches: %d teams, one after the other\n", prefix, len(n.Body))
	case spec.ItemState:
		fmt.Fprintf(w, "%sitem_state: a work item's state across the team's barriers, in one of two forms by the strategy\n", prefix)
		fmt.Fprintf(w, "%s  in registers (item_registers):\n", prefix)
		for _, c := range n.Body {
			PrintTree(w, c, prefix+"    ")
		}
		fmt.Fprintf(w, "%s  else in team scratch (its views marked item):\n", prefix)
		for _, c := range n.Else {
			PrintTree(w, c, prefix+"    ")
		}
		return
	default:
		if len(n.Indices) > 0 {
			var ranges []string
			for i := range n.Indices {
				ranges = append(ranges, fmt.Sprintf("[%s, %s)", n.Begins[i], n.Ends[i]))
			}
			fmt.Fprintf(w, "%s%s: [%s] in %s", prefix, n.Kind, strings.Join(n.Indices, ", "), strings.Join(ranges, " x "))
		} else {
			fmt.Fprintf(w, "%s%s: %s in [%s, %s)", prefix, n.Kind, n.Index, n.Begin, n.End)
		}
		if n.Acc != "" {
			fmt.Fprintf(w, ", acc %s", n.Acc)
		}
		fmt.Fprintln(w)
	}
	for _, c := range n.Body {
		PrintTree(w, c, prefix+"  ")
	}
}

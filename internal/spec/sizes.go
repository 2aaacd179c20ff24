package spec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// HardwareWidths are the widths a loop may be split by whatever the
// strategy: SIMD lanes, warps, CUDA blocks.
var HardwareWidths = []int64{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

// VerifiedSet is the size set verification relies on: CI runs every cell at
// its sizes, so the size rule (CheckSizes) applies to it alone. The
// benchmark sets (default, gpu) are measured, not there to catch bugs.
const VerifiedSet = "ci"

// searchSizes bounds the sizes the rule tries: 1 to searchSizes for whether
// a loop can show a remainder at all, and as far either side of the set's
// first size for the size it suggests.
const searchSizes = 1000

// CheckSizes enforces the size rule on every kernel: for each loop of the
// tree that strides over an array (its index reaches an array's subscript),
// the verified set (ci) holds a size at which the loop's trip count is a
// multiple of no loop width, so that a dropped remainder or an overrun shows
// there. The widths are HardwareWidths, the kernel's tunable values and
// tunables: every tunable value of the strategies (the project knows them,
// spec does not). A loop whose trip count does not change with the size, or
// cannot be evaluated from the arguments (it reads an outer index), is not
// checked; a TestSNAP system's extents follow from its generated lattice:
// such a kernel is not checked.
//
// A loop whose trip count is a multiple of a width at every size (2 * n, a
// product of an even and an odd factor of the size) cannot satisfy the rule:
// it is a note, at the loop, saying so, and never a refusal. The error names
// the loop, its arrays, and a size to add.
func CheckSizes(kernels []*Kernel, tunables []int64) (notes diag.List, err error) {
	var errs diag.List
	for _, k := range kernels {
		if slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Type == "snap" }) {
			continue
		}
		k.checkSizes(k.widths(tunables), &errs, &notes)
	}
	return notes, errs.Err()
}

func (k *Kernel) checkSizes(ws []int64, errs, notes *diag.List) {
	sizes := k.Size.Sets[VerifiedSet]
	if len(sizes) == 0 {
		return // a missing set is reported by Parse
	}
	envs := map[int64]Env{}
	env := func(s int64) Env {
		if e, ok := envs[s]; ok {
			return e
		}
		e := k.loopEnv(s)
		envs[s] = e
		return e
	}
	var failing []loopTrip
	for _, l := range k.loopTrips() {
		if !l.varies(k, env) {
			continue
		}
		if slices.ContainsFunc(sizes, func(s int64) bool { return l.clean(env(s), ws) }) {
			continue
		}
		if _, ok := l.cleanNear(1+searchSizes/2, env, ws); !ok {
			w := ws[0]
			if t, ok := l.trip(env(sizes[0])); ok {
				w = largestWidth(t, ws)
			}
			notes.Add(l.pos, "note: %s: its trip count %s is a multiple of a loop width (%d at %s = %d) at every size from 1 to %d, so no size shows a dropped remainder in it; the size rule does not refuse the kernel for it",
				l.describe(), l.text, w, k.Size.Name, sizes[0], searchSizes)
			continue
		}
		failing = append(failing, l)
	}
	if len(failing) == 0 {
		return
	}
	// One size for every failing loop where there is one, else one each.
	joint, jointOK := int64(0), false
	for d := int64(1); d <= searchSizes && !jointOK; d++ {
		for _, s := range []int64{sizes[0] - d, sizes[0] + d} {
			if s >= 1 && !jointOK && !slices.ContainsFunc(failing, func(l loopTrip) bool { return !l.clean(env(s), ws) }) {
				joint, jointOK = s, true
			}
		}
	}
	for _, l := range failing {
		eg := joint
		if !jointOK {
			eg, _ = l.cleanNear(sizes[0], env, ws)
		}
		t, _ := l.trip(env(sizes[0]))
		errs.Add(k.Size.SetPos[VerifiedSet], "size set %q [%s]: %s has a trip count (%s) that is a multiple of a loop width at every size of the set (at %s = %d: %d is a multiple of %d), where a dropped remainder or an overrun does not show; add a size at which it is not: %d (widths: %s)",
			VerifiedSet, joinInts(sizes), l.describe(), l.text, k.Size.Name, sizes[0], t, largestWidth(t, ws), eg, joinInts(ws))
	}
}

// largestWidth is the largest of ws that divides t (0 when none does).
func largestWidth(t int64, ws []int64) int64 {
	for i := len(ws) - 1; i >= 0; i-- {
		if t%ws[i] == 0 {
			return ws[i]
		}
	}
	return 0
}

// widths are the loop widths of k: the hardware's, its tunables and more,
// each above 1, sorted.
func (k *Kernel) widths(more []int64) []int64 {
	ws := slices.Clone(HardwareWidths)
	for _, t := range k.Tunables {
		ws = append(ws, t.Value)
	}
	ws = append(ws, more...)
	ws = slices.DeleteFunc(ws, func(w int64) bool { return w < 2 })
	slices.Sort(ws)
	return slices.Compact(ws)
}

// loopEnv is what a loop's bounds see at size: the kernel's Env, its
// tunables' values, and a CSR argument's fields under the names the kernel
// body uses (A_nrows for A.nrows).
func (k *Kernel) loopEnv(size int64) Env {
	env := k.Env(size)
	for _, t := range k.Tunables {
		env[t.Name] = intVal(t.Value)
	}
	for name, v := range env {
		if strings.Contains(name, ".") {
			env[strings.ReplaceAll(name, ".", "_")] = v
		}
	}
	return env
}

// loopTrip is one loop of the tree the rule checks: its trip count as an
// expression of the arguments, and the arrays it strides over.
type loopTrip struct {
	node   *Node
	pos    diag.Pos
	index  string   // "i", "[a, b]"
	arrays []string // the arrays its body subscripts
	text   string   // the trip count as written
	expr   ast.Expr
	fixed  Env // names the trip count reads that are no argument (an index set's segment)
}

func (l loopTrip) describe() string {
	return fmt.Sprintf("loop %s (%s at line %d, over %s)", l.index, l.node.Kind, l.pos.Line, strings.Join(l.arrays, ", "))
}

// trip is the trip count in env; ok is false when it does not evaluate to
// an integer there.
func (l loopTrip) trip(env Env) (int64, bool) {
	if len(l.fixed) > 0 {
		env = mergeEnv(env, l.fixed)
	}
	v, err := eval(l.expr, env)
	return v.I, err == nil && v.Int
}

func mergeEnv(a, b Env) Env {
	out := make(Env, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// clean reports whether the loop's trip count in env is a multiple of no
// width (false when it does not evaluate).
func (l loopTrip) clean(env Env, ws []int64) bool {
	t, ok := l.trip(env)
	return ok && t > 0 && largestWidth(t, ws) == 0
}

// varies reports whether the trip count evaluates at every size of every
// set and is not the same at all of them (and at 1 and 2): a constant trip
// count is the same whatever the sizes, so no choice of them matters.
func (l loopTrip) varies(k *Kernel, env func(int64) Env) bool {
	var seen []int64
	sizes := []int64{1, 2}
	for _, set := range SizeSets {
		sizes = append(sizes, k.Size.Sets[set]...)
	}
	for i, s := range sizes {
		t, ok := l.trip(env(s))
		if !ok {
			if i < 2 {
				continue // a size too small for the kernel's expressions
			}
			return false
		}
		seen = append(seen, t)
	}
	slices.Sort(seen)
	return len(slices.Compact(seen)) > 1
}

// cleanNear is the size nearest to from (within searchSizes, from 1 up) at
// which the loop's trip count is clean.
func (l loopTrip) cleanNear(from int64, env func(int64) Env, ws []int64) (int64, bool) {
	for d := int64(0); d <= searchSizes; d++ {
		for _, s := range []int64{from - d, from + d} {
			if s >= 1 && l.clean(env(s), ws) {
				return s, true
			}
		}
	}
	return 0, false
}

// loopKinds are the loops a strategy splits by a width: SIMD lanes, threads,
// blocks of a flat range. A team's league is not one (each team is one
// block or one iteration, whatever their number: no remainder), nor is a
// sequential for (every member runs it whole).
var loopKinds = map[string]bool{"range_for": true, "range_reduce": true, "mdrange_for": true,
	"team_thread_for": true, "team_thread_reduce": true, "thread_vector_for": true, "thread_vector_reduce": true,
	"indexset_for": true}

// loopTrips lists the loops of the tree whose body subscripts an array and
// reads the loop's index; a loop whose bounds do not parse is left out (its
// generated program says so).
func (k *Kernel) loopTrips() []loopTrip {
	arrays := k.arrayNames()
	var out []loopTrip
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		for _, c := range n.Body {
			walk(c)
		}
		if !loopKinds[n.Kind] {
			return
		}
		l := loopTrip{node: n, pos: n.Pos}
		var idx []string
		switch {
		case len(n.Indices) > 0:
			idx = n.Indices
			var parts []string
			for i := range n.Indices {
				parts = append(parts, "("+span(at(n.Begins, i, "0"), at(n.Ends, i, ""))+")")
			}
			l.text = strings.Join(parts, " * ")
		default:
			idx, l.text = []string{n.Index}, span(n.Begin, n.End)
		}
		if n.Kind == "indexset_for" && n.Seq.Segment != "" {
			l.fixed = Env{n.Seq.Segment: intVal(0)} // the first segment's length
		}
		l.index = strings.Join(idx, ", ")
		if len(idx) > 1 {
			l.index = "[" + l.index + "]"
		}
		body := bodyText(n)
		if !slices.ContainsFunc(idx, func(i string) bool { return i != "" && word(i).MatchString(body) }) {
			return
		}
		l.arrays = subscripted(body, arrays, idx)
		if len(l.arrays) == 0 || l.text == "" {
			return
		}
		e, err := parser.ParseExpr(l.text)
		if err != nil {
			return
		}
		l.expr = e
		out = append(out, l)
	}
	walk(k.Pattern)
	return out
}

func at(xs []string, i int, def string) string {
	if i < len(xs) && xs[i] != "" {
		return xs[i]
	}
	return def
}

// span is the trip count of [begin, end) as an expression.
func span(begin, end string) string {
	if begin == "" || begin == "0" {
		return end
	}
	return "(" + end + ") - (" + begin + ")"
}

// arrayNames are the names under which a kernel body subscripts memory:
// array arguments, a CSR argument's parts, and team scratch views.
func (k *Kernel) arrayNames() []string {
	var out []string
	for _, a := range k.Args {
		switch {
		case a.IsArray():
			out = append(out, a.Name)
		case a.Type == "csr":
			out = append(out, a.Name+"_row_ptr", a.Name+"_col_idx", a.Name+"_values")
		}
	}
	for _, t := range k.Pattern.Teams() {
		for _, s := range t.Scratch {
			out = append(out, s.Name)
		}
	}
	return out
}

// bodyText is every C++ text of n's body: code, atomic updates and the
// bounds of nested loops.
func bodyText(n *Node) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		for _, c := range n.Body {
			for _, s := range [][]string{{c.Code, c.Target, c.Value, c.Cond, c.Begin, c.End, c.League, c.Seq.Segments}, c.Begins, c.Ends} {
				for _, x := range s {
					b.WriteString(x)
					b.WriteByte('\n')
				}
			}
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

var words sync.Map // name -> *regexp.Regexp matching it as a word

func word(name string) *regexp.Regexp {
	if re, ok := words.Load(name); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	words.Store(name, re)
	return re
}

// subscripted are the arrays text subscripts with one of idx in the
// subscript; when none is (the index reaches the subscript through a
// variable: const int64_t i = league_rank), every array it subscripts.
func subscripted(text string, arrays, idx []string) []string {
	var direct, any []string
	for _, a := range arrays {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(a) + `\s*\[([^\]]*)\]`)
		ms := re.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			continue
		}
		any = append(any, a)
		if slices.ContainsFunc(ms, func(m []string) bool {
			return slices.ContainsFunc(idx, func(i string) bool { return word(i).MatchString(m[1]) })
		}) {
			direct = append(direct, a)
		}
	}
	if len(direct) > 0 {
		return direct
	}
	return any
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

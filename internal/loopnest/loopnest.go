// Package loopnest reads the loop-nest kernel form: sequential loops with
// affine bounds and statements whose array reads and writes are declared as
// affine subscripts, the input of dependence analysis (internal/depend) and
// of automatic mapping. See docs/loopnest.md.
package loopnest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Program is a sequence of loop nests and statements over size parameters
// and arrays.
type Program struct {
	Params []string
	// Assume are facts about the parameters (each Affine >= 0), e.g. from
	// `assume: [n >= 1, m <= n]`; without them parameters are any integers.
	Assume []Affine
	// Assumptions are the assume: entries as written, each with its rows
	// (in Assume too), so that a check at the kernel's sizes can name the
	// one that is false.
	Assumptions []Assumption
	Arrays      []*Array
	Body        []Node
	Loops       []*Loop // every loop, in textual order
	Stmts       []*Stmt // every statement, in textual order
	Pos         diag.Pos
	// Promote lists the kinds of arrays the mapper may move into team
	// scratch (`promote: [temporaries]`; PromoteKinds); nil when the file
	// does not say, which allows every kind.
	Promote []string
}

// PromoteKinds are the kinds of arrays `promote:` may name: per-iteration
// temporaries (intent scratch), outputs written in the iteration (copied
// out at its end), read-only inputs reused by the team (copied in first).
var PromoteKinds = []string{"temporaries", "outputs", "inputs"}

// DecodePromote reads a promote: list of PromoteKinds; nil when n is nil
// (the field is absent), an empty list for [].
func DecodePromote(d diag.Decoder, n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	out := []string{}
	for _, item := range d.Seq(n, "promote") {
		kind := d.String(item, "promote kind")
		switch {
		case !slices.Contains(PromoteKinds, kind):
			d.Add(item, "unknown promote kind %q (known: %s)", kind, strings.Join(PromoteKinds, ", "))
		case slices.Contains(out, kind):
			d.Add(item, "promote kind %q named twice", kind)
		default:
			out = append(out, kind)
		}
	}
	return out
}

// Promotes reports whether the mapper may promote arrays of kind.
func (p *Program) Promotes(kind string) bool {
	return p.Promote == nil || slices.Contains(p.Promote, kind)
}

// Assumption is one entry of assume:, its text and position, and the rows
// (each >= 0) it stands for.
type Assumption struct {
	Text string
	Pos  diag.Pos
	Rows []Affine
}

// Array is a declared array; a scalar is an array of rank 0.
type Array struct {
	Name   string
	Extent []Affine // per dimension, in the size parameters
	Pos    diag.Pos
}

// Rank is the number of subscripts an access needs.
func (a *Array) Rank() int { return len(a.Extent) }

// Node is one item of a body: a loop or a statement.
type Node struct {
	Loop *Loop
	Stmt *Stmt
}

// Loop runs Index over [max(Lower), min(Upper)) by steps of 1: Lower bounds
// are inclusive, Upper bounds exclusive (a `through` bound b is stored as
// b + 1). Bounds are affine in the parameters and the enclosing indices.
type Loop struct {
	Index  string
	ID     string // Index, or Index#k when k loops share the index name
	Lower  []Affine
	Upper  []Affine
	Body   []Node
	Parent *Loop // nil for an outermost loop
	Depth  int   // 0 for an outermost loop
	Order  int   // position in Program.Loops
	Pos    diag.Pos
}

// Stmt is one statement: its accesses and its C++ code, or instead of the
// code the expression it combines into its accumulation target (Term) or
// assigns to its one written element (Value); the lowering writes the
// statement from the declared subscripts and shape then, and may keep an
// accumulation in a register (docs/loopnest.md).
type Stmt struct {
	Name     string
	Loops    []*Loop // enclosing loops, outermost first
	Accesses []*Access
	Code     string
	Term     string // accumulate: the C++ value combined into the target with its op
	Value    string // a write: the C++ value assigned to its one writes target
	Order    int    // textual position in Program.Stmts
	Pos      diag.Pos
	// Guard: facts g >= 0, affine in the parameters and the enclosing
	// indices, that narrow the statement's instances beyond its loops'
	// bounds (a body of a loop fused over the union of two ranges runs only
	// in its own). The mapper makes them; a description cannot write them.
	Guard []Affine
}

// Runs reports whether the statement runs at the values in env (its guard
// holds).
func (s *Stmt) Runs(env map[string]int64) bool {
	for _, g := range s.Guard {
		if g.Eval(env) < 0 {
			return false
		}
	}
	return true
}

// Access is one read or write of an array element. An accumulation
// (`accumulate: s` with op +) is a read and a write of its target, both
// marked Accum: instances may be reordered among themselves.
type Access struct {
	Stmt  *Stmt
	Array *Array
	Subs  []Affine
	Write bool
	Accum bool
	Op    string // the accumulation's operator: +, *, min, max
	Text  string // as written
	Pos   diag.Pos
}

// Kind is "read" or "write".
func (a *Access) Kind() string {
	if a.Write {
		return "write"
	}
	return "read"
}

// Ops are the accumulation operators (associative and commutative).
var Ops = []string{"+", "*", "min", "max"}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads a standalone loop-nest file: a mapping with `loops:` (and an
// optional `doc:`).
func Parse(file string, data []byte, errs *diag.List) *Program {
	root := diag.ParseYAML(file, data, errs)
	if root == nil {
		return nil
	}
	d := diag.Decoder{File: file, Errs: errs}
	f := d.Fields(root, "loop-nest file", "doc", "loops")
	if !d.Require(root, f, "loop-nest file", "loops") {
		return nil
	}
	return Decode(d, f["loops"])
}

// Decode reads the value of a `loops:` field: params, arrays and body.
func Decode(d diag.Decoder, n *yaml.Node) *Program {
	f := d.Fields(n, "loops", "params", "assume", "arrays", "body", "promote")
	p := &Program{Pos: d.Pos(n)}
	if n == nil || !d.Require(n, f, "loops", "arrays", "body") {
		return p
	}
	r := &reader{d: d, p: p, arrays: map[string]*Array{}, params: map[string]bool{}, loops: map[string]bool{}}
	for _, item := range d.Seq(f["params"], "params") {
		name := d.String(item, "parameter")
		switch {
		case !ident.MatchString(name):
			d.Add(item, "parameter %q is not an identifier", name)
		case r.params[name]:
			d.Add(item, "parameter %q declared twice", name)
		default:
			r.params[name] = true
			p.Params = append(p.Params, name)
		}
	}
	for _, item := range d.Seq(f["assume"], "assume") {
		if item.Kind != yaml.ScalarNode {
			d.Add(item, "an assumption is a comparison such as n >= 1")
			continue
		}
		t := r.text(item)
		rows := r.assumption(t)
		p.Assume = append(p.Assume, rows...)
		if len(rows) > 0 {
			p.Assumptions = append(p.Assumptions, Assumption{Text: t.s, Pos: t.pos, Rows: rows})
		}
	}
	for _, kv := range d.Pairs(f["arrays"], "arrays") {
		r.array(kv[0], kv[1])
	}
	p.Promote = DecodePromote(d, f["promote"])
	r.collectLoopNames(f["body"])
	p.Body = r.body(f["body"], nil, "loops body")
	r.nameLoops()
	return p
}

type reader struct {
	d      diag.Decoder
	p      *Program
	arrays map[string]*Array
	params map[string]bool
	loops  map[string]bool // every loop index name, for "out of scope"
}

func (r *reader) scope(vars []string) scope {
	arrays := map[string]bool{}
	for name := range r.arrays {
		arrays[name] = true
	}
	return scope{vars: vars, params: r.params, allLoops: r.loops, arrays: arrays}
}

func (r *reader) text(n *yaml.Node) text {
	t := text{s: n.Value, pos: r.d.Pos(n)}
	if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		t.pos.Col++
	}
	return t
}

func (r *reader) array(k, v *yaml.Node) {
	name := k.Value
	switch {
	case !ident.MatchString(name):
		r.d.Add(k, "array name %q is not an identifier", name)
		return
	case r.arrays[name] != nil:
		r.d.Add(k, "array %q declared twice", name)
		return
	case r.params[name]:
		r.d.Add(k, "array %q has the name of a parameter", name)
		return
	}
	a := &Array{Name: name, Pos: r.d.Pos(k)}
	for _, e := range r.d.Seq(v, "array extents") {
		if e.Kind != yaml.ScalarNode {
			r.d.Add(e, "an extent must be an affine expression in the parameters")
			continue
		}
		if x, ok := parseAffine(r.text(e), r.scope(nil), r.d.Errs); ok {
			a.Extent = append(a.Extent, x)
		}
	}
	r.arrays[name] = a
	r.p.Arrays = append(r.p.Arrays, a)
}

// assumption reads a comparison of affine expressions in the parameters
// (>=, <=, >, <, ==) as rows that must be >= 0.
func (r *reader) assumption(t text) []Affine {
	e, err := parser.ParseExpr(t.s)
	b, ok := e.(*ast.BinaryExpr)
	if err != nil || !ok {
		r.d.Errs.Add(t.pos, "cannot parse assumption %q: write a comparison such as n >= 1", t.s)
		return nil
	}
	lhs, okL := affineOf(b.X, t, r.scope(nil), r.d.Errs)
	rhs, okR := affineOf(b.Y, t, r.scope(nil), r.d.Errs)
	if !okL || !okR {
		return nil
	}
	diff := lhs.plus(rhs.scale(-1)) // lhs - rhs
	switch b.Op {
	case token.GEQ:
		return []Affine{diff}
	case token.GTR:
		return []Affine{diff.plus(constant(-1))}
	case token.LEQ:
		return []Affine{diff.scale(-1)}
	case token.LSS:
		return []Affine{diff.scale(-1).plus(constant(-1))}
	case token.EQL:
		return []Affine{diff, diff.scale(-1)}
	}
	r.d.Errs.Add(t.exprPos(b), "assumption %q: the comparison is one of >= <= > < ==", t.s)
	return nil
}

// Holds reports whether the parameter values satisfy every assumption.
func (p *Program) Holds(params map[string]int64) bool {
	for _, a := range p.Assume {
		if a.Eval(params) < 0 {
			return false
		}
	}
	return true
}

// collectLoopNames finds every loop index first, so that a use outside its
// loop is called out of scope rather than unknown.
func (r *reader) collectLoopNames(n *yaml.Node) {
	if n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 || item.Content[0].Value != "for" {
			continue
		}
		loop := item.Content[1]
		if loop.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(loop.Content); i += 2 {
			switch loop.Content[i].Value {
			case "index":
				r.loops[loop.Content[i+1].Value] = true
			case "body":
				r.collectLoopNames(loop.Content[i+1])
			}
		}
	}
}

func (r *reader) body(n *yaml.Node, parent *Loop, what string) []Node {
	items := r.d.Seq(n, what)
	if n != nil && len(items) == 0 && n.Kind == yaml.SequenceNode {
		r.d.Add(n, "%s is empty", what)
	}
	var out []Node
	for _, item := range items {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			r.d.Add(item, "a body item is a one-key mapping: for or stmt")
			continue
		}
		key, val := item.Content[0], item.Content[1]
		switch key.Value {
		case "for":
			if l := r.loop(val, parent); l != nil {
				out = append(out, Node{Loop: l})
			}
		case "stmt":
			if s := r.stmt(val, parent); s != nil {
				out = append(out, Node{Stmt: s})
			}
		default:
			r.d.Add(key, "unknown body item %q (known: for, stmt)%s", key.Value, diag.DidYouMean(key.Value, []string{"for", "stmt"}))
		}
	}
	return out
}

func enclosing(l *Loop) []*Loop {
	var out []*Loop
	for ; l != nil; l = l.Parent {
		out = append([]*Loop{l}, out...)
	}
	return out
}

func indices(loops []*Loop) []string {
	out := make([]string, len(loops))
	for i, l := range loops {
		out[i] = l.Index
	}
	return out
}

func (r *reader) loop(n *yaml.Node, parent *Loop) *Loop {
	d := r.d
	f := d.Fields(n, "for", "index", "from", "to", "through", "body")
	if !d.Require(n, f, "for", "index", "body") {
		return nil
	}
	l := &Loop{Index: d.String(f["index"], "index"), Parent: parent, Pos: d.Pos(n)}
	outer := enclosing(parent)
	if parent != nil {
		l.Depth = parent.Depth + 1
	}
	switch {
	case !ident.MatchString(l.Index):
		d.Add(f["index"], "loop index %q is not an identifier", l.Index)
	case r.params[l.Index]:
		d.Add(f["index"], "loop index %q has the name of a parameter", l.Index)
	case r.arrays[l.Index] != nil:
		d.Add(f["index"], "loop index %q has the name of an array", l.Index)
	}
	for _, o := range outer {
		if o.Index == l.Index {
			d.Add(f["index"], "loop index %q repeated: the loop at %s already uses it", l.Index, o.Pos)
		}
	}
	sc := r.scope(indices(outer))
	l.Lower = r.bounds(f["from"], sc)
	if f["from"] == nil {
		l.Lower = []Affine{constant(0)}
	}
	switch {
	case f["to"] != nil && f["through"] != nil:
		d.Add(f["@through"], "a loop has to (exclusive) or through (inclusive), not both")
	case f["to"] != nil:
		l.Upper = r.bounds(f["to"], sc)
	case f["through"] != nil:
		for _, b := range r.bounds(f["through"], sc) {
			l.Upper = append(l.Upper, b.plus(constant(1)))
		}
	default:
		d.Add(n, "for needs an upper bound: to (exclusive) or through (inclusive)")
	}
	l.Order = len(r.p.Loops)
	r.p.Loops = append(r.p.Loops, l)
	l.Body = r.body(f["body"], l, "body of loop "+l.Index)
	return l
}

// bounds reads one bound or a list of them (the maximum of lower bounds,
// the minimum of upper bounds).
func (r *reader) bounds(n *yaml.Node, sc scope) []Affine {
	if n == nil {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			r.d.Add(n, "an empty list of bounds")
		}
	}
	var out []Affine
	for _, item := range items {
		if item.Kind != yaml.ScalarNode {
			r.d.Add(item, "a bound must be an affine expression")
			continue
		}
		if a, ok := parseAffine(r.text(item), sc, r.d.Errs); ok {
			out = append(out, a)
		}
	}
	return out
}

func (r *reader) stmt(n *yaml.Node, parent *Loop) *Stmt {
	d := r.d
	f := d.Fields(n, "stmt", "name", "reads", "writes", "accumulate", "op", "code", "term", "value")
	s := &Stmt{Name: d.String(f["name"], "name"), Loops: enclosing(parent), Code: d.String(f["code"], "code"),
		Term: strings.TrimSpace(d.String(f["term"], "term")), Value: strings.TrimSpace(d.String(f["value"], "value")), Order: len(r.p.Stmts), Pos: d.Pos(n)}
	if s.Name == "" {
		s.Name = "S" + strconv.Itoa(s.Order+1)
	}
	for _, o := range r.p.Stmts {
		if o.Name == s.Name {
			d.Add(f["name"], "statement name %q repeated (first at %s)", s.Name, o.Pos)
		}
	}
	if f["reads"] == nil && f["writes"] == nil && f["accumulate"] == nil {
		d.Add(n, "a statement declares its accesses: reads, writes or accumulate")
	}
	sc := r.scope(indices(s.Loops))
	for _, t := range r.accessTexts(f["reads"], "reads") {
		s.addAccess(r.access(t, sc, false))
	}
	writes := r.accessTexts(f["writes"], "writes")
	for _, t := range writes {
		s.addAccess(r.access(t, sc, true))
	}
	op := "+"
	if f["op"] != nil {
		op = d.String(f["op"], "op")
		if !slices.Contains(Ops, op) {
			d.Add(f["op"], "unknown accumulation operator %q (known: %s)", op, strings.Join(Ops, ", "))
		}
		if f["accumulate"] == nil {
			d.Add(f["@op"], "op belongs to an accumulate")
		}
	}
	if f["accumulate"] != nil {
		ts := r.accessTexts(f["accumulate"], "accumulate")
		if len(ts) != 1 {
			d.Add(f["accumulate"], "accumulate names one target")
		}
		for _, t := range ts[:min(1, len(ts))] {
			if rd := r.access(t, sc, false); rd != nil {
				wr := *rd
				wr.Write = true
				rd.Accum, wr.Accum, rd.Op, wr.Op = true, true, op, op
				s.addAccess(rd)
				s.addAccess(&wr)
			}
		}
	}
	r.checkGenerated(f, op, len(writes))
	r.p.Stmts = append(r.p.Stmts, s)
	return s
}

// checkGenerated checks term: and value:, which replace code: where the
// lowering can write the statement itself: a term combines into the one
// accumulate target with + or * (min and max have no C++ operator to
// write), a value assigns the one writes target.
func (r *reader) checkGenerated(f map[string]*yaml.Node, op string, writes int) {
	d := r.d
	for _, k := range []string{"term", "value"} {
		if f[k] == nil {
			continue
		}
		if strings.TrimSpace(f[k].Value) == "" {
			d.Add(f[k], "%s is empty", k)
		}
		if f["code"] != nil {
			d.Add(f["@"+k], "a statement gives code or %s, not both", k)
		}
	}
	if f["term"] != nil {
		switch {
		case f["accumulate"] == nil:
			d.Add(f["@term"], "term belongs to an accumulate (the value combined into its target); a write gives value")
		case op != "+" && op != "*":
			d.Add(f["@term"], "term: op %s has no C++ operator to combine with; write the statement as code", op)
		}
		if f["value"] != nil {
			d.Add(f["@value"], "a statement gives term (an accumulate) or value (a write), not both")
		}
	}
	if f["value"] != nil && f["term"] == nil {
		switch {
		case f["accumulate"] != nil:
			d.Add(f["@value"], "value assigns a writes target; an accumulate gives term")
		case f["writes"] != nil && writes != 1:
			d.Add(f["@value"], "value assigns one target, but writes names %d", writes)
		case f["writes"] == nil:
			d.Add(f["@value"], "value assigns the statement's one writes target, and it names none")
		}
	}
}

func (s *Stmt) addAccess(a *Access) {
	if a != nil {
		a.Stmt = s
		s.Accesses = append(s.Accesses, a)
	}
}

// accessTexts splits a list of accesses: a YAML list of strings, or one
// string of accesses separated by commas outside brackets.
func (r *reader) accessTexts(n *yaml.Node, what string) []text {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.SequenceNode {
		var out []text
		for _, item := range n.Content {
			if item.Kind != yaml.ScalarNode {
				r.d.Add(item, "%s: an access is a string such as A[i][j+1]", what)
				continue
			}
			out = append(out, r.text(item))
		}
		return out
	}
	if n.Kind != yaml.ScalarNode {
		r.d.Add(n, "%s must be a list of accesses", what)
		return nil
	}
	whole := r.text(n)
	var out []text
	depth, start := 0, 0
	for i := 0; i <= len(whole.s); i++ {
		if i < len(whole.s) {
			switch whole.s[i] {
			case '[', '(':
				depth++
				continue
			case ']', ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		piece := whole.s[start:i]
		lead := len(piece) - len(strings.TrimLeft(piece, " \t"))
		if s := strings.TrimSpace(piece); s != "" {
			out = append(out, text{s: s, pos: whole.at(start + lead)})
		} else {
			r.d.Errs.Add(whole.at(start), "%s: an empty access", what)
		}
		start = i + 1
	}
	return out
}

// access reads A[i][j-1], A[i, j-1] or s (a scalar).
func (r *reader) access(t text, sc scope, write bool) *Access {
	e, err := parser.ParseExpr(t.s)
	if err != nil {
		r.d.Errs.Add(t.pos, "cannot parse access %q (write A[i][j+1], A[i, j+1] or a scalar s)", t.s)
		return nil
	}
	var subs []ast.Expr
	base := e
	for {
		switch x := base.(type) {
		case *ast.IndexExpr:
			subs = append([]ast.Expr{x.Index}, subs...)
			base = x.X
			continue
		case *ast.IndexListExpr:
			subs = append(append([]ast.Expr(nil), x.Indices...), subs...)
			base = x.X
			continue
		case *ast.ParenExpr:
			base = x.X
			continue
		}
		break
	}
	id, ok := base.(*ast.Ident)
	if !ok {
		r.d.Errs.Add(t.exprPos(base), "an access names an array: %q is not a name", t.src(base))
		return nil
	}
	arr := r.arrays[id.Name]
	if arr == nil {
		known := make([]string, 0, len(r.p.Arrays))
		for _, a := range r.p.Arrays {
			known = append(known, a.Name)
		}
		r.d.Errs.Add(t.exprPos(id), "undeclared array %q (declared: %s)%s", id.Name, strings.Join(known, ", "), diag.DidYouMean(id.Name, known))
		return nil
	}
	if len(subs) != arr.Rank() {
		r.d.Errs.Add(t.exprPos(e), "array %q has rank %d, %q gives %d subscripts", arr.Name, arr.Rank(), t.s, len(subs))
		return nil
	}
	a := &Access{Array: arr, Write: write, Text: t.s, Pos: t.pos}
	good := true
	for _, sub := range subs {
		x, ok := affineOf(sub, t, sc, r.d.Errs)
		good = good && ok
		a.Subs = append(a.Subs, x)
	}
	if !good {
		return nil
	}
	return a
}

// nameLoops gives each loop its ID: the index name, made unique by #k
// (textual occurrence) when several loops share it.
func (r *reader) nameLoops() {
	count := map[string]int{}
	for _, l := range r.p.Loops {
		count[l.Index]++
	}
	seen := map[string]int{}
	for _, l := range r.p.Loops {
		seen[l.Index]++
		l.ID = l.Index
		if count[l.Index] > 1 {
			l.ID = l.Index + "#" + strconv.Itoa(seen[l.Index])
		}
	}
}

// LoopByID returns the loop with that ID, or nil.
func (p *Program) LoopByID(id string) *Loop {
	for _, l := range p.Loops {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// Stmts returns the statements inside l, at any depth, in textual order.
func (l *Loop) Stmts() []*Stmt {
	var out []*Stmt
	for _, n := range l.Body {
		if n.Stmt != nil {
			out = append(out, n.Stmt)
		} else {
			out = append(out, n.Loop.Stmts()...)
		}
	}
	return out
}

// Encloses reports whether s is inside l.
func (l *Loop) Encloses(s *Stmt) bool {
	for _, o := range s.Loops {
		if o == l {
			return true
		}
	}
	return false
}

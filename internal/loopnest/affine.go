package loopnest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Affine is an integer linear combination of names (loop indices and size
// parameters) plus a constant: Const + sum Terms[name]*name.
type Affine struct {
	Const int64
	Terms map[string]int64 // no zero coefficients
}

// Coef is the coefficient of name (0 when absent).
func (a Affine) Coef(name string) int64 { return a.Terms[name] }

// Uses reports whether name appears with a non-zero coefficient.
func (a Affine) Uses(name string) bool { return a.Terms[name] != 0 }

// Eval computes a with the names' values; a missing name is a bug of the
// caller (it panics), since parsing checked every name's scope.
func (a Affine) Eval(env map[string]int64) int64 {
	v := a.Const
	for name, c := range a.Terms {
		x, ok := env[name]
		if !ok {
			panic("loopnest: no value for " + name)
		}
		v += c * x
	}
	return v
}

// String writes a canonically: terms in name order, then the constant.
func (a Affine) String() string {
	names := make([]string, 0, len(a.Terms))
	for n := range a.Terms {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		c := a.Terms[n]
		switch {
		case b.Len() == 0 && c == -1:
			b.WriteString("-")
		case b.Len() == 0 && c != 1:
			fmt.Fprintf(&b, "%d*", c)
		case b.Len() > 0 && c == 1:
			b.WriteString(" + ")
		case b.Len() > 0 && c == -1:
			b.WriteString(" - ")
		case b.Len() > 0 && c < 0:
			fmt.Fprintf(&b, " - %d*", -c)
		case b.Len() > 0:
			fmt.Fprintf(&b, " + %d*", c)
		}
		b.WriteString(n)
	}
	switch {
	case b.Len() == 0:
		fmt.Fprintf(&b, "%d", a.Const)
	case a.Const > 0:
		fmt.Fprintf(&b, " + %d", a.Const)
	case a.Const < 0:
		fmt.Fprintf(&b, " - %d", -a.Const)
	}
	return b.String()
}

// maxConst bounds the constants and coefficients of affine expressions, so
// that dependence tests on them cannot overflow.
const maxConst = 1 << 24

func (a Affine) tooLarge() bool {
	if a.Const > maxConst || a.Const < -maxConst {
		return true
	}
	for _, c := range a.Terms {
		if c > maxConst || c < -maxConst {
			return true
		}
	}
	return false
}

func constant(c int64) Affine { return Affine{Const: c, Terms: map[string]int64{}} }

func (a Affine) scale(k int64) Affine {
	out := constant(a.Const * k)
	if k == 0 {
		return out
	}
	for n, c := range a.Terms {
		out.Terms[n] = c * k
	}
	return out
}

func (a Affine) plus(b Affine) Affine {
	out := constant(a.Const + b.Const)
	for n, c := range a.Terms {
		out.Terms[n] = c
	}
	for n, c := range b.Terms {
		if s := out.Terms[n] + c; s != 0 {
			out.Terms[n] = s
		} else {
			delete(out.Terms, n)
		}
	}
	return out
}

func (a Affine) isConst() bool { return len(a.Terms) == 0 }

// text is a piece of an input string with the position of its first
// character, so that a problem inside it is reported at its own column.
type text struct {
	s   string
	pos diag.Pos
}

// at is the position of byte offset off of t (same line: strings of the
// loop-nest form are one line).
func (t text) at(off int) diag.Pos {
	p := t.pos
	if p.Col > 0 && !strings.Contains(t.s, "\n") {
		p.Col += off
	}
	return p
}

// exprPos is the position of an ast node of an expression parsed from t.
func (t text) exprPos(n ast.Node) diag.Pos { return t.at(int(n.Pos()) - 1) }

// scope says which names an affine expression may use.
type scope struct {
	vars     []string        // loop indices in scope, outermost first
	params   map[string]bool // size parameters
	allLoops map[string]bool // every loop index of the program (for "out of scope")
	arrays   map[string]bool
}

func (s scope) has(name string) bool {
	if s.params[name] {
		return true
	}
	for _, v := range s.vars {
		if v == name {
			return true
		}
	}
	return false
}

// parseAffine reads t as an affine expression over the names of sc.
func parseAffine(t text, sc scope, errs *diag.List) (Affine, bool) {
	e, err := parser.ParseExpr(t.s)
	if err != nil {
		errs.Add(t.pos, "cannot parse %q as an affine expression", t.s)
		return Affine{}, false
	}
	return affineOf(e, t, sc, errs)
}

// affineOf converts an expression tree; every problem is added to errs.
func affineOf(e ast.Expr, t text, sc scope, errs *diag.List) (Affine, bool) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return affineOf(e.X, t, sc, errs)
	case *ast.BasicLit:
		if e.Kind == token.INT {
			if v, err := strconv.ParseInt(e.Value, 10, 64); err == nil && v <= maxConst {
				return constant(v), true
			}
		}
		errs.Add(t.exprPos(e), "%s is not an integer constant (at most %d)", e.Value, maxConst)
		return Affine{}, false
	case *ast.Ident:
		switch {
		case sc.has(e.Name):
			a := constant(0)
			a.Terms[e.Name] = 1
			return a, true
		case sc.allLoops[e.Name]:
			errs.Add(t.exprPos(e), "loop variable %q is out of scope here (in scope: %s)", e.Name, sc.names())
		case sc.arrays[e.Name]:
			errs.Add(t.exprPos(e), "array %q used as a number: subscripts and bounds are affine in loop variables and size parameters", e.Name)
		default:
			errs.Add(t.exprPos(e), "unknown name %q (in scope: %s)%s", e.Name, sc.names(), diag.DidYouMean(e.Name, sc.all()))
		}
		return Affine{}, false
	case *ast.UnaryExpr:
		if e.Op == token.SUB || e.Op == token.ADD {
			a, ok := affineOf(e.X, t, sc, errs)
			if e.Op == token.SUB {
				a = a.scale(-1)
			}
			return a, ok
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.ADD, token.SUB, token.MUL:
			a, okA := affineOf(e.X, t, sc, errs)
			b, okB := affineOf(e.Y, t, sc, errs)
			if !okA || !okB {
				return Affine{}, false
			}
			switch {
			case e.Op == token.ADD:
				return a.plus(b), true
			case e.Op == token.SUB:
				return a.plus(b.scale(-1)), true
			case a.isConst() || b.isConst():
				if !a.isConst() {
					a, b = b, a
				}
				out := b.scale(a.Const)
				if out.tooLarge() {
					errs.Add(t.exprPos(e), "%s: a coefficient beyond %d", t.src(e), maxConst)
					return Affine{}, false
				}
				return out, true
			}
			errs.Add(t.exprPos(e), "non-affine expression %s: a product of %s and %s (only a constant may multiply)", t.src(e), t.src(e.X), t.src(e.Y))
			return Affine{}, false
		}
		errs.Add(t.exprPos(e), "non-affine expression %s: operator %s (affine expressions use + - and multiplication by a constant)", t.src(e), e.Op)
		return Affine{}, false
	case *ast.IndexExpr, *ast.IndexListExpr:
		errs.Add(t.exprPos(e), "non-affine expression %s: an indirect access (an array element inside a subscript or bound)", t.src(e))
		return Affine{}, false
	case *ast.CallExpr:
		errs.Add(t.exprPos(e), "non-affine expression %s: a call", t.src(e))
		return Affine{}, false
	}
	errs.Add(t.exprPos(e), "non-affine expression %s", t.src(e))
	return Affine{}, false
}

func (t text) src(e ast.Node) string {
	lo, hi := int(e.Pos())-1, int(e.End())-1
	if lo < 0 || hi > len(t.s) || lo > hi {
		return "?"
	}
	return t.s[lo:hi]
}

func (s scope) all() []string {
	out := append([]string(nil), s.vars...)
	for p := range s.params {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (s scope) names() string {
	if all := s.all(); len(all) > 0 {
		return strings.Join(all, ", ")
	}
	return "none"
}

// Plus is a + b.
func (a Affine) Plus(b Affine) Affine { return a.plus(b) }

// Scale is k * a.
func (a Affine) Scale(k int64) Affine { return a.scale(k) }

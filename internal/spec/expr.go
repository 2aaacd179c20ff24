package spec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Value is a number as C++ computes it: an int64 or a double. Integer
// arithmetic stays integral (division truncates), as in the generated code.
type Value struct {
	F   float64
	I   int64
	Int bool
}

// Float is the value as a double.
func (v Value) Float() float64 {
	if v.Int {
		return float64(v.I)
	}
	return v.F
}

func intVal(i int64) Value     { return Value{I: i, Int: true} }
func floatVal(f float64) Value { return Value{F: f} }

// Env names the values an expression may use: scalars, and fields of
// structured arguments as "A.nrows".
type Env map[string]Value

// Eps is machine epsilon (2^-52), the unit tolerance expressions use; the
// harness defines it as pm::kEps.
const Eps = 0x1p-52

// Eval computes a C++ arithmetic expression the way the generated program
// does: numbers, names of env, fields (A.nrows), + - * / % and parentheses,
// unary minus, and sqrt(x). Anything else is an error naming it.
func Eval(expr string, env Env) (Value, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return Value{}, fmt.Errorf("cannot parse %q as an arithmetic expression", expr)
	}
	return eval(e, env)
}

func eval(e ast.Expr, env Env) (Value, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return eval(e.X, env)
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT:
			i, err := strconv.ParseInt(e.Value, 0, 64)
			return intVal(i), err
		case token.FLOAT:
			f, err := strconv.ParseFloat(e.Value, 64)
			return floatVal(f), err
		}
		return Value{}, fmt.Errorf("%s is not a number", e.Value)
	case *ast.Ident:
		v, ok := env[e.Name]
		if !ok {
			return Value{}, fmt.Errorf("unknown name %q (known: %s)", e.Name, strings.Join(env.names(), ", "))
		}
		return v, nil
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			name := x.Name + "." + e.Sel.Name
			if v, ok := env[name]; ok {
				return v, nil
			}
			return Value{}, fmt.Errorf("unknown name %q (known: %s)", name, strings.Join(env.names(), ", "))
		}
	case *ast.UnaryExpr:
		if e.Op == token.SUB || e.Op == token.ADD {
			v, err := eval(e.X, env)
			if err != nil || e.Op == token.ADD {
				return v, err
			}
			if v.Int {
				return intVal(-v.I), nil
			}
			return floatVal(-v.F), nil
		}
	case *ast.CallExpr:
		if f, ok := e.Fun.(*ast.Ident); ok && f.Name == "sqrt" && len(e.Args) == 1 {
			v, err := eval(e.Args[0], env)
			return floatVal(math.Sqrt(v.Float())), err
		}
	case *ast.BinaryExpr:
		a, err := eval(e.X, env)
		if err != nil {
			return a, err
		}
		b, err := eval(e.Y, env)
		if err != nil {
			return b, err
		}
		return binary(e.Op, a, b)
	}
	return Value{}, fmt.Errorf("unsupported expression %s (use numbers, names, + - * / %%, parentheses and sqrt)", types(e))
}

func binary(op token.Token, a, b Value) (Value, error) {
	if a.Int && b.Int {
		switch op {
		case token.ADD:
			if r := a.I + b.I; (r > a.I) == (b.I > 0) {
				return intVal(r), nil
			}
			return Value{}, fmt.Errorf("integer overflow: %d + %d exceeds 64 bits", a.I, b.I)
		case token.SUB:
			if r := a.I - b.I; (r < a.I) == (b.I > 0) {
				return intVal(r), nil
			}
			return Value{}, fmt.Errorf("integer overflow: %d - %d exceeds 64 bits", a.I, b.I)
		case token.MUL:
			if r := a.I * b.I; a.I == 0 || (r/a.I == b.I && !(a.I == -1 && b.I == math.MinInt64)) {
				return intVal(r), nil
			}
			return Value{}, fmt.Errorf("integer overflow: %d * %d exceeds 64 bits", a.I, b.I)
		case token.QUO, token.REM:
			if b.I == 0 {
				return Value{}, fmt.Errorf("integer division by zero")
			}
			if op == token.QUO {
				return intVal(a.I / b.I), nil
			}
			return intVal(a.I % b.I), nil
		}
	}
	x, y := a.Float(), b.Float()
	switch op {
	case token.ADD:
		return floatVal(x + y), nil
	case token.SUB:
		return floatVal(x - y), nil
	case token.MUL:
		return floatVal(x * y), nil
	case token.QUO:
		return floatVal(x / y), nil
	}
	return Value{}, fmt.Errorf("unsupported operator %s", op)
}

func types(e ast.Expr) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", e), "*ast.")
}

func (env Env) names() []string {
	var out []string
	for k := range env {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Env is the values a kernel's expressions see at one size: "size", eps,
// every scalar argument (its value evaluated in order), and for a CSR
// argument A built by minife27 its A.nrows and A.nnz. A scalar whose value
// cannot be evaluated here is left out.
func (k *Kernel) Env(size int64) Env {
	env := Env{"size": intVal(size), "eps": floatVal(Eps)}
	for _, a := range k.Args {
		switch {
		case a.Type == "csr":
			if a.Init.Kind != "minife27" {
				continue
			}
			g, err := Eval(a.Init.Grid, env)
			if err != nil || !g.Int {
				continue // not evaluable here: an expression using it says so
			}
			// (N+1)^3 nodes; per axis a node has itself and up to two
			// neighbours, 3N+1 pairs along N+1 nodes, so (3N+1)^3 non-zeros.
			n1, m := g.I+1, 3*g.I+1
			env[a.Name+".nrows"] = intVal(n1 * n1 * n1)
			env[a.Name+".nnz"] = intVal(m * m * m)
		case a.IsArray():
		default:
			v, err := Eval(a.Value, env)
			if err != nil {
				continue
			}
			if a.Type == "int64" && !v.Int {
				v = intVal(int64(v.F))
			}
			if a.Type == "double" && v.Int {
				v = floatVal(float64(v.I))
			}
			env[a.Name] = v
		}
	}
	return env
}

// Holds evaluates a condition: comparisons (< <= > >= == !=) of arithmetic
// expressions, joined by && and ||, with the values of env. A tuning
// constraint such as "team_size * vector_size <= max_threads_per_block" is one.
func Holds(cond string, env Env) (bool, error) {
	e, err := parser.ParseExpr(cond)
	if err != nil {
		return false, fmt.Errorf("cannot parse %q as a condition", cond)
	}
	return holds(e, env)
}

func holds(e ast.Expr, env Env) (bool, error) {
	if p, ok := e.(*ast.ParenExpr); ok {
		return holds(p.X, env)
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok {
		return false, fmt.Errorf("a condition is a comparison (< <= > >= == !=), possibly joined by && and ||, not %s", types(e))
	}
	switch b.Op {
	case token.LAND, token.LOR:
		x, err := holds(b.X, env)
		if err != nil || x == (b.Op == token.LOR) {
			return x, err
		}
		return holds(b.Y, env)
	case token.LSS, token.LEQ, token.GTR, token.GEQ, token.EQL, token.NEQ:
	default:
		return false, fmt.Errorf("a condition is a comparison (< <= > >= == !=), possibly joined by && and ||, not the operator %s", b.Op)
	}
	x, err := eval(b.X, env)
	if err != nil {
		return false, err
	}
	y, err := eval(b.Y, env)
	if err != nil {
		return false, err
	}
	c := compare(x, y)
	switch b.Op {
	case token.LSS:
		return c < 0, nil
	case token.LEQ:
		return c <= 0, nil
	case token.GTR:
		return c > 0, nil
	case token.GEQ:
		return c >= 0, nil
	case token.EQL:
		return c == 0, nil
	}
	return c != 0, nil
}

// compare orders two values exactly when both are integers.
func compare(a, b Value) int {
	if a.Int && b.Int {
		return cmpOrder(a.I, b.I)
	}
	return cmpOrder(a.Float(), b.Float())
}

func cmpOrder[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Names lists the names an expression or condition reads (A.nrows as one
// name), sorted, without repeats; sqrt is not a name.
func Names(expr string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("cannot parse %q", expr)
	}
	seen := map[string]bool{}
	ast.Inspect(e, func(n ast.Node) bool { return collect(n, seen) })
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func collect(n ast.Node, seen map[string]bool) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		for _, a := range n.Args { // the function's name is not a value
			ast.Inspect(a, func(m ast.Node) bool { return collect(m, seen) })
		}
		return false
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok {
			seen[x.Name+"."+n.Sel.Name] = true
			return false
		}
	case *ast.Ident:
		seen[n.Name] = true
	}
	return true
}

package mapping

// The checks that make the mapping sound at the kernel's sizes, before any
// analysis: every assumption holds at every declared size, every access
// stays inside its array, and an access whose subscript leaves its
// dimension (X[i][m] in a row of m elements: memory reads X[i+1][0]) is
// either analysed on the flattened array, which is what memory sees, or
// refused. The dependence analysis equates subscripts dimension by
// dimension, which is exact only for subscripts inside their dimensions.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// kernelSize is one declared size of a kernel: its parameters' values.
type kernelSize struct {
	set    string
	size   int64
	params map[string]int64
}

func (s kernelSize) String(k *spec.Kernel) string {
	return fmt.Sprintf("%s=%d (size set %s)", k.Size.Name, s.size, s.set)
}

// kernelSizes are the parameters' values at every size of every set.
func kernelSizes(k *spec.Kernel) []kernelSize {
	var out []kernelSize
	for _, set := range spec.SizeSets {
		for _, size := range k.Size.Sets[set] {
			env := k.Env(size)
			params := map[string]int64{}
			for _, p := range k.Loops.Params {
				if v, ok := env[p]; ok && v.Int {
					params[p] = v.I
				}
			}
			if len(params) == len(k.Loops.Params) {
				out = append(out, kernelSize{set: set, size: size, params: params})
			}
		}
	}
	return out
}

// kernelConsts are the parameters the kernel gives a constant value (an
// int64 argument whose value is an integer: np: 4).
func kernelConsts(k *spec.Kernel) map[string]int64 {
	consts := map[string]int64{}
	for _, a := range k.Args {
		if v, err := strconv.ParseInt(a.Value, 10, 64); err == nil && a.Type == "int64" && slices.Contains(k.Loops.Params, a.Name) {
			consts[a.Name] = v
		}
	}
	return consts
}

// checkSound runs the checks at every declared size; problems go to errs,
// positioned at the assumption or the access. An array read across its
// dimensions (and inside the array) is flattened in k.Loops: its shape
// becomes one dimension, the product, and every access of it the row-major
// index. false when a problem was found.
func checkSound(k *spec.Kernel, errs *diag.List) bool {
	p := k.Loops
	before := len(*errs)
	sizes := kernelSizes(k)
	for _, as := range p.Assumptions {
		for _, sz := range sizes {
			if v := holds(as, sz.params); v != "" {
				errs.Add(as.Pos, "loops: assume %q is false at %s: %s", as.Text, sz.String(k), v)
				break
			}
		}
	}
	consts := kernelConsts(k)
	flatten := map[*loopnest.Array]bool{}
	for _, s := range p.Stmts {
		for _, a := range s.Accesses {
			if a.Accum && !a.Write || a.Array.Rank() == 0 {
				continue // an accumulation's read is its write's twin
			}
			for _, sz := range sizes {
				msg, leaves := checkAccess(a, sz.params)
				if msg == "" && leaves != "" {
					if why := constantStrides(a.Array, consts); why != "" {
						msg = leaves + "; its element index is inside the array, but " + why + ", so the flattened access cannot be analysed (write the access inside its dimension)"
					} else {
						flatten[a.Array] = true
					}
				}
				if msg != "" {
					errs.Add(a.Pos, "loops: %s %s (statement %s) at %s: %s", kindOf(a), a.Text, s.Name, sz.String(k), msg)
					break
				}
			}
		}
	}
	if len(*errs) > before {
		return false
	}
	for _, arr := range p.Arrays {
		if flatten[arr] {
			flattenArray(p, arr, consts)
		}
	}
	return true
}

func kindOf(a *loopnest.Access) string {
	if a.Accum {
		return "accumulation into"
	}
	return a.Kind()
}

// holds is "" when the assumption holds at params, else its sides' values.
func holds(as loopnest.Assumption, params map[string]int64) string {
	for _, r := range as.Rows {
		if r.Eval(params) < 0 {
			var names []string
			for _, row := range as.Rows {
				for n := range row.Terms {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			slices.Sort(names)
			var vals []string
			for _, n := range names {
				vals = append(vals, fmt.Sprintf("%s = %d", n, params[n]))
			}
			return strings.Join(vals, ", ")
		}
	}
	return ""
}

// checkAccess checks a's subscripts at one size: msg when a reaches outside
// its array (or cannot be bounded), leaves (the subscripts that leave their
// dimensions) when some subscript leaves its dimension while the flattened
// index stays inside and a is a read.
func checkAccess(a *loopnest.Access, params map[string]int64) (msg, leaves string) {
	ext := make([]int64, a.Array.Rank())
	for d, e := range a.Array.Extent {
		ext[d] = e.Eval(params)
	}
	var dims []string
	for d, sub := range a.Subs {
		sp := depend.SpanOf(a.Stmt.Loops, sub, params)
		switch {
		case !sp.Known:
			return fmt.Sprintf("subscript %d (%s) cannot be bounded (the solver's limits)", d+1, sub), ""
		case sp.Empty:
			return "", "" // the statement does not run at this size
		}
		if sp.Lo < 0 || sp.Hi >= ext[d] {
			dims = append(dims, fmt.Sprintf("subscript %d (%s) takes %d..%d and leaves its dimension: extent %s is %d (0..%d)", d+1, sub, sp.Lo, sp.Hi, a.Array.Extent[d], ext[d], ext[d]-1))
		}
	}
	if len(dims) == 0 {
		return "", ""
	}
	flat := loopnest.Affine{Terms: map[string]int64{}}
	total := int64(1)
	for d := len(a.Subs) - 1; d >= 0; d-- {
		flat = flat.Plus(a.Subs[d].Scale(total))
		total *= ext[d]
	}
	sp := depend.SpanOf(a.Stmt.Loops, flat, params)
	if !sp.Known {
		return fmt.Sprintf("%s; its flattened index cannot be bounded (the solver's limits)", strings.Join(dims, "; ")), ""
	}
	if sp.Lo < 0 || sp.Hi >= total {
		return fmt.Sprintf("outside array %s: %s; its element index takes %d..%d of %d elements (0..%d)", a.Array.Name, strings.Join(dims, "; "), sp.Lo, sp.Hi, total, total-1), ""
	}
	if a.Write {
		return fmt.Sprintf("%s: a write must stay in its dimension (the analysis compares subscripts dimension by dimension)", strings.Join(dims, "; ")), ""
	}
	return "", strings.Join(dims, "; ")
}

// constantStrides is "" when every extent after the first of arr is a
// constant of the kernel, else why not.
func constantStrides(arr *loopnest.Array, consts map[string]int64) string {
	for d, e := range arr.Extent[1:] {
		for name := range e.Terms {
			if _, ok := consts[name]; !ok {
				return fmt.Sprintf("the extent %s of %s's dimension %d uses %s, which has no constant value (a stride of the flattened index would be a product of parameters)", e, arr.Name, d+2, name)
			}
		}
	}
	return ""
}

// flattenArray makes arr one dimension, the product of its extents, and
// every access of it the row-major index (constant strides, checked).
func flattenArray(p *loopnest.Program, arr *loopnest.Array, consts map[string]int64) {
	stride := make([]int64, arr.Rank())
	total := int64(1)
	for d := arr.Rank() - 1; d >= 0; d-- {
		stride[d] = total
		if d > 0 {
			total *= arr.Extent[d].Eval(consts)
		}
	}
	for _, s := range p.Stmts {
		for _, a := range s.Accesses {
			if a.Array != arr {
				continue
			}
			flat := loopnest.Affine{Terms: map[string]int64{}}
			for d, sub := range a.Subs {
				flat = flat.Plus(sub.Scale(stride[d]))
			}
			a.Subs = []loopnest.Affine{flat}
		}
	}
	arr.Extent = []loopnest.Affine{arr.Extent[0].Scale(total)}
}

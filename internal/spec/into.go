package spec

// A reduction whose sum stays in device memory: a range_reduce with
// `into: s[<index>]` stores its sum in element <index> of the double[]
// argument s, on the device, and the kernel returns nothing. The next kernel
// reads it there (CG's alpha = r.r / Ap.p computed in the AXPBY that uses it),
// and the host reads it only where the algorithm needs it, so a launch costs
// no round trip to the host (docs/kernels.md, docs/analysis/launch.md).

import (
	"regexp"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// IntoHook is the backend hook that lowers a range_reduce with into: a
// backend that cannot keep a sum on the device declares it unsupported,
// and the kernel's cells there are off with that reason.
const IntoHook = "range_reduce_into"

var intoRe = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.+)\]\s*$`)

// IntoArray is the array a range_reduce with into stores its sum in, and the
// element's index expression; "", "" when the node has no into.
func (n *Node) IntoArray() (array, index string) {
	m := intoRe.FindStringSubmatch(n.Into)
	if m == nil {
		return "", ""
	}
	return m[1], strings.TrimSpace(m[2])
}

// checkInto checks a kernel's into: only on a top-level range_reduce, naming
// an element of a double[] argument the kernel may write, and then without
// result (the sum is not returned).
func checkInto(d diag.Decoder, k *Kernel) {
	var walk func(n *Node, top bool)
	walk = func(n *Node, top bool) {
		if n == nil {
			return
		}
		if n.Into != "" {
			checkIntoNode(d, k, n, top)
		}
		for _, c := range n.Body {
			walk(c, false)
		}
	}
	walk(k.Pattern, true)
}

func checkIntoNode(d diag.Decoder, k *Kernel, n *Node, top bool) {
	if !top || n.Kind != "range_reduce" {
		d.Errs.Add(n.Pos, "into is for a kernel's top-level range_reduce (its sum stays in device memory), not one in a sequence")
		return
	}
	if k.Result != "" {
		d.Errs.Add(n.Pos, "a range_reduce with into stores its sum in %s on the device and returns nothing: drop result", n.Into)
	}
	name, _ := n.IntoArray()
	if name == "" {
		d.Errs.Add(n.Pos, "into %q must name an element of a double[] argument, as s[0] or s[slot]", n.Into)
		return
	}
	for _, a := range k.Args {
		if a.Name != name {
			continue
		}
		if a.Type != "double[]" || a.Intent == "in" {
			d.Errs.Add(n.Pos, "into %q: %s must be a double[] argument the kernel writes (intent out, inout or scratch), not %s%s",
				n.Into, name, a.Type, map[bool]string{true: " with intent in"}[a.Intent == "in"])
		}
		return
	}
	d.Errs.Add(n.Pos, "into %q: no argument %s", n.Into, name)
}

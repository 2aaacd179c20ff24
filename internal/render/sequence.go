package render

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/spec"
)

// Helpers the LCALS hooks (sequence, indexset_for) and the loops inside a
// sequence use; see internal/spec/sequence.go.

// Shared reports whether the node is a loop of a nowait sequence: the loops
// share one parallel region and run as `for nowait` (LCALS's base form).
func (n *Node) Shared() bool {
	return n.Parent != nil && n.Parent.Kind == "sequence" && n.Parent.Seq.Nowait
}

// Top reports whether the loop stands alone: at the top of the tree, not in
// a sequence. A strategy that completes a sequence after its last loop (the
// async policy's taskwait) completes a lone loop after itself.
func (n *Node) Top() bool { return n.Depth == 0 }

// Knob is the value of the variant's knob name ("" when it has none): a
// backend whose code is written out per policy (raja-raw) picks its pragma.
func (n *Node) Knob(name string) string { return n.f.p.Variant.Knob(name) }

// Knob is the value of the variant's knob name, for the prologue.
func (p *Program) Knob(name string) string { return p.Variant.Knob(name) }

// EndsInReduce reports whether the node is a sequence that ends in a
// range_reduce; Reduction is that loop's accumulator.
func (n *Node) EndsInReduce() bool { return spec.EndsInReduce(n.Node) }

// Acc of a sequence that ends in a reduction: the accumulator it returns.
func (n *Node) ReduceAcc() string {
	if !n.EndsInReduce() {
		return ""
	}
	return n.Node.Body[len(n.Node.Body)-1].Acc
}

// HostData reports whether the variant keeps the kernel's arrays on the host
// (the PM_HOST_DATA define, harness/pm/device_omptarget.hpp): the kernel maps
// them itself, per call.
func (f *Func) HostData() bool { return f.p.Has("PM_HOST_DATA") }

// DataClauses are the data clauses of a target construct that reaches all the
// kernel's arrays: is_device_ptr(...) for device-resident arrays, map clauses
// by intent for host-resident ones (003 Fig. 3); "" for a kernel without
// arrays.
func (f *Func) DataClauses() (string, error) {
	if !f.HostData() {
		if f.DevicePtrs == "" {
			return "", nil
		}
		return "is_device_ptr(" + f.DevicePtrs + ")", nil
	}
	return f.maps(map[string]string{"in": "to", "out": "from", "inout": "tofrom", "scratch": "alloc"})
}

// EnterData and ExitData are the clauses of `target enter data` and `target
// exit data` that map the kernel's arrays once around its loops (003 Fig. 5).
func (f *Func) EnterData() (string, error) {
	return f.maps(map[string]string{"in": "to", "out": "alloc", "inout": "to", "scratch": "alloc"})
}

// ExitData: see EnterData.
func (f *Func) ExitData() (string, error) {
	return f.maps(map[string]string{"in": "release", "out": "from", "inout": "from", "scratch": "release"})
}

// maps groups the arrays' sections by the motion type of their intent, in
// the order to, from, tofrom, alloc, release.
func (f *Func) maps(motion map[string]string) (string, error) {
	by := map[string][]string{}
	for _, a := range f.args {
		switch {
		case a.Type == "csr":
			return "", offf("%s: %s maps arrays only; CSR argument %q is not mapped", a.Pos, f.p.Variant.ID, a.Name)
		case a.IsArray():
			m := motion[a.Intent]
			by[m] = append(by[m], fmt.Sprintf("%s[0:%s]", a.Name, a.Extent))
		}
	}
	var out []string
	for _, m := range []string{"to", "from", "tofrom", "alloc", "release"} {
		if len(by[m]) > 0 {
			out = append(out, fmt.Sprintf("map(%s : %s)", m, strings.Join(by[m], ", ")))
		}
	}
	return strings.Join(out, " "), nil
}

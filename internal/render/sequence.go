package render

import "github.com/portmatrix/portmatrix/internal/spec"

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

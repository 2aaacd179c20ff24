package spec

import (
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Sequence is what the LCALS patterns add to a node (003, Section 4.3.2):
//
//   - sequence: the loops (range_for, indexset_for) and scalar statements
//     (code) of one kernel over one data environment, in order. A strategy
//     lowers it as a whole: pure OpenMP puts every loop in one target region
//     (003 Fig. 3), a RAJA policy offloads each loop (Fig. 8). Nowait marks
//     LCALS's base form, one parallel region whose loops are `for nowait`:
//     the author asserts that iteration i of a loop reads only what iteration
//     i of the earlier loops wrote.
//   - indexset_for: a loop over an index set of range segments (RAJA's
//     IndexSet, LCALS's real zones of a Domain, 003 Fig. 5): Segments
//     segments, the s-th (s named by Segment) covering [Begin, End).
type Sequence struct {
	Nowait   bool
	Segment  string
	Segments string
}

// sequenceChildren are the patterns a sequence may hold.
// A range_reduce may end a sequence: the kernel returns its sum.
var sequenceChildren = map[string]bool{"code": true, "range_for": true, "indexset_for": true, "range_reduce": true}

// EndsInReduce reports whether n is a sequence whose last pattern is a
// range_reduce (the kernel returns that sum).
func EndsInReduce(n *Node) bool {
	return n != nil && n.Kind == "sequence" && len(n.Body) > 0 && n.Body[len(n.Body)-1].Kind == "range_reduce"
}

// inSequence reports whether kind, a top-level pattern, may appear in where
// because where is a sequence: its loops are top-level loops run in order.
func inSequence(kind, where string) bool { return where == "sequence" && sequenceChildren[kind] }

// parseSequenceNode reads the fields of a sequence or an indexset_for node;
// it reports false for every other kind.
func parseSequenceNode(d diag.Decoder, val *yaml.Node, node *Node) bool {
	switch node.Kind {
	case "sequence":
		f := d.Fields(val, node.Kind, "nowait", "body")
		if !d.Require(val, f, node.Kind, "body") {
			return true
		}
		if f["nowait"] != nil {
			node.Seq.Nowait = d.Bool(f["nowait"], "nowait")
		}
		if f["body"].Kind != yaml.SequenceNode {
			d.Add(f["body"], "a sequence's body is a list of loops (range_for, indexset_for) and code")
			return true
		}
		node.Body = parseBody(d, f["body"], node)
		loops := 0
		for i, c := range node.Body {
			// Other kinds are rejected where they are parsed (inSequence).
			if c.Kind != "code" {
				loops++
			}
			switch {
			case c.Kind == "range_reduce" && i != len(node.Body)-1:
				d.Add(f["body"].Content[i], "a range_reduce can only end a sequence (the kernel returns its sum)")
			case c.Kind == "range_reduce" && node.Seq.Nowait:
				d.Add(f["body"].Content[i], "a nowait sequence cannot end in a range_reduce")
			}
		}
		if loops == 0 {
			d.Add(f["body"], "a sequence needs at least one loop")
		}
	case "indexset_for":
		f := d.Fields(val, node.Kind, "index", "segment", "segments", "begin", "end", "body")
		if !d.Require(val, f, node.Kind, "index", "segment", "segments", "begin", "end", "body") {
			return true
		}
		node.Index = d.String(f["index"], "index")
		node.Seq.Segment = d.String(f["segment"], "segment")
		node.Seq.Segments = d.String(f["segments"], "segments")
		node.Begin = d.String(f["begin"], "begin")
		node.End = d.String(f["end"], "end")
		for _, x := range []string{"index", "segment"} {
			if v := d.String(f[x], x); !ident.MatchString(v) {
				d.Add(f[x], "%s %q is not a C++ identifier", x, v)
			}
		}
		if node.Index == node.Seq.Segment {
			d.Add(f["segment"], "the segment variable and the index must differ")
		}
		node.Body = parseBody(d, f["body"], node)
	default:
		return false
	}
	return true
}

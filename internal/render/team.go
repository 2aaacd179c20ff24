package render

// What the hooks of team scratch, barriers, multi-dimensional ranges and
// atomics see (docs/kernels.md): names, byte counts and index arithmetic are
// made here; templates only place them.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/spec"
)

// flattened reports whether the node is a team-level loop over several
// dimensions: every backend lowers it as one loop over the product of the
// extents, the indices recovered from the flat index at the top of the body.
func flattened(n *spec.Node) bool {
	switch n.Kind {
	case "team_thread_for", "team_thread_reduce", "thread_vector_for", "thread_vector_reduce":
		return len(n.Indices) > 1
	}
	return false
}

// flatten turns a multi-dimensional team-level loop into the one-dimensional
// node its hook lowers, and the lines that declare its indices.
func flatten(n *spec.Node, depth int) (*spec.Node, string) {
	c := *n
	c.Index = fmt.Sprintf("pm_flat%d", depth)
	c.Begin = "0"
	c.End = count(n.Begins, n.Ends)
	c.Indices, c.Begins, c.Ends = nil, nil, nil
	return &c, unflatten(c.Index, n.Indices, n.Begins, n.Ends)
}

// extent is the trip count of one dimension.
func extent(begin, end string) string {
	switch {
	case begin == "0":
		return end
	case strings.HasPrefix(begin, "-") && isInt(begin):
		return fmt.Sprintf("%s + %s", paren(end), begin[1:])
	}
	return fmt.Sprintf("%s - %s", paren(end), paren(begin))
}

func paren(s string) string {
	if identRe.MatchString(s) || isInt(s) {
		return s
	}
	return "(" + s + ")"
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// count is the number of points of a multi-dimensional range.
func count(begins, ends []string) string {
	var parts []string
	for i := range ends {
		parts = append(parts, paren(extent(begins[i], ends[i])))
	}
	return strings.Join(parts, " * ")
}

// product is count as one operand.
func product(begins, ends []string) string {
	if len(ends) == 1 {
		return paren(extent(begins[0], ends[0]))
	}
	return "(" + count(begins, ends) + ")"
}

// unflatten declares the indices of a point from its flat number (the last
// index varies fastest, as C arrays and Kokkos' default iteration order).
func unflatten(flat string, indices, begins, ends []string) string {
	var lines []string
	for d := range indices {
		x := flat
		stride := ""
		if d+1 < len(indices) {
			stride = product(begins[d+1:], ends[d+1:])
			x = fmt.Sprintf("%s / %s", flat, stride)
		}
		if d > 0 {
			x = fmt.Sprintf("(%s) %% %s", x, paren(extent(begins[d], ends[d])))
			if stride == "" {
				x = fmt.Sprintf("%s %% %s", flat, paren(extent(begins[d], ends[d])))
			}
		}
		if begins[d] != "0" {
			x = fmt.Sprintf("%s + %s", paren(begins[d]), x)
		}
		lines = append(lines, fmt.Sprintf("const int64_t %s = %s;", indices[d], x))
	}
	return strings.Join(lines, "\n")
}

// Dim is one dimension of an mdrange_for.
type Dim struct{ Index, Begin, End string }

// Dims are the dimensions of an mdrange_for, outermost first.
func (n *Node) Dims() []Dim {
	var out []Dim
	for i := range n.Indices {
		out = append(out, Dim{n.Indices[i], n.Begins[i], n.Ends[i]})
	}
	return out
}

// Count is the number of points of an mdrange_for.
func (n *Node) Count() string { return count(n.Begins, n.Ends) }

// Unflatten declares an mdrange_for's indices from the flat point number flat.
func (n *Node) Unflatten(flat string) string { return unflatten(flat, n.Indices, n.Begins, n.Ends) }

// BeginList and EndList are "{b0, b1}" and "{e0, e1}" (Kokkos' MDRangePolicy).
func (n *Node) BeginList() string { return "{" + strings.Join(n.Begins, ", ") + "}" }

// EndList: see BeginList.
func (n *Node) EndList() string { return "{" + strings.Join(n.Ends, ", ") + "}" }

// IndexParams is "const int64_t i, const int64_t j".
func (n *Node) IndexParams() string {
	var ps []string
	for _, i := range n.Indices {
		ps = append(ps, "const int64_t "+i)
	}
	return strings.Join(ps, ", ")
}

// PerThread reports whether an atomic_add sits directly in a team_thread_for:
// backends that run a team thread's body in every vector lane make it run once.
func (n *Node) PerThread() bool { return n.parent == "team_thread_for" }

// ScratchLevel is the level of a scratch view in this variant (a tunable's
// value where the level names one).
func (n *Node) scratchLevel(s spec.Scratch) int {
	if l, err := strconv.Atoi(s.Level); err == nil {
		return l
	}
	if v, ok := n.f.p.Variant.Tunables[s.Level]; ok {
		return int(v)
	}
	for _, t := range n.f.Kernel.Tunables {
		if t.Name == s.Level {
			return int(t.Value)
		}
	}
	return 0
}

// ScratchBytes is the C++ expression of the bytes per team at level (0 or 1):
// the views of that level one after the other, 8 bytes an element.
func (n *Node) ScratchBytes(level int) string {
	var parts []string
	for _, s := range n.Scratch {
		if n.scratchLevel(s) == level {
			parts = append(parts, "8 * "+paren(s.Size))
		}
	}
	switch len(parts) {
	case 0:
		return "0"
	case 1:
		return parts[0]
	}
	return "(" + strings.Join(parts, " + ") + ")"
}

// HasScratch reports whether a view lives at level.
func (n *Node) HasScratch(level int) bool { return n.ScratchBytes(level) != "0" }

// ScratchDecls declares the team's views as pointers into the team's scratch
// of each level, whose first bytes the hook names pm_scratch0 and pm_scratch1
// (char pointers).
func (n *Node) ScratchDecls() string {
	var lines []string
	offset := [2][]string{}
	for _, s := range n.Scratch {
		l := n.scratchLevel(s)
		at := fmt.Sprintf("pm_scratch%d", l)
		if len(offset[l]) > 0 {
			at += " + " + strings.Join(offset[l], " + ")
		}
		typ := "double"
		if s.Type == "int64" {
			typ = "int64_t"
		}
		unused := ""
		if s.Name == spec.TeamSumView { // the layers of the kokkos backend find it themselves
			unused = "[[maybe_unused]] "
		}
		lines = append(lines, fmt.Sprintf("%s%s* const %s = reinterpret_cast<%s*>(%s);  // scratch level %d", unused, typ, s.Name, typ, at, l))
		offset[l] = append(offset[l], "8 * "+paren(s.Size))
	}
	return strings.Join(lines, "\n")
}

// usesTeamExtensions reports whether a kernel needs the layers' team
// extensions (scratch, barriers, multi-dimensional ranges, atomics).
func usesTeamExtensions(kinds []string) bool {
	for _, k := range kinds {
		switch k {
		case "mdrange_for", "team_scratch", "team_barrier", "thread_vector_for", "atomic_add", "team_thread_reduce":
			return true
		}
	}
	return false
}

// Nest is an mdrange_for as perfectly nested loops, outermost first, the body
// in the innermost (what collapse(n) asks for).
func (n *Node) Nest() (string, error) {
	body, err := n.Body()
	if err != nil {
		return "", err
	}
	var open, close []string
	for d, x := range n.Dims() {
		pad := strings.Repeat("  ", d)
		open = append(open, fmt.Sprintf("%sfor (int64_t %s = %s; %s < %s; ++%s) {", pad, x.Index, x.Begin, x.Index, x.End, x.Index))
		close = append([]string{pad + "}"}, close...)
	}
	pad := strings.Repeat("  ", len(open))
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l != "" {
			l = pad + l
		}
		lines = append(lines, l)
	}
	return strings.Join(open, "\n") + "\n" + strings.Join(lines, "\n") + "\n" + strings.Join(close, "\n"), nil
}

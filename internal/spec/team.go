package spec

// Team scratch, team barriers, multi-dimensional ranges and atomic updates:
// the parts of the pattern vocabulary beyond flat loops and one
// league/team/vector nest (docs/kernels.md).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Scratch is a team scratch view: Size elements of Type per team, at Level 0
// (team-shared memory) or 1 (global memory per team). In the team's body the
// view is a pointer named Name.
type Scratch struct {
	Name  string
	Type  string // double or int64
	Size  string // C++ expression over the arguments, size and tunables: elements per team
	Level string // "0", "1", or a tunable whose value (0 or 1) is the level
	Pos   diag.Pos
	// Item: the view holds the state private to each work item of an
	// item_state node of the team (the mapper's; ItemState): a strategy
	// that keeps that state in registers does not allocate it.
	Item bool
}

// ScratchTypes are the element types a scratch view may have (8 bytes each).
var ScratchTypes = []string{"double", "int64"}

func init() {
	for k, v := range map[string]string{
		"mdrange_for":       "top",
		"team_barrier":      "team",
		"thread_vector_for": "team_thread_for",
		"atomic_add":        "range_for, range_reduce, mdrange_for, team_thread_for, thread_vector_for, thread_vector_reduce",
	} {
		Patterns[k] = v
	}
}

// nodeFields are the fields each pattern takes, so that an unknown field is
// answered with the fields valid there.
var nodeFields = map[string][]string{
	"range_for":            {"index", "begin", "end", "body"},
	"range_reduce":         {"index", "begin", "end", "acc", "into", "body"},
	"mdrange_for":          {"index", "begin", "end", "body"},
	"team":                 {"league", "team_size", "vector", "scratch", "body"},
	"team_thread_for":      {"index", "begin", "end", "body"},
	"thread_vector_for":    {"index", "begin", "end", "body"},
	"thread_vector_reduce": {"index", "begin", "end", "acc", "body"},
	"team_barrier":         {},
	"atomic_add":           {"target", "value", "if"},
}

// multiDim says which loops take a list of indices: mdrange_for must (2 or 3),
// the team-level loops may (1 to 3); range_for and range_reduce take one.
var multiDim = map[string][2]int{
	"mdrange_for":          {2, 3},
	"team_thread_for":      {1, 3},
	"thread_vector_for":    {1, 3},
	"thread_vector_reduce": {1, 3},
}

// allowedIn reports whether kind may appear directly inside where.
func allowedIn(kind, where string) (string, bool) {
	in := Patterns[kind]
	return in, in == "anywhere" || slices.Contains(strings.Split(in, ", "), where)
}

// Hook is the backend hook that lowers the node: a team with scratch views is
// lowered by team_scratch, so that a backend can declare scratch alone
// unsupported; every other node by the hook named as its kind.
func (n *Node) Hook() string {
	if n.Kind == "team" && len(n.Scratch) > 0 {
		return "team_scratch"
	}
	if n.Kind == "league_add" { // an atomic add in a one-trip team-thread loop (render)
		return "atomic_add"
	}
	if n.Kind == "range_reduce" && n.Into != "" { // its sum stays on the device (into.go)
		return IntoHook
	}

	return n.Kind
}

// Rank is the number of dimensions of a loop (1 for a flat loop).
func (n *Node) Rank() int {
	if len(n.Indices) > 1 {
		return len(n.Indices)
	}
	return 1
}

// parseLoop reads index, begin and end of a loop node: scalars, or lists of
// equal length for a multi-dimensional loop.
func parseLoop(d diag.Decoder, f map[string]*yaml.Node, node *Node) {
	idx := f["index"]
	if idx != nil && idx.Kind == yaml.SequenceNode {
		lim, ok := multiDim[node.Kind]
		if !ok {
			d.Add(idx, "%s takes one index; a range over several dimensions is an mdrange_for", node.Kind)
			return
		}
		node.Indices = d.Strings(idx, "index")
		if len(node.Indices) < lim[0] || len(node.Indices) > lim[1] {
			d.Add(idx, "%s takes %d to %d indices, not %d", node.Kind, lim[0], lim[1], len(node.Indices))
		}
		for i, x := range node.Indices {
			if !ident.MatchString(x) {
				d.Add(idx.Content[i], "index %q is not a C++ identifier", x)
			}
		}
		node.Ends = listOf(d, f, "end", len(node.Indices), "")
		node.Begins = listOf(d, f, "begin", len(node.Indices), "0")
		if len(node.Indices) == 1 {
			node.Index, node.Begin, node.End = node.Indices[0], node.Begins[0], node.Ends[0]
			node.Indices, node.Begins, node.Ends = nil, nil, nil
		}
		return
	}
	if lim, ok := multiDim[node.Kind]; ok && lim[0] > 1 && idx != nil {
		d.Add(idx, "%s takes a list of %d to %d indices: [i, j]", node.Kind, lim[0], lim[1])
		return
	}
	for _, x := range []string{"begin", "end"} {
		if f[x] != nil && f[x].Kind == yaml.SequenceNode {
			d.Add(f[x], "%s of a one-dimensional loop is one expression, not a list", x)
			return
		}
	}
	node.Index = d.String(idx, "index")
	node.Begin = d.String(f["begin"], "begin")
	node.End = d.String(f["end"], "end")
	if node.Index != "" && !ident.MatchString(node.Index) {
		d.Add(idx, "index %q is not a C++ identifier", node.Index)
	}
}

// listOf reads a list field of n expressions; a missing one is def repeated
// (or an error when def is "").
func listOf(d diag.Decoder, f map[string]*yaml.Node, name string, n int, def string) []string {
	v := f[name]
	if v == nil {
		out := make([]string, n)
		for i := range out {
			out[i] = def
		}
		return out
	}
	if v.Kind != yaml.SequenceNode {
		d.Add(v, "%s must be a list of %d expressions, one per index", name, n)
		return make([]string, n)
	}
	out := d.Strings(v, name)
	if len(out) != n {
		d.Add(v, "%s lists %d expressions for %d indices", name, len(out), n)
		return make([]string, n)
	}
	return out
}

// parseScratch reads a team's scratch views.
func parseScratch(d diag.Decoder, n *yaml.Node) []Scratch {
	var out []Scratch
	seen := map[string]bool{}
	for _, item := range d.Seq(n, "scratch") {
		f := d.Fields(item, "scratch view", "name", "type", "size", "level")
		s := Scratch{Name: d.String(f["name"], "name"), Type: d.String(f["type"], "type"), Size: d.String(f["size"], "size"),
			Level: d.String(f["level"], "level"), Pos: d.Pos(item)}
		if !d.Require(item, f, "scratch view", "name", "size") {
			continue
		}
		switch {
		case !ident.MatchString(s.Name):
			d.Add(f["name"], "scratch view name %q is not a C++ identifier", s.Name)
		case seen[s.Name]:
			d.Add(f["name"], "scratch view %q defined twice", s.Name)
		}
		seen[s.Name] = true
		if s.Type == "" {
			s.Type = "double"
		}
		if !slices.Contains(ScratchTypes, s.Type) {
			d.Add(f["type"], "unknown scratch type %q (known: %s)", s.Type, strings.Join(ScratchTypes, ", "))
		}
		if s.Level == "" {
			s.Level = "0"
		}
		if _, err := strconv.Atoi(s.Level); err == nil && s.Level != "0" && s.Level != "1" {
			d.Add(f["level"], "scratch level is 0 (team-shared memory) or 1 (global memory per team), not %s", s.Level)
		} else if err != nil && !ident.MatchString(s.Level) {
			d.Add(f["level"], "scratch level %q is neither 0, 1 nor a tunable", s.Level)
		}
		out = append(out, s)
	}
	return out
}

// checkScratchLevels resolves levels named by tunables once the kernel's
// tunables are known.
func checkScratchLevels(d diag.Decoder, k *Kernel) {
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		for _, s := range n.Scratch {
			if _, err := strconv.Atoi(s.Level); err == nil {
				continue
			}
			i := slices.IndexFunc(k.Tunables, func(t Tunable) bool { return t.Name == s.Level })
			switch {
			case i < 0:
				d.Errs.Add(s.Pos, "scratch view %q: level %q is not a tunable of the kernel", s.Name, s.Level)
			case k.Tunables[i].Value > 1:
				d.Errs.Add(s.Pos, "scratch view %q: tunable %s = %d is not a scratch level (0 or 1)", s.Name, s.Level, k.Tunables[i].Value)
			}
		}
		for _, c := range n.Body {
			walk(c)
		}
	}
	walk(k.Pattern)
}

// parseExtra reads what the patterns of this file add to a node: scratch
// views, atomic targets and values. It reports whether it handled the kind.
func parseExtra(d diag.Decoder, val *yaml.Node, f map[string]*yaml.Node, node *Node) bool {
	switch node.Kind {
	case "team_barrier":
		return true
	case "atomic_add":
		d.Require(val, f, node.Kind, "target", "value")
		node.Target = d.String(f["target"], "target")
		node.Value = d.String(f["value"], "value")
		node.Cond = d.String(f["if"], "if")
		return true
	case "league_add":
		parseLeagueAdd(d, val, f, node)
		return true
	case "team":
		node.Scratch = parseScratch(d, f["scratch"])
	}
	return false
}

// RenderTimeTunables are the tunables the renderer decides with (a scratch
// view's level picks the code it renders) and those marked Rendered: they
// stay constants of the generated program; every other tunable is read at
// run time (pm::tune).
func (k *Kernel) RenderTimeTunables() map[string]bool {
	out := map[string]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		for _, s := range n.Scratch {
			if _, err := strconv.Atoi(s.Level); err != nil {
				out[s.Level] = true
			}
		}
		for _, c := range n.Body {
			walk(c)
		}
	}
	walk(k.Pattern)
	for _, t := range k.Tunables {
		if t.Rendered {
			out[t.Name] = true
		}
	}
	return out
}

// Used are the kernels k uses (a composite's parts) that byName holds, in
// the order k names them.
func (k *Kernel) Used(byName map[string]*Kernel) []*Kernel {
	var out []*Kernel
	for _, u := range k.Uses {
		if p, ok := byName[u]; ok {
			out = append(out, p)
		}
	}
	return out
}

// KindsUsed lists the pattern kinds of k and of the kernels it uses (by
// name in byName): what a backend must lower to build it.
func (k *Kernel) KindsUsed(byName map[string]*Kernel) []string {
	kinds := k.Kinds()
	for _, u := range k.Used(byName) {
		kinds = append(kinds, u.Kinds()...)
	}
	return kinds
}

// Teams lists the team patterns of n and its body, in order (none for nil).
func (n *Node) Teams() []*Node {
	if n == nil {
		return nil
	}
	var out []*Node
	if n.Kind == "team" {
		out = append(out, n)
	}
	for _, b := range n.Body {
		out = append(out, b.Teams()...)
	}
	return out
}

// Block is a team pattern's threads per team, team_size x vector, in env.
func (n *Node) Block(env Env) (int64, error) {
	team, err := Eval(n.TeamSize, env)
	if err != nil {
		return 0, err
	}
	vector, err := Eval(n.Vector, env)
	if err != nil {
		return 0, err
	}
	if !team.Int || !vector.Int {
		return 0, fmt.Errorf("team_size %q x vector %q is no integer", n.TeamSize, n.Vector)
	}
	return team.I * vector.I, nil
}

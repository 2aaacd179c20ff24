package diag

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decoder reads YAML nodes of one file by hand, so that every problem is
// reported with its position and decoding goes on after the first one.
type Decoder struct {
	File string
	Errs *List
}

// ReadYAML parses file into its document node.
func ReadYAML(file string, errs *List) *yaml.Node {
	data, err := os.ReadFile(file)
	if err != nil {
		errs.Add(Pos{File: file}, "%v", err)
		return nil
	}
	return ParseYAML(file, data, errs)
}

// ParseYAML parses data read from file.
func ParseYAML(file string, data []byte, errs *List) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		msg := err.Error()
		if _, scanErr := fmt.Sscanf(strings.TrimPrefix(msg, "yaml: "), "line %d:", &line); scanErr == nil {
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
			msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
		}
		errs.Add(Pos{File: file, Line: line}, "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
		return nil
	}
	if len(doc.Content) == 0 {
		errs.Add(Pos{File: file}, "empty file")
		return nil
	}
	return doc.Content[0]
}

// Pos returns the position of n.
func (d Decoder) Pos(n *yaml.Node) Pos { return At(d.File, n) }

// Add records a problem at n.
func (d Decoder) Add(n *yaml.Node, format string, args ...any) { d.Errs.Add(d.Pos(n), format, args...) }

// Value is the value node of key in mapping m, or nil when m is no mapping
// or lacks the key: a look at one field without checking the others.
func Value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Fields returns the keys of mapping n; a key outside allowed is an error.
// Keys map to their value nodes; the key nodes are under "@"+key.
func (d Decoder) Fields(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.Add(n, "%s must be a mapping", what)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			d.Add(k, "unknown field %q in %s (known: %s)", k.Value, what, strings.Join(sortedCopy(allowed), ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.Add(k, "field %q repeated in %s", k.Value, what)
			continue
		}
		out[k.Value] = v
		out["@"+k.Value] = k
	}
	return out
}

// Require reports the fields of f that are missing, at the mapping node n.
func (d Decoder) Require(n *yaml.Node, f map[string]*yaml.Node, what string, names ...string) bool {
	ok := true
	for _, name := range names {
		if f[name] == nil {
			d.Add(n, "%s needs field %q", what, name)
			ok = false
		}
	}
	return ok
}

// String returns a scalar's text.
func (d Decoder) String(n *yaml.Node, what string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.Add(n, "%s must be a scalar", what)
		return ""
	}
	return n.Value
}

// Int returns a scalar integer.
func (d Decoder) Int(n *yaml.Node, what string) int64 {
	s := d.String(n, what)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		d.Add(n, "%s must be an integer, not %q", what, s)
	}
	return v
}

// Float returns a scalar number.
func (d Decoder) Float(n *yaml.Node, what string) float64 {
	s := d.String(n, what)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.Add(n, "%s must be a number, not %q", what, s)
	}
	return v
}

// Bool returns a scalar boolean.
func (d Decoder) Bool(n *yaml.Node, what string) bool {
	s := d.String(n, what)
	switch s {
	case "", "false":
		return false
	case "true":
		return true
	}
	d.Add(n, "%s must be true or false, not %q", what, s)
	return false
}

// Seq returns the items of sequence n.
func (d Decoder) Seq(n *yaml.Node, what string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.Add(n, "%s must be a list", what)
		return nil
	}
	return n.Content
}

// Strings returns a list of scalars.
func (d Decoder) Strings(n *yaml.Node, what string) []string {
	var out []string
	for _, item := range d.Seq(n, what) {
		out = append(out, d.String(item, what))
	}
	return out
}

// Ints returns a list of integers.
func (d Decoder) Ints(n *yaml.Node, what string) []int64 {
	var out []int64
	for _, item := range d.Seq(n, what) {
		out = append(out, d.Int(item, what))
	}
	return out
}

// Pairs returns the key/value nodes of mapping n in file order.
func (d Decoder) Pairs(n *yaml.Node, what string) [][2]*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.Add(n, "%s must be a mapping", what)
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

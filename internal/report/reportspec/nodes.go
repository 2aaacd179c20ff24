package reportspec

import (
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// valueNode returns the value node of key in mapping n, or n itself when the
// key is absent, so that an error about a missing field points at its owner.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if v := diag.Value(n, key); v != nil {
		return v
	}
	return n
}

// itemNode returns the i-th item of the sequence under key, or the key's
// value node.
func itemNode(n *yaml.Node, key string, i int) *yaml.Node {
	v := valueNode(n, key)
	if v != nil && v.Kind == yaml.SequenceNode && i < len(v.Content) {
		return v.Content[i]
	}
	return v
}

// fields is diag.Decoder.Fields with YAML aliases (*name) resolved, so a
// list anchored once (&cpu-flat) is reused.
func fields(d diag.Decoder, n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	f := d.Fields(resolve(n), what, allowed...)
	for k, v := range f {
		f[k] = resolve(v)
	}
	return f
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

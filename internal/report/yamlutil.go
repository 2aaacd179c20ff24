package report

import (
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// nodeType is the type of the field that strict decoding fills with the
// mapping node a struct was decoded from, for positioned validation errors.
var nodeType = reflect.TypeOf((*yaml.Node)(nil))

// parseDoc parses data and returns the mapping at the document's root.
func parseDoc(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(file, err).errs()
	}
	if len(doc.Content) == 0 {
		var l ErrorList
		l.line(file, 0, "empty file")
		return nil, l.errs()
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		var l ErrorList
		l.at(file, root, "expected a mapping at the top level")
		return nil, l.errs()
	}
	return root, nil
}

// decodeStrict decodes the mapping n into the struct pointed to by out, field
// by field, and reports unknown or repeated keys and type errors at their
// positions. Nested structs and slices of structs are decoded strictly too.
// A field of type *yaml.Node tagged `yaml:"-"` receives n.
func decodeStrict(file string, n *yaml.Node, out any, errs *ErrorList) {
	rv := reflect.ValueOf(out).Elem()
	what := noun(rv.Type())
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		errs.at(file, n, "%s: expected a mapping", what)
		return
	}
	setNode(rv, n)
	fields := yamlFields(rv.Type())
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			errs.at(file, k, "%s: field %q repeated (first at line %d)", what, k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		idx, ok := fields[k.Value]
		if !ok {
			errs.at(file, k, "unknown field %q in %s (known: %s)", k.Value, what, strings.Join(sortedKeys(fields), ", "))
			continue
		}
		decodeValue(file, v, rv.Field(idx), k.Value, errs)
	}
}

// decodeValue decodes the value of field key.
func decodeValue(file string, v *yaml.Node, f reflect.Value, key string, errs *ErrorList) {
	if v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	switch {
	case f.Kind() == reflect.Struct:
		decodeStrict(file, v, f.Addr().Interface(), errs)
	case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
		if v.Kind != yaml.SequenceNode {
			errs.at(file, v, "%s: expected a list", key)
			return
		}
		s := reflect.MakeSlice(f.Type(), len(v.Content), len(v.Content))
		for i, item := range v.Content {
			decodeStrict(file, item, s.Index(i).Addr().Interface(), errs)
		}
		f.Set(s)
	default:
		if err := v.Decode(f.Addr().Interface()); err != nil {
			for _, e := range yamlError(file, err) {
				errs.at(file, v, "%s: %s", key, e.Msg)
			}
		}
	}
}

// nouns name the decoded types in error messages.
var nouns = map[reflect.Type]string{
	reflect.TypeOf(figuresDoc{}): "figures file",
	reflect.TypeOf(FigureSpec{}): "figure",
	reflect.TypeOf(SeriesSpec{}): "variant entry",
	reflect.TypeOf(claimsDoc{}):  "claims file",
	reflect.TypeOf(ClaimSpec{}):  "claim",
	reflect.TypeOf(Selector{}):   "selector",
}

func noun(t reflect.Type) string {
	if n, ok := nouns[t]; ok {
		return n
	}
	return strings.ToLower(t.Name())
}

func setNode(rv reflect.Value, n *yaml.Node) {
	for i := 0; i < rv.NumField(); i++ {
		sf := rv.Type().Field(i)
		if sf.Type == nodeType && sf.Tag.Get("yaml") == "-" {
			rv.Field(i).Set(reflect.ValueOf(n))
		}
	}
}

// yamlFields maps the yaml names of t's exported fields to their index.
func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name := strings.Split(sf.Tag.Get("yaml"), ",")[0]
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		m[name] = i
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// valueNode returns the value node of key in mapping n, or n itself when the
// key is absent, so that an error about a missing field points at its owner.
func valueNode(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
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

// Package golden lets a golden file name the project's vocabulary without
// listing it: a message's "(known: axpby, cgsolve, ...)" is written to the
// golden file as "(known: {{kernels}})" and expanded, when compared, from the
// names loaded from the tree under test. Adding a kernel, a strategy or a
// toolchain then changes no golden file.
package golden

import "strings"

// List is one named list of the vocabulary, in the order messages print it.
type List struct {
	Name  string // the placeholder's name: "kernels" stands for {{kernels}}
	Items []string
}

// Vocab is the lists a set of golden files may name.
type Vocab []List

func (l List) known() string       { return "(known: " + strings.Join(l.Items, ", ") + ")" }
func (l List) placeholder() string { return "(known: {{" + l.Name + "}})" }

// Expand replaces each placeholder of want by its list: the text to compare
// a message with.
func (v Vocab) Expand(want string) string {
	for _, l := range v {
		want = strings.ReplaceAll(want, l.placeholder(), l.known())
	}
	return want
}

// Abstract replaces each whole list of got by its placeholder: the text to
// write into a golden file. Only a whole list, parentheses included, is
// replaced, so a list that starts another one cannot cut it.
func (v Vocab) Abstract(got string) string {
	for _, l := range v {
		if len(l.Items) > 0 {
			got = strings.ReplaceAll(got, l.known(), l.placeholder())
		}
	}
	return got
}

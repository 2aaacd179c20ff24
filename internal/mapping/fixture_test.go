package mapping

import "strings"

// Loop-nest fixtures in Go rather than in indented YAML: program is a
// loops: document (its header lines, then the body's items), loop a for:
// item, stmt a statement; each indents what it holds, so a fixture says
// only its loops and accesses.

// program writes a loops: document: header lines (params:, assume:,
// arrays:, promote:) and the items of its body.
func program(header string, items ...string) string {
	var b strings.Builder
	b.WriteString("loops:\n")
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		b.WriteString("  " + strings.TrimSpace(line) + "\n")
	}
	b.WriteString("  body:\n")
	b.WriteString(nested(strings.Join(items, ""), 4))
	return b.String()
}

// loop is a for: item of index from 0 to to, around items.
func loop(index, to string, items ...string) string {
	return loopFrom(index, "", to, items...)
}

// loopFrom is a for: item of index from from ("" for 0) to to.
func loopFrom(index, from, to string, items ...string) string {
	head := "- for:\n    index: " + index + "\n"
	if from != "" {
		head += "    from: " + from + "\n"
	}
	return head + "    to: " + to + "\n    body:\n" + nested(strings.Join(items, ""), 6)
}

// stmt is a statement item with the given fields ("reads: ..., writes: ...").
func stmt(fields string) string { return "- stmt: {" + fields + "}\n" }

// nested shifts every line of s right by n spaces.
func nested(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString(pad + line)
		}
	}
	return b.String()
}

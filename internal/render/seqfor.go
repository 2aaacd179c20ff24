package render

import (
	"fmt"
	"strings"
)

// seqFor writes a sequential for (spec/seqfor.go): every team member (or
// lane) runs the whole loop, so barriers in its body are reached by all.
func (n *Node) seqFor() (string, error) {
	body, err := n.Body()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if l != "" {
			l = "  " + l
		}
		lines = append(lines, l)
	}
	return fmt.Sprintf("for (int64_t %s = %s; %s < %s; ++%s) {\n%s\n}", n.Index, n.Begin, n.Index, n.End, n.Index,
		strings.Join(lines, "\n")), nil
}

// guard wraps a lowered atomic update in its condition (atomic_add's if).
func guard(cond, stmt string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stmt), "\n") {
		lines = append(lines, "  "+l)
	}
	return fmt.Sprintf("if (%s) {\n%s\n}", cond, strings.Join(lines, "\n"))
}

package render

import (
	"fmt"
	"strings"
)

// launches writes a mapped kernel's team launches in order (spec.Launches),
// each in a block of its own so that the names a backend's team hook
// declares (league_size, the scratch pointers) do not meet. Each launch is
// ordered after the one before it: the backends' team launches return when
// done or go on one stream in order (pm/device_omptarget.hpp's nowait
// launches depend on one token).
func (n *Node) launches() (string, error) {
	var parts []string
	for i, c := range n.Node.Body {
		child := n.f.node(c, n.Depth+1, n.Kind)
		child.Parent = n
		s, err := child.Render()
		if err != nil {
			return "", err
		}
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if l != "" {
				l = "  " + l
			}
			lines = append(lines, l)
		}
		parts = append(parts, fmt.Sprintf("{  // launch %d of %d\n%s\n}", i+1, len(n.Node.Body), strings.Join(lines, "\n")))
	}
	return strings.Join(parts, "\n"), nil
}

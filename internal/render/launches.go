package render

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/spec"
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

// FirstLaunch reports whether a team starts its kernel's call: a team at
// the top of the tree, or the first launch of a mapped kernel's launches
// (the mapcheck backend chooses a call's iteration order there).
func (n *Node) FirstLaunch() bool {
	p := n.Parent
	return p == nil || p.Kind != spec.Launches || len(p.Node.Body) > 0 && p.Node.Body[0] == n.Node
}

package spec

// The sequential for: a loop every member of a team (or every lane of a team
// thread) runs in full, whose body holds other patterns, e.g. TestSNAP's loop
// over the layers of U, each a team-thread range followed by a team barrier.
// Its children are placed as if they were in the enclosing pattern; the
// renderer writes it as a plain C++ for loop (no backend hook).

func init() {
	Patterns["for"] = "team, team_thread_for"
	nodeFields["for"] = []string{"index", "begin", "end", "body"}
}

// Sequential reports whether the node is a sequential for, lowered without a
// backend hook (as code is).
func (n *Node) Sequential() bool { return n.Kind == "for" }

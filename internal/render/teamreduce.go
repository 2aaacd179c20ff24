package render

import "github.com/portmatrix/portmatrix/internal/spec"

// SumSlot is the team's slot of a team_thread_reduce (spec.TeamSumView).
func (n *Node) SumSlot() string { return spec.TeamSumView + "[0]" }

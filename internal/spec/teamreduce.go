package spec

// Reductions over the threads of a team (Kokkos' parallel_reduce over a
// TeamThreadRange): what a team per column of y = A^T x needs to sum its
// column without a hand-written combine through scratch and a barrier; and
// over the teams of a league (parallel_reduce over a TeamPolicy): a team
// with acc, to which each team adds with league_add (docs/kernels.md).

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// TeamSumView is the team scratch view (one double, level 0, first of the
// team's views) through which the threads of a team combine their sums
// where the backend has no other team-shared memory (OpenMP target).
const TeamSumView = "pm_team_sum"

func init() {
	for k, v := range map[string]string{
		// team_thread_reduce: the team's threads share the range; acc holds
		// the team's sum after it, in every thread and lane.
		"team_thread_reduce":   "team",
		"thread_vector_for":    "team_thread_for, team_thread_reduce",
		"thread_vector_reduce": "team_thread_for, team_thread_reduce",
		"atomic_add":           "range_for, range_reduce, mdrange_for, team_thread_for, team_thread_reduce, thread_vector_for, thread_vector_reduce",
		"for":                  "team, team_thread_for, team_thread_reduce",
		// league_add: the team adds value to the league's sum (its team's
		// acc) once per team; every thread of the team reaches it.
		"league_add": "team",
	} {
		Patterns[k] = v
	}
	nodeFields["team_thread_reduce"] = []string{"index", "begin", "end", "acc", "body"}
	multiDim["team_thread_reduce"] = [2]int{1, 3}
	nodeFields["league_add"] = []string{"value"}
	nodeFields["team"] = append(nodeFields["team"], "acc")
}

// LeagueReduces reports whether the node is a team whose teams' sums meet
// in its acc: the kernel returns that sum (result: double).
func (n *Node) LeagueReduces() bool { return n != nil && n.Kind == "team" && n.Acc != "" }

func parseLeagueAdd(d diag.Decoder, val *yaml.Node, f map[string]*yaml.Node, node *Node) {
	d.Require(val, f, node.Kind, "value")
	node.Value = d.String(f["value"], "value")
}

// checkLeagueAdds refuses a league_add outside a team with acc.
func checkLeagueAdds(d diag.Decoder, k *Kernel) {
	var walk func(n *Node)
	walk = func(n *Node) {
		for _, c := range n.Body {
			if c.Kind == "league_add" && !k.Pattern.LeagueReduces() {
				d.Errs.Add(c.Pos, "league_add needs a team with acc: the league's sum it adds to")
			}
			walk(c)
		}
	}
	walk(k.Pattern)
}

// AddTeamSumView gives a team whose body reduces over its threads the view
// TeamSumView, first at level 0 (so a layer finds it at the start of the
// team's level-0 scratch). The loader calls it once the team's body is parsed; a
// tree built in Go (the mapper) calls it itself.
func (team *Node) AddTeamSumView() {
	if !reducesOverThreads(team) || slices.ContainsFunc(team.Scratch, func(s Scratch) bool { return s.Name == TeamSumView }) {
		return
	}
	team.Scratch = append([]Scratch{{Name: TeamSumView, Type: "double", Size: "1", Level: "0", Pos: team.Pos}}, team.Scratch...)
}

func reducesOverThreads(n *Node) bool {
	for _, c := range n.Body {
		if c.Kind == "team_thread_reduce" || reducesOverThreads(c) {
			return true
		}
	}
	return false
}

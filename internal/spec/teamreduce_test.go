package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// A team that reduces over its threads gets the team's slot as its first
// level-0 scratch view, before the views it declares, and nested vector
// loops are allowed in the reduction's body.
func TestTeamThreadReduceParse(t *testing.T) {
	k, err := parseTeam(t, `  team:
    league: n
    team_size: 4
    vector: 2
    scratch: [{name: tile, size: n}]
    body:
      - team_thread_reduce:
          index: [a, b]
          end: [n, 2]
          acc: s
          body:
            - thread_vector_reduce: {index: c, end: "2", acc: v, body: "v += c;"}
            - code: s += v;
      - team_thread_for: {index: i, end: 1, body: [{atomic_add: {target: "x[0]", value: s}}]}
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"atomic_add", "code", "team_scratch", "team_thread_for", "team_thread_reduce", "thread_vector_reduce"}, k.Kinds())
	require.Len(t, k.Pattern.Scratch, 2)
	assert.Equal(t, Scratch{Name: TeamSumView, Type: "double", Size: "1", Level: "0", Pos: k.Pattern.Pos}, k.Pattern.Scratch[0])
	assert.Equal(t, "tile", k.Pattern.Scratch[1].Name)
	red := k.Pattern.Body[0]
	assert.Equal(t, "s", red.Acc)
	assert.Equal(t, 2, red.Rank())

	// A team without a team-level reduction gets no slot.
	k, err = parseTeam(t, `  team: {league: n, team_size: 1, vector: 1, body: [{team_thread_for: {index: i, end: n, body: "x[i] = 0;"}}]}`)
	require.NoError(t, err)
	assert.Empty(t, k.Pattern.Scratch)
	assert.Equal(t, "team", k.Pattern.Hook())
}

func TestTeamThreadReduceErrors(t *testing.T) {
	cases := []struct{ name, pattern, want string }{
		{"without acc", `  team: {league: n, team_size: 1, vector: 1, body: [{team_thread_reduce: {index: i, end: n, body: ";"}}]}`,
			`k.yaml:12:74: team_thread_reduce needs field "acc": the accumulator its body adds to`},
		{"outside a team", `  range_for: {index: i, end: n, body: [{team_thread_reduce: {index: j, end: n, acc: s, body: ";"}}]}`,
			`k.yaml:12:41: team_thread_reduce cannot appear in range_for (only in team)`},
		{"nested in a team thread loop", `  team: {league: n, team_size: 1, vector: 1, body: [{team_thread_for: {index: i, end: n, body: [{team_thread_reduce: {index: j, end: n, acc: s, body: ";"}}]}}]}`,
			`k.yaml:12:98: team_thread_reduce cannot appear in team_thread_for (only in team)`},
		{"barrier inside", `  team: {league: n, team_size: 1, vector: 1, body: [{team_thread_reduce: {index: i, end: n, acc: s, body: [team_barrier]}}]}`,
			`k.yaml:12:108: team_barrier cannot appear in team_thread_reduce (only in team)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseTeam(t, c.pattern)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

// A team with acc reduces over the league: the kernel returns the sum, and
// league_add, lowered as an atomic add, is allowed only there.
func TestLeagueReduceParse(t *testing.T) {
	var errs diag.List
	src := strings.Replace(teamHead, "tunables:", "result: double\ntunables:", 1) + `  team:
    league: n
    team_size: 4
    vector: 1
    acc: total
    body:
      - team_thread_reduce: {index: j, end: n, acc: s, body: "s += x[j];"}
      - league_add: {value: s}
`
	k := Parse("k.yaml", []byte(src), &errs)
	require.NoError(t, errs.Err())
	assert.True(t, k.Pattern.LeagueReduces())
	assert.Equal(t, "s", k.Pattern.Body[1].Value)
	assert.Equal(t, []string{"atomic_add", "code", "team_scratch", "team_thread_reduce"}, k.Kinds())

	cases := []struct{ name, pattern, want string }{
		{"league_add without acc", `  team: {league: n, team_size: 1, vector: 1, body: [{league_add: {value: "1.0"}}]}`,
			`k.yaml:12:54: league_add needs a team with acc: the league's sum it adds to`},
		{"acc without result", `  team: {league: n, team_size: 1, vector: 1, acc: t, body: [{league_add: {value: "1.0"}}]}`,
			`k.yaml:11:1: range_reduce (or a team with acc) returns its sum: add result: double`},
		{"league_add in a loop", `  team: {league: n, team_size: 1, vector: 1, acc: t, body: [{team_thread_for: {index: i, end: n, body: [{league_add: {value: "1.0"}}]}}]}`,
			`k.yaml:12:106: league_add cannot appear in team_thread_for (only in team)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseTeam(t, c.pattern)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

const teamHead = `kernel: k
size: {name: n, ci: [1], default: [1], gpu: [1]}
args:
  - {name: n, type: int64, value: size}
  - {name: x, type: "double[]", extent: n, intent: out}
tunables: {lvl: 1, big: 2}
reference: ";"
bytes: n
flops: n
tolerance: 1e-9
pattern:
`

func parseTeam(t *testing.T, pattern string) (*Kernel, error) {
	t.Helper()
	var errs diag.List
	k := Parse("k.yaml", []byte(teamHead+pattern), &errs)
	return k, errs.Err()
}

func TestTeamExtensionsParse(t *testing.T) {
	k, err := parseTeam(t, `  team:
    league: n
    team_size: 4
    vector: 1
    scratch:
      - {name: tile, size: n + 2, level: lvl}
      - {name: ids, type: int64, size: "4"}
    body:
      - team_thread_for:
          index: [a, b]
          begin: [-1, 0]
          end: [n, 3]
          body:
            - thread_vector_for: {index: c, end: "2", body: "x[a] = c;"}
            - atomic_add: {target: "x[0]", value: "1.0"}
      - team_barrier
      - team_barrier: {}
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"atomic_add", "code", "team_barrier", "team_scratch", "team_thread_for", "thread_vector_for"}, k.Kinds())
	team := k.Pattern
	require.Len(t, team.Scratch, 2)
	assert.Equal(t, Scratch{Name: "tile", Type: "double", Size: "n + 2", Level: "lvl", Pos: team.Scratch[0].Pos}, team.Scratch[0])
	assert.Equal(t, "0", team.Scratch[1].Level)
	loop := team.Body[0]
	assert.Equal(t, []string{"a", "b"}, loop.Indices)
	assert.Equal(t, []string{"-1", "0"}, loop.Begins)
	assert.Equal(t, []string{"n", "3"}, loop.Ends)
	assert.Equal(t, 2, loop.Rank())
	assert.Equal(t, "x[0]", loop.Body[1].Target)

	k, err = parseTeam(t, `  mdrange_for: {index: [i, j, l], end: [n, n, 2], body: "x[i] = j + l;"}`)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "0", "0"}, k.Pattern.Begins)
	assert.Equal(t, "mdrange_for", k.Pattern.Hook())
}

// Each misuse gives exactly these messages; an unknown field lists only the
// fields valid where it was written.
func TestTeamExtensionErrors(t *testing.T) {
	cases := []struct{ name, pattern, want string }{
		{"unknown field in team", `  team: {league: n, team_size: 1, vector: 1, index: i, body: ";"}`,
			`k.yaml:12:46: unknown field "index" in team (known: acc, body, league, scratch, team_size, vector)`},
		{"unknown field in a loop", `  range_for: {index: i, end: n, league: 2, body: ";"}`,
			`k.yaml:12:33: unknown field "league" in range_for (known: begin, body, end, index)`},
		{"barrier outside a team", `  range_for: {index: i, end: n, body: [team_barrier]}`,
			`k.yaml:12:40: team_barrier cannot appear in range_for (only in team)`},
		{"barrier in a team thread loop", `  team: {league: n, team_size: 1, vector: 1, body: [{team_thread_for: {index: i, end: n, body: [team_barrier]}}]}`,
			`k.yaml:12:97: team_barrier cannot appear in team_thread_for (only in team)`},
		{"atomic at team level", `  team: {league: n, team_size: 1, vector: 1, body: [{atomic_add: {target: "x[0]", value: "1"}}]}`,
			`k.yaml:12:54: atomic_add cannot appear in team (only in range_for, range_reduce, mdrange_for, team_thread_for, team_thread_reduce, thread_vector_for, thread_vector_reduce)`},
		{"atomic without value", `  range_for: {index: i, end: n, body: [{atomic_add: {target: "x[i]"}}]}`,
			`k.yaml:12:53: atomic_add needs field "value"`},
		{"mdrange with one index", `  mdrange_for: {index: i, end: n, body: ";"}`,
			`k.yaml:12:24: mdrange_for takes a list of 2 to 3 indices: [i, j]`},
		{"range_for with two", `  range_for: {index: [i, j], end: [n, n], body: ";"}`,
			`k.yaml:12:22: range_for takes one index; a range over several dimensions is an mdrange_for`},
		{"ends do not match", `  mdrange_for: {index: [i, j], end: [n], body: ";"}`,
			`k.yaml:12:37: end lists 1 expressions for 2 indices`},
		{"four dimensions", `  mdrange_for: {index: [i, j, k, l], end: [n, n, n, n], body: ";"}`,
			`k.yaml:12:24: mdrange_for takes 2 to 3 indices, not 4`},
		{"scratch level", `  team: {league: n, team_size: 1, vector: 1, scratch: [{name: s, size: n, level: 2}, {name: s, size: n, level: nope}, {name: t, size: n, level: big}, {name: u, type: float, size: n}], body: ";"}`,
			strings.Join([]string{
				`k.yaml:12:82: scratch level is 0 (team-shared memory) or 1 (global memory per team), not 2`,
				`k.yaml:12:86: scratch view "s": level "nope" is not a tunable of the kernel`,
				`k.yaml:12:93: scratch view "s" defined twice`,
				`k.yaml:12:119: scratch view "t": tunable big = 2 is not a scratch level (0 or 1)`,
				`k.yaml:12:167: unknown scratch type "float" (known: double, int64)`,
			}, "\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseTeam(t, c.pattern)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

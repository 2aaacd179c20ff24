package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

func parseText(t *testing.T, text string) (*Kernel, error) {
	t.Helper()
	var errs diag.List
	k := Parse("k.yaml", []byte(text), &errs)
	return k, errs.Err()
}

const snapKernel = `kernel: k
size: {name: cells, ci: [1], default: [1], gpu: [10]}
args:
  - {name: S, type: snap, init: {bcc_w: size}}
  - {name: u, type: "double[]", extent: 2 * S.natoms, init: {snap: ulisttot}, intent: in}
  - {name: y, type: "double[]", extent: 2 * S.natoms, init: {zero: true}, intent: inout}
tunables: {t: 4}
reference: ";"
bytes: "1.0"
flops: "1.0"
tolerance: 1e-12
pattern:
  team:
    league: S.natoms
    team_size: t
    vector: "1"
    body:
      - for:
          index: j
          end: "3"
          body:
            - team_thread_for:
                index: s
                end: t
                body:
                  - thread_vector_for:
                      index: e
                      end: j + 1
                      body:
                        - code: "const bool live = e < s;"
                        - atomic_add: {if: live, target: "y[0]", value: "u[e]"}
            - team_barrier
`

func TestSnapArgsSequentialForGuardedAtomic(t *testing.T) {
	k, err := parseText(t, snapKernel)
	require.NoError(t, err)
	assert.Equal(t, "snap", k.Args[0].Type)
	assert.Equal(t, Init{Kind: "bcc_w", Grid: "size"}, k.Args[0].Init)
	assert.Equal(t, Init{Kind: "snap", Stage: "ulisttot"}, k.Args[1].Init)
	assert.Equal(t, "S", k.SnapSource())
	loop := k.Pattern.Body[0]
	require.Equal(t, "for", loop.Kind)
	assert.True(t, loop.Sequential())
	assert.Equal(t, []string{"team_thread_for", "team_barrier"}, []string{loop.Body[0].Kind, loop.Body[1].Kind},
		"the body of a for at team level holds team-level nodes")
	atomic := loop.Body[0].Body[0].Body[1]
	assert.Equal(t, "atomic_add", atomic.Kind)
	assert.Equal(t, "live", atomic.Cond)
	assert.Contains(t, k.Kinds(), "for")
}

func TestSnapErrors(t *testing.T) {
	for name, c := range map[string]struct{ from, to, want string }{
		"snap without bcc_w": {"{name: S, type: snap, init: {bcc_w: size}}", "{name: S, type: snap}",
			`k.yaml:4:5: snap argument "S" needs init: {bcc_w: <cells per side>}`},
		"snap with extent": {"{name: S, type: snap, init: {bcc_w: size}}", "{name: S, type: snap, extent: n, init: {bcc_w: size}}",
			`k.yaml:4:27: snap argument "S" takes no extent`},
		"bcc_w on an array": {"init: {snap: ulisttot}", "init: {bcc_w: size}",
			`k.yaml:5:61: bcc_w initialises a snap argument, not double[] "u"`},
		"unknown stage": {"{snap: ulisttot}", "{snap: ulist}",
			`k.yaml:5:61: unknown SNAP stage "ulist" (known: utot_init, ulisttot, ylist, dulist, dedr, force)`},
		"for at the top": {"  team:\n    league: S.natoms", "  for: {index: j, end: \"3\", body: \";\"}\n  team:\n    league: S.natoms", ""},
		"for in a vector loop": {"                        - code: \"const bool live = e < s;\"",
			"                        - for: {index: q, end: \"2\", body: \";\"}\n                        - code: \"const bool live = e < s;\"",
			"k.yaml:30:27: for cannot appear in thread_vector_for (only in team, team_thread_for, team_thread_reduce)"},
	} {
		t.Run(name, func(t *testing.T) {
			text := replaceOnce(t, snapKernel, c.from, c.to)
			_, err := parseText(t, text)
			require.Error(t, err)
			if c.want != "" {
				assert.Contains(t, err.Error(), c.want)
			}
		})
	}
	_, err := parseText(t, replaceOnce(t, snapKernel, "  - {name: S, type: snap, init: {bcc_w: size}}\n", ""))
	assert.ErrorContains(t, err, `array "u" is filled from a SNAP stage: a snap argument must come before it`)
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	i := indexOf(s, from)
	require.GreaterOrEqual(t, i, 0, "fixture lacks %q", from)
	return s[:i] + to + s[i+len(from):]
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

package mapping

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// twoPhases is a per-element temporary T: phase 1 writes it (the whole
// slice, or the part given by write), phase 2 reads it back into the output
// (another thread's point, so that the phases do not fuse).
func twoPhases(dims, write, read string) string {
	return `loops:
  params: [ne, n, m]
  assume: [ne >= 1, n >= 1, m >= 1]
  arrays: {X: [ne, n, m], Y: [ne, n, m], T: ` + dims + `}
  body:
    - for:
        index: e
        to: ne
        body:
          - for:
              index: i
              to: n
              body:
                - for:
                    index: j
                    to: m
                    body:
                      - stmt: {reads: "X[e][i][j]", writes: "` + write + `", code: ";"}
          - for:
              index: i
              to: n
              body:
                - for:
                    index: j
                    to: m
                    body:
                      - stmt: {reads: "` + read + `", writes: "Y[e][i][j]", code: ";"}
`
}

// lowerWith lowers src as a kernel whose n and m are the given constants
// (m "" leaves it a run-time size) and whose T has the given intent.
func lowerWith(t *testing.T, src, m, intent string) *spec.Kernel {
	t.Helper()
	args := []spec.Arg{{Name: "ne", Type: "int64", Value: "size"}, {Name: "n", Type: "int64", Value: "4"}, {Name: "m", Type: "int64", Value: m},
		{Name: "X", Type: "double[]", Intent: "in"}, {Name: "Y", Type: "double[]", Intent: "out"}, {Name: "T", Type: "double[]", Intent: intent}}
	if m == "" {
		args[2].Value = "size"
	}
	k := &spec.Kernel{Name: "k", Args: args, Loops: parse(t, "k.yaml", []byte(src))}
	var errs diag.List
	Lower(k, gpuModel(t), &errs)
	require.NoError(t, errs.Err())
	return k
}

// The decision and its reason, and the tree: a promoted T is a level-0
// scratch view of its slice, the code's T a pointer shifted by the team's
// offset, so the flat global indices stay valid; a kept T is not in scratch.
func TestPromoteToTeamScratch(t *testing.T) {
	cases := []struct {
		name, dims, write, read, m, intent string
		want                               string
	}{
		{"fits", "[ne, n, m]", "T[e][i][j]", "T[e][n-1-i][j]", "8", "scratch",
			"promote T to level-0 team scratch pm_team_T: written in phase 1, read in phase 2 of the same iteration of e; its part per iteration, T[e][0:n][0:m], is 32 doubles = 256 bytes per team; the team's scratch 256 bytes <= h100-sxm5-80gb's 49152 bytes"},
		{"too big", "[ne, n, m]", "T[e][i][j]", "T[e][n-1-i][j]", "2000", "scratch",
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; too big: 64000 bytes per team, with the 0 bytes promoted before it, over h100-sxm5-80gb's 49152 bytes"},
		{"an output", "[ne, n, m]", "T[e][i][j]", "T[e][n-1-i][j]", "8", "inout",
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; escapes the league iteration: argument T is intent inout"},
		{"another team's", "[n, ne, m]", "T[i][e][j]", "T[n-1-i][e][j]", "8", "scratch",
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; read by another team: the first subscript of T[i][e][j] (k.yaml:"},
		{"read before written", "[ne, n, m]", "T[e][i][0]", "T[e][n-1-i][j]", "8", "scratch",
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; escapes the league iteration: T[e][n-1-i][j] (k.yaml:"},
		{"run-time size", "[ne, n, m]", "T[e][i][j]", "T[e][n-1-i][j]", "", "scratch",
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; its part per iteration of e has no constant size: extent m uses m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := lowerWith(t, twoPhases(c.dims, c.write, c.read), c.m, c.intent)
			assert.Contains(t, k.Mapping, c.want)
			promoted := strings.HasPrefix(c.want, "promote")
			if promoted {
				require.Len(t, k.Pattern.Scratch, 1)
				assert.Equal(t, spec.Scratch{Name: "pm_team_T", Type: "double", Size: "(n) * (m)", Level: "0", Pos: k.Pattern.Scratch[0].Pos}, k.Pattern.Scratch[0])
				assert.Equal(t, "double* const T = pm_team_T - e * ((n) * (m));", k.Pattern.Body[1].Code)
			} else {
				assert.Empty(t, k.Pattern.Scratch)
				assert.NotContains(t, k.Pattern.Body[1].Code, "pm_team_T")
			}
			// the barrier the phases need is there either way
			assert.Contains(t, shape(k.Pattern), "team_barrier")
		})
	}
}

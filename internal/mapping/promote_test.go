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
	return program(`params: [ne, n, m]
assume: [ne >= 1, n >= 1, m >= 1]
arrays: {X: [ne, n, m], Y: [ne, n, m], T: `+dims+`}`,
		loop("e", "ne",
			loop("i", "n", loop("j", "m", stmt(`reads: "X[e][i][j]", writes: "`+write+`", code: ";"`))),
			loop("i", "n", loop("j", "m", stmt(`reads: "`+read+`", writes: "Y[e][i][j]", code: ";"`)))))
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
// scratch view of its slice, the code's T a pm::TeamSlice of it with the
// team's offset, so the flat global indices stay valid; a kept T is not in
// scratch.
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
				assert.Equal(t, "const pm::TeamSlice<double> T{pm_team_T, e * ((n) * (m))};", k.Pattern.Body[1].Code)
			} else {
				assert.Empty(t, k.Pattern.Scratch)
				assert.NotContains(t, k.Pattern.Body[1].Code, "pm_team_T")
			}
			// the barrier the phases need is there either way
			assert.Contains(t, shape(k.Pattern), "team_barrier")
		})
	}
}

// transposed is a phased kernel whose first phase reads X at each point and
// its transpose (each element read by two threads) into the temporary T,
// whose second sums T along a row into Y (each element of Y written once,
// then updated n times); promote: is the loops' option, "" for none.
func transposed(promote, write string) string {
	opt := ""
	if promote != "" {
		opt = "\npromote: " + promote
	}
	return program(`params: [ne, n, m]
assume: [ne >= 1, n >= 1, m >= 1]`+opt+`
arrays: {X: [ne, n, n], Y: [ne, n, m], T: [ne, n, n]}`,
		loop("e", "ne",
			loop("i", "n", loop("j", "n", stmt(`reads: "X[e][i][j], X[e][j][i]", writes: "T[e][i][j]", code: ";"`))),
			loop("i", "n", loop("j", "m",
				stmt(`writes: "`+write+`", code: ";"`),
				loop("l", "n", stmt(`reads: "T[e][l][i]", accumulate: "Y[e][i][j]", code: ";"`))))))
}

// Inputs reused by the team's threads and outputs updated more than once
// go to scratch, within the model's shared memory, as promote: allows; an
// input each thread reads alone, an output written partly or an inout
// argument stays global.
func TestPromoteInputsAndOutputs(t *testing.T) {
	cases := []struct {
		name, promote, write, m, yIntent string
		want                             []string
	}{
		{"all", "", "Y[e][i][j]", "8", "out", []string{
			"promote Y (output) to level-0 team scratch pm_team_Y: 288 reads and writes of 32 elements, 9 per element; its part per iteration of e, Y[e][0:4][0:8], is 32 doubles = 256 bytes per team; the team's scratch 384 bytes",
			"promote X (read-only input) to level-0 team scratch pm_team_X: 32 reads of 16 elements, an element by up to 2 (phase, thread, lane) instances of the team; its part per iteration of e, X[e][0:4][0:4], is 16 doubles = 128 bytes per team; the team's scratch 512 bytes",
		}},
		{"temporaries only", "[temporaries]", "Y[e][i][j]", "8", "out", []string{
			"keep Y global (output): the loops' promote: leaves outputs out",
			"keep X global (read-only input): the loops' promote: leaves inputs out",
		}},
		{"none", "[]", "Y[e][i][j]", "8", "out", []string{
			"keep T global: written in phase 1, read in phase 2 of the same iteration of e; the loops' promote: leaves temporaries out",
		}},
		{"output too big", "", "Y[e][i][j]", "6000", "out", []string{
			"keep Y global (output): 216000 reads and writes of 24000 elements, 9 per element; too big: 192000 bytes per team, with the 128 bytes promoted before it",
			"promote X (read-only input)",
		}},
		{"output written in part", "", "Y[e][0][j]", "8", "out", []string{
			"keep Y global (output): ",
			"reads an element before the iteration writes it: it would need a copy in too",
		}},
		{"inout", "", "Y[e][i][j]", "8", "inout", []string{
			"keep Y global (output): argument Y is intent inout",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []spec.Arg{{Name: "ne", Type: "int64", Value: "size"}, {Name: "n", Type: "int64", Value: "4"}, {Name: "m", Type: "int64", Value: c.m},
				{Name: "X", Type: "double[]", Intent: "in"}, {Name: "Y", Type: "double[]", Intent: c.yIntent}, {Name: "T", Type: "double[]", Intent: "scratch"}}
			k := &spec.Kernel{Name: "k", Args: args, Loops: parse(t, "k.yaml", []byte(transposed(c.promote, c.write)))}
			var errs diag.List
			Lower(k, gpuModel(t), &errs)
			require.NoError(t, errs.Err())
			for _, w := range c.want {
				assert.Contains(t, k.Mapping, w)
			}
			var views []string
			for _, s := range k.Pattern.Scratch {
				views = append(views, s.Name)
			}
			tree := shape(k.Pattern)
			var code strings.Builder
			PrintTree(&code, k.Pattern, "")
			if strings.Contains(k.Mapping, "promote X") {
				assert.Contains(t, views, "pm_team_X")
				assert.Contains(t, code.String(), "pm_team_X[pm_row * 4 + pm_col] = X[e * n * n + pm_row * 4 + pm_col];")
				assert.Contains(t, code.String(), "const pm::TeamSlice<const double> X{pm_team_X, e * n * n};")
				// the copy in, its barrier, then the first phase
				assert.Contains(t, tree, "team_thread_for:pm_row thread_vector_for:pm_col [code] team_barrier [code]")
			} else {
				assert.NotContains(t, views, "pm_team_X")
			}
			if strings.Contains(k.Mapping, "promote Y") {
				assert.Contains(t, code.String(), "double* const pm_global_Y = Y;")
				assert.Contains(t, code.String(), "const pm::TeamSlice<double> Y{pm_team_Y, e * n * m};")
				assert.Contains(t, code.String(), "pm_global_Y[e * n * m + pm_row * 8 + pm_col] = pm_team_Y[pm_row * 8 + pm_col];")
				// the last phase, a barrier, then the copy out
				assert.True(t, strings.HasSuffix(tree, "team_barrier team_thread_for:pm_row thread_vector_for:pm_col [code]"), tree)
			} else {
				assert.NotContains(t, views, "pm_team_Y")
			}
		})
	}
}

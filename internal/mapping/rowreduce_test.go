package mapping

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// The shipped row sums: the reduction over j, stride-1 in the matrix, runs
// on the vector lanes below the band, the rows over league and team
// threads, one lane of each team thread storing the sum; atx_mapped, whose
// reduction index is the matrix's row (stride n), keeps the columns on the
// lanes and the sum sequential in each.
func TestRowReduceShipped(t *testing.T) {
	var out bytes.Buffer
	for _, name := range []string{"gemv_mapped", "trmv_mapped", "atx_mapped"} {
		k := shipped(t)[name]
		require.NotNil(t, k, name)
		out.WriteString(k.Mapping)
		PrintTree(&out, k.Pattern, "  ")
	}
	s := out.String()
	for _, want := range []string{
		"loop i -> league+team: parallel; the outermost parallel loop of the band; no third parallel loop, and the vector loop reduces: split over league and team threads",
		"loop j -> vector: parallel with reduction, below the band; stride-1 score 3, above the band's 1 over its statements: on the vector lanes (thread_vector_reduce",
		"one lane of each team thread stores y[i] = pm_sum once (the value of zero (",
		"thread_vector_reduce: j in [0, m), acc pm_sum\n        | pm_sum += A[i * m + j] * x[j];\n      thread_vector_for: pm_one in [0, 1)\n        | y[i] = pm_sum;",
		"thread_vector_reduce: j in [0, (i + 1)), acc pm_sum\n        | pm_sum += L[i * n + j] * x[j];",
		"loop j -> sequential: parallel with reduction; stride-1 score 1, not the vector loop's (i: 3)",
		"loop i -> league+team+vector: parallel; stride-1 score 3",
	} {
		assert.Contains(t, s, want)
	}
	assert.NotContains(t, s, "atomic_add: y[i]", "a team thread owns its row: no atomic")
}

var shippedOnce = sync.OnceValues(func() ([]*spec.Kernel, error) { return LoadKernels("../..") })

// shipped is the project's kernels, loaded and lowered once for the tests.
func shipped(t *testing.T) map[string]*spec.Kernel {
	t.Helper()
	kernels, err := shippedOnce()
	require.NoError(t, err)
	out := map[string]*spec.Kernel{}
	for _, k := range kernels {
		out[k.Name] = k
	}
	return out
}

// explained is what the explain stage writes of a shipped kernel
// (TestExplainStage runs the stage itself), from the kernels loaded once.
func explained(t *testing.T, name string) string {
	t.Helper()
	k := shipped(t)[name]
	require.NotNil(t, k, name)
	var out strings.Builder
	explainKernel(&out, k)
	return out.String()
}

// rowNest is a row loop i around a statement before, the sum over j and
// a statement after, with the accesses given.
func rowNest(before, sum, after string) string {
	return fmt.Sprintf(`loops:
  params: [n, m]
  assume: [n >= 1, m >= 1]
  arrays: {A: [n, m], x: [m], y: [n], t: [n], z: [n]}
  body:
    - for:
        index: i
        to: n
        body:
%s          - for:
              index: j
              to: m
              body:
                - stmt: {name: sum, %s}
%s`, before, sum, after)
}

// Each case: the levels of i and j, and the reason j's decision gives.
func TestRowReduceDecisions(t *testing.T) {
	zero := "          - stmt: {name: zero, writes: \"y[i]\", value: \"0\"}\n"
	sum := `reads: "A[i][j], x[j]", accumulate: "y[i]", term: "A[i * m + j] * x[j]"`
	for _, c := range []struct {
		name, src, levels, why string
	}{
		{"gemv", rowNest(zero, sum, ""), "i:league+team j:vector", "stride-1 score 3, above the band's 1 over its statements"},
		{"scaled after", rowNest(zero, sum, "          - stmt: {name: scale, reads: \"z[i]\", accumulate: \"y[i]\", op: \"*\", term: \"z[i]\"}\n"),
			"i:league+team j:vector", "on the vector lanes"},
		{"a temporary read by the lanes", rowNest("          - stmt: {name: tmp, writes: \"t[i]\", value: \"1\"}\n", `reads: "A[i][j], t[i]", accumulate: "y[i]", term: "A[i * m + j] * t[i]"`, ""),
			"i:league+team+vector j:seq", "t[i] (random.yaml:"},
		{"a temporary written after", rowNest(zero, `reads: "A[i][j], t[i]", accumulate: "y[i]", term: "A[i * m + j] * t[i]"`, "          - stmt: {name: tmp, writes: \"t[i]\", value: \"1\"}\n"),
			"i:league+team+vector j:seq", "reads an array the statements around the loop write"},
		{"column sum (stride n)", rowNest(zero, `reads: "A[j][i], x[j]", accumulate: "y[i]", term: "A[j * n + i] * x[j]"`, ""),
			"i:league+team+vector j:seq", "stride-1 score 1, not above the band's 3 over its statements"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := parse(t, "random.yaml", []byte(c.src))
			res := depend.Analyze(p)
			nests := Map(res)
			assert.Equal(t, c.levels, levels(nests))
			var b strings.Builder
			Explain(&b, nests)
			assert.Contains(t, b.String(), c.why)
			for _, size := range loopnesttest.Sizes(len(p.Params)) {
				params := map[string]int64{"n": size[0], "m": size[1]}
				if p.Holds(params) {
					require.NoError(t, checkRaces(p, res, nests, params))
				}
			}
		})
	}
}

// A batch of row sums: the band's two loops take the league and the team,
// the sum the lanes; a statement before the loop that is not the target's
// value: and one after run once per team thread, in one lane, around the
// reduction, whose sum is added to the target (no atomic).
func TestRowReduceLowered(t *testing.T) {
	src := program(`params: [b, n, m]
arrays: {A: [b, n, m], x: [b, m], y: [b, n], c: [b, n]}`,
		loop("k", "b", loop("i", "n",
			stmt(`name: start, reads: "c[k][i]", writes: "y[k][i]", code: "y[k * n + i] = c[k * n + i];"`),
			loop("j", "m", stmt(`name: sum, reads: "A[k][i][j], x[k][j]", accumulate: "y[k][i]", term: "A[(k * n + i) * m + j] * x[k * m + j]"`)),
			stmt(`name: scale, reads: "c[k][i]", accumulate: "y[k][i]", op: "*", term: "c[k * n + i]"`))))
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, "team [code] team_thread_for:i thread_vector_for:pm_one [code] thread_vector_reduce:j [code] thread_vector_for:pm_one [code]", shape(k.Pattern))
	var b bytes.Buffer
	PrintTree(&b, k.Pattern, "")
	for _, want := range []string{
		"team: league b, team_size map_team_size, vector map_vector_size",
		"| y[k * n + i] = c[k * n + i];",
		"| pm_sum += A[(k * n + i) * m + j] * x[k * m + j];",
		"| y[k * n + i] += pm_sum;\n      | y[k * n + i] *= c[k * n + i];",
	} {
		assert.Contains(t, b.String(), want)
	}
	assert.Contains(t, k.Mapping, "loop k -> league")
	assert.Contains(t, k.Mapping, "loop i -> team")
	assert.Contains(t, k.Mapping, "one lane of each team thread runs the statements before it, then adds the sum to y[k * n + i], then the statements after it")
}

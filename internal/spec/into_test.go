package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// parseInto parses teamHead with an input array y, a scalar slot and the
// given result line, over pattern.
func parseInto(t *testing.T, result, pattern string) (*Kernel, error) {
	t.Helper()
	head := strings.Replace(teamHead, "tunables:", `  - {name: y, type: "double[]", extent: n, init: {zero: true}, intent: in}
  - {name: slot, type: int64, value: "0"}
`+result+"tunables:", 1)
	var errs diag.List
	k := Parse("k.yaml", []byte(head+pattern), &errs)
	return k, errs.Err()
}

// A range_reduce with into keeps its sum on the device: the kernel returns
// nothing, and the backends lower it by its own hook.
func TestRangeReduceIntoParse(t *testing.T) {
	k, err := parseInto(t, "", `  range_reduce: {index: i, end: n, acc: s, into: "x[slot]", body: "s += y[i];"}
`)
	require.NoError(t, err)
	assert.Equal(t, "", k.Result)
	assert.Equal(t, IntoHook, k.Pattern.Hook())
	assert.Equal(t, []string{"code", IntoHook}, k.Kinds())
	array, index := k.Pattern.IntoArray()
	assert.Equal(t, [2]string{"x", "slot"}, [2]string{array, index})

	// Without into it is the reduction that returns its sum.
	k, err = parseInto(t, "result: double\n", `  range_reduce: {index: i, end: n, acc: s, body: "s += y[i];"}
`)
	require.NoError(t, err)
	assert.Equal(t, "range_reduce", k.Pattern.Hook())
}

func TestRangeReduceIntoErrors(t *testing.T) {
	cases := []struct{ name, result, pattern, want string }{
		{"with result", "result: double\n", `  range_reduce: {index: i, end: n, acc: s, into: "x[0]", body: "s += y[i];"}`,
			`k.yaml:15:3: a range_reduce with into stores its sum in x[0] on the device and returns nothing: drop result`},
		{"not an element", "", `  range_reduce: {index: i, end: n, acc: s, into: x, body: "s += y[i];"}`,
			`k.yaml:14:3: into "x" must name an element of a double[] argument, as s[0] or s[slot]`},
		{"an input", "", `  range_reduce: {index: i, end: n, acc: s, into: "y[0]", body: "s += y[i];"}`,
			`k.yaml:14:3: into "y[0]": y must be a double[] argument the kernel writes (intent out, inout or scratch), not double[] with intent in`},
		{"unknown array", "", `  range_reduce: {index: i, end: n, acc: s, into: "z[0]", body: "s += y[i];"}`,
			`k.yaml:14:3: into "z[0]": no argument z`},
		{"in a sequence", "result: double\n", `  sequence: {body: [{range_reduce: {index: i, end: n, acc: s, into: "x[0]", body: "s += y[i];"}}]}`,
			`into is for a kernel's top-level range_reduce (its sum stays in device memory), not one in a sequence`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseInto(t, c.result, c.pattern)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "result needs a range_reduce")
		})
	}
}

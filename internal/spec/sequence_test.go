package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

const seqHead = `size: {name: n, ci: [1], default: [1], gpu: [1]}
args: [{name: n, type: int64, value: size}, {name: x, type: "double[]", extent: n, intent: out}]
reference: ";"
bytes: n
flops: n
tolerance: 2 * eps
`

func TestShippedSequences(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	byName := ByName(ks)
	p := byName["pressure_calc"].Pattern
	require.Equal(t, "sequence", p.Kind)
	assert.True(t, p.Seq.Nowait)
	assert.Len(t, p.Body, 2)
	assert.False(t, byName["pressure_calc_alt"].Pattern.Seq.Nowait)
	assert.Equal(t, []string{"code", "indexset_for", "sequence"}, byName["del_dot_vec_2d"].Kinds())
	d := byName["del_dot_vec_2d"].Pattern.Body[1]
	assert.Equal(t, Sequence{Segment: "s", Segments: "rows"}, d.Seq)
	assert.Equal(t, "(2 + s) * jp + 2", d.Begin)
	assert.True(t, EndsInReduce(byName["trap_int"].Pattern))
	assert.Equal(t, "double", byName["trap_int"].Result)
}

func TestBadSequences(t *testing.T) {
	cases := []struct{ name, pattern, want string }{
		{"empty", `{sequence: {body: [{code: ";"}]}}`,
			`empty.yaml:8:28: a sequence needs at least one loop`},
		{"team", `{sequence: {body: [{team: {league: 1, team_size: 1, vector: 1, body: ";"}}]}}`,
			`team.yaml:8:30: team cannot appear in sequence (only in top)`},
		{"reducefirst", `{sequence: {body: [{range_reduce: {index: i, end: n, acc: s, body: ";"}}, {range_for: {index: i, end: n, body: ";"}}]}}`,
			`reducefirst.yaml:8:1: result needs a range_reduce (or a team with acc) at the top` + "\n" +
				`reducefirst.yaml:9:29: a range_reduce can only end a sequence (the kernel returns its sum)`},
		{"nowaitreduce", `{sequence: {nowait: true, body: [{range_reduce: {index: i, end: n, acc: s, body: ";"}}]}}`,
			`nowaitreduce.yaml:9:43: a nowait sequence cannot end in a range_reduce`},
		{"scalarbody", `{sequence: {body: "x[0] = 1;"}}`,
			`scalarbody.yaml:8:28: a sequence's body is a list of loops (range_for, indexset_for) and code`},
		{"outside", `{indexset_for: {index: i, segment: s, segments: 1, begin: 0, end: n, body: ";"}}`,
			`outside.yaml:8:11: indexset_for cannot appear in top (only in sequence)`},
		{"segment", `{sequence: {body: [{indexset_for: {index: i, segment: i, segments: 1, begin: 0, body: ";"}}]}}`,
			`segment.yaml:8:44: indexset_for needs field "end"`},
		{"sameindex", `{sequence: {body: [{indexset_for: {index: i, segment: i, segments: 1, begin: 0, end: n, body: ";"}}]}}`,
			`sameindex.yaml:8:64: the segment variable and the index must differ`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "kernel: " + c.name + "\n" + seqHead + "result: double\npattern: " + c.pattern + "\n"
			if c.name != "reducefirst" && c.name != "nowaitreduce" {
				src = "kernel: " + c.name + "\n" + seqHead + "pattern: " + c.pattern + "\n"
			}
			var errs diag.List
			Parse(c.name+".yaml", []byte(src), &errs)
			require.Error(t, errs.Err())
			assert.Equal(t, c.want, errs.Err().Error())
		})
	}
}

package mapping

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// chain is a producer and two consumers over the same points: b from a, c
// from b's two neighbours (READ), d from c and b at the same point.
func chain(read string) string {
	return program(`params: [n]
assume: [n >= 3]
arrays: {a: [n], b: [n], c: [n], d: [n]}`,
		loopFrom("i", "1", "n - 1", stmt(`name: square, reads: "a[i]", writes: "b[i]", value: "a[i] * a[i]"`)),
		loopFrom("i", "1", "n - 1", stmt(`name: mean, reads: "`+read+`", writes: "c[i]", value: "0.5 * (b[i - 1] + b[i + 1])"`)),
		loopFrom("i", "1", "n - 1", stmt(`name: diff, reads: "c[i], b[i]", writes: "d[i]", value: "c[i] - b[i]"`)))
}

// evaluate runs p sequentially on symbolic values: every element starts
// as a hash of its name, and each statement instance writes a hash of its
// statement and the values it reads. Two programs that leave the same
// memory compute the same for any statements with those accesses.
func evaluate(p *loopnest.Program, params map[string]int64) map[string]uint64 {
	mem := map[string]uint64{}
	value := func(el string) uint64 {
		if v, ok := mem[el]; ok {
			return v
		}
		h := fnv.New64a()
		h.Write([]byte(el))
		return h.Sum64()
	}
	p.Walk(params, func(in loopnest.Instance) {
		h := fnv.New64a()
		h.Write([]byte(in.Stmt.Name))
		for _, a := range in.Stmt.Accesses {
			if !a.Write || a.Accum {
				fmt.Fprint(h, value(a.Array.Name+fmt.Sprint(a.Address(params, in.Iter))), ";")
			}
		}
		v := h.Sum64()
		for _, a := range in.Stmt.Accesses {
			if a.Write {
				mem[a.Array.Name+fmt.Sprint(a.Address(params, in.Iter))] = v
			}
		}
	})
	return mem
}

// A kernel of three top-level nests, refused before as more than one
// outermost loop, lowers: the stencil read keeps the consumer a launch of
// its own (fusing would read b[i+1] before it is written; the shift that
// would make it legal is named, but the fused loop would carry the other
// read's dependence), the last nest fuses with it. Each launch
// is the tree of its nest alone; explain gives the dependences between
// every pair of nests and the decision for each adjacent pair.
func TestNestsLowerAsLaunches(t *testing.T) {
	k, err := lower(t, chain("b[i-1], b[i+1]"))
	require.NoError(t, err)
	require.Equal(t, spec.Launches, k.Pattern.Kind)
	require.Len(t, k.Pattern.Body, 2)
	assert.Equal(t, "launches team [code] team_thread_for:i_t [code] thread_vector_for:i_v [code] team [code] team_thread_for:i_t [code] thread_vector_for:i_v [code]", shape(k.Pattern))
	var tree bytes.Buffer
	PrintTree(&tree, k.Pattern.Body[1], "")
	assert.Contains(t, tree.String(), "| c[i] = 0.5 * (b[i - 1] + b[i + 1]);\n      | d[i] = c[i] - b[i];", "the consumers fused: one lane runs both")
	for _, want := range []string{
		"kernel of 3 top-level loop nests: i#1 (k.yaml:7:9) i#2 (k.yaml:13:9) i#3 (k.yaml:19:9)",
		"    i#1 -> i#2: 2 dependences\n      flow write b[i] (square, k.yaml:11:58) -> read b[i-1] (mean, k.yaml:17:40), loop-independent",
		"    i#1 -> i#3: 1 dependence",
		"  i#1 and i#2: separate launches, in order: fusing i#1 and i#2 is illegal: 1 dependence would run backward (flow write b[i] (square, k.yaml:11:58) -> read b[i+1] (mean, k.yaml:17:48), loops (i#1) direction (>) distance (-1)); a shift of 1 (i#2's iteration v run with i#1's v+1) would make it legal, but the dependences between them have distances -1 and 1 on the fused loop, so no one shift makes them all loop-independent: the fused loop would carry flow write b[i] (square, k.yaml:11:58) -> read b[i-1] (mean, k.yaml:17:40), loops (i#1) direction (<) distance (2) and could not run in parallel",
		"  i#2 and i#3: one launch: fusing is legal with the same bounds",
		"launch 2 of 2: nest i#2 (k.yaml:13:9), fused from i#2, i#3",
	} {
		assert.Contains(t, k.Mapping, want)
	}
	assert.Equal(t, int64(4), tunable(k, TeamTunable))
	assert.Equal(t, int64(32), tunable(k, VectorTunable))
	assert.Len(t, k.Tunables, 2, "one pair of mapper tunables")

	// The fusion the mapper refused is wrong: forced, it reorders a flow
	// dependence (the enumeration check catches it) and computes another
	// answer; the fusion it made keeps every order and the answer.
	p := parse(t, "k.yaml", []byte(chain("b[i-1], b[i+1]")))
	sizes := []map[string]int64{{"n": 3}, {"n": 4}, {"n": 7}}
	forced := fuseNests(p, p.Body[0].Loop, p.Body[1].Loop, 1)
	assert.ErrorContains(t, sameDependences(p, forced.p, sizes), "fusion reorders")
	assert.NotEqual(t, evaluate(p, sizes[2]), evaluate(forced.p, sizes[2]), "the forced fusion computes another answer")
	made := fuseNests(p, p.Body[1].Loop, p.Body[2].Loop, 1)
	require.NoError(t, sameDependences(p, made.p, sizes))
	assert.Equal(t, evaluate(p, sizes[2]), evaluate(made.p, sizes[2]))

	// Read at the same point, the producer fuses too: one launch, no
	// launches node.
	k, err = lower(t, chain("b[i]"))
	require.NoError(t, err)
	assert.Equal(t, "team", k.Pattern.Kind)
	assert.Contains(t, k.Mapping, "one launch: nest i#1 (k.yaml:7:9), fused from i#1, i#2, i#3")
}

// Nests whose outer loops fuse but whose second nest reads other points of
// the first's row become one launch, the fused loop on the league and the
// nests phases with a team barrier between them; bounds that differ fuse
// with a guard on the shorter nest's body.
func TestNestsFuseWithBarrier(t *testing.T) {
	src := program(`params: [n, m]
assume: [n >= 1, m >= 1]
arrays: {A: [n, m], B: [n, m], C: [n, m]}`,
		loop("e", "n", loop("i", "m", stmt(`name: produce, reads: "A[e][i]", writes: "B[e][i]", value: "2 * A[e * m + i]"`))),
		loop("e", "n", loop("i", "m", stmt(`name: reverse, reads: "B[e][m-1-i]", writes: "C[e][i]", value: "B[e * m + m - 1 - i]"`))))
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, "team [code] team_thread_for:pm_t thread_vector_for:i [code] team_barrier team_thread_for:pm_t thread_vector_for:i [code]", shape(k.Pattern))
	assert.Contains(t, k.Mapping, "e#1 and e#2: one launch: fusing is legal with the same bounds (no dependence between them runs backward) and the fused nest runs as many loops in parallel as each alone; e#1 on the league, a team per iteration, the nests phases of the team with a team barrier where a dependence crosses them (flow write B[e][i] (produce, k.yaml:14:68) -> read B[e][m-1-i] (reverse, k.yaml:23:49)")
	p := parse(t, "k.yaml", []byte(src))
	fused := fuseNests(p, p.Body[0].Loop, p.Body[1].Loop, 1)
	require.NoError(t, sameDependences(p, fused.p, []map[string]int64{{"n": 2, "m": 3}, {"n": 3, "m": 4}}))

	// Bounds that differ fuse too, the first nest's phase under a guard.
	short := strings.Replace(src, "index: e\n        to: n", "index: e\n        to: n - 1", 1)
	k, err = lower(t, short)
	require.NoError(t, err)
	assert.Equal(t, "team [code] team_thread_for:pm_t thread_vector_for:i [code] team_barrier team_thread_for:pm_t thread_vector_for:i [code]", shape(k.Pattern))
	assert.Contains(t, k.Mapping, "e#1 and e#2: one launch: fusing is legal (no dependence between them runs backward) and keeps the loops parallel; their bounds differ: the fused loop runs e from 0 to n, e#1's body where e < (n - 1), e#2's in every iteration; e#1 on the league")
	var tree bytes.Buffer
	PrintTree(&tree, k.Pattern, "")
	assert.Contains(t, tree.String(), "| if (e < (n - 1)) {\n")
	p = parse(t, "k.yaml", []byte(short))
	r, err := unionRange(p.Body[0].Loop, p.Body[1].Loop, 0)
	require.NoError(t, err)
	guarded, err := shiftedFusion(p, p.Body[0].Loop, p.Body[1].Loop, 0, r, 1)
	require.NoError(t, err)
	require.NoError(t, sameOrder(p, guarded.p, []map[string]int64{{"n": 2, "m": 3}, {"n": 3, "m": 4}}))
}

// A statement outside every loop is refused at its position; a nest that
// cannot be lowered refuses the kernel at the nest.
func TestNestsRefused(t *testing.T) {
	src := program(`params: [n]
arrays: {a: [n], s: []}`,
		loop("i", "n", stmt(`reads: "a[i]", writes: "a[i]", code: ";"`)),
		stmt(`reads: "a[0]", writes: "s", code: ";"`))
	_, err := lower(t, src)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "k.yaml:10:13: loops: kernel k: statement S2 is outside every loop")

	src = program(`params: [n, T]
assume: [n >= 3, T >= 1]
arrays: {a: [n], A: [T, n]}`,
		loop("i", "n", stmt(`reads: "a[i]", writes: "a[i]", code: ";"`)),
		loopFrom("t", "1", "T", loopFrom("i", "1", "n - 1", stmt(`reads: "A[t-1][i-1], A[t-1][i+1]", writes: "A[t][i]", code: ";"`))))
	_, err = lower(t, src)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "k.yaml:12:9: loops: kernel k: nest t: loop t (k.yaml:12:9) encloses the mapped loops sequentially")
}

// fusionShift is the largest distance a preventing dependence runs back.
func TestFusionShift(t *testing.T) {
	p := parse(t, "k.yaml", []byte(chain("b[i-1], b[i+1]")))
	r := depend.Analyze(p)
	s, ok := fusionShift(r.Fusions[0])
	assert.True(t, ok)
	assert.Equal(t, int64(1), s)
	p = parse(t, "k.yaml", []byte(strings.Replace(strings.Replace(chain("b[i-1], b[i+1]"), "b[i+1]", "b[i+2]", 1), "to: n - 1", "to: n - 2", 1)))
	r = depend.Analyze(p)
	s, ok = fusionShift(r.Fusions[0])
	assert.True(t, ok)
	assert.Equal(t, int64(2), s)
}

package mapping

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// instanceKey names a statement instance by the statement's position and
// the elements it touches, which a shift leaves as they were (its
// iteration changes).
func instanceKey(params map[string]int64, in loopnest.Instance) string {
	var b strings.Builder
	fmt.Fprint(&b, in.Stmt.Pos)
	for _, a := range in.Stmt.Accesses {
		fmt.Fprint(&b, " ", a.Array.Name, a.Address(params, in.Iter))
	}
	return b.String()
}

// sameOrder is sameDependences for programs whose iterations differ (a
// fusion with a shift): the same instances, and every pair touching one
// element (one writing) in the same order.
func sameOrder(p, fused *loopnest.Program, sizes []map[string]int64) error {
	for _, params := range sizes {
		rank := func(q *loopnest.Program) map[string]int {
			out := map[string]int{}
			q.Walk(params, func(in loopnest.Instance) { out[instanceKey(params, in)] = len(out) })
			return out
		}
		before, after := rank(p), rank(fused)
		if len(before) != len(after) {
			return fmt.Errorf("%v: %d instances, fused %d", params, len(before), len(after))
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				return fmt.Errorf("%v: instance %s missing from the fused program", params, k)
			}
		}
		type touch struct {
			key   string
			write bool
		}
		byElem := map[string][]touch{}
		p.Walk(params, func(in loopnest.Instance) {
			for _, a := range in.Stmt.Accesses {
				el := a.Array.Name + fmt.Sprint(a.Address(params, in.Iter))
				byElem[el] = append(byElem[el], touch{instanceKey(params, in), a.Write})
			}
		})
		for el, ts := range byElem {
			for i, x := range ts {
				for _, y := range ts[i+1:] {
					if (x.write || y.write) && (before[x.key] < before[y.key]) != (after[x.key] < after[y.key]) {
						return fmt.Errorf("%v: fusion reorders %s and %s on %s", params, x.key, y.key, el)
					}
				}
			}
		}
	}
	return nil
}

// evaluateReversed is evaluate with the iterations of the outer loop of
// every top-level nest run last to first, as the mapcheck strategies run a
// parallel loop: a program whose outer loops carry no dependence leaves
// the same memory as in order.
func evaluateReversed(p *loopnest.Program, params map[string]int64) map[string]uint64 {
	type inst struct {
		s    *loopnest.Stmt
		iter []int64
	}
	var groups [][]inst // per top-level iteration, in order
	var top *loopnest.Loop
	last := int64(-1 << 62)
	p.Walk(params, func(in loopnest.Instance) {
		if in.Stmt.Loops[0] != top || in.Iter[0] != last {
			groups = append(groups, nil)
			top, last = in.Stmt.Loops[0], in.Iter[0]
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], inst{in.Stmt, slices.Clone(in.Iter)})
	})
	// reverse the groups of each nest
	var order []inst
	for i := 0; i < len(groups); {
		j := i
		for j < len(groups) && groups[j][0].s.Loops[0] == groups[i][0].s.Loops[0] {
			j++
		}
		for g := j - 1; g >= i; g-- {
			order = append(order, groups[g]...)
		}
		i = j
	}
	mem := map[string]uint64{}
	value := func(el string) uint64 {
		if v, ok := mem[el]; ok {
			return v
		}
		h := fnv.New64a()
		h.Write([]byte(el))
		return h.Sum64()
	}
	for _, in := range order {
		h := fnv.New64a()
		h.Write([]byte(in.s.Name))
		for _, a := range in.s.Accesses {
			if !a.Write || a.Accum {
				fmt.Fprint(h, value(a.Array.Name+fmt.Sprint(a.Address(params, in.iter))), ";")
			}
		}
		v := h.Sum64()
		for _, a := range in.s.Accesses {
			if a.Write {
				mem[a.Array.Name+fmt.Sprint(a.Address(params, in.iter))] = v
			}
		}
	}
	return mem
}

// producerConsumer: b = a^2 over [0, n), c from b at READ over [from, to).
func producerConsumer(read, from, to string) string {
	return program(`params: [n]
assume: [n >= 4]
arrays: {a: [n], b: [n], c: [n]}`,
		loop("i", "n", stmt(`name: square, reads: "a[i]", writes: "b[i]", value: "a[i] * a[i]"`)),
		loopFrom("i", from, to, stmt(`name: use, reads: "`+read+`", writes: "c[i]", code: "c[i] = 2 * b[0];"`)))
}

// fusedShifted is p with its first two nests fused with the shift s.
func fusedShifted(t *testing.T, p *loopnest.Program, s int64) *loopnest.Program {
	t.Helper()
	r, err := unionRange(p.Body[0].Loop, p.Body[1].Loop, s)
	require.NoError(t, err)
	f, err := shiftedFusion(p, p.Body[0].Loop, p.Body[1].Loop, s, r, 1)
	require.NoError(t, err)
	return f.p
}

// A consumer that reads only the next point fuses with its producer,
// shifted by one iteration: the read becomes loop-independent and the fused
// loop parallel; each body runs under a guard where its range is not the
// union. The analysis of the fused program finds no dependence backward
// and none carried; it keeps every dependence's order and the answer, in
// order and with the loop reversed. A wrong shift fails: off by one down
// (no shift) reads b[i+1] before it is written, off by one up leaves the
// fused loop carrying the dependence, and reversed it computes another
// answer.
func TestShiftFusionKeepsTheLoopParallel(t *testing.T) {
	src := producerConsumer("b[i+1]", "", "n - 1")
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, "team", k.Pattern.Kind, "one launch")
	assert.Contains(t, k.Mapping, "i#1 and i#2: one launch: fusing with a shift of 1 (i#2's iteration v run with i#1's v+1) makes every dependence between them loop-independent (distance -1 becomes 0), so the fused loop stays parallel; the fused loop runs i from 0 to n, i#1's body in every iteration, i#2's where i >= 1; each iteration runs both bodies in the same thread and lane")
	assert.Contains(t, k.Mapping, "loop i#1 -> league+team+vector")
	var tree bytes.Buffer
	PrintTree(&tree, k.Pattern, "")
	assert.Contains(t, tree.String(), `| b[i] = a[i] * a[i];
      | if (i >= 1) {
      |   {
      |     const int64_t pm_shifted_i = i - 1;
      |     const int64_t i = pm_shifted_i;
      |     c[i] = 2 * b[0];
      |   }
      | }`)

	p := parse(t, "k.yaml", []byte(src))
	sizes := []map[string]int64{{"n": 4}, {"n": 5}, {"n": 9}}
	good := fusedShifted(t, p, 1)
	r := depend.Analyze(good)
	assert.True(t, r.Verdict(good.Loops[0]).Parallel, "the fused loop carries no dependence")
	require.NoError(t, sameOrder(p, good, sizes))
	assert.Equal(t, evaluate(p, sizes[2]), evaluate(good, sizes[2]))
	assert.Equal(t, evaluate(p, sizes[2]), evaluateReversed(good, sizes[2]), "reversed, the fused loop computes the same")

	down := fusedShifted(t, p, 0)
	assert.ErrorContains(t, sameOrder(p, down, sizes), "fusion reorders")
	up := fusedShifted(t, p, 2)
	require.NoError(t, sameOrder(p, up, sizes), "in order, a shift too far keeps every order")
	v := depend.Analyze(up).Verdict(up.Loops[0])
	require.False(t, v.Parallel, "but the fused loop carries the dependence")
	assert.Contains(t, v.Carried[0].String(), "flow write b[i] (square, k.yaml:10:58) -> read b[i+1] (use, k.yaml:15:39), loops (i#1) direction (<) distance (1)")
	assert.NotEqual(t, evaluate(p, sizes[2]), evaluateReversed(up, sizes[2]), "and reversed computes another answer")
}

// A consumer that reads only the previous point fuses legally without a
// shift, but the fused loop would carry the dependence: shifted by -1 it
// is loop-independent, the producer's body guarded at the start, the
// consumer's at the end.
func TestShiftFusionBackward(t *testing.T) {
	src := producerConsumer("b[i-1]", "1", "n")
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, "team", k.Pattern.Kind)
	assert.Contains(t, k.Mapping, "i#1 and i#2: one launch: fusing with a shift of -1 (i#2's iteration v run with i#1's v-1) makes every dependence between them loop-independent (distance 1 becomes 0), so the fused loop stays parallel; the fused loop runs i from 0 to n, i#1's body in every iteration, i#2's where i < (n - 1)")
	var tree bytes.Buffer
	PrintTree(&tree, k.Pattern, "")
	assert.Contains(t, tree.String(), "|     const int64_t pm_shifted_i = i + 1;")

	p := parse(t, "k.yaml", []byte(src))
	good := fusedShifted(t, p, -1)
	assert.True(t, depend.Analyze(good).Verdict(good.Loops[0]).Parallel)
	sizes := []map[string]int64{{"n": 4}, {"n": 7}}
	require.NoError(t, sameOrder(p, good, sizes))
	assert.Equal(t, evaluate(p, sizes[1]), evaluateReversed(good, sizes[1]))
	plain := fusedShifted(t, p, 0)
	require.NoError(t, sameOrder(p, plain, sizes), "fusing without the shift is legal")
	assert.False(t, depend.Analyze(plain).Verdict(plain.Loops[0]).Parallel, "but carries the dependence")
}

// Mixed distances refuse the fusion, legal or not: no one shift makes every
// dependence loop-independent, and the fused loop would carry one.
func TestShiftFusionRefusedForMixedDistances(t *testing.T) {
	cases := []struct{ read, from, to, why string }{
		{"b[i-1], b[i+1]", "1", "n - 1", "i#1 and i#2: separate launches, in order: fusing i#1 and i#2 is illegal: 1 dependence would run backward (flow write b[i] (square, k.yaml:10:58) -> read b[i+1] (use, k.yaml:16:47), loops (i#1) direction (>) distance (-1)); a shift of 1 (i#2's iteration v run with i#1's v+1) would make it legal, but the dependences between them have distances -1 and 1 on the fused loop, so no one shift makes them all loop-independent: the fused loop would carry flow write b[i] (square, k.yaml:10:58) -> read b[i-1] (use, k.yaml:16:39), loops (i#1) direction (<) distance (2) and could not run in parallel"},
		{"b[i], b[i-1]", "1", "n", "i#1 and i#2: separate launches, in order: fusing i#1 and i#2 is legal, but the dependences between them have distances 0 and 1 on the fused loop, so no one shift makes them all loop-independent: the fused loop would carry flow write b[i] (square, k.yaml:10:58) -> read b[i-1] (use, k.yaml:16:45), loops (i#1) direction (<) distance (1) and could not run in parallel"},
	}
	for _, c := range cases {
		t.Run(c.read, func(t *testing.T) {
			k, err := lower(t, producerConsumer(c.read, c.from, c.to))
			require.NoError(t, err)
			assert.Equal(t, spec.Launches, k.Pattern.Kind)
			assert.Len(t, k.Pattern.Body, 2)
			assert.Contains(t, k.Mapping, c.why)
		})
	}
}

// Nests whose outer loop each carries its own dependence run it
// sequentially anyway: a shift that makes the fusion legal costs no
// parallelism, and the least such shift is taken. A sequential loop around
// two nests is not lowered, so their bands fuse too (the second's column
// index renamed), and the fused nest lowers as one: the row loop inside the
// lanes. The fused program keeps every dependence's order; without the
// shift it would not.
func TestShiftFusionSequential(t *testing.T) {
	src := program(`params: [n, m]
assume: [n >= 3, m >= 1]
arrays: {A: [n, m], B: [n, m], x: [m]}`,
		loopFrom("i", "1", "n", loop("j", "m", stmt(`name: sweep, reads: "A[i-1][j], x[j]", writes: "A[i][j]", code: "A[i * m + j] = A[(i - 1) * m + j] + x[j];"`))),
		loopFrom("i", "1", "n - 1", loop("r", "m", stmt(`name: follow, reads: "B[i-1][r], A[i+1][r]", writes: "B[i][r]", code: "B[i * m + r] = B[(i - 1) * m + r] + A[(i + 1) * m + r];"`))))
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, "team", k.Pattern.Kind, "one launch")
	assert.Contains(t, k.Mapping, "i#1 and i#2: one launch: fusing with a shift of 1 (i#2's iteration v run with i#1's v+1) runs no dependence between them backward; i#1 and i#2 each run sequentially alone, so the fused loop loses no parallelism; the fused loop runs i from 1 to n, i#1's body in every iteration, i#2's where i >= 2; the bands fused 2 loops deep (i#1, j), as one nest")
	assert.Contains(t, k.Mapping, "loop i#1: sequential, moved inside the mapped loops")
	var tree bytes.Buffer
	PrintTree(&tree, k.Pattern, "")
	assert.Contains(t, tree.String(), `|   if (i >= 2) {
      |     {
      |       const int64_t pm_shifted_i = i - 1;
      |       const int64_t pm_shifted_r = j;
      |       const int64_t i = pm_shifted_i;
      |       const int64_t r = pm_shifted_r;`)

	p := parse(t, "k.yaml", []byte(src))
	sizes := []map[string]int64{{"n": 3, "m": 2}, {"n": 5, "m": 3}}
	r, err := unionRange(p.Body[0].Loop, p.Body[1].Loop, 1)
	require.NoError(t, err)
	deep, err := shiftedFusion(p, p.Body[0].Loop, p.Body[1].Loop, 1, r, 2)
	require.NoError(t, err)
	require.NoError(t, sameOrder(p, deep.p, sizes))
	assert.Equal(t, evaluate(p, sizes[1]), evaluate(deep.p, sizes[1]))
	require.NoError(t, sameOrder(p, fusedShifted(t, p, 1), sizes))
	assert.ErrorContains(t, sameOrder(p, fusedShifted(t, p, 0), []map[string]int64{{"n": 4, "m": 1}}), "fusion reorders", "without the shift it is illegal")
	_, err = shiftedFusion(p, p.Body[0].Loop, p.Body[1].Loop, 1, r, 3)
	assert.EqualError(t, err, "their bands are not 3 loops deep")
}

// Ranges that differ by more than a constant have no affine union: the
// nests stay apart, and explain says why.
func TestShiftFusionBoundsNotAffine(t *testing.T) {
	src := program(`params: [n, m]
assume: [n >= 2, m >= 2, m <= n]
arrays: {a: [n], b: [n]}`,
		loop("i", "n", stmt(`reads: "a[i]", writes: "b[i]", code: ";"`)),
		loop("i", "m", stmt(`reads: "b[i]", writes: "a[i]", code: ";"`)))
	k, err := lower(t, src)
	require.NoError(t, err)
	assert.Equal(t, spec.Launches, k.Pattern.Kind)
	assert.Contains(t, k.Mapping, "i#1 and i#2: separate launches, in order: fusing is legal, but their bounds differ by more than a constant (i#1 from 0 to n, i#2 shifted from 0 to m)")
}

// chooseShift: one distance d gives -d where the loop may run in
// parallel; otherwise the least shift that runs nothing backward.
func TestShiftChoice(t *testing.T) {
	dist := func(v int64, back bool) shiftDep {
		return shiftDep{dist: depend.Distance{Known: true, Value: v}, backward: back}
	}
	s, ds, ok := chooseShift([]shiftDep{dist(-1, true), dist(-1, true)}, true)
	assert.Equal(t, []any{int64(1), []int64{-1}, true}, []any{s, ds, ok})
	s, _, ok = chooseShift([]shiftDep{dist(2, false)}, true)
	assert.Equal(t, []any{int64(-2), true}, []any{s, ok})
	s, _, _ = chooseShift([]shiftDep{dist(2, false)}, false)
	assert.Equal(t, int64(0), s, "sequential anyway: no shift needed")
	s, ds, _ = chooseShift([]shiftDep{dist(-2, true), dist(1, false), dist(0, false)}, true)
	assert.Equal(t, []any{int64(2), []int64{-2, 0, 1}}, []any{s, ds})
	_, _, ok = chooseShift([]shiftDep{{dist: depend.Distance{}, backward: true}}, true)
	assert.False(t, ok, "a distance not constant, backward: no shift")
	s, _, ok = chooseShift([]shiftDep{{dist: depend.Distance{}}, dist(1, false)}, true)
	assert.Equal(t, []any{int64(0), true}, []any{s, ok}, "not constant, forward: legal without a shift")
}

// shift_chain_mapped's three nests become one launch: the second shifted
// by one, the third without a shift under the guard its range needs; the
// fused program keeps every dependence's order and the answer, in order
// and with the loop reversed.
func TestShiftChainKernel(t *testing.T) {
	k := shipped(t)["shift_chain_mapped"]
	require.NotNil(t, k)
	assert.Equal(t, "team", k.Pattern.Kind)
	for _, want := range []string{
		"i#1 and i#2: one launch: fusing with a shift of 1 (i#2's iteration v run with i#1's v+1) makes every dependence between them loop-independent (distance -1 becomes 0), so the fused loop stays parallel; the fused loop runs i from 0 to n, i#1's body in every iteration, i#2's where i >= 1",
		"i#1 and i#3: one launch: fusing is legal (no dependence between them runs backward) and keeps the loops parallel; their bounds differ: the fused loop runs i from 0 to n, i#1's body in every iteration, i#3's where i >= 1",
		"one launch: nest i#1 (../../templates/kernels/shift_chain_mapped.yaml:27:9), fused from i#1, i#2, i#3",
	} {
		assert.Contains(t, k.Mapping, want)
	}
	src, err := os.ReadFile("../../templates/kernels/shift_chain_mapped.yaml")
	require.NoError(t, err)
	p := loopnestOf(t, "shift_chain.yaml", string(src))
	q := fusedShifted(t, p, 1)
	r, err := unionRange(q.Body[0].Loop, q.Body[1].Loop, 0)
	require.NoError(t, err)
	f, err := shiftedFusion(q, q.Body[0].Loop, q.Body[1].Loop, 0, r, 1)
	require.NoError(t, err)
	assert.True(t, depend.Analyze(f.p).Verdict(f.p.Loops[0]).Parallel)
	sizes := []map[string]int64{{"n": 2}, {"n": 3}, {"n": 8}}
	require.NoError(t, sameOrder(p, f.p, sizes))
	assert.Equal(t, evaluate(p, sizes[2]), evaluateReversed(f.p, sizes[2]))
}

// Bad input in a kernel whose nests would fuse with a shift stays
// positioned: a consumer whose shifted read leaves the array is refused at
// the access before any fusion; a statement outside every loop at the
// statement.
func TestShiftFusionBadInput(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "templates", "kernels")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	abs, err := filepath.Abs("../../machines")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(root, "machines")))
	src, err := os.ReadFile("../../templates/kernels/shift_chain_mapped.yaml")
	require.NoError(t, err)
	bad := strings.Replace(strings.Replace(string(src), "kernel: shift_chain_mapped", "kernel: shift_out", 1), "        to: n - 1\n", "        to: n\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shift_out.yaml"), []byte(bad), 0o644))
	_, err = LoadKernels(root)
	var refused spec.Refused
	require.True(t, errors.As(err, &refused), "%v", err)
	assert.Contains(t, refused.Error(), "shift_out.yaml:35:41: loops: read b[i+1]")

	_, err = lower(t, producerConsumer("b[i+1]", "", "n - 1")+"    - stmt: {reads: \"b[0]\", writes: \"a[0]\", code: \";\"}\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "k.yaml:16:13: loops: kernel k: statement S3 is outside every loop")
}

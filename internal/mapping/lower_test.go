package mapping

import (
	"bytes"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

func gpuModel(t *testing.T) *machine.Model {
	t.Helper()
	set, err := machine.Load("../../machines")
	if err != nil {
		t.Fatal(err)
	}
	m, err := set.Get(DefaultGPU)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// shape is the tree's kinds, outermost first, with each loop's index:
// "team [code] team_thread_for:j thread_vector_for:k [code]".
func shape(n *spec.Node) string {
	var out []string
	var walk func(n *spec.Node)
	walk = func(n *spec.Node) {
		switch {
		case n.Kind == "code":
			out = append(out, "[code]")
		case n.Index != "":
			out = append(out, n.Kind+":"+n.Index)
		default:
			out = append(out, n.Kind)
		}
		for _, c := range n.Body {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(out, " ")
}

func lower(t *testing.T, src string, tunables ...spec.Tunable) (*spec.Kernel, error) {
	t.Helper()
	k := &spec.Kernel{Name: "k", Loops: parse(t, "k.yaml", []byte(src)), Tunables: tunables}
	var errs diag.List
	Lower(k, gpuModel(t), &errs)
	return k, errs.Err()
}

func tunable(k *spec.Kernel, name string) int64 {
	for _, t := range k.Tunables {
		if t.Name == name {
			return t.Value
		}
	}
	return -1
}

var nest3 = program(`params: [n]
arrays: {u: [n, J, K], v: [n, J, K]}`,
	loop("i", "n", loop("j", "J", loop("k", "K", stmt(`reads: "u[i][j][k]", writes: "v[i][j][k]", code: "v[0] = u[0];"`)))))

// Three parallel loops go to league, team and vector; the vector length is
// the warp's unless a constant trip count leaves lanes idle (teamShape), the
// team Kokkos' recommended size cut to a constant trip count.
func TestLowerThreeLevels(t *testing.T) {
	cases := []struct {
		J, K         string
		team, vector int64
	}{
		{"n", "n", 4, 32},  // 128 threads: Kokkos' smallest block of the most resident threads
		{"n", "4", 32, 4},  // a short stride-1 loop: 4 lanes, 32 threads
		{"3", "100", 3, 8}, // a team loop of 3 iterations; 100 levels idle 4 of 104 lanes at 8, 12 of 112 at 16 (24-thread blocks still hold half an SM)
	}
	for _, c := range cases {
		src := strings.NewReplacer("J", c.J, "K", c.K).Replace(nest3)
		k, err := lower(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := shape(k.Pattern), "team [code] team_thread_for:j thread_vector_for:k [code]"; got != want {
			t.Errorf("J=%s K=%s: tree %s, want %s", c.J, c.K, got, want)
		}
		if tunable(k, TeamTunable) != c.team || tunable(k, VectorTunable) != c.vector {
			t.Errorf("J=%s K=%s: team %d vector %d, want %d %d\n%s", c.J, c.K, tunable(k, TeamTunable), tunable(k, VectorTunable), c.team, c.vector, k.Mapping)
		}
		if !strings.Contains(k.Mapping, "loop k -> vector") || !strings.Contains(k.Mapping, "team size") {
			t.Errorf("mapping not explained:\n%s", k.Mapping)
		}
	}
}

var gemv = program(`params: [n, m]
arrays: {A: [n, m], x: [m], y: [n]}`,
	loop("i", "n", loop("j", "m", stmt(`reads: "A[i][j], x[j]", accumulate: "y[i]", code: "CODE"`))))

// A reduction on the vector level is a thread_vector_reduce into a register
// and one atomic update per team thread; code that is not `target += value;`
// keeps the loop sequential, and the explanation says why.
func TestLowerVectorReduction(t *testing.T) {
	k, err := lower(t, strings.Replace(gemv, "CODE", "y[i] += A[i * m + j] * x[j];", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shape(k.Pattern), "team [code] team_thread_for:i_t [code] thread_vector_reduce:j [code] atomic_add"; got != want {
		t.Errorf("tree %s, want %s", got, want)
	}
	var b bytes.Buffer
	PrintTree(&b, k.Pattern, "")
	for _, want := range []string{"pm_sum += A[i * m + j] * x[j];", "atomic_add: y[i] += pm_sum"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, b.String())
		}
	}

	k, err = lower(t, strings.Replace(gemv, "CODE", "y[i] = y[i] + A[i * m + j] * x[j];", 1))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shape(k.Pattern), "reduce") {
		t.Errorf("a reduction whose code is not `y += e;` was lowered as one: %s", shape(k.Pattern))
	}
	if !strings.Contains(k.Mapping, "not lowered as thread_vector_reduce (the code of S1 is not one `target += value;`)") {
		t.Errorf("demotion not explained:\n%s", k.Mapping)
	}
	b.Reset()
	PrintTree(&b, k.Pattern, "")
	if !strings.Contains(b.String(), "for (int64_t j = 0; j < m; ++j) {") {
		t.Errorf("j is not a sequential loop in the lane:\n%s", b.String())
	}
}

// A sequential loop around the parallel ones moves inside them when each
// dependence it carries stays within one iteration of the mapped loops;
// otherwise it would need a launch per iteration, an error at the loop nest
// rather than a wrong tree.
func TestLowerOuterSequentialLoop(t *testing.T) {
	timeLoop := program(`params: [n, T]
assume: [n >= 1, T >= 1]
arrays: {A: [T, n]}`,
		loopFrom("t", "1", "T", loopFrom("i", "1", "n - 1", stmt(`reads: "READS", writes: "A[t][i]", code: ";"`))))
	k, err := lower(t, strings.Replace(timeLoop, "READS", "A[t-1][i]", 1))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	PrintTree(&b, k.Pattern, "")
	if !strings.Contains(b.String(), "| for (int64_t t = 1; t < T; ++t) {") || !strings.Contains(k.Mapping, "loop t: sequential, moved inside the mapped loops") {
		t.Errorf("t not moved inside:\n%s\n%s", k.Mapping, b.String())
	}
	_, err = lower(t, strings.Replace(timeLoop, "READS", "A[t-1][i-1], A[t-1][i+1]", 1))
	if err == nil || !strings.Contains(err.Error(), "loop t (k.yaml:7:9) encloses the mapped loops sequentially and cannot move inside them (flow write A[t][i]") {
		t.Errorf("a dependence across i: %v", err)
	}
}

func TestLowerTunableClash(t *testing.T) {
	_, err := lower(t, strings.NewReplacer("J", "n", "K", "n").Replace(nest3), spec.Tunable{Name: TeamTunable, Value: 8})
	if err == nil || !strings.Contains(err.Error(), "tunable map_team_size is the mapper's") {
		t.Errorf("tunable clash: %v", err)
	}
}

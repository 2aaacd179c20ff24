package depend

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// TestRandomPrograms checks the analysis against brute force on random
// programs: nests up to depth 3 with triangular, skewed and min/max bounds,
// coupled subscripts with coefficients up to 2 and accumulations; the
// corpus' textbook cases cannot cover every combination of these.
func TestRandomPrograms(t *testing.T) {
	n := 300
	if testing.Short() || raceEnabled {
		n = 100
	}
	rng := rand.New(rand.NewPCG(4, 23))
	var total precision
	for i := range n {
		src := randomProgram(rng)
		name := fmt.Sprintf("random%d.yaml", i)
		var errs diag.List
		root := diag.ParseYAML(name, []byte(src), &errs)
		var prog *loopnest.Program
		if root != nil {
			prog = loopnest.Decode(diag.Decoder{File: name, Errs: &errs}, root)
		}
		if err := errs.Err(); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		before := t.Failed()
		total.add(bruteForce(t, name, Analyze(prog), nil, false))
		if !before && t.Failed() {
			t.Logf("%s:\n%s", name, src)
		}
	}
	t.Logf("%d random programs: %s", n, total)
}

func randomProgram(rng *rand.Rand) string {
	g := &generator{rng: rng, params: []string{"n"}}
	if rng.IntN(3) == 0 {
		g.params = append(g.params, "m")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "params: [%s]\nassume: [n >= 1, %s >= 1]\narrays: {A: [n], B: [n, n], s: []}\nbody:\n", strings.Join(g.params, ", "), g.params[len(g.params)-1])
	for range 1 + rng.IntN(2) {
		b.WriteString("  - " + g.item(nil) + "\n")
	}
	return b.String()
}

type generator struct {
	rng    *rand.Rand
	params []string
}

func (g *generator) pick(list ...string) string { return list[g.rng.IntN(len(list))] }

func (g *generator) item(vars []string) string {
	if len(vars) < 3 && (len(vars) == 0 || g.rng.IntN(2) == 0) {
		return g.loop(vars)
	}
	return g.stmt(vars)
}

func (g *generator) loop(vars []string) string {
	index := []string{"i", "j", "k"}[len(vars)]
	lower, upper := g.pick("0", "1"), g.pick("n", "n - 1", g.params[len(g.params)-1])
	if len(vars) > 0 {
		v := vars[g.rng.IntN(len(vars))]
		lower = g.pick(lower, v, v+" - 1", "["+lower+", "+v+" - 1]")
		upper = g.pick(upper, v+" + 2", "["+upper+", "+v+" + 3]", "2*"+v+" + 1", v+" + n")
	}
	inner := append(append([]string(nil), vars...), index)
	items := []string{g.item(inner)}
	if g.rng.IntN(3) == 0 {
		items = append(items, g.item(inner))
	}
	return fmt.Sprintf("for: {index: %s, from: %s, to: %s, body: [%s]}", index, lower, upper, strings.Join(items, ", "))
}

func (g *generator) stmt(vars []string) string {
	var reads, writes []string
	for range 1 + g.rng.IntN(3) {
		if a := g.access(vars); g.rng.IntN(2) == 0 {
			writes = append(writes, a)
		} else {
			reads = append(reads, a)
		}
	}
	fields := []string{}
	if len(reads) > 0 {
		fields = append(fields, fmt.Sprintf("reads: %q", strings.Join(reads, ", ")))
	}
	if len(writes) > 0 {
		fields = append(fields, fmt.Sprintf("writes: %q", strings.Join(writes, ", ")))
	}
	if g.rng.IntN(4) == 0 {
		fields = append(fields, fmt.Sprintf("accumulate: %q", g.access(vars)))
	}
	return "stmt: {" + strings.Join(fields, ", ") + "}"
}

func (g *generator) access(vars []string) string {
	switch g.rng.IntN(5) {
	case 0:
		return "s"
	case 1, 2:
		return "A[" + g.affine(vars) + "]"
	}
	return "B[" + g.affine(vars) + "][" + g.affine(vars) + "]"
}

func (g *generator) affine(vars []string) string {
	var terms []string
	for _, v := range append(append([]string(nil), vars...), g.params...) {
		if c := []int{-2, -1, 0, 0, 0, 1, 1, 2}[g.rng.IntN(8)]; c != 0 {
			terms = append(terms, fmt.Sprintf("%d*%s", c, v))
		}
	}
	terms = append(terms, fmt.Sprint(g.rng.IntN(5)-2))
	return strings.Join(terms, " + ")
}

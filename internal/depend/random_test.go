package depend

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
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
		src := loopnesttest.RandomProgram(rng)
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

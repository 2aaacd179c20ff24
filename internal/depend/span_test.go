package depend

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
)

// TestSpanOfContainsEveryValue checks SpanOf against the values the
// subscripts take when random programs run at small sizes: the range holds
// every value (never narrower: the mapper's bounds check relies on it for
// soundness); how many are wider than the values taken (the price of an
// inexact elimination: a kernel refused for a value it never reaches) is
// logged.
func TestSpanOfContainsEveryValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 150
	if testing.Short() || raceEnabled {
		n = 50
	}
	wider, checked := 0, 0
	for i := range n {
		src := loopnesttest.RandomProgram(rng)
		name := fmt.Sprintf("random%d.yaml", i)
		var errs diag.List
		root := diag.ParseYAML(name, []byte(src), &errs)
		prog := loopnest.Decode(diag.Decoder{File: name, Errs: &errs}, root)
		if err := errs.Err(); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		for _, vals := range loopnesttest.Sizes(len(prog.Params)) {
			params := map[string]int64{}
			for k, p := range prog.Params {
				params[p] = vals[k]
			}
			type mm struct{ lo, hi int64 }
			seen := map[*loopnest.Access][]*mm{}
			prog.Walk(params, func(in loopnest.Instance) {
				env := map[string]int64{}
				for k, v := range params {
					env[k] = v
				}
				for k, l := range in.Stmt.Loops {
					env[l.Index] = in.Iter[k]
				}
				for _, a := range in.Stmt.Accesses {
					if seen[a] == nil {
						seen[a] = make([]*mm, len(a.Subs))
					}
					for d, sub := range a.Subs {
						v := sub.Eval(env)
						switch m := seen[a][d]; {
						case m == nil:
							seen[a][d] = &mm{v, v}
						default:
							m.lo, m.hi = min(m.lo, v), max(m.hi, v)
						}
					}
				}
			})
			for _, s := range prog.Stmts {
				for _, a := range s.Accesses {
					for d, sub := range a.Subs {
						sp := SpanOf(s.Loops, sub, params)
						got := seen[a]
						switch {
						case !sp.Known:
							t.Errorf("%s %v: %s subscript %d: not bounded", name, params, a.Text, d+1)
						case got == nil:
							if !sp.Empty {
								// an empty domain the projection did not prove empty
								// is allowed (rational points), but it is wider
								wider++
							}
						case sp.Empty || sp.Lo > got[d].lo || sp.Hi < got[d].hi:
							t.Errorf("%s %v: %s subscript %d (%s): span %+v misses values %d..%d\n%s", name, params, a.Text, d+1, sub, sp, got[d].lo, got[d].hi, src)
						case sp.Lo != got[d].lo || sp.Hi != got[d].hi:
							wider++
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d ranges checked, %d wider than the values taken", checked, wider)
}

package depend

import (
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

const explained = `loops:
  params: [n]
  arrays: {A: [n, n], s: []}
  body:
    - for:
        index: i
        from: 1
        to: n
        body:
          - for:
              index: j
              to: n - 1
              body:
                - stmt: {name: S1, writes: "A[i][j]", reads: "A[i-1][j+1]"}
    - for:
        index: k
        from: 1
        to: n
        body:
          - stmt: {name: S2, reads: "A[k+1][0]", accumulate: s}
`

func TestExplain(t *testing.T) {
	var errs diag.List
	p := loopnest.Parse("e.yaml", []byte(explained), &errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Analyze(p).Explain(&b)
	want := `loop i (e.yaml:6:9): sequential: carries 1 dependence
  flow write A[i][j] (S1, e.yaml:14:45) -> read A[i-1][j+1] (S1, e.yaml:14:63), loops (i,j) direction (<,>) distance (1,-1)
loop j (e.yaml:11:15): parallel: carries no dependence
loop k (e.yaml:16:9): parallel with reduction: + into s (S2, e.yaml:20:62)
fuse i and k: illegal: 1 dependence would run backward
  flow write A[i][j] (S1, e.yaml:14:45) -> read A[k+1][0] (S2, e.yaml:20:38), loops (i) direction (>) distance (-1)
interchange i and j: illegal: 1 direction vector would turn negative
  flow write A[i][j] (S1, e.yaml:14:45) -> read A[i-1][j+1] (S1, e.yaml:14:63), loops (i,j) direction (<,>) distance (1,-1)
`
	if got := b.String(); got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
}

package mapping

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
)

func parse(t *testing.T, file string, data []byte) *loopnest.Program {
	t.Helper()
	var errs diag.List
	root := diag.ParseYAML(file, data, &errs)
	var p *loopnest.Program
	if root != nil {
		d := diag.Decoder{File: file, Errs: &errs}
		p = loopnest.Decode(d, d.Fields(root, "case", "doc", "sizes", "loops", "expect")["loops"])
	}
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

func levels(nests []Nest) string {
	var out []string
	for _, n := range nests {
		for _, d := range n.Decisions {
			where := "seq"
			if len(d.Levels) > 0 {
				where = strings.Join(d.Levels, "+")
			}
			out = append(out, d.Loop.ID+":"+where)
		}
	}
	return strings.Join(out, " ")
}

// A HOMMEXX-like sphere operator: element, level, then the NP x NP points.
const laplace = `loops:
  params: [nelem, nlev, np]
  arrays: {u: [nelem, nlev, np, np], lap: [nelem, nlev, np, np], d: [np, np]}
  body:
    - for:
        index: ie
        to: nelem
        body:
          - for:
              index: k
              to: nlev
              body:
                - for:
                    index: i
                    to: np
                    body:
                      - for:
                          index: j
                          to: np
                          body:
                            - for:
                                index: l
                                to: np
                                body:
                                  - stmt: {reads: "d[i][l], d[j][l], u[ie][k][l][j], u[ie][k][i][l]", accumulate: "lap[ie][k][i][j]"}
`

// i and k are parallel, j between them carries (=,<,>): i and k cannot run
// concurrently with j moved inside them.
const between = `loops:
  params: [n]
  arrays: {A: [n, n, n]}
  body:
    - for:
        index: i
        to: n
        body:
          - for:
              index: j
              from: 1
              to: n
              body:
                - for: {index: k, to: n - 1, body: [stmt: {writes: "A[i][j][k]", reads: "A[i][j-1][k+1]"}]}
`

func TestMapLevels(t *testing.T) {
	corpus := func(name string) []byte {
		b, err := os.ReadFile("../depend/testdata/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name string
		src  []byte
		want string
	}{
		{"laplace", []byte(laplace), "ie:league k:team i:seq j:vector l:seq"},
		{"between", []byte(between), "i:seq j:seq k:league+team+vector"},
		{"matmul", corpus("matmul"), "i:league j:team+vector k:seq"},
		{"stencil_3d", corpus("stencil_3d"), "k:league j:team i:vector"},
		{"rows", corpus("rows"), "i:seq j:league+team+vector"},
		{"cols", corpus("cols"), "i:league+team+vector j:seq"},
		{"antidiagonal", corpus("antidiagonal"), "i:seq j:league+team+vector"},
		{"recurrence", corpus("recurrence"), "i:seq"},
		{"sum", corpus("sum"), "i:league+team+vector"},
		{"row_sums", corpus("row_sums"), "i:league+team j:vector"},
		{"lu", corpus("lu"), "k:seq i:league j:team+vector"},
		{"jacobi_time", corpus("jacobi_time"), "t:seq i#1:league+team+vector i#2:league+team+vector"},
	} {
		p := parse(t, c.name+".yaml", c.src)
		if got := levels(Map(depend.Analyze(p))); got != c.want {
			var b strings.Builder
			Explain(&b, Map(depend.Analyze(p)))
			t.Errorf("%s: got %s, want %s\n%s", c.name, got, c.want, b.String())
		}
	}
}

// TestNoRace: over the whole dependence corpus, no two instances that
// touch one element (one writing) run concurrently in a mapping: they
// differ on a mapped loop only where a loop kept outside orders them, or
// they accumulate on a reduction vector loop.
func TestNoRace(t *testing.T) {
	files, _ := filepath.Glob("../depend/testdata/*.yaml")
	sources := map[string][]byte{"laplace.yaml": []byte(laplace), "between.yaml": []byte(between)}
	for _, file := range files {
		sources[file], _ = os.ReadFile(file)
	}
	for file, data := range sources {
		p := parse(t, file, data)
		res := depend.Analyze(p)
		nests := Map(res)
		for _, size := range loopnesttest.Sizes(len(p.Params)) {
			params := map[string]int64{}
			for i, name := range p.Params {
				params[name] = size[i]
			}
			if !p.Holds(params) {
				continue
			}
			if err := checkRaces(p, res, nests, params); err != nil {
				t.Errorf("%s at %v: %v", file, params, err)
			}
		}
	}
}

func checkRaces(p *loopnest.Program, res *depend.Result, nests []Nest, params map[string]int64) error {
	top := map[*loopnest.Loop]int{} // per mapped loop: the depth of its nest's outermost mapped loop
	var vectors []*loopnest.Loop
	for _, n := range nests {
		depth := 1 << 30
		for _, d := range n.Decisions {
			if len(d.Levels) > 0 {
				depth = min(depth, d.Loop.Depth)
			}
		}
		for _, d := range n.Decisions {
			if len(d.Levels) > 0 {
				top[d.Loop] = depth
				if slices.Contains(d.Levels, Vector) {
					vectors = append(vectors, d.Loop)
				}
			}
		}
	}
	var err error
	loopnesttest.Conflicts(p, params, func(x, y loopnesttest.Event) {
		xs, ys := x.Acc.Stmt.Loops, y.Acc.Stmt.Loops
		for k := 0; err == nil && k < len(xs) && k < len(ys) && xs[k] == ys[k]; k++ {
			l := xs[k]
			k0, mapped := top[l]
			if !mapped || !slices.Equal(x.Iter[:k0], y.Iter[:k0]) {
				continue // not mapped, or ordered by a loop kept outside
			}
			red := x.Acc.Accum && y.Acc.Accum && x.Acc.Op == y.Acc.Op && slices.Contains(vectors, l) && res.Verdict(l).Reduction
			if x.Iter[k] != y.Iter[k] && !red {
				err = fmt.Errorf("loop %s is mapped, but %s %v and %s %v touch one element", l.ID, x.Acc.Text, x.Iter, y.Acc.Text, y.Iter)
			}
		}
	})
	return err
}

// TestNoRaceRandom: the same on random programs.
func TestNoRaceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 24))
	for i := range 150 {
		src := loopnesttest.RandomProgram(rng)
		var errs diag.List
		p := loopnest.Decode(diag.Decoder{File: "random.yaml", Errs: &errs}, diag.ParseYAML("random.yaml", []byte(src), &errs))
		if err := errs.Err(); err != nil {
			t.Fatal(err)
		}
		res := depend.Analyze(p)
		nests := Map(res)
		for _, size := range loopnesttest.Sizes(len(p.Params)) {
			params := map[string]int64{}
			for j, name := range p.Params {
				params[name] = size[j]
			}
			if !p.Holds(params) {
				continue
			}
			if err := checkRaces(p, res, nests, params); err != nil {
				var b strings.Builder
				Explain(&b, nests)
				t.Fatalf("random program %d at %v: %v\n%s\n%s", i, params, err, src, b.String())
			}
		}
	}
}

func TestExplainFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "l.yaml")
	if err := os.WriteFile(file, []byte("doc: one loop\n"+laplace), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ExplainFile(file, &b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"loop l (" + file + ":", "parallel with reduction: + into lap[ie][k][i][j]", "loop j -> vector: parallel"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explain lacks %q:\n%s", want, b.String())
		}
	}
	os.WriteFile(file, []byte("loops: {arrays: {A: [n]}, body: [stmt: {reads: \"A[0]\"}]}\n"), 0o644)
	if err := ExplainFile(file, &b); err == nil || !strings.Contains(err.Error(), file+":1:22: unknown name \"n\"") {
		t.Errorf("got %v", err)
	}
}

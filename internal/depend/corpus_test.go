package depend

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
)

// A corpus file (testdata/*.yaml) is a loop-nest program, the parameter
// values to enumerate it at (sizes, optional), and for textbook cases the
// answers the analysis must give exactly (expect).
type corpusCase struct {
	file   string
	doc    string
	prog   *loopnest.Program
	sizes  [][]int64
	expect map[string][][]string // parallel, reduction, sequential: [[id]]; fusable, ...: [[a, b]]
}

var expectKeys = []string{"parallel", "reduction", "sequential", "fusable", "not_fusable", "interchange", "no_interchange"}

func loadCorpus(t *testing.T) []*corpusCase {
	files, _ := filepath.Glob("testdata/*.yaml")
	var errs diag.List
	var out []*corpusCase
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		root := diag.ParseYAML(file, data, &errs)
		if root == nil {
			continue
		}
		d := diag.Decoder{File: file, Errs: &errs}
		f := d.Fields(root, "corpus case", "doc", "sizes", "loops", "expect")
		c := &corpusCase{file: file, doc: d.String(f["doc"], "doc"), prog: loopnest.Decode(d, f["loops"]), expect: map[string][][]string{}}
		for _, s := range d.Seq(f["sizes"], "sizes") {
			c.sizes = append(c.sizes, d.Ints(s, "size"))
		}
		ef := d.Fields(f["expect"], "expect", expectKeys...)
		for _, k := range expectKeys {
			for _, item := range d.Seq(ef[k], k) {
				if item.Kind == yaml.SequenceNode {
					c.expect[k] = append(c.expect[k], d.Strings(item, k))
				} else {
					c.expect[k] = append(c.expect[k], []string{d.String(item, k)})
				}
			}
		}
		out = append(out, c)
	}
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// truth is what enumeration found over every size.
type truth struct {
	carried    map[*loopnest.Loop]bool // carries a dependence that is not a reduction over it
	carriedAny map[*loopnest.Loop]bool // carries any dependence
	fusionBad  map[int]bool            // index in Result.Fusions: refuted
	swapBad    map[int]bool            // index in Result.Interchanges: refuted
}

// TestCorpus checks the analysis against brute force: every dependence an
// enumeration of the iteration space finds must be among the analysis'
// (source and sink access, direction vector, constant distance), so no loop,
// fusion or interchange the analysis allows is refuted; textbook cases must
// give exactly the expected answers.
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 40 {
		t.Errorf("corpus has %d nests, want at least 40", len(cases))
	}
	var total precision
	for _, c := range cases {
		res := Analyze(c.prog)
		total.add(bruteForce(t, c.file, res, c.sizes, true))
		checkExpect(t, c, res)
	}
	t.Logf("%d nests: %s", len(cases), total)
}

// precision counts the verdicts the analysis makes conservatively: called
// sequential or illegal where no enumerated size shows why.
type precision struct {
	loops, imprecise                 int
	fusionsIllegal, fusionsImprecise int
	swapsIllegal, swapsImprecise     int
}

func (p *precision) add(q precision) {
	p.loops += q.loops
	p.imprecise += q.imprecise
	p.fusionsIllegal += q.fusionsIllegal
	p.fusionsImprecise += q.fusionsImprecise
	p.swapsIllegal += q.swapsIllegal
	p.swapsImprecise += q.swapsImprecise
}

func (p precision) String() string {
	return fmt.Sprintf("%d loops, %d called sequential without a carried dependence at the enumerated sizes; "+
		"fusions: %d illegal, %d of them unrefuted; interchanges: %d illegal, %d of them unrefuted",
		p.loops, p.imprecise, p.fusionsIllegal, p.fusionsImprecise, p.swapsIllegal, p.swapsImprecise)
}

// bruteForce enumerates res.Program at each size (nil: loopnesttest.Sizes) and
// fails t where the analysis is refuted; logs imprecise verdicts if asked.
func bruteForce(t *testing.T, name string, res *Result, sizes [][]int64, logImprecise bool) precision {
	t.Helper()
	prog := res.Program
	if sizes == nil {
		sizes = loopnesttest.Sizes(len(prog.Params))
	}
	tr := truth{carried: map[*loopnest.Loop]bool{}, carriedAny: map[*loopnest.Loop]bool{}, fusionBad: map[int]bool{}, swapBad: map[int]bool{}}
	for _, size := range sizes {
		if len(size) != len(prog.Params) {
			t.Fatalf("%s: size %v for parameters %v", name, size, prog.Params)
		}
		params := map[string]int64{}
		for i, p := range prog.Params {
			params[p] = size[i]
		}
		if !prog.Holds(params) {
			continue // outside the program's assumptions
		}
		if err := enumerate(prog, params, res, &tr); err != nil {
			t.Errorf("%s at %v: %v", name, params, err)
		}
	}
	logf := func(format string, args ...any) {
		if logImprecise {
			t.Logf(format, args...)
		}
	}
	var p precision
	for _, v := range res.Loops {
		p.loops++
		switch {
		case v.Parallel && !v.Reduction && tr.carriedAny[v.Loop]:
			t.Errorf("%s: loop %s called parallel, enumeration finds a dependence it carries", name, v.Loop.ID)
		case v.Reduction && tr.carried[v.Loop]:
			t.Errorf("%s: loop %s called a reduction, enumeration finds a dependence that is not one", name, v.Loop.ID)
		case !v.Parallel && !tr.carried[v.Loop]:
			p.imprecise++
			logf("imprecise: %s: loop %s called sequential, no size enumerated shows a carried dependence", name, v.Loop.ID)
		}
	}
	for i, f := range res.Fusions {
		switch {
		case f.Legal && tr.fusionBad[i]:
			t.Errorf("%s: fusing %s and %s called legal, enumeration refutes it", name, f.First.ID, f.Second.ID)
		case !f.Legal && !tr.fusionBad[i]:
			p.fusionsImprecise++
			logf("imprecise: %s: fusing %s and %s called illegal, no size refutes it", name, f.First.ID, f.Second.ID)
		}
		if !f.Legal {
			p.fusionsIllegal++
		}
	}
	for i, x := range res.Interchanges {
		switch {
		case x.Legal && tr.swapBad[i]:
			t.Errorf("%s: interchanging %s and %s called legal, enumeration refutes it", name, x.Outer.ID, x.Inner.ID)
		case !x.Legal && !tr.swapBad[i]:
			p.swapsImprecise++
			logf("imprecise: %s: interchanging %s and %s called illegal, no size refutes it", name, x.Outer.ID, x.Inner.ID)
		}
		if !x.Legal {
			p.swapsIllegal++
		}
	}
	return p
}

// enumerate runs prog at params, finds every pair of accesses to one
// element (one a write, in different instances) and checks it against res.
func enumerate(prog *loopnest.Program, params map[string]int64, res *Result, tr *truth) error {
	deps := map[[2]*loopnest.Access][]*Dep{}
	for _, d := range res.Deps {
		k := [2]*loopnest.Access{d.Src, d.Sink}
		deps[k] = append(deps[k], d)
	}
	var problems []string
	loopnesttest.Conflicts(prog, params, func(x, y loopnesttest.Event) {
		if msg := checkPair(x, y, deps, res, tr); msg != "" && len(problems) < 5 {
			problems = append(problems, msg)
		}
	})
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return nil
}

func checkPair(x, y loopnesttest.Event, deps map[[2]*loopnest.Access][]*Dep, res *Result, tr *truth) string {
	xs, ys := x.Acc.Stmt.Loops, y.Acc.Stmt.Loops
	var common []*loopnest.Loop
	for k := 0; k < len(xs) && k < len(ys) && xs[k] == ys[k]; k++ {
		common = append(common, xs[k])
	}
	dirs := make([]Dir, len(common))
	carrier := -1
	for k := range common {
		switch {
		case y.Iter[k] > x.Iter[k]:
			dirs[k] = Lt
		case y.Iter[k] < x.Iter[k]:
			dirs[k] = Gt
		default:
			dirs[k] = Eq
		}
		if carrier < 0 && dirs[k] != Eq {
			carrier = k
		}
	}
	red := reduction(x.Acc, y.Acc)
	if carrier >= 0 {
		l := common[carrier]
		tr.carriedAny[l] = true
		if !red || usesIndex(x.Acc, l) || usesIndex(y.Acc, l) {
			tr.carried[l] = true
		}
	}
	for i, f := range res.Fusions {
		k := f.First.Depth
		if !red && f.First.Encloses(x.Acc.Stmt) && f.Second.Encloses(y.Acc.Stmt) && slices.Equal(x.Iter[:k], y.Iter[:k]) && y.Iter[k] < x.Iter[k] {
			tr.fusionBad[i] = true
		}
	}
	for i, s := range res.Interchanges {
		if red || !s.Inner.Encloses(x.Acc.Stmt) || !s.Inner.Encloses(y.Acc.Stmt) {
			continue
		}
		swapped := slices.Clone(dirs)
		swapped[s.Outer.Depth], swapped[s.Inner.Depth] = swapped[s.Inner.Depth], swapped[s.Outer.Depth]
		if j := slices.IndexFunc(swapped, func(d Dir) bool { return d != Eq }); j >= 0 && swapped[j] == Gt {
			tr.swapBad[i] = true
		}
	}
	for _, d := range deps[[2]*loopnest.Access{x.Acc, y.Acc}] {
		if !slices.Equal(d.Dirs, dirs) {
			continue
		}
		for k, dist := range d.Dists {
			if dist.Known && dist.Value != y.Iter[k]-x.Iter[k] {
				return fmt.Sprintf("%s: distance on %s is %d in %v -> %v", d, common[k].ID, y.Iter[k]-x.Iter[k], x.Iter, y.Iter)
			}
		}
		return ""
	}
	return fmt.Sprintf("missed: %s %s (%s) %v -> %s (%s) %v, direction %v", kind(x.Acc, y.Acc), x.Acc.Text, x.Acc.Stmt.Name, x.Iter,
		y.Acc.Text, y.Acc.Stmt.Name, y.Iter, dirs)
}

func checkExpect(t *testing.T, c *corpusCase, res *Result) {
	loop := func(id string) *loopnest.Loop {
		l := c.prog.LoopByID(id)
		if l == nil {
			t.Errorf("%s: expect names loop %q, which does not exist", c.file, id)
		}
		return l
	}
	for _, want := range []string{"parallel", "reduction", "sequential"} {
		for _, ids := range c.expect[want] {
			l := loop(ids[0])
			if l == nil {
				continue
			}
			v := res.Verdict(l)
			got := map[bool]string{true: "parallel", false: "sequential"}[v.Parallel]
			if v.Reduction {
				got = "reduction"
			}
			if got != want {
				t.Errorf("%s: loop %s: got %s, want %s", c.file, l.ID, got, want)
			}
		}
	}
	for _, want := range []string{"fusable", "not_fusable"} {
		for _, ids := range c.expect[want] {
			a, b := loop(ids[0]), loop(ids[len(ids)-1])
			i := slices.IndexFunc(res.Fusions, func(f Fusion) bool { return f.First == a && f.Second == b })
			switch {
			case i < 0:
				t.Errorf("%s: %s and %s are not adjacent loops", c.file, ids[0], ids[len(ids)-1])
			case res.Fusions[i].Legal != (want == "fusable"):
				t.Errorf("%s: fusing %s and %s: legal %v, want %s", c.file, a.ID, b.ID, res.Fusions[i].Legal, want)
			}
		}
	}
	for _, want := range []string{"interchange", "no_interchange"} {
		for _, ids := range c.expect[want] {
			a, b := loop(ids[0]), loop(ids[len(ids)-1])
			i := slices.IndexFunc(res.Interchanges, func(x Interchange) bool { return x.Outer == a && x.Inner == b })
			switch {
			case i < 0:
				t.Errorf("%s: %s and %s are not loops of one perfect nest", c.file, ids[0], ids[len(ids)-1])
			case res.Interchanges[i].Legal != (want == "interchange"):
				t.Errorf("%s: interchanging %s and %s: legal %v, want %s", c.file, a.ID, b.ID, res.Interchanges[i].Legal, want)
			}
		}
	}
}

package loopnest

import (
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

const good = `doc: a triangular nest and a reduction
loops:
  params: [n]
  arrays: {A: [n, n], x: [n], s: []}
  body:
    - for:
        index: i
        from: 1
        to: n
        body:
          - for:
              index: j
              through: i
              body:
                - stmt: {name: S1, writes: "A[i][j]", reads: "A[i-1][j], x[2*j - i + 1]"}
    - for:
        index: i
        to: [n, 5]
        body:
          - stmt: {accumulate: s, reads: "x[i]"}
`

func TestParseGood(t *testing.T) {
	var errs diag.List
	p := Parse("good.yaml", []byte(good), &errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(p.Loops) != 3 || len(p.Stmts) != 2 {
		t.Fatalf("%d loops, %d statements", len(p.Loops), len(p.Stmts))
	}
	if ids := []string{p.Loops[0].ID, p.Loops[1].ID, p.Loops[2].ID}; strings.Join(ids, " ") != "i#1 j i#2" {
		t.Errorf("loop IDs %v", ids)
	}
	s1 := p.Stmts[0]
	if got := s1.Accesses[1].Subs[0].String(); got != "-i + 2*j + 1" {
		t.Errorf("subscript %q", got)
	}
	if s1.Accesses[0].Pos.Col != 63 || s1.Accesses[1].Pos.Col != 74 {
		t.Errorf("A[i-1][j], x[...] at columns %d, %d", s1.Accesses[0].Pos.Col, s1.Accesses[1].Pos.Col)
	}
	if got := p.Stmts[1].Name; got != "S2" {
		t.Errorf("default statement name %q", got)
	}
	if acc := p.Stmts[1].Accesses; len(acc) != 3 || !acc[1].Accum || !acc[2].Write || acc[2].Op != "+" {
		t.Errorf("accumulate accesses %+v", acc)
	}
	// through is inclusive, to exclusive, lists take max/min.
	var count, sum int64
	p.Walk(map[string]int64{"n": 4}, func(in Instance) {
		count++
		if in.Stmt == s1 {
			sum += in.Iter[0]*10 + in.Iter[1]
		}
	})
	// S1: i in 1..3, j in 0..i: 2+3+4 = 9 instances; S2: i in 0..3: 4.
	if count != 13 || sum != (10+11)+(20+21+22)+(30+31+32+33) {
		t.Errorf("walk: %d instances, sum %d", count, sum)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`- stmt: {writes: "A[i*n]"}`, `f.yaml:9:29: non-affine expression i*n: a product of i and n`},
		{`- stmt: {writes: "A[B[i]]"}`, `f.yaml:9:29: non-affine expression B[i]: an indirect access`},
		{`- stmt: {writes: "A[i/2]"}`, `f.yaml:9:29: non-affine expression i/2: operator /`},
		{`- stmt: {writes: "C[i]"}`, `f.yaml:9:27: undeclared array "C" (declared: A, B)`},
		{`- stmt: {writes: "A[i][0]"}`, `f.yaml:9:27: array "A" has rank 1, "A[i][0]" gives 2 subscripts`},
		{`- stmt: {writes: "A[k]"}`, `f.yaml:9:29: unknown name "k" (in scope: i, n)`},
		{`- for: {index: i, to: n, body: [stmt: {reads: "A[i]"}]}`, `f.yaml:9:24: loop index "i" repeated`},
		{`- stmt: {reads: "A[i], A[q]"}`, `f.yaml:9:34: unknown name "q"`},
		{`- stmt: {name: T}`, `f.yaml:9:17: a statement declares its accesses`},
		{`- for: {index: j, to: j, body: [stmt: {reads: "A[j]"}]}`, `f.yaml:9:31: loop variable "j" is out of scope here`},
		{`- stmt: {reads: "A[i]", op: "-", accumulate: "A[0]"}`, `f.yaml:9:37: unknown accumulation operator "-"`},
		{`- loop: {}`, `f.yaml:9:11: unknown body item "loop"`},
		{`- stmt: {accumulate: "B[0]", term: "1", code: "B[0] += 1;"}`, `f.yaml:9:38: a statement gives code or term, not both`},
		{`- stmt: {writes: "A[i]", value: "0", code: "A[i] = 0;"}`, `f.yaml:9:34: a statement gives code or value, not both`},
		{`- stmt: {writes: "A[i]", term: "1"}`, `f.yaml:9:34: term belongs to an accumulate`},
		{`- stmt: {writes: "A[i], B[i]", value: "0"}`, `f.yaml:9:40: value assigns one target, but writes names 2`},
		{`- stmt: {reads: "A[i]", value: "0"}`, `f.yaml:9:33: value assigns the statement's one writes target, and it names none`},
		{`- stmt: {accumulate: "B[0]", value: "0"}`, `f.yaml:9:38: value assigns a writes target; an accumulate gives term`},
		{`- stmt: {accumulate: "B[0]", op: max, term: "A[i]"}`, `f.yaml:9:47: term: op max has no C++ operator`},
		{`- stmt: {accumulate: "B[0]", term: "A[i]", value: "0"}`, `f.yaml:9:52: a statement gives term (an accumulate) or value (a write), not both`},
		{`- stmt: {accumulate: "B[0]", term: ""}`, `f.yaml:9:44: term is empty`},
	} {
		src := "loops:\n  params: [n]\n  arrays: {A: [n], B: [n]}\n  body:\n    - for:\n        index: i\n        to: n\n        body:\n          " + c.body + "\n"
		// the body line is indented by 10: shift the item's own columns
		src = strings.Replace(src, "          - ", "        - ", 1)
		var errs diag.List
		Parse("f.yaml", []byte(src), &errs)
		err := errs.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.body, err, c.want)
		}
		if perr := diag.CheckPositioned(err, "f.yaml"); perr != nil {
			t.Error(perr)
		}
	}
}

// term: and value: stand for code: and keep what the lowering needs.
func TestParseTermValue(t *testing.T) {
	src := "loops:\n  params: [n]\n  arrays: {A: [n], s: []}\n  body:\n    - stmt: {writes: s, value: \"0\"}\n" +
		"    - for: {index: i, to: n, body: [stmt: {reads: \"A[i]\", accumulate: s, op: \"*\", term: \"A[i] * 2\"}]}\n"
	var errs diag.List
	p := Parse("f.yaml", []byte(src), &errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stmts[0]; s.Value != "0" || s.Code != "" || s.Term != "" {
		t.Errorf("value statement %+v", s)
	}
	if s := p.Stmts[1]; s.Term != "A[i] * 2" || s.Code != "" || s.Accesses[2].Op != "*" {
		t.Errorf("term statement %+v", s)
	}
}

func TestScopeAfterLoop(t *testing.T) {
	src := "loops:\n  params: [n]\n  arrays: {A: [n]}\n  body:\n    - for: {index: i, to: n, body: [stmt: {writes: \"A[i]\"}]}\n    - stmt: {reads: \"A[i]\"}\n"
	var errs diag.List
	Parse("f.yaml", []byte(src), &errs)
	if err := errs.Err(); err == nil || !strings.Contains(err.Error(), `f.yaml:6:24: loop variable "i" is out of scope here (in scope: n)`) {
		t.Errorf("got %v", err)
	}
}

// promote: lists the kinds the mapper may promote; absent allows all, []
// none; an unknown or repeated kind is an error at its position.
func TestParsePromote(t *testing.T) {
	src := func(promote string) string {
		return strings.Replace(good, "  params: [n]\n", "  params: [n]\n"+promote, 1)
	}
	cases := []struct {
		promote string
		allows  []bool // temporaries, outputs, inputs
		err     string
	}{
		{"", []bool{true, true, true}, ""},
		{"  promote: []\n", []bool{false, false, false}, ""},
		{"  promote: [temporaries, inputs]\n", []bool{true, false, true}, ""},
		{"  promote: [temporaries, input]\n", nil, `p.yaml:4:26: unknown promote kind "input" (known: temporaries, outputs, inputs)`},
		{"  promote: [outputs, outputs]\n", nil, `p.yaml:4:22: promote kind "outputs" named twice`},
	}
	for _, c := range cases {
		var errs diag.List
		p := Parse("p.yaml", []byte(src(c.promote)), &errs)
		if c.err != "" {
			if err := errs.Err(); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %v, want %s", c.promote, err, c.err)
			}
			continue
		}
		if err := errs.Err(); err != nil {
			t.Fatal(err)
		}
		for i, kind := range PromoteKinds {
			if p.Promotes(kind) != c.allows[i] {
				t.Errorf("%q: Promotes(%s) = %v", c.promote, kind, !c.allows[i])
			}
		}
	}
}

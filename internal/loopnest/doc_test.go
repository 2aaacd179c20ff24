package loopnest

import (
	"os"
	"regexp"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The example of docs/loopnest.md parses.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/loopnest.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(loops:.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/loopnest.md has no loops: example")
	}
	var errs diag.List
	p := Parse("docs/loopnest.md", m[1], &errs)
	if err := errs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(p.Loops) != 2 || len(p.Stmts) != 2 || len(p.Assume) != 2 {
		t.Errorf("%d loops, %d statements, %d assumptions", len(p.Loops), len(p.Stmts), len(p.Assume))
	}
}

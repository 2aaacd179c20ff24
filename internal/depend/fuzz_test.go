package depend

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// The analysis never panics on a program the reader accepts (go test
// -fuzz=FuzzAnalyze -fuzztime=10s ./internal/depend/).
func FuzzAnalyze(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var errs diag.List
		root := diag.ParseYAML("f.yaml", data, &errs)
		if root == nil {
			return
		}
		d := diag.Decoder{File: "f.yaml", Errs: &errs}
		p := loopnest.Decode(d, d.Fields(root, "corpus case", "doc", "sizes", "loops", "expect")["loops"])
		if errs.Err() != nil || len(p.Stmts) > 8 {
			return
		}
		Analyze(p).Explain(io.Discard)
	})
}

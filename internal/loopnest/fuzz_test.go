package loopnest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The loop-nest reader never panics and positions every error (go test
// -fuzz=FuzzLoops -fuzztime=10s ./internal/loopnest/).
func FuzzLoops(f *testing.F) {
	files, _ := filepath.Glob("../depend/testdata/*.yaml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(good))
	f.Add([]byte("loops: {params: [n], arrays: {A: [n]}, body: [for: {index: i, to: n, body: [stmt: {writes: \"A[i*i]\"}]}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "l.yaml"
		var errs diag.List
		root := diag.ParseYAML(file, data, &errs)
		if root != nil {
			d := diag.Decoder{File: file, Errs: &errs}
			Decode(d, d.Fields(root, "corpus case", "doc", "sizes", "loops", "expect")["loops"])
		}
		if err := diag.CheckPositioned(errs.Err(), file); err != nil {
			t.Fatal(err)
		}
	})
}

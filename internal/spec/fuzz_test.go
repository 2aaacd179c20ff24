package spec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The kernel loader never panics and positions every error (go test
// -fuzz=FuzzKernel -fuzztime=10s ./internal/spec/; CI runs it briefly).
func FuzzKernel(f *testing.F) {
	files, _ := filepath.Glob("../../templates/kernels/*.yaml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("kernel: x\nargs: [{name: n}]\npattern: {range_for: {}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "k.yaml"
		var errs diag.List
		k := Parse(file, data, &errs)
		if err := diag.CheckPositioned(errs.Err(), file); err != nil {
			t.Fatal(err)
		}
		if k != nil && errs.Err() == nil {
			notes, err := CheckSizes([]*Kernel{k}, nil)
			if err := diag.CheckPositioned(err, file); err != nil {
				t.Fatal(err)
			}
			if err := diag.CheckPositioned(notes.Err(), file); err != nil {
				t.Fatal(err)
			}
		}
	})
}

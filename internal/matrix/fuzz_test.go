package matrix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// The strategies loader never panics and positions every error (go test
// -fuzz=FuzzStrategies -fuzztime=10s ./internal/matrix/).
func FuzzStrategies(f *testing.F) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	if err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile("../../variants/strategies.yaml")
	f.Add(b)
	f.Add([]byte("strategies:\n  - {name: a, backend: b, device: host, knobs: [{name: k, values: [{value: x, suffix: ''}]}]}\n  - {name: a, backend: b, device: host}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ss, err := Load(file, caps)
		if err := diag.CheckPositioned(err, file); err != nil {
			t.Fatal(err)
		}
		Variants(ss)
		CheckKernels(ss, []string{"axpby"})
	})
}

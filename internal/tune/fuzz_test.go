package tune

import (
	"os"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The search-space loader never panics and positions every error (go test
// -fuzz=FuzzSpaces -fuzztime=10s ./internal/tune/).
func FuzzSpaces(f *testing.F) {
	b, _ := os.ReadFile("../../" + File)
	f.Add(b)
	f.Add([]byte("tunables: {a: {min: 1, space: {pow2: [1, 8]}}}\nconstraints: [a <= 4 && a % 2 == 0]\n"))
	f.Add([]byte("tunables: {a: {min: 1, space: {range: [1, 8], step: 3}}}\nkernels: {k: {space: {a: default}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "tuning.yaml"
		_, err := Parse(file, data)
		if err := diag.CheckPositioned(err, file); err != nil {
			t.Fatal(err)
		}
	})
}

package portability

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// p3Divergence is the P3 Analysis Library's algorithm
// (p3analysis/metrics/_divergence.py): count the lines by the set of
// platforms that use them, then average over platform pairs the count of
// lines used by exactly one of the pair over those used by either.
func p3Divergence(code map[string][]Line) float64 {
	users := map[Line]map[string]bool{}
	for p, lines := range code {
		for _, l := range lines {
			if users[l] == nil {
				users[l] = map[string]bool{}
			}
			users[l][p] = true
		}
	}
	var platforms []string
	for p := range code {
		platforms = append(platforms, p)
	}
	sum, pairs := 0.0, 0
	for i, a := range platforms {
		for _, b := range platforms[i+1:] {
			either, one := 0, 0
			for _, u := range users {
				if u[a] || u[b] {
					either++
				}
				if u[a] != u[b] {
					one++
				}
			}
			sum += float64(one) / float64(either)
			pairs++
		}
	}
	if pairs == 0 {
		return 0
	}
	return sum / float64(pairs)
}

func TestDivergence(t *testing.T) {
	x := SourceLines("// header naming X\nint a;\n\n  int   b;\nint c;\n}\n}\nint d;\n")
	y := SourceLines("// header naming Y\nint a;\nint b;\nint c;\n}\n}\nint e;\n")
	assert.Equal(t, []Line{{"int a;", 1}, {"int b;", 1}, {"int c;", 1}, {"}", 1}, {"}", 2}, {"int d;", 1}}, x,
		"comments and blank lines dropped, spaces collapsed, repeats counted")
	// x and y share 5 of 7 lines: distance 2/7; x and z are one source.
	code := map[string][]Line{"X": x, "Y": y, "Z": x}
	want := (2./7 + 0 + 2./7) / 3
	assert.InDelta(t, want, Divergence(code), eps)
	assert.InDelta(t, p3Divergence(code), Divergence(code), eps)
	assert.Zero(t, Divergence(map[string][]Line{"X": x, "Z": x}), "one source for every platform")
	assert.Zero(t, Divergence(map[string][]Line{"X": x}), "one platform")
	assert.InDelta(t, 1, Divergence(map[string][]Line{"X": SourceLines("a\n"), "Y": SourceLines("b\n")}), eps)
}

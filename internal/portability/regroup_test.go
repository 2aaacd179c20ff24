package portability

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixture's A and B (both on dev X) as one platform "X", C as "amd".
// Each variant keeps its best toolchain: v1 1.0 s (A), v2 2.0 s (A, the
// first of equals), w 4.0 s (A; B failed). On X the best is v1's 1.0 s:
// app eff v1 1, v2 0.5, w 0.25; PP over {X} is the same; s1 (v1) 1.
// "amd" only compiles: excluded from the default set, and with it every PP is 0.
func TestRegroupTakesEachVariantsBestToolchain(t *testing.T) {
	in := Regroup(fixture(), func(p Platform) string {
		if p.Device == devX {
			return "X"
		}
		return "amd"
	})
	require.Len(t, in.Platforms, 2)
	assert.Equal(t, []string{"X", "amd"}, []string{in.Platforms[0].Name(), in.Platforms[1].Name()})
	assert.Equal(t, Measured, in.Platforms[0].Status)
	assert.Equal(t, CompilesNotRun, in.Platforms[1].Status)
	require.Len(t, in.Measurements, 3)

	h := DefaultSet(in)
	assert.Equal(t, []string{"X"}, h.Platforms)
	assert.Equal(t, []Exclude{{"amd", CompilesNotRun}}, h.Excluded)
	a := Analyze(in, h, Options{})
	got := map[string]float64{}
	for _, s := range a.ScoresOf(fixProblem, VariantLevel) {
		got[s.Application] = s.App.V
	}
	assert.InDeltaMapValues(t, map[string]float64{"v1": 1, "v2": 0.5, "w": 0.25, "u": 0}, got, 1e-12)
	for _, s := range a.ScoresOf(fixProblem, StrategyLevel) {
		if s.Application == "s1" {
			assert.InDelta(t, 1, s.App.V, 1e-12)
			assert.Equal(t, "v1", s.On[0].Variant)
		}
	}

	all := Analyze(in, PlatformSet{Name: "with amd", Platforms: []string{"X", "amd"}}, Options{})
	for _, s := range all.Scores {
		assert.Zero(t, s.App.V, "%s: nothing runs on amd", s.Application)
		assert.Equal(t, CompilesNotRun, s.On[1].Status)
	}
}

// Merge keeps the first measurement of a (problem, platform, variant) and
// prefers a measured platform to a compiling one of the same name.
func TestMerge(t *testing.T) {
	a := fixture()
	b := fixture()
	b.Platforms[2].Status = Measured // C measured in the second folder
	b.Rooflines = map[string]float64{devX: 9}
	m := Merge(a, b)
	assert.Len(t, m.Measurements, len(a.Measurements))
	assert.Len(t, m.Platforms, 3)
	assert.Equal(t, Measured, m.Platforms[2].Status)
	assert.Equal(t, 9.0, m.Rooflines[devX])
	assert.Len(t, m.Builds, 2*len(a.Builds))
}

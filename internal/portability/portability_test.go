package portability

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const eps = 1e-9

func score(t *testing.T, a *Analysis, level, app string) Score {
	t.Helper()
	for _, s := range a.Scores {
		if s.Level == level && s.Application == app {
			return s
		}
	}
	t.Fatalf("no %s score of %s", level, app)
	return Score{}
}

func assertInterval(t *testing.T, want, got Interval, what string) {
	t.Helper()
	assert.InDelta(t, want.V, got.V, eps, what+" value")
	assert.InDelta(t, want.Lo, got.Lo, eps, what+" lower bound")
	assert.InDelta(t, want.Hi, got.Hi, eps, what+" upper bound")
}

// The fixture's numbers, computed by hand in fixture_test.go.
func TestFixtureByHand(t *testing.T) {
	in := fixture()
	h := DefaultSet(in)
	assert.Equal(t, []string{platA.Name(), platB.Name()}, h.Platforms)
	assert.Equal(t, []Exclude{{platC.Name(), CompilesNotRun}}, h.Excluded)
	a := Analyze(in, h, fixOptions)

	assertInterval(t, Interval{2. / 3, 8. / 15, 2. / 3}, score(t, a, VariantLevel, "v1").App, "v1")
	assertInterval(t, Interval{2. / 3, 4. / 7, 10. / 13}, score(t, a, VariantLevel, "v2").App, "v2")
	w := score(t, a, VariantLevel, "w")
	assertInterval(t, Interval{}, w.App, "w")
	assert.Equal(t, Failed, w.On[1].Status)
	assert.Equal(t, 1, w.RunsOn)
	assertInterval(t, Interval{0.25, 0.25, 0.25}, w.Supported, "w where it runs")

	s1 := score(t, a, StrategyLevel, "s1")
	assertInterval(t, Interval{1, 8. / 9, 1}, s1.App, "s1")
	assert.Equal(t, "v1", s1.On[0].Variant)
	assert.Equal(t, "v2", s1.On[1].Variant)
	require.NotNil(t, s1.Arch)
	assert.InDelta(t, 1./3, s1.Arch.V, eps)
	require.NotNil(t, s1.Datasheet)
	assert.InDelta(t, 4./15, s1.Datasheet.V, eps)
	assertInterval(t, Interval{}, score(t, a, StrategyLevel, "s2").App, "s2")
	u := score(t, a, StrategyLevel, "s3")
	assertInterval(t, Interval{}, u.App, "s3")
	assert.Equal(t, []string{BuildFailed, NotBuilt}, []string{u.On[0].Status, u.On[1].Status})
	assert.Equal(t, "internal compiler error", u.On[0].Reason)

	e := s1.On[0].Eff
	assertInterval(t, Interval{4, 3.2, 4 / 0.9}, e.GBpsMin, "v1 on A GB/s")
	assertInterval(t, Interval{0.5, 0.4, 4 / 0.9 / 8}, *e.Arch, "v1 on A arch eff")
	assert.Equal(t, "v1", e.Best)
}

// A platform that only compiles, named in H, makes every PP 0 and says why.
func TestCompileOnlyPlatformInSet(t *testing.T) {
	in := fixture()
	h := PlatformSet{Name: "with AMD", Platforms: []string{platA.Name(), platB.Name(), platC.Name()}}
	a := Analyze(in, h, fixOptions)
	for _, s := range a.Scores {
		assert.Zero(t, s.App.V, s.Application)
		assert.Equal(t, CompilesNotRun, s.On[2].Status)
	}
	assertInterval(t, Interval{1, 8. / 9, 1}, score(t, a, StrategyLevel, "s1").Supported, "s1 where it runs")
}

// A best-known time faster than any measured one becomes the reference.
func TestBestKnownOverride(t *testing.T) {
	in := fixture()
	opts := fixOptions
	opts.BestKnown = map[ProblemPlatform]float64{{fixProblem, platA.Name()}: 0.5}
	a := Analyze(in, DefaultSet(in), opts)
	v1 := score(t, a, VariantLevel, "v1")
	// A: 0.5/1 = 0.5, B: 0.5 as before: PP 0.5.
	assert.InDelta(t, 0.5, v1.App.V, eps)
	assert.Equal(t, "best known", v1.On[0].Eff.Best)
}

// PP's definition: harmonic mean, 0 with any 0, 0 for no platform.
func TestPP(t *testing.T) {
	assert.InDelta(t, 2./3, PP([]float64{1, 0.5}), eps)
	assert.InDelta(t, 0.8, PP([]float64{0.8}), eps)
	assert.Zero(t, PP([]float64{1, 0}))
	assert.Zero(t, PP(nil))
}

// Bootstrap replicates give the interval of the ratio, the best's own is exactly 1.
func TestAppEfficiencyFromReplicates(t *testing.T) {
	best := Measurement{Seconds: 1, Lo: 0.9, Hi: 1.1, Boot: []float64{0.9, 1, 1.1, 1}}
	m := Measurement{Seconds: 2, Lo: 1.8, Hi: 2.2, Boot: []float64{1.8, 2, 2.2, 2}}
	e := appEfficiency(m, best)
	assert.InDelta(t, 0.5, e.V, eps)
	assert.InDelta(t, 0.5, e.Lo, eps) // every replicate ratio is 0.5
	assert.InDelta(t, 0.5, e.Hi, eps)
	assertInterval(t, Interval{1, 1, 1}, appEfficiency(best, best), "best")
}

// The cascade sorts each line's platforms by efficiency and ends at its PP.
func TestCascade(t *testing.T) {
	in := fixture()
	a := Analyze(in, DefaultSet(in), fixOptions)
	c := a.Cascade(fixProblem, VariantLevel)
	require.Len(t, c.Lines, 4)
	for _, l := range c.Lines {
		for i := 1; i < len(l.Steps); i++ {
			assert.GreaterOrEqual(t, l.Steps[i-1].Eff.V, l.Steps[i].Eff.V)
		}
		assert.InDelta(t, l.PP.V, l.Steps[len(l.Steps)-1].PP, eps, l.Application)
		assert.InDelta(t, l.Steps[0].Eff.V, l.Steps[0].PP, eps, "PP of one platform is its efficiency")
	}
	assert.Equal(t, []string{"v1", "v2"}, []string{c.Lines[0].Application, c.Lines[1].Application}, "highest PP first")
	_, err := CascadeSVG(c)
	require.NoError(t, err)
}

// Write makes the page, both CSVs and the figures.
func TestWrite(t *testing.T) {
	in := fixture()
	gen := t.TempDir()
	writeProgram(t, gen, "k", "v1.cpp", "int a;\nint b;\n")
	writeProgram(t, gen, "k", "v2.cpp", "int a;\nint c;\n")
	writeProgram(t, gen, "k", "w.cu", "int a;\n")
	opts := fixOptions
	opts.Generated = gen
	a := Analyze(in, DefaultSet(in), opts)
	require.NoError(t, a.DivergenceErr)
	dir := t.TempDir()
	require.NoError(t, a.Write(dir))
	for _, f := range []string{MarkdownFile, P3File, P3StrategyFile, FiguresDir + "/cascade-k-100.svg", FiguresDir + "/navchart.svg"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	require.NoError(t, err)
	again := t.TempDir()
	require.NoError(t, Analyze(in, DefaultSet(in), opts).Write(again))
	for _, f := range []string{MarkdownFile, P3File, P3StrategyFile, FiguresDir + "/cascade-k-100.svg"} {
		x, _ := os.ReadFile(filepath.Join(dir, f))
		y, _ := os.ReadFile(filepath.Join(again, f))
		assert.Equal(t, string(x), string(y), "%s is the same every time", f)
	}
	assert.Contains(t, string(md), "Platform set H: measured platforms")
	assert.Contains(t, string(md), "tcC on gfx90a (compiles, not run)")
	// s1 runs v1 on A, v2 on B: {a, b} and {a, c} share 1 of 3 lines.
	assert.InDelta(t, 2./3, *score(t, a, StrategyLevel, "s1").Divergence, eps)
	assert.Zero(t, *score(t, a, VariantLevel, "v1").Divergence)
}

func writeProgram(t *testing.T, dir, kernel, name, src string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, kernel), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, kernel, name), []byte(src), 0o644))
}

// The headline problem is the largest size run on the most platforms: a
// larger size measured on fewer platforms does not hide it.
func TestHeadlineTakesTheSizeMostPlatformsRan(t *testing.T) {
	on := func(platforms ...string) []OnPlatform {
		var out []OnPlatform
		for _, p := range []string{"gpu", "cpu"} {
			o := OnPlatform{Platform: p, Status: NoRecord}
			if slices.Contains(platforms, p) {
				o = OnPlatform{Platform: p, Status: Measured, Eff: &Efficiency{}}
			}
			out = append(out, o)
		}
		return out
	}
	small, mid, big := Problem{"op", 1001}, Problem{"op", 10001}, Problem{"op", 100001}
	a := &Analysis{Scores: []Score{
		{Problem: Problem{"axpby", 10}, On: on("gpu")},
		{Problem: Problem{"axpby", 20}, On: on("gpu")},
		{Problem: small, On: on("gpu")}, {Problem: small, On: on("cpu")},
		{Problem: mid, On: on("gpu", "cpu")},
		{Problem: big, On: on("gpu")},
	}}
	assert.Equal(t, map[string]Problem{"axpby": {"axpby", 20}, "op": mid}, a.Headline())
}

// Application efficiency compares times of one clock: a measurement of
// another clock on the same platform (a merged folder of two harnesses) is
// against the best of its own clock, never against the other's.
func TestAppEfficiencyPairsLikeClocks(t *testing.T) {
	p := Problem{"dot", 8}
	in := Input{Measurements: []Measurement{
		{Problem: p, Platform: "P", Variant: "fast", OK: true, Seconds: 1, Lo: 1, Hi: 1, Clock: "cuda-event"},
		{Problem: p, Platform: "P", Variant: "slow", OK: true, Seconds: 2, Lo: 2, Hi: 2, Clock: "host"},
		{Problem: p, Platform: "P", Variant: "slower", OK: true, Seconds: 4, Lo: 4, Hi: 4, Clock: "host"},
	}}
	effs := Efficiencies(in, Options{})
	assert.InDelta(t, 1, effs[0].App.V, eps)
	assert.InDelta(t, 1, effs[1].App.V, eps, "the best of the host clock, not 1/2 against the events")
	assert.Equal(t, "slow", effs[1].Best)
	assert.InDelta(t, 0.5, effs[2].App.V, eps)
}

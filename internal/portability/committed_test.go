package portability

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed H200 folder of paper 002's matrix: every strategy of every
// problem gets a PP, every PP and efficiency lies in [0, 1] with its
// interval around it, and the export reads back.
func TestCommittedFolder(t *testing.T) {
	in, err := Load("../../results/nvidia-h200-matrix")
	require.NoError(t, err)
	h := DefaultSet(in)
	require.NotEmpty(t, h.Platforms)
	a := Analyze(in, h, Options{Generated: "../../generated"})
	require.NoError(t, a.DivergenceErr)
	strategies := map[string]bool{}
	for _, m := range in.Measurements {
		strategies[m.Strategy] = true
	}
	for _, p := range a.Problems() {
		scored := map[string]bool{}
		for _, s := range a.ScoresOf(p, StrategyLevel) {
			scored[s.Application] = true
		}
		for st := range strategies {
			assert.True(t, scored[st], "%s: no PP of %s", p, st)
		}
	}
	in01 := func(i Interval, what string) {
		assert.True(t, 0 <= i.Lo && i.Lo <= i.V+eps && i.V <= i.Hi+eps && i.Hi <= 1, "%s: %v", what, i)
	}
	for _, s := range a.Scores {
		what := s.Problem.String() + " " + s.Application
		in01(s.App, what)
		in01(s.Supported, what+" where it runs")
		if s.Arch != nil {
			in01(*s.Arch, what+" arch")
		}
		require.NotNil(t, s.Divergence, what)
		assert.True(t, *s.Divergence >= 0 && *s.Divergence <= 1, what)
		if s.Level == VariantLevel {
			assert.Zero(t, *s.Divergence, "%s: one program on every platform", what)
		}
		assert.Len(t, s.On, len(h.Platforms))
	}
	for _, e := range a.Efficiencies {
		if e.OK {
			in01(e.App, e.Platform+" "+e.Variant)
		}
	}
	f := readP3(t, a.P3CSV(StrategyLevel))
	pp := libraryPP(t, f, "app eff")
	for _, s := range a.ScoresOf(a.Problems()[0], StrategyLevel) {
		assert.InDelta(t, s.App.V, pp[[2]string{s.Problem.String(), s.Application}], 1e-5)
	}
	require.NoError(t, a.Write(t.TempDir()))
}

package portability

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// p3Frame is a P3 CSV read back by column name.
type p3Frame struct {
	col  map[string]int
	rows [][]string
}

func readP3(t *testing.T, data []byte) p3Frame {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	f := p3Frame{col: map[string]int{}, rows: rows[1:]}
	for i, c := range rows[0] {
		f.col[c] = i
	}
	return f
}

func (f p3Frame) get(row []string, col string) string { return row[f.col[col]] }

func (f p3Frame) num(t *testing.T, row []string, col string) float64 {
	v := f.get(row, col)
	if v == "" {
		return 0 // pandas reads an empty cell as NaN; pp() fills NaN with 0
	}
	x, err := strconv.ParseFloat(v, 64)
	require.NoError(t, err, col)
	return x
}

// libraryPP is p3analysis.metrics.pp over one efficiency column, as the
// library computes it (p3analysis/metrics/_pp.py): for each problem, every
// (platform, application) pair of the problem's unique platforms and
// applications that has no row is added with efficiency 0, NaN is filled
// with 0, and each (problem, application) gets statistics.harmonic_mean of
// its efficiencies, which is 0 when any is 0.
func libraryPP(t *testing.T, f p3Frame, eff string) map[[2]string]float64 {
	type cell struct{ problem, platform, app string }
	effs := map[cell]float64{}
	platforms, apps := map[string][]string{}, map[string][]string{}
	for _, r := range f.rows {
		c := cell{f.get(r, "problem"), f.get(r, "platform"), f.get(r, "application")}
		effs[c] = f.num(t, r, eff)
		platforms[c.problem] = appendNew(platforms[c.problem], c.platform)
		apps[c.problem] = appendNew(apps[c.problem], c.app)
	}
	out := map[[2]string]float64{}
	for problem, as := range apps {
		for _, a := range as {
			var inv float64
			zero := false
			for _, p := range platforms[problem] {
				e := effs[cell{problem, p, a}]
				if e == 0 {
					zero = true
				}
				inv += 1 / e
			}
			if zero {
				out[[2]string{problem, a}] = 0
			} else {
				out[[2]string{problem, a}] = float64(len(platforms[problem])) / inv
			}
		}
	}
	return out
}

// libraryAppEff is p3analysis.metrics.application_efficiency(df,
// foms="lower"): the best (least) fom of the row's (problem, platform)
// over its fom.
func libraryAppEff(t *testing.T, f p3Frame) []float64 {
	best := map[[2]string]float64{}
	for _, r := range f.rows {
		if f.get(r, "fom") == "" {
			continue
		}
		k := [2]string{f.get(r, "problem"), f.get(r, "platform")}
		if b, ok := best[k]; !ok || f.num(t, r, "fom") < b {
			best[k] = f.num(t, r, "fom")
		}
	}
	var out []float64
	for _, r := range f.rows {
		if f.get(r, "fom") == "" {
			out = append(out, 0)
			continue
		}
		out = append(out, best[[2]string{f.get(r, "problem"), f.get(r, "platform")}]/f.num(t, r, "fom"))
	}
	return out
}

// The export has the library's columns, and the library's definitions over
// it give our efficiencies and PPs (the fixture's hand computation:
// v1 2/3, v2 2/3, w 0; s1 1, s2 0; s1's arch PP 1/3).
func TestP3ExportMatchesLibraryDefinition(t *testing.T) {
	for _, h := range []PlatformSet{
		DefaultSet(fixture()),
		{Name: "with AMD", Platforms: []string{platA.Name(), platB.Name(), platC.Name()}},
	} {
		a := Analyze(fixture(), h, fixOptions)
		for _, level := range []string{VariantLevel, StrategyLevel} {
			f := readP3(t, a.P3CSV(level))
			for _, c := range []string{"problem", "platform", "application", "fom", "app eff", "arch eff"} {
				assert.Contains(t, f.col, c)
			}
			assert.Len(t, f.rows, len(a.ScoresOf(fixProblem, level))*len(h.Platforms), "one row per application and platform of H")
			for i, e := range libraryAppEff(t, f) {
				assert.InDelta(t, e, f.num(t, f.rows[i], "app eff"), 1e-5, "row %d", i)
			}
			app, arch := libraryPP(t, f, "app eff"), libraryPP(t, f, "arch eff")
			for _, s := range a.ScoresOf(fixProblem, level) {
				k := [2]string{s.Problem.String(), s.Application}
				assert.InDelta(t, s.App.V, app[k], 1e-5, "%s %s app PP", h.Name, s.Application)
				assert.InDelta(t, s.Arch.V, arch[k], 1e-5, "%s %s arch PP", h.Name, s.Application)
			}
			if level == StrategyLevel && len(h.Platforms) == 2 {
				assert.InDelta(t, 1, app[[2]string{fixProblem.String(), "s1"}], 1e-5)
				assert.InDelta(t, 1./3, arch[[2]string{fixProblem.String(), "s1"}], 1e-5)
			}
		}
	}
}

package reportspec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/results"
)

func TestRepoSpecsAreValid(t *testing.T) {
	dir, v := reporttest.SpecDir(t), reporttest.Vocab(t)
	figs, err := LoadFigures(filepath.Join(dir, "figures.yaml"), v)
	require.NoError(t, err)
	claims, err := LoadClaims(filepath.Join(dir, "claims.yaml"), v)
	require.NoError(t, err)
	tables, err := LoadTables(filepath.Join(dir, "tables.yaml"), v)
	require.NoError(t, err)
	assert.NotEmpty(t, figs)
	assert.NotEmpty(t, claims)
	assert.NotEmpty(t, tables.Tables)
	ids := map[string]bool{}
	for _, f := range figs {
		ids[f.ID] = true
	}
	for _, id := range []string{"fig1-axpby", "fig2-dot", "fig3-spmv", "cgsolve", "fig18-spmv-ompx", "fig19-spmv-ompx-opt", "cpu-axpby"} {
		assert.True(t, ids[id], "figure %s", id)
	}
}

func TestParseFiguresReportsEveryError(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "figures_bad.yaml"))
	require.NoError(t, err)
	_, err = ParseFigures("figures_bad.yaml", data, reporttest.Vocab(t))
	require.Error(t, err)
	reporttest.Golden(t, "figures_bad.errors", []byte(err.Error()+"\n"))

	// A kernel and a strategy more change no expected message.
	wider := results.Union(reporttest.Vocab(t), &results.Vocabulary{Kernels: []results.KernelName{{Name: "triad"}},
		Strategies: []results.StrategyName{{Name: "plain", Variants: []string{"plain"}}}})
	_, err = ParseFigures("figures_bad.yaml", data, wider)
	require.Error(t, err)
	assert.Contains(t, err.Error(), ", triad")
	reporttest.GoldenOf(t, "figures_bad.errors", []byte(err.Error()+"\n"), wider)
}

func TestParseFiguresMessages(t *testing.T) {
	head := "figures:\n  - id: f\n    title: T\n"
	tests := []struct{ name, yaml, want string }{
		{"unknown kernel", head + "    kernel: spmvv\n    variants: [{variant: omp-raw}]\n",
			`f.yaml:4:13: figure "f": unknown kernel "spmvv" (known: ` + strings.Join(reporttest.Vocab(t).KernelNames(), ", ") + `); did you mean "spmv"?`},
		{"unknown field", head + "    kernel: dot\n    colour: red\n    variants: [{variant: omp-raw}]\n",
			`f.yaml:5:5: unknown field "colour" in figure (known: at, families, id, kernel, kernels, kind, log_x, log_y, normalize_to, panel_by, paper, sizes, target, title, variants, x, x_label, y, y_label)`},
		{"empty variants", head + "    kernel: dot\n    variants: []\n",
			`f.yaml:5:15: figure "f": variants is empty`},
		{"missing variants", head + "    kernel: dot\n",
			`f.yaml:2:5: figure "f": variants is empty`},
		{"bad enum", head + "    kernel: dot\n    panel_by: compiler\n    variants: [{variant: omp-raw}]\n",
			`f.yaml:5:15: figure "f": panel_by must be one of toolchain, none, not "compiler"`},
		{"syntax", "figures:\n  - id: [\n", `f.yaml:2: invalid YAML: did not find expected node content`},
		{"not a list", "figures: {id: f}\n", `f.yaml:1:10: figures must be a list`},
		{"no figures", "figs: []\n", "f.yaml:1:1: unknown field \"figs\" in figures file (known: figures)\nf.yaml:1:1: figures is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFigures("f.yaml", []byte(tt.yaml), reporttest.Vocab(t))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestParseFiguresDefaults(t *testing.T) {
	figs, err := ParseFigures("f.yaml", []byte("figures:\n  - {id: f, title: T, kernel: spmv, variants: [{variant: omp-raw}]}\n"), reporttest.Vocab(t))
	require.NoError(t, err)
	f := figs[0]
	assert.Equal(t, "gbps", f.Y)
	assert.Equal(t, "toolchain", f.Panel)
	assert.Equal(t, "any", f.Target)
	assert.Equal(t, "lines", f.Kind)
	assert.Equal(t, "omp-raw", f.Series[0].Label)
	assert.Equal(t, reporttest.Vocab(t).SizeLabel("spmv"), f.XLabel)
}

func TestParseClaimsMessages(t *testing.T) {
	head := "claims:\n  - id: c\n    paper: 002\n    quote: Q\n    statement: S\n    kernels: [dot]\n"
	sel := "    numerator: {variants: [omp-raw]}\n    denominator: {variants: [kk-cuda-3lvl]}\n"
	tests := []struct{ name, yaml, want string }{
		{"inverted range", head + sel + "    range: [0.9, 0.5]\n",
			`c.yaml:9:12: claim "c": range [0.9, 0.5] is empty`},
		{"no range", head + sel,
			`c.yaml:2:5: claim "c": range must be [lo, hi]`},
		{"range on order", head + sel + "    type: order\n    range: [1, 2]\n",
			`c.yaml:10:12: claim "c": range does not apply to order claims (use margin)`},
		{"unknown family", head + "    numerator: {variants: [omp-raw], families: [icx]}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:49: claim "c" numerator: unknown family "icx" (known: ` + strings.Join(reporttest.Vocab(t).Families, ", ") + `)`},
		{"unknown selector field", head + "    numerator: {variant: omp-raw}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			"c.yaml:7:16: claim \"c\" numerator: variants is empty\nc.yaml:7:17: unknown field \"variant\" in selector (known: families, kernels, premises, toolchains, variants)"},
		{"no quote", strings.Replace(head, "    quote: Q\n", "", 1) + sel + "    range: [0, 1]\n",
			`c.yaml:2:5: claim "c": quote is missing (the paper's sentence the claim checks)`},
		{"bad aggregate", head + sel + "    aggregate: mean\n    range: [0, 1]\n",
			`c.yaml:9:16: claim "c": aggregate must be one of median, geomean, min, max, all, not "mean"`},
		// Names that do not exist: each at its line, with what would do.
		{"unknown variant", head + "    numerator: {variants: [kk-omp-c]}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:28: claim "c" numerator: unknown variant "kk-omp-c" (known: ` + strings.Join(reporttest.Vocab(t).VariantNames(), ", ") + `); did you mean "kk-omp-a"?`},
		{"unknown toolchain", head + "    numerator: {variants: [omp-raw], toolchains: [clang21-sm90]}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:51: claim "c" numerator: unknown toolchain "clang21-sm90" (known: ` + strings.Join(reporttest.Vocab(t).Toolchains, ", ") + `); did you mean "clang22-sm90"?`},
		{"unknown size", head + sel + "    sizes: [100000000, 1000001]\n    range: [0, 1]\n",
			`c.yaml:9:24: claim "c": no kernel of the claim has size 1000001 (sizes: ` + sizesOf(reporttest.Vocab(t), "dot") + `); did you mean 1000000?`},
		{"premise on a tunable the cell lacks", "claims:\n  - id: c\n    paper: 000\n    quote: Q\n    statement: S\n    kernels: [spmv]\n" +
			"    numerator: {variants: [kk-omp-b], premises: {snap_vector: 1}}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:50: claim "c" numerator: premise on snap_vector, which spmv.kk-omp-b lacks (its tunables: max_active_teams, rows_per_team, team_size, vector_size)`},
		{"premise misspelt", "claims:\n  - id: c\n    paper: 000\n    quote: Q\n    statement: S\n    kernels: [snap_yi]\n" +
			"    numerator: {variants: [kk-omp-b], premises: {snap_vectr: 1}}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:50: claim "c" numerator: premise on snap_vectr, which snap_yi.kk-omp-b lacks (its tunables: snap_vector); did you mean "snap_vector"?`},
		{"premise the program does not hold", "claims:\n  - id: c\n    paper: 000\n    quote: Q\n    statement: S\n    kernels: [snap_yi]\n" +
			"    numerator: {variants: [kk-omp-b], premises: {snap_vector: 32}}\n    denominator: {variants: [kk-cuda-3lvl]}\n    range: [0, 1]\n",
			`c.yaml:7:50: claim "c" numerator: premise snap_vector=32, but snap_yi.kk-omp-b is generated with snap_vector=1 (a premise is what the program as published holds)`},
		{"bad same_toolchain", head + sel + "    same_toolchain: within\n    range: [0, 1]\n",
			`c.yaml:9:21: same_toolchain must be true or false, not "within"`},
		{"unknown keep axis", head + sel + "    keep: [toolchain, compiler]\n    range: [0, 1]\n",
			`c.yaml:9:23: claim "c": keep: unknown axis "compiler" (known: family, library, size, toolchain)`},
		{"keep and same_toolchain", head + sel + "    keep: [toolchain]\n    same_toolchain: true\n    range: [0, 1]\n",
			`c.yaml:10:21: claim "c": give keep or same_toolchain, not both (same_toolchain: true is keep: [toolchain, library, size])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseClaims("c.yaml", []byte(tt.yaml), reporttest.Vocab(t))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// sizesOf lists a kernel's sizes as the size error does.
func sizesOf(v *results.Vocabulary, kernel string) string {
	var out []string
	for _, n := range v.Sizes[kernel] {
		out = append(out, fmt.Sprint(n))
	}
	return strings.Join(out, ", ")
}

func TestParseClaimsPairingAndPremises(t *testing.T) {
	claims, err := ParseClaims("c.yaml", []byte(`claims:
  - id: c
    paper: "000"
    quote: Q
    statement: S
    kernels: [snap_yi]
    numerator: {variants: [kk-ompx], premises: {snap_vector: 32}}
    denominator: {variants: [kk-omp-b], premises: {snap_vector: 1}}
    same_toolchain: within-family
    sizes: [10]
    range: [0, 1]
`), reporttest.Vocab(t))
	require.NoError(t, err)
	c := claims[0]
	assert.True(t, c.WithinFamily)
	assert.False(t, c.SameToolchain)
	assert.Equal(t, "at", c.Sizes)
	assert.Equal(t, []int64{10}, c.At)
	assert.Equal(t, "snap_vector=1", c.Denominator.PremiseText())
	assert.True(t, c.Denominator.Holds(map[string]int64{"snap_vector": 1}))
	assert.False(t, c.Denominator.Holds(map[string]int64{"snap_vector": 32}))
	assert.False(t, c.Denominator.Holds(nil), "a configuration that does not name the tunable does not hold it")
}

// keep says what a ratio's two sides share; without it a claim keeps the
// family's toolchain, the library and the size (the safe pairing), and
// same_toolchain is its older spelling.
func TestParseClaimsKeep(t *testing.T) {
	n := 0
	claim := func(extra string) string {
		n++
		return "  - id: c" + fmt.Sprint(n) + "\n    paper: \"000\"\n    quote: Q\n    statement: S\n    kernels: [spmv]\n" +
			"    numerator: {variants: [kk-ompx]}\n    denominator: {variants: [kokkos-omptarget, omp-raw]}\n" + extra + "    range: [0, 1]\n"
	}
	claims, err := ParseClaims("c.yaml", []byte("claims:\n"+claim("")+claim("    keep: [toolchain]\n")+
		claim("    same_toolchain: true\n")+claim("    same_toolchain: false\n")+claim("    keep: [size, family]\n")), reporttest.Vocab(t))
	require.NoError(t, err)
	for i, want := range []struct {
		keep                       []string
		toolchain, family, library bool
	}{
		{[]string{"family", "library", "size"}, false, true, true},
		{[]string{"size", "toolchain"}, true, false, false},
		{[]string{"library", "size", "toolchain"}, true, false, true},
		{[]string{"library", "size"}, false, false, true},
		{[]string{"family", "size"}, false, true, false},
	} {
		c := claims[i]
		assert.Equal(t, want.keep, c.Keep, "claim %d", i)
		assert.Equal(t, want.toolchain, c.SameToolchain, "claim %d", i)
		assert.Equal(t, want.family, c.WithinFamily, "claim %d", i)
		assert.Equal(t, want.library, c.SameLibrary, "claim %d", i)
	}
	c := claims[0]
	assert.Equal(t, map[string]string{"kk-ompx": results.LayerMark, "kokkos-omptarget": "Kokkos 4.6.01"}, c.RanOn)
	assert.Equal(t, "pm layer against Kokkos 4.6.01", c.MixesLibrary("kk-ompx", "kokkos-omptarget"))
	assert.Empty(t, c.MixesLibrary("kk-ompx", "omp-raw"), "code written directly pairs with either")
	assert.Empty(t, claims[1].MixesLibrary("kk-ompx", "kokkos-omptarget"), "keep without library")
}

// Every claim quotes its paper word for word, and so does every sentence
// of the not_measurable list. The papers' texts are not in the repository:
// PM_SEEDS_DIR names the folder holding 000_*.txt, 002_*.txt...
func TestClaimQuotesAreThePapersWords(t *testing.T) {
	dir := os.Getenv("PM_SEEDS_DIR")
	if dir == "" {
		t.Skip("PM_SEEDS_DIR (the papers' texts) is not set")
	}
	cf, err := LoadClaimsFile(reporttest.SpecDir(t)+"/claims.yaml", reporttest.Vocab(t))
	require.NoError(t, err)
	// The texts are extracted from PDFs: LaTeX math ("$2\times$") and words
	// split at a line's hyphen ("Kokkosnative") stay, so letters and digits
	// are compared, with \times and × read as x and \approx (≈) dropped.
	latex := strings.NewReplacer(`\times`, "x", "×", "x", `\approx`, "", "≈", "")
	squash := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, latex.Replace(s))
	}
	check := func(what, ref, quote string) {
		paper := strings.Fields(strings.TrimPrefix(ref, "beyond "))[0]
		files, err := filepath.Glob(filepath.Join(dir, paper+"_*.txt"))
		require.NoError(t, err)
		require.Len(t, files, 1, "%s: paper %s", what, paper)
		text, err := os.ReadFile(files[0])
		require.NoError(t, err)
		assert.True(t, strings.Contains(squash(string(text)), squash(quote)), "%s does not quote paper %s word for word: %q", what, paper, quote)
	}
	for _, c := range cf.Claims {
		check(c.ID, c.Paper, c.Quote)
	}
	require.NotEmpty(t, cf.NotMeasurable)
	for i, u := range cf.NotMeasurable {
		check(fmt.Sprintf("not_measurable[%d] (%s)", i, u.Paper), u.Paper, u.Quote)
	}
}

// The shipped claims say the paper's number or statement beside ours
// (paper_says), and a claim of the project's own is marked ours; every
// not_measurable entry gives its reason.
func TestShippedClaimsSayWhatThePaperSays(t *testing.T) {
	cf, err := LoadClaimsFile(reporttest.SpecDir(t)+"/claims.yaml", reporttest.Vocab(t))
	require.NoError(t, err)
	for _, c := range cf.Claims {
		assert.NotEmpty(t, c.PaperSays, "%s: paper_says: the paper's number or statement (\"10x\", \"about 70%%\")", c.ID)
		assert.Equal(t, strings.HasPrefix(c.Paper, "beyond "), c.Ours, "%s: a claim beyond the paper is ours (ours: true), and only such a claim", c.ID)
	}
	for _, u := range cf.NotMeasurable {
		assert.NotEmpty(t, u.Reason, u.Quote)
	}
}

func TestParseNotMeasurable(t *testing.T) {
	cf, err := ParseClaimsFile("c.yaml", []byte(`claims: []
not_measurable:
  - paper: 000 Sec. IV-A
    quote: Q
    reason: an AMD GPU
  - paper: 000
    quote: Q2
  - {paper: 000, quote: Q3, reason: R, colour: red}
`), reporttest.Vocab(t))
	require.Error(t, err)
	assert.Nil(t, cf)
	assert.Contains(t, err.Error(), "c.yaml:6:5: not_measurable entry: reason is missing (why nothing here measures it)")
	assert.Contains(t, err.Error(), "c.yaml:8:40: unknown field \"colour\" in not_measurable entry (known: paper, quote, reason)")
	cf, err = ParseClaimsFile("c.yaml", []byte("claims: []\nnot_measurable:\n  - {paper: 000 Sec. IV-A, quote: Q, reason: R}\n"), reporttest.Vocab(t))
	require.NoError(t, err)
	assert.Equal(t, []Unmeasurable{{Paper: "000 Sec. IV-A", Quote: "Q", Reason: "R", Node: cf.NotMeasurable[0].Node}}, cf.NotMeasurable)
}

// A time claim bounds the numerator's time per call (µs) and has no
// denominator.
func TestParseTimeClaims(t *testing.T) {
	claim := "claims:\n  - id: c\n    paper: \"002\"\n    quote: Q\n    statement: S\n    type: time\n    kernels: [axpby]\n" +
		"    numerator: {variants: [kk-cuda-3lvl]}\n    sizes: [100000]\n    aggregate: all\n    range: [0, 20]\n"
	claims, err := ParseClaims("c.yaml", []byte(claim), reporttest.Vocab(t))
	require.NoError(t, err)
	assert.Equal(t, "time", claims[0].Type)
	_, err = ParseClaims("c.yaml", []byte(claim+"    denominator: {variants: [omp-raw]}\n"), reporttest.Vocab(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `c.yaml:12:18: claim "c": a time claim bounds the numerator's time per call; it has no denominator`)
}

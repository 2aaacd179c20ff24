package portability

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/portmatrix/portmatrix/internal/fsutil"
)

// FiguresDir is where Write puts the cascade plots and the navigation
// chart, inside the folder it writes to.
const FiguresDir = "figures/portability"

// Write writes portability.md, p3.csv, p3-strategy.csv and the figures
// (a strategy cascade per problem, one navigation chart of each kernel's
// headline problem when divergence is known) into dir.
func (a *Analysis) Write(dir string) error {
	figs := map[string]string{}
	files := map[string][]byte{
		P3File:         a.P3CSV(VariantLevel),
		P3StrategyFile: a.P3CSV(StrategyLevel),
	}
	var nav []NavPoint
	headline := a.Headline()
	for _, p := range a.Problems() {
		svg, err := CascadeSVG(a.Cascade(p, StrategyLevel))
		if err != nil {
			return err
		}
		name := FiguresDir + "/cascade-" + fileName(p.String()) + ".svg"
		files[name], figs[p.String()] = svg, name
		if headline[p.Kernel] == p {
			nav = append(nav, a.NavChart(p)...)
		}
	}
	if len(nav) > 0 {
		svg, err := NavChartSVG("strategies over "+a.Set.Name, nav)
		if err != nil {
			return err
		}
		name := FiguresDir + "/navchart.svg"
		files[name], figs[""] = svg, name
	}
	files[MarkdownFile] = a.Markdown(figs)
	if err := os.MkdirAll(filepath.Join(dir, FiguresDir), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := fsutil.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteFolder analyzes the results folder dir over its measured platforms
// (DefaultSet) and writes the page, the P3 CSVs and the figures into out.
func WriteFolder(dir, out string, opts Options) (*Analysis, error) {
	in, err := Load(dir)
	if err != nil {
		return nil, err
	}
	a := Analyze(in, DefaultSet(in), opts)
	return a, a.Write(out)
}

// fileName makes a problem name a file name ("axpby@100" -> "axpby-100").
func fileName(s string) string { return strings.NewReplacer("@", "-", "/", "-", " ", "-").Replace(s) }

package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/layout"

	"github.com/portmatrix/portmatrix/internal/results"
)

// DefaultSpecDir is where figures.yaml, claims.yaml and page.html.tmpl live,
// relative to the repository root.
const DefaultSpecDir = layout.ReportSpecs

// Options tune Generate.
type Options struct {
	SpecDir  string    // figures.yaml, claims.yaml, page.html.tmpl; DefaultSpecDir if empty
	Progress io.Writer // stage messages; nil for none
	// Vocabulary names the kernels, variants and families figures and claims
	// may use besides those of run.json (the source tree's: a folder older
	// than a kernel, or than the vocabulary itself).
	Vocabulary *results.Vocabulary
}

// Summary is what Generate produced.
type Summary struct {
	Figures []FigureResult
	Claims  []ClaimResult
	Cells   []CellStatus
	Written []string // paths relative to the results folder, sorted
}

// FigureResult is one figure of the spec: its files, or why it was skipped.
type FigureResult struct {
	ID    string
	Files []string // figures/<id>.svg and .png, relative to the results folder
	Note  string   // non-empty when skipped
}

type renderedFigure struct {
	figure
	SVG, PNG []byte
}

// Generate reads a results folder and writes figures/, claims.md and
// report.html into it. It never modifies the run's own files.
func Generate(resultsDir string, opt Options) (*Summary, error) {
	if opt.SpecDir == "" {
		opt.SpecDir = DefaultSpecDir
	}
	say := progress(opt.Progress)
	res, err := LoadResults(resultsDir)
	if err != nil {
		return nil, err
	}
	say("read %s: %d kernel records, %d bandwidth records", resultsDir, len(res.Kernel), len(res.Copy))
	if res.Other > 0 {
		say("ignored %d records of other kinds", res.Other)
	}
	voc := results.Union(res.Run.Vocabulary, opt.Vocabulary)
	if voc == nil {
		return nil, fmt.Errorf("%s names no vocabulary (kernels, variants, families): report it from the source tree", filepath.Join(resultsDir, runFile))
	}
	sp, err := loadSpecs(opt.SpecDir, voc)
	if err != nil {
		return nil, err
	}

	out := map[string][]byte{}
	published, tuned := splitViews(res.Kernel)
	if len(tuned) > 0 {
		say("%d kernel records of tuning configurations: claims judged as published and tuned", len(res.Kernel)-len(published))
	}
	ds := newDataset(viewOf(res, published))
	if ds.unusable > 0 {
		say("%d kernel records unverified or failed: left out of figures and claims", ds.unusable)
	}
	figs, err := renderFigures(sp.figures, ds, out)
	if err != nil {
		return nil, err
	}
	say("figures: %s", figuresLine(figs, opt.SpecDir))
	claims := evaluateAll(sp.claims, ds)
	evaluateTuned(sp.claims, claims, newDataset(viewOf(res, tuned)))
	out[claimsFile] = ClaimsMarkdown(res.Run.ID, claims)
	say("claims: %s", claimsLine(claims))
	tables := append(tablesMarkdown(buildTables(sp.tables, ds)), stepTablesMarkdown(buildStepTables(sp.steps, ds))...)
	tables = append(tables, launchMarkdown(buildLaunch(sp.launch, ds))...)
	if t := timingMarkdown(res.Kernel); t != "" {
		tables = append([]byte(t+"\n"), tables...)
	}
	out[tablesFile] = append([]byte(fmt.Sprintf("# Tables: %s\n\n", res.Run.ID)), tables...)
	cells := CellStatuses(viewOf(res, append(published, tuned...))) // a failed tuning configuration is no failed cell
	page, err := renderPage(sp.page, newPageView(res, figs, claims, cells))
	if err != nil {
		return nil, err
	}
	out[reportFile] = page
	say("cells: %s", cellsLine(cells))

	written, err := writeOutputs(resultsDir, out)
	if err != nil {
		return nil, err
	}
	say("wrote %d files into %s", len(written), resultsDir)
	return &Summary{Figures: figureResults(figs), Claims: claims, Cells: cells, Written: written}, nil
}

func progress(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, "report: "+format+"\n", args...)
		}
	}
}

type specs struct {
	figures []FigureSpec
	claims  []ClaimSpec
	tables  []TableSpec
	steps   []StepTableSpec
	launch  *LaunchSpec
	page    pageTemplate
}

// loadSpecs reads the three spec files and reports the problems of all.
func loadSpecs(dir string, v *results.Vocabulary) (specs, error) {
	var sp specs
	var errFig, errClaims, errTables, errSteps, errLaunch, errPage error
	sp.figures, errFig = LoadFigures(filepath.Join(dir, "figures.yaml"), v)
	sp.claims, errClaims = LoadClaims(filepath.Join(dir, "claims.yaml"), v)
	sp.tables, errTables = LoadTables(filepath.Join(dir, "tables.yaml"), v)
	if errTables == nil {
		sp.steps, errSteps = LoadStepTables(filepath.Join(dir, "tables.yaml"), v)
		sp.launch, errLaunch = LoadLaunch(filepath.Join(dir, "tables.yaml"), v)
	}
	sp.page, errPage = parsePage(dir)
	return sp, errors.Join(errFig, errClaims, errTables, errSteps, errLaunch, errPage)
}

func renderFigures(specs []FigureSpec, ds *dataset, out map[string][]byte) ([]renderedFigure, error) {
	figs := make([]renderedFigure, 0, len(specs))
	for _, spec := range specs {
		rf := renderedFigure{figure: buildFigure(spec, ds)}
		if rf.Note == "" {
			var err error
			rf.SVG, rf.PNG, err = renderFigure(rf.figure)
			if err != nil {
				return nil, err
			}
			out[figuresDir+"/"+spec.ID+".svg"] = rf.SVG
			out[figuresDir+"/"+spec.ID+".png"] = rf.PNG
		}
		figs = append(figs, rf)
	}
	return figs, nil
}

func figureResults(figs []renderedFigure) []FigureResult {
	out := make([]FigureResult, len(figs))
	for i, f := range figs {
		out[i] = FigureResult{ID: f.Spec.ID, Note: f.Note}
		if f.Note == "" {
			out[i].Files = []string{figuresDir + "/" + f.Spec.ID + ".svg", figuresDir + "/" + f.Spec.ID + ".png"}
		}
	}
	return out
}

// writeOutputs writes every rendered file, then removes figure files that no
// figure produces any more.
func writeOutputs(dir string, out map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, figuresDir), 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := fsutil.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), out[name], 0o644); err != nil {
			return nil, err
		}
	}
	return names, removeStale(dir, out)
}

func removeStale(dir string, out map[string][]byte) error {
	entries, err := os.ReadDir(filepath.Join(dir, figuresDir))
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := figuresDir + "/" + e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".svg" && ext != ".png") || out[name] != nil {
			continue
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	return nil
}

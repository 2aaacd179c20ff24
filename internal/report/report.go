package report

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/figures"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/report/tables"

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
	// Machines are the machine models (machines/): the figures' datasheet
	// bandwidth line of each device a model reports; nil: none.
	Machines *machine.Set
}

// Summary is what Generate produced.
type Summary struct {
	Figures []FigureResult
	Claims  []claims.Result
	// Layers are the folder's layer-against-library tables (claims.LayerTables).
	Layers  []claims.LayerTable
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
	figures.Figure
	SVG, PNG []byte
}

// Generate reads a results folder and writes figures/, claims.md and
// report.html into it. It never modifies the run's own files.
func Generate(resultsDir string, opt Options) (*Summary, error) {
	if opt.SpecDir == "" {
		opt.SpecDir = DefaultSpecDir
	}
	say := progress(opt.Progress)
	res, err := results.Load(resultsDir)
	if err != nil {
		return nil, err
	}
	say("read %s: %d kernel records, %d bandwidth records", resultsDir, len(res.Kernel), len(res.Copy))
	if res.Other > 0 {
		say("ignored %d records of other kinds", res.Other)
	}
	voc := results.Union(res.Run.Vocabulary, opt.Vocabulary)
	if voc == nil {
		return nil, fmt.Errorf("%s names no vocabulary (kernels, variants, families): report it from the source tree", filepath.Join(resultsDir, results.RunFile))
	}
	sp, err := loadSpecs(opt.SpecDir, voc)
	if err != nil {
		return nil, err
	}

	out := map[string][]byte{}
	published, tuned := dataset.SplitViews(res.Kernel)
	if len(tuned) > 0 {
		say("%d kernel records of tuning configurations: claims judged as published and tuned", len(res.Kernel)-len(published))
	}
	ds := dataset.New(dataset.View(res, published))
	ds.AddSpecs(opt.Machines, res.Run)
	if ds.Unusable > 0 {
		say("%d kernel records unverified or failed: left out of figures and claims", ds.Unusable)
	}
	figs, err := renderFigures(sp.figures, ds, out)
	if err != nil {
		return nil, err
	}
	say("figures: %s", figuresLine(figs, opt.SpecDir))
	judged := claims.Evaluate(sp.claims, ds)
	claims.EvaluateTunedFolder(sp.claims, judged, res)
	claims.EvaluateLibraries(sp.claims, judged, ds, voc)
	out[results.ClaimsFile] = claims.Markdown(res.Run.ID, judged)
	say("claims: %s", claimsLine(judged))
	layers := claims.LayerTables(ds, voc)
	out[results.TablesFile] = append(tables.Markdown(res.Run.ID, sp.tables, ds, res.Kernel), claims.LayerMarkdown(layers, "##")...)
	cells := CellStatuses(dataset.View(res, append(published, tuned...))) // a failed tuning configuration is no failed cell
	page, err := renderPage(sp.page, newPageView(res, figs, judged, cells))
	if err != nil {
		return nil, err
	}
	out[results.ReportFile] = page
	say("cells: %s", cellsLine(cells))

	written, err := writeOutputs(resultsDir, out)
	if err != nil {
		return nil, err
	}
	say("wrote %d files into %s", len(written), resultsDir)
	return &Summary{Figures: figureResults(figs), Claims: judged, Layers: layers, Cells: cells, Written: written}, nil
}

func progress(w io.Writer) func(string, ...any) {
	return func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, "report: "+format+"\n", args...)
		}
	}
}

type specs struct {
	figures []reportspec.Figure
	claims  []reportspec.Claim
	tables  *reportspec.Tables
	page    *template.Template
}

// loadSpecs reads the spec files and the page template and reports the
// problems of all.
func loadSpecs(dir string, v *results.Vocabulary) (specs, error) {
	var sp specs
	var errFig, errClaims, errTables, errPage error
	sp.figures, errFig = reportspec.LoadFigures(filepath.Join(dir, "figures.yaml"), v)
	sp.claims, errClaims = reportspec.LoadClaims(filepath.Join(dir, "claims.yaml"), v)
	sp.tables, errTables = reportspec.LoadTables(filepath.Join(dir, "tables.yaml"), v)
	sp.page, errPage = parsePage(dir)
	return sp, errors.Join(errFig, errClaims, errTables, errPage)
}

func renderFigures(specs []reportspec.Figure, ds *dataset.Set, out map[string][]byte) ([]renderedFigure, error) {
	figs := make([]renderedFigure, 0, len(specs))
	for _, spec := range specs {
		rf := renderedFigure{Figure: figures.Build(spec, ds)}
		if rf.Note == "" {
			var err error
			rf.SVG, rf.PNG, err = figures.Render(rf.Figure)
			if err != nil {
				return nil, err
			}
			out[results.FiguresDir+"/"+spec.ID+".svg"] = rf.SVG
			out[results.FiguresDir+"/"+spec.ID+".png"] = rf.PNG
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
			out[i].Files = []string{results.FiguresDir + "/" + f.Spec.ID + ".svg", results.FiguresDir + "/" + f.Spec.ID + ".png"}
		}
	}
	return out
}

// writeOutputs writes every rendered file, then removes figure files that no
// figure produces any more.
func writeOutputs(dir string, out map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, results.FiguresDir), 0o755); err != nil {
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
	entries, err := os.ReadDir(filepath.Join(dir, results.FiguresDir))
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := results.FiguresDir + "/" + e.Name()
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

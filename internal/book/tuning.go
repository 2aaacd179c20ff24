package book

import (
	"errors"
	"html/template"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
)

// tuningView is one indexed folder that holds a tuning (tuning.jsonl): the
// gap between the default launch and the tuned best, and the curves.
type tuningView struct {
	Folder, Part, Note string
	Summary            string // the gap table's first paragraph, for the Markdown summary
	Table              template.HTML
	Curves             []figView
}

// tuningViews reads the tuning of every indexed folder that has one, in
// index order (a folder once).
func tuningViews(ix *Index, root string) ([]tuningView, error) {
	var out []tuningView
	seen := map[string]bool{}
	for _, e := range ix.Current {
		if seen[e.Folder] {
			continue
		}
		seen[e.Folder] = true
		dir := filepath.Join(root, e.Folder)
		if _, err := os.Stat(filepath.Join(dir, results.TuningFile)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		v, err := report.LoadTuning(dir)
		if err != nil {
			return nil, err
		}
		md := v.Markdown()
		tv := tuningView{Folder: e.Folder, Part: e.Part, Note: e.Note, Table: markdownHTML(md)}
		if i := firstParagraphEnd(md); i > 0 {
			tv.Summary = string(md[:i])
		}
		for _, c := range v.Curves {
			tv.Curves = append(tv.Curves, figView{ID: "tuning-" + c.Kernel, Title: "Tuning curves: " + c.Kernel,
				Paper: "issue 22", Folder: e.Folder, Part: e.Part, Src: template.URL(svgURI(c.SVG))})
		}
		out = append(out, tv)
	}
	return out, nil
}

// firstParagraphEnd is where the first paragraph of md ends.
func firstParagraphEnd(md []byte) int {
	for i := 0; i+1 < len(md); i++ {
		if md[i] == '\n' && md[i+1] == '\n' {
			return i
		}
	}
	return -1
}

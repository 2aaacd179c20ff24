package book

import (
	"html/template"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// tuningSource is the caption source of a tuning curve: the tune stage
// measured it, no paper draws it (docs/tuning.md).
const tuningSource = "portmatrix tune stage"

// tuningView is one indexed folder that holds a tuning (tuning.jsonl): the
// gap between the default launch and the tuned best, and the curves.
type tuningView struct {
	Folder, Part, Note string
	Summary            string // the gap table's first paragraph, for the Markdown summary
	Table              template.HTML
	Curves             []figView
	// Search is a ground truth's search-quality table and curves
	// (tuning-check.csv: report.LoadSearch); empty for other tunings.
	Search       template.HTML
	SearchCurves []figView
	// SearchMarkdown is the same table for the Markdown summary.
	SearchMarkdown string
	Claims         []tunedEval // claims this tuning decides alone, best against best
}

// tunedEval is a claim's verdict on a tuning folder.
type tunedEval struct {
	ID, Folder, Verdict, Class string
}

// tuningViews reads the tuning of every indexed folder that has one, in
// index order (a folder once); the gap table's reasons come from the source
// tree at project (gapInputs).
func tuningViews(ix *Index, project, root string, claimSpecs []reportspec.Claim) ([]tuningView, error) {
	var out []tuningView
	seen := map[string]bool{}
	for _, e := range ix.Current {
		if seen[e.Folder] {
			continue
		}
		seen[e.Folder] = true
		dir := filepath.Join(root, e.Folder)
		if !tune.Has(dir) {
			continue
		}
		v, err := report.LoadTuning(dir)
		if err != nil {
			return nil, err
		}
		v.Explain = gapInputs(project, dir)
		md := v.Markdown()
		tv := tuningView{Folder: e.Folder, Part: e.Suite + ", " + e.Platform, Note: e.Note, Table: markdownHTML(md)}
		if i := firstParagraphEnd(md); i > 0 {
			tv.Summary = string(md[:i])
		}
		for _, c := range v.Curves {
			tv.Curves = append(tv.Curves, figView{ID: "tuning-" + c.Kernel, Title: "Tuning curves: " + c.Kernel,
				Paper: tuningSource, Folder: e.Folder, Part: e.Suite + ", " + e.Platform, Src: template.URL(svgURI(c.SVG))})
		}
		sv, err := report.LoadSearch(dir)
		if err != nil {
			return nil, err
		}
		if sv != nil {
			tv.Search = markdownHTML(sv.Markdown())
			svg, err := sv.Figure()
			if err != nil {
				return nil, err
			}
			tv.SearchCurves = append(tv.SearchCurves, figView{ID: "search-" + e.Folder, Title: "Search quality against the ground truth",
				Paper: tuningSource, Folder: e.Folder, Part: e.Suite + ", " + e.Platform, Src: template.URL(svgURI(svg))})
			tv.SearchMarkdown = string(sv.Markdown())
		}
		judged, err := claims.EvaluateTuning(dir, claimSpecs)
		if err != nil {
			return nil, err
		}
		for _, r := range judged {
			if r.Outcome == claims.NotMeasurable && !r.Premise {
				continue // the tuning has no cell of the claim
			}
			verdict := r.Verdict()
			if r.Outcome == claims.Reproduced {
				verdict += " (measured " + r.Measured() + ")"
			}
			tv.Claims = append(tv.Claims, tunedEval{ID: r.Claim.ID, Folder: e.Folder, Verdict: verdict, Class: outcomeClass[r.Outcome]})
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

// addTunedIn puts each tuning's verdicts on the claims' cards.
func (v *view) addTunedIn() {
	for i := range v.Papers {
		for j := range v.Papers[i].Claims {
			c := &v.Papers[i].Claims[j]
			for _, t := range v.Tuning {
				for _, e := range t.Claims {
					if e.ID == c.ID {
						c.TunedIn = append(c.TunedIn, e)
					}
				}
			}
		}
	}
}

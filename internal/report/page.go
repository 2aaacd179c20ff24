package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/results"
)

// pageFile is the page template inside the spec folder.
const pageFile = "page.html.tmpl"

// pageView is everything page.html.tmpl shows, computed here so that the
// template only arranges it.
type pageView struct {
	RunID        string
	Provenance   []keyValue
	Toolchains   []results.Toolchain
	ClaimSummary string
	Claims       []claimRow
	Figures      []figureView
	Skipped      []figureView
	CellSummary  string
	Cells        []CellStatus
}

type keyValue struct{ Key, Value string }

type claimRow struct {
	ID, Paper, Quote, Statement, Expected, Measured, Verdict, Class string
	TunedVerdict                                                    string // on the tuned view, or not tuned
	RatioCount                                                      string // "1 ratio", "4 ratios"
	Ratios                                                          []ratioRow
}

type ratioRow struct {
	Kernel, Numerator, Denominator, Size, Value, Interval string
}

type figureView struct {
	ID, Title, Paper, Note string
	SVG                    template.HTML
	SVGPath, PNGPath       string
}

// parsePage reads the page template, named by its path for error messages.
func parsePage(specDir string) (*template.Template, error) {
	path := filepath.Join(specDir, pageFile)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return template.New(path).Option("missingkey=error").Parse(string(src))
}

func renderPage(t *template.Template, v pageView) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func newPageView(res *results.Folder, figs []renderedFigure, judged []claims.Result, cells []CellStatus) pageView {
	v := pageView{
		RunID:        res.Run.ID,
		Provenance:   provenance(res.Run),
		Toolchains:   res.Run.Toolchains,
		ClaimSummary: claims.Summary(judged) + "; " + claims.TunedSummary(judged),
		CellSummary:  cellSummary(cells),
		Cells:        problemsFirst(cells),
	}
	for _, c := range judged {
		v.Claims = append(v.Claims, newClaimRow(c))
	}
	for _, f := range figs {
		fv := figureView{ID: f.Spec.ID, Title: f.Spec.Title, Paper: f.Spec.Paper, Note: f.Note}
		if f.Note != "" {
			v.Skipped = append(v.Skipped, fv)
			continue
		}
		fv.SVG = inlineSVG(f.SVG)
		fv.SVGPath = results.FiguresDir + "/" + f.Spec.ID + ".svg"
		fv.PNGPath = results.FiguresDir + "/" + f.Spec.ID + ".png"
		v.Figures = append(v.Figures, fv)
	}
	return v
}

func provenance(r results.Run) []keyValue {
	commit := r.Commit
	if commit == "" {
		commit = "unknown"
	}
	if r.Dirty {
		commit += " (dirty)"
	}
	kv := []keyValue{
		{"run", r.ID},
		{"started", r.Started},
		{"finished", r.Finished},
		{"commit", commit},
		{"host", fmt.Sprintf("%s (%s/%s)", r.Host.Hostname, r.Host.OS, r.Host.Arch)},
		{"CPU", fmt.Sprintf("%s, %d cores", r.Host.CPU, r.Host.Cores)},
	}
	gpus := make([]string, len(r.GPUs))
	for i, g := range r.GPUs {
		gpus[i] = fmt.Sprintf("%s (driver %s, %d MiB)", g.Name, g.Driver, g.MemoryMiB)
	}
	if len(gpus) == 0 {
		gpus = []string{"none"}
	}
	kv = append(kv,
		keyValue{"GPUs", strings.Join(gpus, "; ")},
		keyValue{"sizes", fmt.Sprintf("%s, %d reps", r.Sizes, r.Reps)},
		keyValue{"cells (run.json)", cellCounts(r.Cells)},
	)
	return kv
}

func newClaimRow(c claims.Result) claimRow {
	row := claimRow{
		ID: c.Claim.ID, Paper: c.Claim.Paper, Quote: c.Claim.Quote, Statement: c.Claim.Statement,
		Expected: c.Expected(), Measured: c.Measured(), Verdict: c.Verdict(), TunedVerdict: c.TunedVerdict(),
		Class: map[claims.Outcome]string{claims.Reproduced: "ok", claims.NotReproduced: "fail", claims.Inconclusive: "warn", claims.NotMeasurable: "skip"}[c.Outcome],
	}
	row.RatioCount = fmt.Sprintf("%d ratios", len(c.Ratios))
	if len(c.Ratios) == 1 {
		row.RatioCount = "1 ratio"
	}
	for _, r := range claims.SortedRatios(c.Ratios) {
		row.Ratios = append(row.Ratios, ratioRow{
			Kernel: r.Kernel, Numerator: r.Numerator, Denominator: r.Denominator,
			Size: r.Sizes(), Value: fmt.Sprintf("%.3f", r.Value), Interval: r.Interval(),
		})
	}
	return row
}

// statusOrder lists the cell statuses, problems first.
var statusOrder = []string{StatusBuildFailed, StatusRunError, StatusVerifyFailed, StatusNotRun, StatusSkipped, StatusVerified}

// problemsFirst orders cells by status, problems first, then by cell.
func problemsFirst(cells []CellStatus) []CellStatus {
	rank := map[string]int{}
	for i, s := range statusOrder {
		rank[s] = i
	}
	out := append([]CellStatus(nil), cells...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Status] < rank[out[j].Status] })
	return out
}

// statusCounts counts cells by status.
func statusCounts(cells []CellStatus) map[string]int {
	counts := map[string]int{}
	for _, c := range cells {
		counts[c.Status]++
	}
	return counts
}

func cellSummary(cells []CellStatus) string {
	counts := statusCounts(cells)
	var parts []string
	for _, s := range statusOrder {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return fmt.Sprintf("%d cells: %s", len(cells), strings.Join(parts, ", "))
}

// inlineSVG drops the XML prolog so that the SVG can sit inside HTML.
func inlineSVG(svg []byte) template.HTML {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return template.HTML(s) // produced by gonum/plot from our own data
}

// cellCounts says what run.json counts: built cells (compiled now or taken
// from the build cache), failed and skipped ones, then what ran.
func cellCounts(c results.Cells) string {
	return fmt.Sprintf("%d total, %d built (%d compiled, %d cached), %d failed to build, %d skipped, %d ran, %d verified",
		c.Total, c.Built+c.Cached, c.Built, c.Cached, c.Failed, c.Skipped, c.Ran, c.Verified)
}

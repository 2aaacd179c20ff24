package book

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// Output files of the book, in its folder (results/book by default).
const (
	HTMLFile     = "index.html"
	MarkdownFile = "README.md"
	// Dir is the book's folder under the results root.
	Dir = "book"
	// TemplateFile is the page template, relative to the repository root.
	TemplateFile = "templates/book/book.html.tmpl"
	// NarrativeDir holds the book's prose, one Markdown file per chapter,
	// included in name order after the papers.
	NarrativeDir = "docs/book"
)

// Options say where the book's inputs and output are.
type Options struct {
	Root       string              // repository root: results/, templates/, docs/book/
	Out        string              // the book's folder; Root/results/book if empty
	Vocabulary *results.Vocabulary // the source tree's names (report.Options.Vocabulary); loaded from Root if nil
	Progress   io.Writer           // stage messages; nil for none
}

// Book is what Render produced: where the files went and what they hold.
type Book struct {
	HTML, Markdown string
	Folders        int
	Figures        int // figure images in the page: the papers', tuning curves, cascades and the navigation chart
	Claims         map[claims.Outcome]int
}

// folder is one reported folder of the index: its provenance, the report's
// evaluation and its drawn figures.
type folder struct {
	Name    string
	Entries []Entry
	Run     results.Run
	Records []results.Record // kernel records: the toolchains and GPUs that measured
	Data    *results.Folder  // everything the folder holds (the benchmark set's tables read its stream records too)
	Summary *report.Summary
	Tables  []byte            // tables.md without its title
	SVG     map[string][]byte // drawn figure id -> SVG
}

// Render reports every current folder of the index and writes the book.
func Render(opt Options) (*Book, error) {
	if opt.Out == "" {
		opt.Out = filepath.Join(Root(opt.Root), Dir)
	}
	say := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "book: "+format+"\n", args...)
		}
	}
	ix, err := LoadIndex(Root(opt.Root))
	if err != nil {
		return nil, err
	}
	specDir := filepath.Join(opt.Root, report.DefaultSpecDir)
	voc := opt.Vocabulary
	if voc == nil {
		if voc, err = vocabulary.Load(opt.Root); err != nil {
			return nil, err
		}
	}
	figSpecs, err := reportspec.LoadFigures(filepath.Join(specDir, "figures.yaml"), voc)
	if err != nil {
		return nil, err
	}
	models, _ := machine.Load(filepath.Join(opt.Root, machine.Dir)) // without the models, no datasheet line
	var folders []*folder
	for _, name := range ix.Folders() {
		f, err := reportFolder(filepath.Join(Root(opt.Root), name), specDir, voc, models)
		if err != nil {
			return nil, err
		}
		f.Entries = ix.EntriesOf(name)
		say("%s: %d claims, %d figures", name, len(f.Summary.Claims), len(f.SVG))
		folders = append(folders, f)
	}
	narrative, err := readNarrative(filepath.Join(opt.Root, NarrativeDir))
	if err != nil {
		return nil, err
	}
	v := newView(ix, folders, figSpecs, narrative)
	claimsFile, err := reportspec.LoadClaimsFile(filepath.Join(specDir, "claims.yaml"), voc)
	if err != nil {
		return nil, err
	}
	if v.Tuning, err = tuningViews(ix, opt.Root, Root(opt.Root), claimsFile.Claims); err != nil {
		return nil, err
	}
	v.addTunedIn()
	v.addTables(claimsFile.NotMeasurable)
	bench, err := loadBenchSpec(filepath.Join(opt.Root, BenchsetFile), voc)
	if err != nil {
		return nil, err
	}
	v.Benchset = benchsetSection(bench, folders)
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, err
	}
	tcs, err := toolchain.Load(filepath.Join(opt.Root, layout.Toolchains), opt.Root)
	if err != nil {
		return nil, err
	}
	if v.Portability, err = newPPView(ix, Root(opt.Root), opt.Out,
		portabilityOptions{Generated: filepath.Join(opt.Root, "generated"), Toolchains: tcs}); err != nil {
		return nil, err
	}
	say("portability: %s; %d kernels", v.Portability.Set, len(v.Portability.Kernels))
	page, err := renderHTML(filepath.Join(opt.Root, TemplateFile), v)
	if err != nil {
		return nil, err
	}
	md := renderMarkdown(v)
	b := &Book{HTML: filepath.Join(opt.Out, HTMLFile), Markdown: filepath.Join(opt.Out, MarkdownFile),
		Folders: len(folders), Figures: v.figureCount(), Claims: v.counts()}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(b.HTML, page, 0o644); err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(b.Markdown, md, 0o644); err != nil {
		return nil, err
	}
	say("wrote %s (%d folders, %d figures) and %s", b.HTML, b.Folders, b.Figures, b.Markdown)
	return b, nil
}

// reportFolder runs the report of one folder (its derived files are
// git-ignored, docs/results-format.md) and reads back what the book shows.
func reportFolder(dir, specDir string, voc *results.Vocabulary, models *machine.Set) (*folder, error) {
	data, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	sum, err := report.Generate(dir, report.Options{SpecDir: specDir, Vocabulary: voc, Machines: models})
	if err != nil {
		return nil, err
	}
	f := &folder{Name: filepath.Base(dir), Run: data.Run, Records: data.Kernel, Data: data, Summary: sum, SVG: map[string][]byte{}}
	for _, fig := range sum.Figures {
		for _, file := range fig.Files {
			if filepath.Ext(file) == ".svg" {
				if f.SVG[fig.ID], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(file))); err != nil {
					return nil, err
				}
			}
		}
	}
	tables, err := os.ReadFile(filepath.Join(dir, "tables.md"))
	if err != nil {
		return nil, err
	}
	if _, rest, ok := bytes.Cut(tables, []byte("\n\n")); ok && bytes.HasPrefix(tables, []byte("# ")) {
		tables = rest // the title names the folder, which the book's heading does
	}
	f.Tables = tables
	return f, nil
}

// paperNumber finds the paper a claim or figure reference names ("002 Sec. 2.3",
// "beyond 000 (...)"): its first three-digit number.
var paperNumber = regexp.MustCompile(`\b\d{3}\b`)

// paperOf is the paper of a reference, or "".
func paperOf(ref string) string { return paperNumber.FindString(ref) }

// refParts are the parts of a reference after its paper: "002 Sec. 2.3,
// Fig. 3" has "Sec. 2.3" and "Fig. 3".
func refParts(ref string) []string {
	ref = strings.TrimSpace(strings.Replace(ref, paperOf(ref), "", 1))
	var out []string
	for _, p := range strings.Split(ref, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// decides reports whether a figure shows what a claim judges: the same paper,
// a part of the figure's reference among the claim's, and, when the figure
// draws one kernel, that kernel among the claim's.
func decides(fig reportspec.Figure, c reportspec.Claim) bool {
	if paperOf(fig.Paper) == "" || paperOf(fig.Paper) != paperOf(c.Paper) {
		return false
	}
	if fig.Kernel != "" && !slices.Contains(c.Kernels, fig.Kernel) {
		return false
	}
	claimParts := refParts(c.Paper)
	for _, p := range refParts(fig.Paper) {
		if slices.Contains(claimParts, p) {
			return true
		}
	}
	return false
}

// svgURI is an SVG as a data: URI for an <img>, so that figures of several
// folders keep their own ids and the page stays one file.
func svgURI(svg []byte) string {
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		svg = svg[i:]
	}
	return "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

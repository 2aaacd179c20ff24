package book

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// view is everything the book's template shows, computed here so that the
// template only arranges it.
type view struct {
	Papers    []paperView
	Folders   []folderView
	Narrative []chapter
	// Unreported are the entries kept for what is not a claim or a figure
	// (profiles, a scheduler's timing).
	Unreported []Entry
	// Unmeasured are the platforms no current folder measured on (amd:
	// compiles, not run), with their notes.
	Unmeasured []Platform
	Summary    string // claim counts over every evaluation
	// Layers are the layer-against-library tables of the folders that
	// measured a layer and its library both (claims.LayerTables).
	Layers      []layerView
	LayersIntro string
	Tuning      []tuningView
	Portability *ppView
	// Benchset is the section "Loop nests beyond HOMMEXX" (benchset.go).
	Benchset *benchsetView
}

type paperView struct {
	ID, Title string
	Anchor    string
	Measured  bool // some current folder holds data of the paper
	Summary   string
	Claims    []claimView
	Figures   []figView // figures of the paper that decide no measured claim
	// Table is the paper at a glance: one row per claim (the paper's number
	// beside ours per platform, as published and tuned, the verdict, why it
	// differs), then one per sentence nothing here measures.
	Table []paperRow
	// Unmeasurable are the paper's quantitative sentences that no claim
	// checks, with the reason (claims.yaml's not_measurable).
	Unmeasurable []reportspec.Unmeasurable
}

// paperRow is one row of a paper's table.
type paperRow struct {
	ID        string // the claim; "" for a sentence nothing here measures
	PaperSays string
	Ours      bool // a claim of ours, not the paper's (its quote is context)
	Ratio     string
	Measured  []string // per folder: "platform: as published ...; tuned ..."
	Class     string
	Verdict   string
	Differs   string
	Quote     string // a sentence nothing here measures
}

type claimView struct {
	ID, Paper, Quote, Statement, Expected string
	PaperSays, Differs, Ratio             string
	Ours                                  bool
	Class, Verdict                        string // the card's overall result
	Evals                                 []evalView
	Unmeasured                            []string // why not measurable, where no folder measures it
	// Unlike names the folders where the claim's pairs were timed with
	// different clocks (an older harness: KK-CUDA with CUDA events, OpenMP
	// with the host's clock), so not compared there: "folder: reason".
	Unlike  []string
	Figures []figView
	TunedIn []tunedEval // verdicts on tuning folders, best against best
}

type evalView struct {
	Folder, Part, Measured, Class string
	Platform                      string // the index's platforms of the folder
	TunedShort                    string // the tuned ratios and outcome, or "not tuned"
	Outcome                       claims.Outcome
	Why                           string // the verdict's reason: ratios in and out of the band
	Ratios                        []claims.Ratio
	Tuned                         string // the verdict on the folder's tuned view, or "not tuned (why)"
	// Library is the verdict with the library variants in place of the
	// layer variants ("" where the folder measured no library cell of it).
	Library       string
	LibraryRatios []claims.Ratio
}

// layerView is one folder's tables of our layers against a library.
type layerView struct {
	Folder, Part string
	Tables       []claims.LayerTable
	HTML         template.HTML
	Markdown     string
}

type figView struct {
	ID, Title, Paper, Folder, Part string
	Src                            template.URL
}

type folderView struct {
	Name, Anchor string
	Entries      []Entry
	Provenance   [][2]string
	Tables       template.HTML
}

type chapter struct {
	File string
	HTML template.HTML
}

var outcomeClass = map[claims.Outcome]string{claims.Reproduced: "ok", claims.NotReproduced: "fail", claims.Inconclusive: "warn", claims.NotMeasurable: "skip"}

func newView(ix *Index, folders []*folder, figSpecs []reportspec.Figure, narrative []chapter) *view {
	v := &view{Narrative: narrative, LayersIntro: layersIntro}
	for _, e := range ix.Current {
		if !e.Report {
			v.Unreported = append(v.Unreported, e)
		}
	}
	for _, p := range ix.Platforms {
		if !slices.ContainsFunc(ix.Current, func(e Entry) bool { return e.Platform == p.ID }) {
			v.Unmeasured = append(v.Unmeasured, p)
		}
	}
	for _, f := range folders {
		v.Folders = append(v.Folders, newFolderView(f))
		if len(f.Summary.Layers) > 0 {
			md := claims.LayerMarkdown(f.Summary.Layers, "###")
			v.Layers = append(v.Layers, layerView{Folder: f.Name, Part: partOf(f), Tables: f.Summary.Layers, HTML: markdownHTML(md), Markdown: string(md)})
		}
	}
	for _, p := range ix.Papers {
		v.Papers = append(v.Papers, newPaperView(p, folders, figSpecs))
	}
	c := v.counts()
	unlike := 0
	for _, p := range v.Papers {
		for _, cl := range p.Claims {
			if len(cl.Evals) == 0 && len(cl.Unlike) > 0 {
				unlike++
			}
		}
	}
	v.Summary = fmt.Sprintf("of the evaluations of a claim in a folder that measures it, %s; %d claims are measured in no current folder, %d of them because their sides were timed with different clocks (KK-CUDA with CUDA events, OpenMP with the host's clock: docs/report.md, like clocks)",
		countText(c), c[claims.NotMeasurable], unlike)
	return v
}

func newPaperView(p Named, folders []*folder, figSpecs []reportspec.Figure) paperView {
	pv := paperView{ID: p.ID, Title: p.Title, Anchor: "paper-" + p.ID}
	shown := map[[2]string]bool{} // (figure, folder) beside some claim
	if len(folders) == 0 {
		return pv
	}
	byID := make([]map[string]claims.Result, len(folders)) // each folder's evaluations by claim
	for k, f := range folders {
		byID[k] = map[string]claims.Result{}
		for _, r := range f.Summary.Claims {
			byID[k][r.Claim.ID] = r
		}
	}
	for _, spec := range folders[0].Summary.Claims { // every folder evaluates the same claims file
		if paperOf(spec.Claim.Paper) != p.ID {
			continue
		}
		c := spec.Claim
		cv := claimView{ID: c.ID, Paper: c.Paper, Quote: c.Quote, Statement: c.Statement, Expected: spec.Expected(),
			PaperSays: c.PaperSays, Differs: c.Differs, Ours: c.Ours, Ratio: RatioText(c)}
		var reasons []string
		for k, f := range folders {
			r := byID[k][spec.Claim.ID]
			if len(r.Unlike) > 0 {
				cv.Unlike = append(cv.Unlike, fmt.Sprintf("%s: %d pairs not compared (%s)", f.Name, len(r.Unlike), clockReasons(r.Unlike)))
			}
			if r.Outcome == claims.NotMeasurable {
				reasons = results.AppendNew(reasons, r.Reason)
				continue
			}
			part := partOf(f)
			why := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(r.Verdict(), string(r.Outcome)), " ("), ")")
			ev := evalView{Folder: f.Name, Part: part, Measured: r.Measured(), Why: why, Platform: platformOf(f),
				Class: outcomeClass[r.Outcome], Outcome: r.Outcome, Ratios: r.Ratios, Tuned: r.TunedVerdict(), TunedShort: tunedShort(r)}
			if r.LibraryMeasured() {
				ev.Library, ev.LibraryRatios = r.LibraryVerdict(), r.Library.Ratios
			}
			cv.Evals = append(cv.Evals, ev)
			for _, fs := range figSpecs {
				if svg := f.SVG[fs.ID]; svg != nil && decides(fs, c) {
					cv.Figures = append(cv.Figures, figView{ID: fs.ID, Title: fs.Title, Paper: fs.Paper, Folder: f.Name, Part: part, Src: template.URL(svgURI(svg))})
					shown[[2]string{fs.ID, f.Name}] = true
				}
			}
		}
		cv.Class, cv.Verdict = overall(cv.Evals)
		if len(cv.Evals) == 0 && len(cv.Unlike) > 0 {
			cv.Verdict = "not compared in any current folder: its sides were timed with different clocks"
		}
		if len(cv.Evals) == 0 {
			cv.Unmeasured = reasons
		} else {
			pv.Measured = true
		}
		pv.Claims = append(pv.Claims, cv)
	}
	for _, fs := range figSpecs {
		if paperOf(fs.Paper) != p.ID {
			continue
		}
		for _, f := range folders {
			if svg := f.SVG[fs.ID]; svg != nil && !shown[[2]string{fs.ID, f.Name}] {
				pv.Figures = append(pv.Figures, figView{ID: fs.ID, Title: fs.Title, Paper: fs.Paper, Folder: f.Name, Part: partOf(f), Src: template.URL(svgURI(svg))})
				pv.Measured = true
			}
		}
	}
	counts := map[claims.Outcome]int{}
	evals, unmeasured := 0, 0
	for _, c := range pv.Claims {
		for _, e := range c.Evals {
			counts[e.Outcome]++
		}
		evals += len(c.Evals)
		if len(c.Evals) == 0 {
			unmeasured++
		}
	}
	pv.Summary = fmt.Sprintf("%d claims, %d of them measured in no current folder; %d evaluations (a claim in a folder): %s",
		len(pv.Claims), unmeasured, evals, countText(counts))
	return pv
}

// overall is a claim's result over the folders that measure it: one outcome
// when they agree, "mixed" otherwise.
func overall(evals []evalView) (class, verdict string) {
	if len(evals) == 0 {
		return outcomeClass[claims.NotMeasurable], "not measurable in any current folder"
	}
	first := evals[0].Outcome
	for _, e := range evals[1:] {
		if e.Outcome != first {
			return "mixed", "mixed: see each folder"
		}
	}
	return outcomeClass[first], string(first)
}

// partOf says which suites of which platform a folder holds, from the index.
func partOf(f *folder) string {
	var parts []string
	for _, e := range f.Entries {
		parts = append(parts, e.Suite+", "+e.Platform)
	}
	return strings.Join(parts, "; ")
}

// partsText lists the runs a merged folder was made from (their folders
// are in results/ARCHIVE.md), each with its provenance: source folder,
// commit, compilers with versions, kernels, GPUs.
func partsText(r results.Run) string {
	var out []string
	for _, b := range r.Batches {
		var gpus []string
		for _, g := range b.GPUs {
			gpus = append(gpus, g[:min(len(g), 12)])
		}
		s := b.ID
		if b.Folder != "" && b.Folder != b.ID {
			s += " (of " + b.Folder + ")"
		}
		s += fmt.Sprintf(": commit %s, %d records of %s by %s on %s",
			orNone(b.Commit[:min(len(b.Commit), 7)]), b.Records, orNone(strings.Join(b.Kernels, ", ")),
			orNone(strings.Join(b.Toolchains, ", ")), orNone(strings.Join(gpus, ", ")))
		if b.Interrupted {
			s += ", interrupted"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func newFolderView(f *folder) folderView {
	r := f.Run
	fv := folderView{Name: f.Name, Anchor: "folder-" + f.Name, Entries: f.Entries, Tables: markdownHTML(f.Tables)}
	gpus, tcs := measuredBy(f)
	commit := orNone(r.Commit)
	if r.Dirty {
		commit += " (dirty)"
	}
	build := orNone(r.BuildCommit)
	if r.BuildDirty {
		build += " (dirty)"
	}
	trials := r.Trials
	if trials == 0 {
		trials = 1
	}
	state := r.State
	if state == "" {
		state = "finished"
	}
	device := [2]string{"GPUs", orNone(gpus)}
	if hostOnly(f) { // a CPU platform's folder: its run's GPUs did not measure
		device = [2]string{"CPU", fmt.Sprintf("%s, %d cores (the host's GPUs ran none of these cells)", orNone(r.Host.CPU), r.Host.Cores)}
	}
	fv.Provenance = [][2]string{
		{"folder", "results/" + f.Name},
		device,
		{"compilers", orNone(tcs)},
		{"commit", commit + ", binaries built at " + build},
		{"trials", fmt.Sprintf("%d × %d reps (%d warm-up)", trials, r.Reps, r.Warmup)},
		{"run", fmt.Sprintf("%s, %s to %s", state, r.Started, r.Finished)},
		{"measurements", fmt.Sprintf("%d verified, %d failed", r.Cells.VerifiedMeasurements, r.Cells.FailedMeasurements)},
		{"cells", cellText(f.Summary.Cells)},
	}
	if len(r.Resumed) > 0 {
		fv.Provenance = append(fv.Provenance, [2]string{"resumed", strings.Join(r.Resumed, ", ")})
	}
	if len(r.Batches) > 0 {
		fv.Provenance = append(fv.Provenance, [2]string{"parts (results/ARCHIVE.md)", partsText(r)})
	}
	if len(r.MergeNotes) > 0 {
		fv.Provenance = append(fv.Provenance, [2]string{"merge notes", strings.Join(r.MergeNotes, "; ")})
	}
	return fv
}

// measuredBy names the GPUs and the compilers of a folder's measurements:
// the records' own GPU and compiler version where they carry them (a run may
// be resumed on another GPU, KK-CUDA built on another host), else run.json's.
func measuredBy(f *folder) (gpus, compilers string) {
	uuids := map[string]bool{}
	versions := map[string][]string{} // toolchain -> versions measured
	for _, r := range f.Records {
		if r.GPUUUID != "" {
			uuids[r.GPUUUID] = true
		}
		versions[r.Toolchain] = results.AppendNew(versions[r.Toolchain], r.ToolchainVersion)
	}
	var g []string
	for _, x := range f.Run.GPUs {
		g = results.AppendNew(g, fmt.Sprintf("%s (driver %s, %d MiB)", x.Name, x.Driver, x.MemoryMiB))
	}
	gpus = strings.Join(g, "; ")
	if len(uuids) > 0 {
		var short []string
		for _, u := range sortedKeys(uuids) {
			short = append(short, u[:min(len(u), 12)])
		}
		if len(short) == 1 {
			gpus += "; the records name " + short[0]
		} else {
			gpus += fmt.Sprintf("; the records name %d GPUs: %s", len(short), strings.Join(short, ", "))
		}
	}
	family := map[string]results.Toolchain{}
	for _, t := range f.Run.Toolchains {
		family[t.ID] = t
	}
	var tcs []string
	for _, id := range sortedKeys(versions) {
		v := strings.Join(versions[id], ", ")
		if strings.Trim(v, ", ") == "" {
			v = family[id].Version
		}
		tcs = append(tcs, fmt.Sprintf("%s (%s %s)", id, family[id].Family, strings.Trim(v, ", ")))
	}
	return gpus, strings.Join(tcs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func cellText(cells []report.CellStatus) string {
	counts := map[string]int{}
	for _, c := range cells {
		counts[c.Status]++
	}
	var parts []string
	for _, s := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	return fmt.Sprintf("%d cells: %s", len(cells), strings.Join(parts, ", "))
}

func countText(c map[claims.Outcome]int) string {
	return fmt.Sprintf("%d reproduced, %d not reproduced, %d inconclusive",
		c[claims.Reproduced], c[claims.NotReproduced], c[claims.Inconclusive])
}

func (v *view) counts() map[claims.Outcome]int {
	out := map[claims.Outcome]int{}
	for _, p := range v.Papers {
		for _, c := range p.Claims {
			for _, e := range c.Evals {
				out[e.Outcome]++
			}
			if len(c.Evals) == 0 {
				out[claims.NotMeasurable]++
			}
		}
	}
	return out
}

func (v *view) figureCount() int {
	n := 0
	for _, p := range v.Papers {
		n += len(p.Figures)
		for _, c := range p.Claims {
			n += len(c.Figures)
		}
	}
	for _, t := range v.Tuning {
		n += len(t.Curves) + len(t.SearchCurves)
	}
	if pv := v.Portability; pv != nil {
		for _, k := range pv.Kernels {
			if k.Cascade != nil {
				n++
			}
		}
		if pv.Nav != nil {
			n++
		}
	}
	return n
}

// clockReasons is the distinct clock differences of a claim's unlike pairs
// ("clocks differ: host against cuda-event").
func clockReasons(unlike []string) string {
	var whys []string
	for _, u := range unlike {
		_, why, _ := strings.Cut(u, ": ")
		whys = results.AppendNew(whys, why)
	}
	return strings.Join(whys, "; ")
}

// platformOf names the index's platforms a folder measures.
func platformOf(f *folder) string {
	var out []string
	for _, e := range f.Entries {
		out = results.AppendNew(out, e.Platform)
	}
	return strings.Join(out, ", ")
}

// tunedShort is a claim's tuned ratios with their outcome, or "not tuned".
func tunedShort(r claims.Result) string {
	if r.Tuned == nil || r.Tuned.Outcome == claims.NotMeasurable {
		return "not tuned"
	}
	return fmt.Sprintf("%s, %s", r.Tuned.Measured(), r.Tuned.Outcome)
}

// RatioText says what a claim's ratios divide: the numerator's rate (GB/s,
// or calls per second) over the denominator's, each side's variants, the
// kernels where a side names its own, and the toolchains: "kk-ompx (llvm)
// / kk-omp-b (llvm)". Above 1 the numerator is the faster; as times it is
// the denominator's time over the numerator's.
func RatioText(c reportspec.Claim) string {
	side := func(s reportspec.Selector) string {
		v := strings.Join(s.Variants, ", ")
		if len(s.Kernels) > 0 {
			v = strings.Join(s.Kernels, ", ") + " " + v
		}
		where := s.Where()
		if where == "any" {
			where = c.Target + " toolchains"
		}
		out := v + " (" + where
		if p := s.PremiseText(); p != "" {
			out += ", " + p
		}
		return out + ")"
	}
	if c.Type == "time" {
		return "no ratio: the median time per call in µs of " + side(c.Numerator)
	}
	return side(c.Numerator) + " / " + side(c.Denominator)
}

// addTables builds each paper's table from its claims (after the tunings'
// verdicts are in) and its not_measurable sentences.
func (v *view) addTables(unmeasurable []reportspec.Unmeasurable) {
	for i := range v.Papers {
		p := &v.Papers[i]
		for _, u := range unmeasurable {
			if paperOf(u.Paper) == p.ID {
				p.Unmeasurable = append(p.Unmeasurable, u)
			}
		}
		for _, c := range p.Claims {
			row := paperRow{ID: c.ID, PaperSays: c.PaperSays, Ours: c.Ours, Ratio: c.Ratio, Class: c.Class, Verdict: c.Verdict, Differs: c.Differs}
			for _, e := range c.Evals {
				row.Measured = append(row.Measured, fmt.Sprintf("%s (%s): as published %s, %s; tuned: %s", e.Platform, e.Folder, e.Measured, e.Outcome, e.TunedShort))
			}
			for _, e := range c.TunedIn {
				row.Measured = append(row.Measured, fmt.Sprintf("tuning %s alone, best against best: %s", e.Folder, e.Verdict))
			}
			if len(c.Evals) == 0 {
				why := strings.Join(c.Unmeasured, "; ")
				if len(c.Unlike) > 0 {
					why = "its sides were timed with different clocks in every folder that has both"
				}
				row.Measured = append(row.Measured, "not measured: "+why)
			}
			p.Table = append(p.Table, row)
		}
		for _, u := range p.Unmeasurable {
			p.Table = append(p.Table, paperRow{Quote: u.Quote, PaperSays: u.Paper, Class: "skip", Verdict: "not measurable here", Measured: []string{u.Reason}})
		}
	}
}

// hostOnly says whether every measurement of the folder is of a host
// toolchain (run.json's target "host", or an id ending in -host).
func hostOnly(f *folder) bool {
	target := map[string]string{}
	for _, t := range f.Run.Toolchains {
		target[t.ID] = t.Target
	}
	for _, r := range f.Records {
		if target[r.Toolchain] != "host" && !strings.HasSuffix(r.Toolchain, "-host") {
			return false
		}
	}
	return len(f.Records) > 0
}

package book

import (
	"fmt"
	"html/template"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/portability"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// portabilitySource is the caption source of the cascade plots and the
// navigation chart: the paper that defines both (docs/portability.md, [4]).
const portabilitySource = "Sewall et al., P3HPC 2020"

// ppView is the book's performance-portability chapter: PP of every
// strategy per kernel over the index's platforms, each strategy at its best
// variant and toolchain on each platform, with code divergence beside it.
type ppView struct {
	Set       string // the platform set, printed with every table
	Platforms []ppPlatform
	Excluded  string // platforms left out of H (AMD: compiles, not run), and what PP with them is
	Kernels   []ppKernel
	Nav       *figView
	CSV       []string // the P3 files written beside the book
}

type ppPlatform struct{ ID, Title, Status, Folders string }

type ppKernel struct {
	Kernel  string
	Size    int64
	Columns []string // the platforms of H
	Rows    []ppRow
	Absent  string // strategies with no cell of the kernel on any platform of H (PP 0), named once
	Cascade *figView
}

type ppRow struct {
	Strategy, PP, Arch, Divergence, RunsOn, Supported string
	On                                                []string
}

// PP's files beside the book: the P3 Analysis Library's layout over the
// index's platforms (docs/portability.md).
const (
	P3File         = "p3.csv"
	P3StrategyFile = "p3-strategy.csv"
)

// portabilityOptions are what the analysis needs besides the results.
type portabilityOptions struct {
	Generated  string                 // generated/ for code divergence; "" for none
	Toolchains []*toolchain.Toolchain // the project's: AMD targets become "compiles, not run" platforms
}

// portabilityInput reads every reported folder of the index, writes each
// folder's own analysis into it (portability.md, p3.csv, p3-strategy.csv,
// figures/portability/: derived, git-ignored), and joins them with one
// platform per index platform: a folder's pairs belong to its entries'
// platform, except host code in a GPU platform's folder, which is left out
// (the GPU host's CPU is a platform of its own folders). The project's AMD
// targets join as platforms that compile and never run.
func portabilityInput(ix *Index, root string, opt portabilityOptions) (portability.Input, map[string][]string, error) {
	var ins []portability.Input
	folders := map[string][]string{} // platform -> folders
	for _, name := range ix.Folders() {
		dir := filepath.Join(root, name)
		in, err := portability.Load(dir)
		if err != nil {
			return portability.Input{}, nil, err
		}
		a := portability.Analyze(in, portability.DefaultSet(in), portability.Options{Generated: opt.Generated})
		if err := a.Write(dir); err != nil {
			return portability.Input{}, nil, err
		}
		run, err := results.ReadRun(dir)
		if err != nil {
			return portability.Input{}, nil, err
		}
		host := map[string]bool{}
		gpu := false
		for _, tc := range run.Toolchains {
			host[tc.ID] = tc.Target == "host"
		}
		for _, p := range in.Platforms {
			gpu = gpu || p.Status == portability.Measured && !host[p.Toolchain]
		}
		platform := ix.EntriesOf(name)[0].Platform
		folders[platform] = append(folders[platform], name)
		ins = append(ins, portability.Regroup(in, func(p portability.Platform) string {
			switch {
			case p.Status != portability.Measured:
				return "" // the project's AMD targets join below; a GPU platform's unrun pairs are no platform
			case gpu && host[p.Toolchain]:
				return ""
			}
			return platform
		}))
	}
	merged := portability.Merge(ins...)
	amd := map[string][]string{} // AMD target -> toolchains
	for _, tc := range opt.Toolchains {
		if toolchain.NotRun(tc.Target) != "" {
			amd[tc.Target] = append(amd[tc.Target], tc.ID)
		}
	}
	for _, target := range sortedKeys(amd) {
		merged.Platforms = append(merged.Platforms, portability.Platform{Label: "AMD " + target, Device: target,
			Status: portability.CompilesNotRun, Reason: toolchain.NotRun(target) + " with " + strings.Join(amd[target], ", ")})
	}
	return merged, folders, nil
}

// newPPView analyzes the index's platforms: PP of each strategy at each
// kernel's headline problem (Analysis.Headline), over the measured platforms H, the cascade of
// each and one navigation chart; it writes the P3 CSVs into out.
func newPPView(ix *Index, root, out string, opt portabilityOptions) (*ppView, error) {
	in, folders, err := portabilityInput(ix, root, opt)
	if err != nil {
		return nil, err
	}
	h := portability.DefaultSet(in)
	// H in the index's order of platforms
	var order []string
	for _, p := range ix.Platforms {
		if slices.Contains(h.Platforms, p.ID) {
			order = append(order, p.ID)
		}
	}
	h.Platforms = order
	h.Name = "index platforms"
	v := &ppView{Set: fmt.Sprintf("H = the index's measured platforms (%d): %s", len(h.Platforms), strings.Join(h.Platforms, ", "))}
	status := map[string]portability.Platform{}
	for _, p := range in.Platforms {
		status[p.Name()] = p
	}
	for _, p := range ix.Platforms {
		st := "no current folder"
		if p.Note != "" {
			st += "; " + p.Note
		}
		if q, ok := status[p.ID]; ok {
			st = q.Status
		}
		v.Platforms = append(v.Platforms, ppPlatform{ID: p.ID, Title: p.Title, Status: st, Folders: strings.Join(folders[p.ID], ", ")})
	}
	var excluded []string
	for _, e := range h.Excluded {
		p := status[e.Platform]
		v.Platforms = append(v.Platforms, ppPlatform{ID: p.Name(), Title: p.Device, Status: p.Reason})
		excluded = append(excluded, p.Name())
	}
	if len(excluded) > 0 {
		v.Excluded = fmt.Sprintf("Not in H: %s (%s). Over H with them, every strategy's PP is 0: nothing runs there.",
			strings.Join(excluded, ", "), toolchain.NoAMDGPU)
	}
	a := portability.Analyze(in, h, portability.Options{Generated: opt.Generated})
	headline := a.Headline()
	var nav []portability.NavPoint
	for _, k := range sortedKeys(headline) {
		p := headline[k]
		kv := ppKernel{Kernel: k, Size: p.Size, Columns: h.Platforms}
		scores := a.ScoresOf(p, portability.StrategyLevel)
		sort.SliceStable(scores, func(i, j int) bool {
			return scores[i].App.V > scores[j].App.V || scores[i].App.V == scores[j].App.V && scores[i].Supported.V > scores[j].Supported.V
		})
		var absent []string
		for _, s := range scores {
			if s.RunsOn == 0 && !tried(s) {
				absent = append(absent, s.Application)
				continue
			}
			r := ppRow{Strategy: s.Application, PP: s.App.String(), Arch: "–", Divergence: "–",
				RunsOn: fmt.Sprintf("%d/%d", s.RunsOn, len(s.On)), Supported: s.Supported.String()}
			if s.Arch != nil && (s.Arch.V > 0 || s.App.V == 0) { // 0 beside a running PP: a kernel without minimum traffic somewhere
				r.Arch = s.Arch.String()
			}
			if s.Divergence != nil {
				r.Divergence = fmt.Sprintf("%.2f", *s.Divergence)
			}
			for _, o := range s.On {
				cell := o.Status
				if o.Runs() {
					cell = fmt.Sprintf("%.2f (%s)", o.Eff.App.V, o.Variant)
				}
				r.On = append(r.On, cell)
			}
			kv.Rows = append(kv.Rows, r)
		}
		if len(absent) > 0 {
			kv.Absent = fmt.Sprintf("PP 0, no cell of %s on any platform of H: %s", k, strings.Join(absent, ", "))
		}
		cascade := a.Cascade(p, portability.StrategyLevel)
		cascade.Lines = slices.DeleteFunc(cascade.Lines, func(l portability.CascadeLine) bool { return slices.Contains(absent, l.Application) })
		svg, err := portability.CascadeSVG(cascade)
		if err != nil {
			return nil, err
		}
		kv.Cascade = &figView{ID: "cascade-" + k, Title: fmt.Sprintf("Cascade: %s at size %d", k, p.Size), Paper: portabilitySource,
			Src: template.URL(svgURI(svg))}
		nav = append(nav, a.NavChart(p)...)
		v.Kernels = append(v.Kernels, kv)
	}
	if len(nav) > 0 {
		svg, err := portability.NavChartSVG("strategies over "+h.Name+", each kernel's headline size", nav)
		if err != nil {
			return nil, err
		}
		v.Nav = &figView{ID: "navchart", Title: "Navigation chart", Paper: portabilitySource, Src: template.URL(svgURI(svg))}
	}
	files := map[string][]byte{P3File: a.P3CSV(portability.VariantLevel), P3StrategyFile: a.P3CSV(portability.StrategyLevel)}
	for _, name := range sortedKeys(files) {
		if err := fsutil.WriteFile(filepath.Join(out, name), files[name], 0o644); err != nil {
			return nil, err
		}
		v.CSV = append(v.CSV, name)
	}
	return v, nil
}

// tried says whether a strategy has anything but "no cell" on some platform:
// a failed verification, a failed or skipped build, a platform that only
// compiles.
func tried(s portability.Score) bool {
	for _, o := range s.On {
		if o.Status != portability.NoRecord {
			return true
		}
	}
	return false
}

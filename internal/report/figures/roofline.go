package figures

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Kinds of RefLine.
const (
	LineMeasured = "measured" // the device's measured bandwidth (results.Bandwidth)
	LineSpec     = "spec"     // its machine model's datasheet bandwidth
)

// RefLine is a horizontal bandwidth line of a GB/s panel: the device's
// measured bandwidth (the best of its STREAM ops) or its datasheet's. A line
// is drawn as a bound (dashed) only where it bounds the panel: no point of
// the panel passes it, and none was measured with warm caches on a working
// set that fits them. Otherwise it is drawn dotted, labelled "not a bound",
// and the figure's notes say why (docs/report.md, "Bandwidth lines").
type RefLine struct {
	Kind  string
	GBps  float64
	Label string // "measured: BabelStream triad 4263 GB/s", "datasheet 4800 GB/s (h200-sxm-141gb)"
	Bound bool
	Why   string // why it is not a bound; "" for a bound
	older bool   // measured: not BabelStream's method (an older harness)
}

// addLines gives every panel the bandwidth lines of its devices and judges
// each against the panel's points, collecting the notes.
// Panels whose lines are no bound for one reason share a note, which names
// them: "clang19-sm90 (llvm 19.1.7), clang22-sm90 (llvm 22.1.8): ...".
func (f *Figure) addLines(ds *dataset.Set) {
	var whys []string
	panels := map[string][]string{}
	for i := range f.Panels {
		p := &f.Panels[i]
		p.Lines = panelLines(ds, p.tcs)
		judgeLines(p)
		for _, l := range p.Lines {
			if l.Why == "" {
				continue
			}
			if panels[l.Why] == nil {
				whys = append(whys, l.Why)
			}
			if !slices.Contains(panels[l.Why], p.Title) {
				panels[l.Why] = append(panels[l.Why], p.Title)
			}
		}
	}
	for _, why := range whys {
		f.Notes = append(f.Notes, strings.Join(panels[why], ", ")+": "+why)
	}
}

// panelLines is the measured and datasheet bandwidth of the devices of the
// toolchains tcs, each value once.
func panelLines(ds *dataset.Set, tcs []string) []RefLine {
	var out []RefLine
	add := func(l RefLine) {
		for _, o := range out {
			if o.Kind == l.Kind && o.GBps == l.GBps {
				return
			}
		}
		out = append(out, l)
	}
	for _, tc := range tcs {
		if b, ok := ds.Bandwidth[tc]; ok && b.GBps > 0 {
			add(RefLine{Kind: LineMeasured, GBps: b.GBps, Label: "measured: " + b.Label(),
				Why: fmt.Sprintf("%s, %s; %s clock", b.Label(), b.How(), b.Clock), older: b.Method != results.MethodBabelStream})
		}
		if s, ok := ds.Spec[tc]; ok && s.GBps > 0 {
			add(RefLine{Kind: LineSpec, GBps: s.GBps, Label: fmt.Sprintf("datasheet %.0f GB/s (%s)", s.GBps, s.Model)})
		}
	}
	return out
}

// judgeLines marks each line of p a bound or not, with the reason: the
// panel's fastest point passing it, or warm-cache points.
func judgeLines(p *panel) {
	var top dataset.Point
	var topLabel string
	warm := 0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if pt.Warm {
				warm++
			}
			if pt.GBps > top.GBps {
				top, topLabel = pt, s.Label
			}
		}
	}
	for i := range p.Lines {
		l := &p.Lines[i]
		how := l.Why // the measured line's method, for its note
		l.Why = ""
		l.Bound = true
		switch {
		case warm > 0:
			l.Bound = false
			l.Why = fmt.Sprintf("measurements ran with warm caches (no flush between calls) on working sets that fit them, which DRAM bandwidth does not bound: no bandwidth line is a bound here (%s)",
				l.Label)
		case top.GBps > l.GBps && l.Kind == LineMeasured:
			l.Bound = false
			l.Why = fmt.Sprintf("the measured bandwidth (%s) is below %s at %s, %.0f GB/s: that STREAM measurement reached less than the kernel does, so it is no bound here",
				how, topLabel, formatSize(top.Size), top.GBps)
			if l.older {
				l.Why += " (the older method: a median of few runs, after an L2 flush whose dirty lines the op writes back, or the copy alone; the harness now measures BabelStream's way, the best of 100 runs over arrays past the caches)"
			}
		case top.GBps > l.GBps:
			l.Bound = false
			l.Why = fmt.Sprintf("%s is below %s at %s, %.0f GB/s: no bound here", l.Label, topLabel, formatSize(top.Size), top.GBps)
		}
	}
}

package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/results"
)

// maxOthers is how many measurements outside the table Summarize lists one
// a line; beyond it, it counts them and points to tables.md.
const maxOthers = 12

// Summarize prints the one screen that ends a run: for each toolchain that
// measured kernels, a table of the given kernels (the columns, in order) by
// variant: GB/s at the largest size measured, its fraction of the memory
// bandwidth the same run measured on that toolchain's device, and whether it
// verified; then every other measurement one a line (up to maxOthers), and
// where the figures, claims and tables are.
//
// The bandwidth is the device's measured bandwidth (results.Folder.Bandwidths,
// the report's roofline): the best of the harness's own STREAM copy, triad
// and dot on it (kind "stream" records: the first program of each toolchain
// measures them with --stream-bytes); a folder without them has no fraction,
// and a measurement of another clock than the bandwidth's none either.
func Summarize(dir string, kernels []string, w io.Writer) error {
	f, err := results.Load(dir)
	if err != nil {
		return err
	}
	var recs []results.Record
	for _, r := range f.Kernel {
		if r.Config == nil && !r.TunedBest {
			recs = append(recs, r)
		}
	}
	ms := results.Measurements(recs, "")
	type cell struct{ kernel, variant, toolchain string }
	largest := map[cell]results.CellSize{}
	byCell := map[cell]string{}
	for cs, m := range ms {
		r := m.Records[0]
		c := cell{r.Kernel, r.Variant, r.Toolchain}
		byCell[c] = r.Cell
		if old, ok := largest[c]; !ok || better(m, ms[old], cs.Size, old.Size) {
			largest[c] = cs
		}
	}
	bw := streams(f)
	var toolchains []string
	for c := range largest {
		if slices.Contains(kernels, c.kernel) && !slices.Contains(toolchains, c.toolchain) {
			toolchains = append(toolchains, c.toolchain)
		}
	}
	slices.Sort(toolchains)
	order := variantOrder(f.Run.Vocabulary)
	fmt.Fprintln(w)
	cpu := f.Run.Host.CPU
	if cpu == "" {
		cpu = "this machine"
	}
	threads := map[string]int{}
	for _, r := range f.Stream {
		threads[r.Toolchain] = max(threads[r.Toolchain], r.Threads)
	}
	for _, tc := range toolchains {
		b := bw[tc]
		on := cpu
		if n := threads[tc]; n > 0 {
			on += fmt.Sprintf(", %d threads", n)
		}
		fmt.Fprintf(w, "%s (%s) on %s: %s\n", tc, toolchainVersion(f.Run, tc), on, b.text())
		fmt.Fprintf(w, "GB/s at the largest size measured, %% of the best STREAM bandwidth, verified:\n")
		var variants []string
		sizes := map[string]int64{}
		for c, cs := range largest {
			if c.toolchain != tc || !slices.Contains(kernels, c.kernel) {
				continue
			}
			if !slices.Contains(variants, c.variant) {
				variants = append(variants, c.variant)
			}
			if ms[cs].Usable() {
				sizes[c.kernel] = max(sizes[c.kernel], cs.Size)
			}
		}
		slices.SortFunc(variants, func(a, b string) int { return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a, b)) })
		head := fmt.Sprintf("%-24s", "")
		size := fmt.Sprintf("%-24s", "size")
		for _, k := range kernels {
			head += fmt.Sprintf(" %14s", k)
			s := "-"
			if sizes[k] > 0 {
				s = fmt.Sprint(sizes[k])
			}
			size += fmt.Sprintf(" %14s", s)
		}
		fmt.Fprintln(w, strings.TrimRight(head, " "))
		fmt.Fprintln(w, strings.TrimRight(size, " "))
		for _, v := range variants {
			line := fmt.Sprintf("%-24s", v)
			for _, k := range kernels {
				cs, ok := largest[cell{k, v, tc}]
				switch {
				case !ok:
					line += fmt.Sprintf(" %14s", "")
				case !ms[cs].Usable():
					line += fmt.Sprintf(" %14s", "- no")
				default:
					line += fmt.Sprintf(" %14s", b.entry(ms[cs]))
				}
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	var others []cell
	for c := range largest {
		if !slices.Contains(kernels, c.kernel) {
			others = append(others, c)
		}
	}
	slices.SortFunc(others, func(a, b cell) int { return strings.Compare(byCell[a], byCell[b]) })
	if len(others) > 0 {
		fmt.Fprintf(w, "other kernels: GB/s at the largest size measured, %% of the toolchain's best STREAM bandwidth, verified:\n")
	}
	for i, c := range others {
		if i == maxOthers {
			fmt.Fprintf(w, "  and %d more: %s\n", len(others)-maxOthers, filepath.Join(dir, results.TablesFile))
			break
		}
		cs := largest[c]
		entry := "- no"
		if ms[cs].Usable() {
			entry = bw[c.toolchain].entry(ms[cs])
		}
		fmt.Fprintf(w, "  %-48s size %-8d %s\n", byCell[c], cs.Size, entry)
	}
	if warm := warmCaches(recs); warm > 0 {
		fmt.Fprintf(w, "%d measurements ran with warm caches (not flushed between calls: the quick sample's default; PM_FLUSH_L2=on flushes): a working set that fits the cache can pass the STREAM bandwidth\n", warm)
	}
	fmt.Fprintf(w, "figures, claims, tables: %s\n", filepath.Join(dir, results.ReportFile))
	return nil
}

// warmCaches counts the records measured without flushing the caches
// between calls (the harness's "flush_l2": false).
func warmCaches(recs []results.Record) int {
	n := 0
	for _, r := range recs {
		if v, ok := r.Extra["flush_l2"]; ok && string(v) == "false" {
			n++
		}
	}
	return n
}

// better reports whether measurement a at size sa shows a cell better than
// b at sb: a verified one before one that did not verify, then the larger
// size.
func better(a, b results.Measurement, sa, sb int64) bool {
	if a.Usable() != b.Usable() {
		return a.Usable()
	}
	return sa > sb
}

// bandwidth is a toolchain's STREAM measurements of one run, by op (the
// best run's GB/s, the median's in older records), and its device's
// measured bandwidth, the fractions' denominator.
type bandwidth struct {
	ops    map[string]float64
	device results.Bandwidth
}

func (b bandwidth) text() string {
	if len(b.ops) == 0 {
		return "no STREAM measurement in this run"
	}
	var ops []string
	for _, op := range slices.Sorted(maps.Keys(b.ops)) {
		ops = append(ops, fmt.Sprintf("%s %.1f", op, b.ops[op]))
	}
	return fmt.Sprintf("STREAM %s GB/s, measured in this run", strings.Join(ops, ", "))
}

// entry is "GB/s  fraction yes" of a verified measurement.
func (b bandwidth) entry(m results.Measurement) string {
	if m.Bytes <= 0 {
		return fmt.Sprintf("%.3g/s yes", 1/m.Stats.Median) // moves no bytes: calls per second
	}
	frac := "-"
	if best := b.device.GBps; best > 0 && results.ClocksDiffer(results.ClockOf(m.Records), b.device.Clock) == "" {
		frac = fmt.Sprintf("%.0f%%", 100*m.GBps()/best)
		if frac == "0%" {
			frac = "<1%"
		}
	}
	return fmt.Sprintf("%s %4s yes", gbps(m.GBps()), frac)
}

// gbps prints a bandwidth with two or three significant digits.
func gbps(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// streams are, by toolchain, the best GB/s of each STREAM op it measured
// and the measured bandwidth of its device.
func streams(f *results.Folder) map[string]bandwidth {
	devices := f.Bandwidths()
	out := map[string]bandwidth{}
	for _, r := range f.Stream {
		v := r.GBps
		if r.GBpsBest > 0 {
			v = r.GBpsBest
		}
		if r.Error != "" || v <= 0 {
			continue
		}
		b, ok := out[r.Toolchain]
		if !ok {
			b = bandwidth{ops: map[string]float64{}}
		}
		b.ops[r.Op] = max(b.ops[r.Op], v)
		if d := devices[results.DeviceOf(r)]; d.GBps > b.device.GBps {
			b.device = d
		}
		out[r.Toolchain] = b
	}
	return out
}

// variantOrder ranks variants as the vocabulary lists them (the strategies'
// order), the unknown last.
func variantOrder(v *results.Vocabulary) func(string) int {
	rank := map[string]int{}
	if v != nil {
		for i, n := range v.VariantNames() {
			rank[n] = i
		}
	}
	return func(n string) int {
		if r, ok := rank[n]; ok {
			return r
		}
		return len(rank)
	}
}

func toolchainVersion(r results.Run, id string) string {
	for _, t := range r.Toolchains {
		if t.ID == id {
			return strings.TrimSpace(t.Command + " " + t.Version)
		}
	}
	return ""
}

// figuresLine says which figures a report drew, by id (the first few), and
// where the others are described; never how many it could not draw.
func figuresLine(figs []renderedFigure, specDir string) string {
	var drawn []string
	for _, f := range figs {
		if f.Note == "" {
			drawn = append(drawn, f.Spec.ID)
		}
	}
	more := "; what each figure needs: " + filepath.Join(specDir, "figures.yaml")
	if len(drawn) == 0 {
		return "none drawn: this run has none of the data they plot" + more
	}
	return fmt.Sprintf("drew %s into %s/", listSome(drawn, 8), results.FiguresDir) + more
}

// claimsLine says how many claims a report judged and how; the others are
// in claims.md with what each needs.
func claimsLine(all []claims.Result) string {
	m := claims.Counts(all)
	judged := len(all) - m[claims.NotMeasurable]
	if judged == 0 {
		return fmt.Sprintf("none judged: the papers' claims compare runs this one has not (GPU backends, other compilers); %s says what each needs", results.ClaimsFile)
	}
	return fmt.Sprintf("judged %d: %d reproduced, %d not reproduced, %d inconclusive; %s has them and what the others need",
		judged, m[claims.Reproduced], m[claims.NotReproduced], m[claims.Inconclusive], results.ClaimsFile)
}

// cellsLine counts the cells that ran by status, problems first; the cells
// off or not run here are in the page's cell table.
func cellsLine(cells []CellStatus) string {
	counts := statusCounts(cells)
	var parts []string
	for _, s := range append([]string{StatusVerified}, statusOrder...) {
		if n := counts[s]; n > 0 && s != StatusSkipped && s != StatusNotRun {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
			counts[s] = 0 // verified comes first, once
		}
	}
	if len(parts) == 0 {
		parts = []string{"none ran"}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (every cell, off and not run ones too: %s)", results.ReportFile)
}

// listSome joins up to n names, then says how many more.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

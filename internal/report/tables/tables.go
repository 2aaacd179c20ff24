package tables

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// tableRow is a cell, or a group of cells of one toolchain that run the
// same device code, at the table's size.
type tableRow struct {
	Variants  []string // one, or the group's, sorted
	Toolchain string
	P         dataset.Point // the group's trials pooled
	Ref       *refRatio
	Roof      float64 // GB/s over the toolchain's roofline; 0 without one
	// Why the row is not compared with the reference, or with the
	// roofline: their clocks differ (dataset.Unlike, results.ClocksDiffer).
	RefUnlike, RoofUnlike string
}

type table struct {
	Spec  reportspec.Table
	Size  int64
	Ref   string // "variant@toolchain" of the reference row
	Rows  []tableRow
	Roofs []string // "stream triad 4100 GB/s (clang19-sm90, nvcc-sm90)"
	// Clocks names the clocks of the rows where they are not all one:
	// "cuda-event: nvcc-sm90; host: clang19-sm90".
	Clocks string
	Note   string // why there is no table
}

// buildTables arranges the device measurements of each table's kernel; a
// kernel the results do not hold at all (a TestSNAP folder's AXPBY) gets no
// table, and a folder of host toolchains alone none (the tables are the
// device cells'; its CPU's results are in its figures and claims).
func buildTables(specs []reportspec.Table, ds *dataset.Set) []table {
	var out []table
	if !onDevice(ds) {
		return nil
	}
	for _, s := range specs {
		if ds.Holds(s.Kernel) {
			out = append(out, buildTable(s, ds))
		}
	}
	return out
}

// onDevice says whether the results hold a series built by a device
// toolchain.
func onDevice(ds *dataset.Set) bool {
	for k := range ds.Series {
		if !ds.IsHost(k.Toolchain) {
			return true
		}
	}
	return false
}

func buildTable(s reportspec.Table, ds *dataset.Set) table {
	t := table{Spec: s}
	refs := ds.Select([]string{s.Kernel}, "device", s.Reference)
	var ref *dataset.Key
	for _, k := range refs {
		if pts := ds.Series[k]; len(pts) > 0 && (ref == nil || pts[len(pts)-1].Size > t.Size) {
			k := k
			ref, t.Size = &k, pts[len(pts)-1].Size
		}
	}
	if ref == nil {
		// No reference: the largest size any device cell measured.
		for k, pts := range ds.Series {
			if k.Kernel == s.Kernel && !ds.IsHost(k.Toolchain) && len(pts) > 0 && pts[len(pts)-1].Size > t.Size {
				t.Size = pts[len(pts)-1].Size
			}
		}
	}
	type groupKey struct{ tc, id string }
	groups := map[groupKey]*tableRow{}
	trials := map[groupKey][][]float64{}
	var order []groupKey
	keys := make([]dataset.Key, 0)
	for k := range ds.Series {
		if k.Kernel == s.Kernel && !ds.IsHost(k.Toolchain) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Toolchain != keys[j].Toolchain {
			return keys[i].Toolchain < keys[j].Toolchain
		}
		return keys[i].Variant < keys[j].Variant
	})
	var refGroup groupKey
	for _, k := range keys {
		p, ok := dataset.PointAt(ds.Series[k], t.Size)
		if !ok {
			continue
		}
		g := groupKey{k.Toolchain, "cell " + k.Variant}
		if h := ds.Hash[dataset.CellOf(k)]; h != "" {
			g.id = "code " + h
		}
		if ref != nil && k == *ref {
			refGroup = g
		}
		row := groups[g]
		if row == nil {
			row = &tableRow{Toolchain: k.Toolchain, P: p}
			groups[g] = row
			order = append(order, g)
		}
		row.Variants = append(row.Variants, k.Variant)
		trials[g] = append(trials[g], p.M.Trials...)
	}
	if len(order) == 0 {
		t.Note = fmt.Sprintf("no verified %s results on device toolchains", s.Kernel)
		return t
	}
	for _, g := range order {
		row := groups[g]
		if len(row.Variants) > 1 {
			// One device code: its cells' trials are trials of one measurement.
			p := row.P
			p.M = stats.Measure(fmt.Sprintf("%s.%s@%d", s.Kernel, strings.Join(row.Variants, "="), t.Size), trials[g])
			p.MedianS = p.M.Median
			p.GBps, p.Lo, p.Hi = p.Bytes/p.M.Median/1e9, p.Bytes/p.M.Hi/1e9, p.Bytes/p.M.Lo/1e9
			row.P = p
		}
		sort.Strings(row.Variants)
		if roof := ds.Roof[row.Toolchain]; roof > 0 {
			if why := results.ClocksDiffer(row.P.Clock, ds.Bandwidth[row.Toolchain].Clock); why != "" {
				row.RoofUnlike = why
			} else {
				row.Roof = row.P.GBps / roof
			}
		}
	}
	if ref != nil {
		rp := groups[refGroup].P
		t.Ref = strings.Join(groups[refGroup].Variants, " = ") + "@" + ref.Toolchain
		for _, g := range order {
			row := groups[g]
			if !dataset.Comparable(row.P, rp) {
				continue
			}
			if why := dataset.Unlike(row.P, rp); why != "" {
				row.RefUnlike = why
				continue
			}
			boot := stats.Ratio(row.P.RateBoot(), rp.RateBoot())
			lo, hi := stats.Interval(boot)
			row.Ref = &refRatio{Value: row.P.Rate() / rp.Rate(), Lo: lo, Hi: hi}
		}
	}
	clocks := map[string][]string{}
	for _, g := range order {
		t.Rows = append(t.Rows, *groups[g])
		c := groups[g].P.Clock
		if !slices.Contains(clocks[c], g.tc) {
			clocks[c] = append(clocks[c], g.tc)
		}
	}
	if len(clocks) > 1 {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(clocks)) {
			parts = append(parts, c+": "+strings.Join(clocks[c], ", "))
		}
		t.Clocks = strings.Join(parts, "; ")
	}
	sort.SliceStable(t.Rows, func(i, j int) bool { return t.Rows[i].P.Rate() > t.Rows[j].P.Rate() })
	// One line per roofline value, naming its toolchains.
	byRoof := map[string][]string{}
	var roofs []string
	for _, r := range t.Rows {
		roof := ds.Roof[r.Toolchain]
		if roof <= 0 {
			continue
		}
		bw := ds.Bandwidth[r.Toolchain]
		text := fmt.Sprintf("%s (%s; %s clock)", bw.Label(), bw.How(), bw.Clock)
		if byRoof[text] == nil {
			roofs = append(roofs, text)
		}
		if !slices.Contains(byRoof[text], r.Toolchain) {
			byRoof[text] = append(byRoof[text], r.Toolchain)
		}
	}
	sort.Strings(roofs)
	for _, text := range roofs {
		tcs := byRoof[text]
		sort.Strings(tcs)
		t.Roofs = append(t.Roofs, fmt.Sprintf("%s (%s)", text, strings.Join(tcs, ", ")))
	}
	return t
}

// tablesMarkdown renders the tables of a run (without a title: the results
// log includes it as is).
func tablesMarkdown(tables []table) []byte {
	if len(tables) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("GB/s are the papers' byte count over the median time, with the 95% bootstrap\n")
	b.WriteString("interval; \"min GB/s\" counts the kernel's minimum memory traffic instead (– where\n")
	b.WriteString("the run did not record it). Cells of one toolchain whose device code is identical\n")
	b.WriteString("share a row (\"a = b\"): they are one measurement, not ranked. CV is the coefficient\n")
	b.WriteString("of variation of the repetition times; \"noisy\" marks CV above 10%.\n")
	for _, t := range tables {
		if t.Size == 0 { // no device cell of the kernel verified: no size to name
			fmt.Fprintf(&b, "\n### %s\n\n", strings.ToUpper(t.Spec.Kernel))
		} else {
			fmt.Fprintf(&b, "\n### %s at size %d\n\n", strings.ToUpper(t.Spec.Kernel), t.Size)
		}
		if t.Note != "" {
			fmt.Fprintf(&b, "No table: %s.\n", t.Note)
			continue
		}
		ref := "/ reference"
		if t.Ref != "" {
			ref = "/ " + t.Ref
		}
		if len(t.Roofs) > 0 {
			fmt.Fprintf(&b, "Roofline (the device's measured bandwidth): %s.\n\n", strings.Join(t.Roofs, "; "))
		}
		if t.Clocks != "" {
			fmt.Fprintf(&b, "Clocks differ (ratios pair like clocks only): %s.\n\n", t.Clocks)
		}
		fmt.Fprintf(&b, "| variant | toolchain | GB/s | 95%% interval | min GB/s | %s | / roofline | CV | trials × reps |\n", ref)
		b.WriteString("|---|---|---:|---|---:|---|---:|---:|---|\n")
		for _, r := range t.Rows {
			min := "–"
			if g := r.P.GBpsMin(); g > 0 {
				min = fmt.Sprintf("%.0f", g)
			}
			ratio := "–"
			if r.Ref != nil {
				ratio = fmt.Sprintf("%.2f [%.2f, %.2f]", r.Ref.Value, r.Ref.Lo, r.Ref.Hi)
			}
			if r.RefUnlike != "" {
				ratio = "not compared: " + r.RefUnlike
			}
			roof := "–"
			if r.Roof > 0 {
				roof = fmt.Sprintf("%.2f", r.Roof)
			}
			if r.RoofUnlike != "" {
				roof = r.RoofUnlike
			}
			cv := fmt.Sprintf("%.1f%%", 100*r.P.M.CV)
			if r.P.M.Noisy() {
				cv += " noisy"
			}
			gbps, interval := "–", "–" // a kernel that moves no bytes
			if r.P.Bytes > 0 {
				gbps, interval = fmt.Sprintf("%.0f", r.P.GBps), fmt.Sprintf("[%.0f, %.0f]", r.P.Lo, r.P.Hi)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				strings.Join(r.Variants, " = "), r.Toolchain, gbps, interval, min, ratio, roof, cv, trialsReps(r.P.M))
		}
	}
	return b.Bytes()
}

// trialsReps is "3 × 10", or "3 × 8–10" when trials differ.
func trialsReps(m *stats.Measurement) string {
	lo, hi := math.MaxInt, 0
	for _, t := range m.Trials {
		lo, hi = min(lo, len(t)), max(hi, len(t))
	}
	if lo == hi {
		return fmt.Sprintf("%d × %d", len(m.Trials), lo)
	}
	return fmt.Sprintf("%d × %d–%d", len(m.Trials), lo, hi)
}

// refRatio is a row's rate over the reference row's, with the 95%
// bootstrap interval.
type refRatio struct{ Value, Lo, Hi float64 }

package figures

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// Figure is a figure spec filled with the run's data, ready to draw.
type Figure struct {
	Spec   reportspec.Figure
	Panels []panel
	Sizes  []int64  // bars: the sizes shown, in order (normalized: kernel indices)
	Names  []string // normalized: the x labels (kernels), one per entry of Sizes
	Note   string   // why the figure is skipped; empty when drawn
	// Notes are drawn under the panels: why a bandwidth line is no bound
	// for the bars of its panel (Lines).
	Notes []string
}

// panel is one plot of a figure: one toolchain, or all of them.
type panel struct {
	Title  string
	Series []series
	Lines  []RefLine // GB/s figures: the device's measured and datasheet bandwidth
	tcs    []string  // the toolchains whose devices the lines are of
}

// series is one line (or bar group member) of a panel.
type series struct {
	Label  string
	Style  int // index of the variant in the spec: same color in every panel
	Points []dataset.Point
	key    dataset.Key
}

// Build selects the data of spec from ds and arranges it in panels.
func Build(spec reportspec.Figure, ds *dataset.Set) Figure {
	f := Figure{Spec: spec}
	if spec.Kind == "normalized" {
		return buildNormalized(f, ds)
	}
	keys := figureKeys(spec, ds)
	if len(keys) == 0 {
		f.Note = fmt.Sprintf("no verified %s results of %s on %s toolchains",
			spec.Kernel, specVariants(spec), spec.Where())
		return f
	}
	if spec.Kind == "bars" {
		f.Sizes = barSizes(spec, ds, keys)
	}
	if spec.Panel == "none" {
		f.Panels = []panel{singlePanel(spec, ds, keys, f.Sizes)}
	} else {
		f.Panels = toolchainPanels(spec, ds, keys, f.Sizes)
	}
	if spec.Y == "gbps" {
		f.addLines(ds)
	}
	return f
}

func specVariants(spec reportspec.Figure) string {
	names := make([]string, len(spec.Series))
	for i, s := range spec.Series {
		names[i] = s.Variant
	}
	return strings.Join(names, ", ")
}

// figureKeys returns the series of each spec variant, on the toolchains the
// figure's target admits. Series without a dataset.Point at the chosen sizes are left
// out.
func figureKeys(spec reportspec.Figure, ds *dataset.Set) [][]dataset.Key {
	out := make([][]dataset.Key, len(spec.Series))
	n := 0
	for i, s := range spec.Series {
		kernel := spec.Kernel
		if s.Kernel != "" {
			kernel = s.Kernel
		}
		for _, k := range ds.Keys(kernel, s.Variant) {
			if admits(spec, ds, k.Toolchain) && len(points(spec, ds.Series[k], nil)) > 0 {
				out[i] = append(out[i], k)
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	return out
}

// admits reports whether the figure shows series built by toolchain tc.
func admits(f reportspec.Figure, ds *dataset.Set, tc string) bool {
	if len(f.Families) > 0 && !slices.Contains(f.Families, ds.Family(tc)) {
		return false
	}
	return ds.OnTarget(f.Target, tc)
}

func sizeFilter(pts []dataset.Point, sizes []int64) []dataset.Point {
	if len(sizes) == 0 {
		return pts
	}
	var out []dataset.Point
	for _, p := range pts {
		for _, s := range sizes {
			if p.Size == s {
				out = append(out, p)
			}
		}
	}
	return out
}

// barSizes returns the spec's sizes, or three spread over the data: the
// smallest, a middle one and the largest.
func barSizes(spec reportspec.Figure, ds *dataset.Set, keys [][]dataset.Key) []int64 {
	if len(spec.Sizes) > 0 {
		return spec.Sizes
	}
	set := map[int64]bool{}
	for _, ks := range keys {
		for _, k := range ks {
			for _, p := range ds.Series[k] {
				set[p.Size] = true
			}
		}
	}
	all := make([]int64, 0, len(set))
	for s := range set {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) <= 3 {
		return all
	}
	return []int64{all[0], all[len(all)/2], all[len(all)-1]}
}

// toolchainPanels makes one panel per toolchain that built a non-reference
// variant of the figure; reference variants appear in every panel.
func toolchainPanels(spec reportspec.Figure, ds *dataset.Set, keys [][]dataset.Key, sizes []int64) []panel {
	var panelTCs, refTCs []string
	for i, s := range spec.Series {
		for _, k := range keys[i] {
			if s.Reference {
				refTCs = appendNew(refTCs, k.Toolchain)
			} else {
				panelTCs = appendNew(panelTCs, k.Toolchain)
			}
		}
	}
	if len(panelTCs) == 0 {
		return []panel{singlePanel(spec, ds, keys, sizes)}
	}
	panelTCs = inOrder(ds.Order, panelTCs)
	out := make([]panel, 0, len(panelTCs))
	for _, tc := range panelTCs {
		p := panel{Title: toolchainTitle(ds, tc), tcs: []string{tc}}
		for i, s := range spec.Series {
			for _, k := range keys[i] {
				if !s.Reference && k.Toolchain != tc {
					continue
				}
				label := s.Label
				if s.Reference && len(refTCs) > 1 {
					label = withNote(label, k.Toolchain)
				}
				p.Series = append(p.Series, series{Label: label, Style: i, Points: points(spec, ds.Series[k], sizes), key: k})
				if s.Reference && ds.Roof[tc] == 0 {
					p.tcs = appendNew(p.tcs, k.Toolchain) // a panel without its own bandwidth: the reference's device
				}
			}
		}
		p.Series = markClocks(groupIdentical(ds, p.Series))
		out = append(out, p)
	}
	return out
}

// withNote adds a note in parentheses to a legend label, inside the
// label's own closing parenthesis where it ends with one: "KK-CUDA (pm
// layer)" and nvcc-sm90 make "KK-CUDA (pm layer, nvcc-sm90)".
func withNote(label, note string) string {
	if strings.HasSuffix(label, ")") {
		return strings.TrimSuffix(label, ")") + ", " + note + ")"
	}
	return label + " (" + note + ")"
}

// singlePanel puts every series in one plot, labelled with its toolchain
// when the figure spans several.
func singlePanel(spec reportspec.Figure, ds *dataset.Set, keys [][]dataset.Key, sizes []int64) panel {
	var tcs []string
	for _, ks := range keys {
		for _, k := range ks {
			tcs = appendNew(tcs, k.Toolchain)
		}
	}
	tcs = inOrder(ds.Order, tcs)
	p := panel{Title: strings.Join(tcs, ", ")}
	for i, s := range spec.Series {
		for _, k := range keys[i] {
			label := s.Label
			if len(tcs) > 1 {
				label = withNote(label, k.Toolchain)
			}
			p.Series = append(p.Series, series{Label: label, Style: i, Points: points(spec, ds.Series[k], sizes), key: k})
		}
	}
	p.Series = markClocks(groupIdentical(ds, p.Series))
	p.tcs = tcs
	return p
}

// points returns the points of a series the figure shows: those at the bar
// sizes, or else at the spec's sizes; a log axis drops sizes below 1.
func points(f reportspec.Figure, pts []dataset.Point, barSizes []int64) []dataset.Point {
	sizes := f.Sizes
	if len(barSizes) > 0 {
		sizes = barSizes
	}
	var out []dataset.Point
	for _, p := range sizeFilter(pts, sizes) {
		if f.LogX && p.Size < 1 {
			continue
		}
		if f.Y == "gbps" && p.Bytes <= 0 { // a kernel that moves no bytes has no GB/s
			continue
		}
		out = append(out, p)
	}
	return out
}

func toolchainTitle(ds *dataset.Set, id string) string {
	tc := ds.Toolchains[id]
	switch {
	case tc.Family != "" && tc.Version != "":
		return fmt.Sprintf("%s (%s %s)", id, tc.Family, tc.Version)
	case tc.Family != "":
		return fmt.Sprintf("%s (%s)", id, tc.Family)
	}
	return id
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// inOrder returns the members of set in the order of order.
func inOrder(order, set []string) []string {
	out := make([]string, 0, len(set))
	for _, s := range order {
		if slices.Contains(set, s) {
			out = append(out, s)
		}
	}
	return out
}

// groupIdentical draws series of one toolchain that run the same device code
// as one line, labelled "A = B", from their trials pooled at the sizes all of
// them measured: they are one measurement, not a ranking.
func groupIdentical(ds *dataset.Set, in []series) []series {
	var out []series
	done := make([]bool, len(in))
	for i := range in {
		if done[i] {
			continue
		}
		s := in[i]
		members := []series{s}
		for j := i + 1; j < len(in); j++ {
			if !done[j] && ds.Identical(s.key, in[j].key) {
				done[j] = true
				members = append(members, in[j])
			}
		}
		if len(members) > 1 {
			labels := make([]string, len(members))
			for k, m := range members {
				labels[k] = m.Label
			}
			s.Label = strings.Join(labels, " = ")
			s.Points = poolPoints(s.key, members)
		}
		out = append(out, s)
	}
	return out
}

// poolPoints makes one dataset.Point per size that every member measured, its
// measurement the members' trials together.
func poolPoints(k dataset.Key, members []series) []dataset.Point {
	var out []dataset.Point
	for _, p := range members[0].Points {
		trials := append([][]float64(nil), p.M.Trials...)
		all := true
		for _, m := range members[1:] {
			q, ok := dataset.PointAt(m.Points, p.Size)
			if !ok {
				all = false
				break
			}
			trials = append(trials, q.M.Trials...)
		}
		if !all {
			continue
		}
		m := stats.Measure(fmt.Sprintf("%s.group.%s@%d", k.Kernel, k.Toolchain, p.Size), trials)
		p.M, p.MedianS = m, m.Median
		p.GBps, p.Lo, p.Hi = p.Bytes/m.Median/1e9, p.Bytes/m.Hi/1e9, p.Bytes/m.Lo/1e9
		out = append(out, p)
	}
	return out
}

// markClocks names each series' clock in its label where the series of one
// panel were timed with different clocks (an older folder's KK-CUDA, timed
// with CUDA events, beside OpenMP timed with the host's clock): the reader
// is not to rank them by eye (docs/report.md, like clocks).
func markClocks(in []series) []series {
	clockOf := func(s series) string {
		if len(s.Points) == 0 {
			return ""
		}
		return s.Points[0].Clock
	}
	var clocks []string
	for _, s := range in {
		if c := clockOf(s); c != "" {
			clocks = appendNew(clocks, c)
		}
	}
	if len(clocks) < 2 {
		return in
	}
	for i := range in {
		if c := clockOf(in[i]); c != "" {
			in[i].Label += " [" + c + " clock]"
		}
	}
	return in
}

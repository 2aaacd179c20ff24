package figures

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// buildNormalized fills a figure of kind normalized: one panel per
// toolchain (or one for all), every kernel of the spec a bar group, each
// series' bar its median time over the NormalizeTo variant's on the same
// kernel and toolchain, at the smallest or largest size both measured (among
// the spec's sizes when given). The interval is the ratio's, replicate by
// replicate. A series without the reference on its toolchain has no bar.
func buildNormalized(f Figure, ds *dataset.Set) Figure {
	spec := f.Spec
	f.Names = spec.Kernels
	for i := range spec.Kernels {
		f.Sizes = append(f.Sizes, int64(i))
	}
	var tcs []string
	bars := map[string][]series{} // toolchain -> series with points
	for _, tc := range ds.Order {
		if !admits(spec, ds, tc) {
			continue
		}
		for si, s := range spec.Series {
			sr := series{Label: s.Label, Style: si}
			for ki, kernel := range spec.Kernels {
				num := ds.Series[dataset.Key{Kernel: kernel, Variant: s.Variant, Toolchain: tc}]
				ref := ds.Series[dataset.Key{Kernel: kernel, Variant: spec.NormalizeTo, Toolchain: tc}]
				if p, ok := normalizedPoint(spec, num, ref); ok {
					p.Size = int64(ki)
					sr.Points = append(sr.Points, p)
				}
			}
			if len(sr.Points) > 0 {
				sr.key = dataset.Key{Kernel: strings.Join(spec.Kernels, ","), Variant: s.Variant, Toolchain: tc}
				bars[tc] = append(bars[tc], sr)
			}
		}
		if len(bars[tc]) > 0 {
			tcs = append(tcs, tc)
		}
	}
	if len(tcs) == 0 {
		f.Sizes, f.Names = nil, nil
		f.Note = fmt.Sprintf("no verified results of %s with %s on one toolchain (%s) for any of %s",
			specVariants(spec), spec.NormalizeTo, spec.Where(), kernelList(spec.Kernels))
		return f
	}
	f.dropEmptyKernels(bars)
	if spec.Panel == "none" {
		p := panel{Title: strings.Join(tcs, ", ")}
		for _, tc := range tcs {
			for _, s := range bars[tc] {
				if len(tcs) > 1 {
					s.Label = withNote(s.Label, tc)
				}
				p.Series = append(p.Series, s)
			}
		}
		f.Panels = []panel{p}
		return f
	}
	for _, tc := range tcs {
		f.Panels = append(f.Panels, panel{Title: toolchainTitle(ds, tc), Series: bars[tc]})
	}
	return f
}

// normalizedPoint is num's time over ref's at the chosen common size.
func normalizedPoint(spec reportspec.Figure, num, ref []dataset.Point) (dataset.Point, bool) {
	var common []dataset.Point // pairs (num, ref), ascending size
	for _, p := range sizeFilter(num, spec.Sizes) {
		if q, ok := dataset.PointAt(ref, p.Size); ok && dataset.Comparable(p, q) {
			common = append(common, p, q)
		}
	}
	if len(common) == 0 {
		return dataset.Point{}, false
	}
	i := len(common) - 2
	if spec.At == "smallest" {
		i = 0
	}
	p, q := common[i], common[i+1]
	if dataset.Unlike(p, q) != "" { // two clocks: no bar (docs/report.md, like clocks)
		return dataset.Point{}, false
	}
	// time ratio t_num / t_ref = rate_ref / rate_num (one kernel, one size)
	boot := stats.Ratio(q.RateBoot(), p.RateBoot())
	p.Norm = q.Rate() / p.Rate()
	p.NormLo, p.NormHi = stats.Interval(boot)
	return p, true
}

// kernelList names up to four kernels, then how many more.
func kernelList(ks []string) string {
	if len(ks) <= 4 {
		return strings.Join(ks, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ks[:4], ", "), len(ks)-4)
}

// dropEmptyKernels leaves out the kernels no series has a bar for, and
// renumbers the points' positions.
func (f *Figure) dropEmptyKernels(bars map[string][]series) {
	used := make([]bool, len(f.Names))
	for _, ss := range bars {
		for _, s := range ss {
			for _, p := range s.Points {
				used[p.Size] = true
			}
		}
	}
	pos := make([]int64, len(f.Names))
	var names []string
	var sizes []int64
	for i, u := range used {
		if u {
			pos[i] = int64(len(names))
			sizes = append(sizes, int64(len(names)))
			names = append(names, f.Names[i])
		}
	}
	for _, ss := range bars {
		for _, s := range ss {
			for j := range s.Points {
				s.Points[j].Size = pos[s.Points[j].Size]
			}
		}
	}
	f.Names, f.Sizes = names, sizes
}

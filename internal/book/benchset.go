package book

// The benchmark set of loop nests beyond HOMMEXX (docs/loopnest.md, "The
// benchmark set"): each nest's mapped form (004's mapper), its hand-written
// Kokkos form and, where one exists, its vendor library form, measured by
// one run on one GPU, side by side. The nests are data
// (templates/book/benchset.yaml); the tables are made here from every
// current folder of the index that measured any of them.

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// BenchsetFile lists the benchmark set's nests, relative to the repository root.
const BenchsetFile = "templates/book/benchset.yaml"

// benchSpec is templates/book/benchset.yaml.
type benchSpec struct {
	Mapped, Hand, Vendor string // the variants of the three forms
	Nests                []benchNest
}

// benchNest is one nest: its kernels are Stem+"_mapped" and Stem+"_team".
type benchNest struct {
	Stem, Title string
	Rate        string // gflops or gbps
	VendorName  string // the vendor form's call ("cuBLAS DGEMM"), "" for none
	Copy        bool   // each form's fraction of the measured copy bandwidth
}

func (n benchNest) mapped() string { return n.Stem + "_mapped" }
func (n benchNest) hand() string   { return n.Stem + "_team" }

// loadBenchSpec reads the benchmark set and checks every name against the
// source tree's vocabulary: a stem needs a kernel <stem>_mapped or
// <stem>_team, a variant must exist.
func loadBenchSpec(file string, voc *results.Vocabulary) (*benchSpec, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	f := d.Fields(root, "benchmark set", "mapped_variant", "hand_variant", "vendor_variant", "nests")
	d.Require(root, f, "benchmark set", "mapped_variant", "hand_variant", "vendor_variant", "nests")
	s := &benchSpec{Mapped: d.String(f["mapped_variant"], "mapped_variant"), Hand: d.String(f["hand_variant"], "hand_variant"),
		Vendor: d.String(f["vendor_variant"], "vendor_variant")}
	variants := voc.VariantNames()
	for _, name := range []string{"mapped_variant", "hand_variant", "vendor_variant"} {
		if v := d.String(f[name], name); f[name] != nil && !slices.Contains(variants, v) {
			d.Add(f[name], "%s %q is no variant%s", name, v, diag.DidYouMean(v, variants))
		}
	}
	kernels := voc.KernelNames()
	var stems []string
	for _, k := range kernels {
		for _, suffix := range []string{"_mapped", "_team"} {
			if stem, ok := strings.CutSuffix(k, suffix); ok {
				stems = results.AppendNew(stems, stem)
			}
		}
	}
	for _, item := range d.Seq(f["nests"], "nests") {
		nf := d.Fields(item, "nest", "stem", "title", "rate", "vendor", "copy")
		if !d.Require(item, nf, "nest", "stem", "title", "rate") {
			continue
		}
		n := benchNest{Stem: d.String(nf["stem"], "stem"), Title: d.String(nf["title"], "title"), Rate: d.String(nf["rate"], "rate"),
			VendorName: d.String(nf["vendor"], "vendor")}
		if nf["copy"] != nil {
			n.Copy = d.Bool(nf["copy"], "copy")
		}
		if !slices.Contains(kernels, n.mapped()) && !slices.Contains(kernels, n.hand()) {
			d.Add(nf["stem"], "nest %q has no kernel %s or %s%s", n.Stem, n.mapped(), n.hand(), diag.DidYouMean(n.Stem, stems))
		}
		if n.Rate != "gflops" && n.Rate != "gbps" {
			d.Add(nf["rate"], "rate is gflops or gbps, not %q", n.Rate)
		}
		if slices.ContainsFunc(s.Nests, func(o benchNest) bool { return o.Stem == n.Stem }) {
			d.Add(nf["stem"], "nest %q listed twice", n.Stem)
		}
		s.Nests = append(s.Nests, n)
	}
	return s, errs.Err()
}

// benchsetView is the book's section "Loop nests beyond HOMMEXX".
type benchsetView struct {
	Markdown string
	HTML     template.HTML
}

// benchForm is one form of a nest in one folder: its measurement at each size.
type benchForm struct {
	Label, Kernel, Variant string
	Points                 map[int64]dataset.Point
}

// benchsetSection makes the section from the folders (index order): a
// table per (folder, GPU toolchain, nest) that measured any form of the
// nest, then the nests no folder measured.
func benchsetSection(spec *benchSpec, folders []*folder) *benchsetView {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("Each nest of the benchmark set in three forms, measured by one run on one GPU: **mapped** (written as loops, ")
	w("mapped by 004's mapper: `<nest>_mapped` under %s), **hand-written** Kokkos (`<nest>_team` under %s) and the ", spec.Mapped, spec.Hand)
	w("**vendor** library where one has the nest (a kernel's vendor form under %s). Per size: the median time per call ", spec.Vendor)
	w("over every trial's repetitions with its 95%% bootstrap interval (trials, then repetitions), the rate over the median ")
	w("(GFLOP/s for compute-bound nests, GB/s of the kernel's bytes otherwise), and the mapped form's speed as a fraction ")
	w("of the vendor's and of the hand-written form's (the mapped form's rate over theirs: their time over the mapped form's, times the mapped ")
	w("form's flops or bytes over theirs where the shapes differ; above 1 the mapped form is faster), ")
	w("intervals from the same run's replicates; for the transpose, each form's fraction of the device's copy bandwidth as ")
	w("the same run measured it. Verified measurements only. docs/loopnest.md, \"The benchmark set\", says how to measure them.\n")
	measured := map[string]bool{}
	for _, f := range folders {
		if f.Data == nil {
			continue
		}
		ds := dataset.New(f.Data)
		flops := map[[2]any]float64{} // (kernel, size) -> flops per call
		device := map[string]string{} // toolchain -> the device its kernel records name
		for _, r := range f.Data.Kernel {
			if r.Flops > 0 {
				flops[[2]any{r.Kernel, r.Size}] = r.Flops
			}
			if _, ok := device[r.Toolchain]; !ok {
				device[r.Toolchain] = results.DeviceOf(r)
			}
		}
		family := map[string]string{}
		for _, t := range f.Data.Run.Toolchains {
			family[t.ID] = t.Family
		}
		copyBW := results.DeviceBandwidths(copyRecords(f.Data), func(tc string) string { return family[tc] })
		for _, tc := range ds.Order {
			if ds.Toolchains[tc].Target == "host" || strings.HasSuffix(tc, "-host") {
				continue
			}
			for _, n := range spec.Nests {
				forms := []benchForm{
					{Label: "mapped", Kernel: n.mapped(), Variant: spec.Mapped},
					{Label: "hand-written", Kernel: n.hand(), Variant: spec.Hand},
					{Label: "vendor", Kernel: n.hand(), Variant: spec.Vendor},
				}
				var sizes []int64
				for i := range forms {
					fm := &forms[i]
					pts := ds.Series[dataset.Key{Kernel: fm.Kernel, Variant: fm.Variant, Toolchain: tc}]
					if len(pts) == 0 && fm.Label == "vendor" { // the vendor form may be the mapped kernel's
						if mp := ds.Series[dataset.Key{Kernel: n.mapped(), Variant: fm.Variant, Toolchain: tc}]; len(mp) > 0 {
							fm.Kernel, pts = n.mapped(), mp
						}
					}
					fm.Points = map[int64]dataset.Point{}
					for _, p := range pts {
						fm.Points[p.Size] = p
						if !slices.Contains(sizes, p.Size) {
							sizes = append(sizes, p.Size)
						}
					}
				}
				if len(sizes) == 0 {
					continue
				}
				measured[n.Stem] = true
				sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
				bw, hasBW := copyBW[device[tc]]
				w("\n### %s: %s\n\n", n.Stem, n.Title)
				t := ds.Toolchains[tc]
				w("From [%s](#folder-%s) (%s), %s (%s %s). ", f.Name, f.Name, partOf(f), tc, t.Family, t.Version)
				for _, fm := range forms {
					w("%s: %s", fm.Label, formText(fm, n))
					if fm.Label != "vendor" {
						w("; ")
					}
				}
				if n.Copy {
					if hasBW {
						w("; copy bandwidth: %s (%s)", bw.Label(), bw.How())
					} else {
						w("; copy bandwidth: not measured in this folder")
					}
				}
				w(".\n\n")
				unit := map[string]string{"gflops": "GFLOP/s", "gbps": "GB/s"}[n.Rate]
				head := []string{"size"}
				for _, fm := range forms {
					head = append(head, fm.Label+" ms", fm.Label+" "+unit)
				}
				head = append(head, "mapped / vendor", "mapped / hand-written")
				if n.Copy {
					head = append(head, "mapped / copy", "hand-written / copy", "vendor / copy")
				}
				w("| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
				for _, size := range sizes {
					row := []string{fmt.Sprint(size)}
					for _, fm := range forms {
						p, ok := fm.Points[size]
						if !ok {
							row = append(row, "–", "–")
							continue
						}
						row = append(row, timeText(p), rateText(p, n.Rate, flops[[2]any{fm.Kernel, size}]))
					}
					mapped, okM := forms[0].Points[size]
					work := func(kernel string, p dataset.Point) float64 {
						if n.Rate == "gflops" {
							return flops[[2]any{kernel, size}]
						}
						return p.Bytes
					}
					speed := func(other benchForm) string {
						q, okQ := other.Points[size]
						if !okM || !okQ {
							return "–"
						}
						return speedText(mapped, q, work(forms[0].Kernel, mapped)/work(other.Kernel, q))
					}
					row = append(row, speed(forms[2]), speed(forms[1]))
					if n.Copy {
						for _, fm := range forms {
							p, ok := fm.Points[size]
							row = append(row, copyText(p, ok, bw.GBps, hasBW))
						}
					}
					w("| %s |\n", strings.Join(row, " | "))
				}
			}
		}
	}
	var missing []string
	for _, n := range spec.Nests {
		if !measured[n.Stem] {
			missing = append(missing, fmt.Sprintf("%s (%s)", n.Stem, n.Title))
		}
	}
	switch {
	case len(missing) == len(spec.Nests):
		w("\nNot measured yet: no current folder holds a form of any nest on a GPU (%s).\n", strings.Join(missing, "; "))
	case len(missing) > 0:
		w("\nNot measured yet: %s; no current folder holds a form of them on a GPU.\n", strings.Join(missing, "; "))
	}
	md := b.String()
	return &benchsetView{Markdown: md, HTML: markdownHTML([]byte(md))}
}

// copyRecords are the folder's copy measurements: the stream records of
// op copy (BabelStream's copy), else the older runtime copies.
func copyRecords(f *results.Folder) []results.Record {
	var out []results.Record
	for _, r := range f.Stream {
		if r.Op == "copy" {
			out = append(out, r)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, r := range f.Copy {
		if r.Kind == results.KindCopy {
			out = append(out, r)
		}
	}
	return out
}

// formText names a form's cells, or says it has none.
func formText(fm benchForm, n benchNest) string {
	switch {
	case fm.Label == "vendor" && n.VendorName == "":
		return "none (no vendor library has this nest)"
	case len(fm.Points) == 0 && fm.Label == "vendor":
		return fmt.Sprintf("not measured (%s or %s under %s)", n.hand(), n.mapped(), fm.Variant)
	case len(fm.Points) == 0:
		return fmt.Sprintf("not measured (%s under %s)", fm.Kernel, fm.Variant)
	case fm.Label == "vendor":
		return fmt.Sprintf("%s (%s under %s)", n.VendorName, fm.Kernel, fm.Variant)
	}
	return fmt.Sprintf("%s under %s", fm.Kernel, fm.Variant)
}

// timeText is the median time per call in ms with its interval.
func timeText(p dataset.Point) string {
	return fmt.Sprintf("%s [%s, %s]", num(p.M.Median*1e3), num(p.M.Lo*1e3), num(p.M.Hi*1e3))
}

// rateText is GFLOP/s (flops over the time) or GB/s (the kernel's bytes)
// at the median, with the interval the time's gives.
func rateText(p dataset.Point, rate string, flops float64) string {
	if rate == "gflops" {
		if flops <= 0 {
			return "no flops recorded"
		}
		return fmt.Sprintf("%s [%s, %s]", num(flops/p.M.Median/1e9), num(flops/p.M.Hi/1e9), num(flops/p.M.Lo/1e9))
	}
	if p.Bytes <= 0 {
		return "no bytes recorded"
	}
	return fmt.Sprintf("%s [%s, %s]", num(p.GBps), num(p.Lo), num(p.Hi))
}

// speedText is the mapped form's rate over another form's at one size:
// the other's time over the mapped one's, times the mapped form's work over
// the other's (the kernel's flops or bytes: a mapped kernel and its
// hand-written or vendor form may differ slightly in shape, e.g. gemm_mapped's
// m x (m + 1) x (m + 2) against gemm_team's m^3), with the interval of the
// bootstrap replicates' ratio; like clocks only. A work ratio that is not a
// positive number compares times.
func speedText(mapped, q dataset.Point, workRatio float64) string {
	if why := dataset.Unlike(mapped, q); why != "" {
		return "not compared: " + why
	}
	if !(workRatio > 0) || math.IsInf(workRatio, 0) {
		workRatio = 1
	}
	lo, hi := stats.Interval(stats.Ratio(q.M.Boot, mapped.M.Boot))
	return fmt.Sprintf("%.3f [%.3f, %.3f]", q.M.Median/mapped.M.Median*workRatio, lo*workRatio, hi*workRatio)
}

// copyText is a form's GB/s over the device's copy bandwidth, with the
// interval of its GB/s.
func copyText(p dataset.Point, ok bool, copyGBps float64, hasBW bool) string {
	if !ok || !hasBW || copyGBps <= 0 || p.Bytes <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", p.GBps/copyGBps, p.Lo/copyGBps, p.Hi/copyGBps)
}

// num prints a positive number with three significant digits, or more
// digits before the point.
func num(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "?"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

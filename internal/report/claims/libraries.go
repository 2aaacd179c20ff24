package claims

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The words of a layer-against-library row: its interval below 1, above 1,
// or holding 1 (never ranked).
const (
	LayerFaster   = "layer faster"
	LibraryFaster = "library faster"
	Undecided     = "inconclusive"
)

// LayerRow is the project's layer against the library variant that stands
// for it (variants/strategies.yaml `twins:`): the same generated user code,
// one kernel, size and toolchain.
type LayerRow struct {
	Kernel, Toolchain string
	Size              int64
	Layer, Library    string  // the variants
	LayerS, LibraryS  float64 // median seconds of every repetition of every trial
	// Ratio is the layer's time over the library's (the library's rate
	// over the layer's, PointRatio), with its 95% bootstrap interval.
	Ratio   Ratio
	Verdict string // LayerFaster, LibraryFaster or Undecided
}

// LayerTable is every row of one library: "portmatrix's Kokkos layer
// against Kokkos 4.6.01".
type LayerTable struct {
	Library *results.LibraryName
	Rows    []LayerRow
	// Unlike are the pairs measured both ways but timed with different
	// clocks, not compared (results.ClocksDiffer).
	Unlike []string
}

// Title names the table.
func (t LayerTable) Title() string {
	return fmt.Sprintf("portmatrix's %s layer against %s", t.Library.Titled(), t.Library.Named())
}

// LayerTables pairs, in ds, every library variant's series with each of
// its twins' series of the same kernel and toolchain, at every size both
// measured (verified measurements only, like clocks only): one table per
// library, in name order; none where nothing was measured both ways.
func LayerTables(ds *dataset.Set, voc *results.Vocabulary) []LayerTable {
	if voc == nil {
		return nil
	}
	byLib := map[string]*LayerTable{}
	rank := map[string]int{}
	for i, v := range voc.VariantNames() {
		rank[v] = i
	}
	for _, s := range voc.Strategies {
		if s.Library == nil {
			continue
		}
		for _, lib := range s.Variants {
			for _, layer := range s.Twins[lib] {
				for k, pts := range ds.Series {
					if k.Variant != lib {
						continue
					}
					lk := dataset.Key{Kernel: k.Kernel, Variant: layer, Toolchain: k.Toolchain}
					for _, q := range pts {
						p, ok := dataset.PointAt(ds.Series[lk], q.Size)
						if !ok || !dataset.Comparable(p, q) {
							continue
						}
						t := byLib[s.Library.Name]
						if t == nil {
							t = &LayerTable{Library: s.Library}
							byLib[s.Library.Name] = t
						}
						if why := dataset.Unlike(p, q); why != "" {
							t.Unlike = append(t.Unlike, fmt.Sprintf("%s %s@%s / %s at %d: %s", k.Kernel, layer, k.Toolchain, lib, q.Size, why))
							continue
						}
						r := PointRatio(k, lk, q, p) // the library's rate over the layer's: the layer's time over the library's
						r.Numerator, r.Denominator = layer+"@"+k.Toolchain, lib+"@"+k.Toolchain
						t.Rows = append(t.Rows, LayerRow{Kernel: k.Kernel, Toolchain: k.Toolchain, Size: q.Size,
							Layer: layer, Library: lib, LayerS: p.MedianS, LibraryS: q.MedianS, Ratio: r, Verdict: LayerVerdict(r.Lo, r.Hi)})
					}
				}
			}
		}
	}
	var out []LayerTable
	for _, name := range slices.Sorted(maps.Keys(byLib)) {
		t := byLib[name]
		sort.SliceStable(t.Rows, func(i, j int) bool {
			a, b := t.Rows[i], t.Rows[j]
			switch {
			case a.Layer != b.Layer:
				return rank[a.Layer] < rank[b.Layer]
			case a.Library != b.Library:
				return rank[a.Library] < rank[b.Library]
			case a.Kernel != b.Kernel:
				return a.Kernel < b.Kernel
			case a.Toolchain != b.Toolchain:
				return a.Toolchain < b.Toolchain
			}
			return a.Size < b.Size
		})
		sort.Strings(t.Unlike)
		out = append(out, *t)
	}
	return out
}

// LayerVerdict names where a layer-over-library interval lies against 1.
func LayerVerdict(lo, hi float64) string {
	switch {
	case hi < 1:
		return LayerFaster
	case lo > 1:
		return LibraryFaster
	}
	return Undecided
}

// LayerMarkdown writes the tables in Markdown, each under a heading of
// the given level ("##"); nothing for none.
func LayerMarkdown(tables []LayerTable, heading string) []byte {
	var b bytes.Buffer
	for _, t := range tables {
		fmt.Fprintf(&b, "%s %s\n\n", heading, t.Title())
		b.WriteString("The same generated user code on the project's layer and on the library (variants/strategies.yaml, `twins:`): ")
		b.WriteString("the layer's median time over the library's, same kernel, size and toolchain, with the 95% bootstrap interval ")
		b.WriteString("of the ratio (trials, then repetitions, resampled); an interval holding 1 is inconclusive. Verified measurements, like clocks only.\n\n")
		b.WriteString("| kernel | size | toolchain | layer | library | layer time | library time | layer/library | 95% interval | verdict |\n")
		b.WriteString("|---|---:|---|---|---|---:|---:|---:|---|---|\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %.3f | %s | %s |\n", r.Kernel, r.Size, r.Toolchain, r.Layer, r.Library,
				micro(r.LayerS), micro(r.LibraryS), r.Ratio.Value, r.Ratio.Interval(), r.Verdict)
		}
		for _, u := range t.Unlike {
			fmt.Fprintf(&b, "\nNot compared, %s.\n", u)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

func micro(s float64) string { return fmt.Sprintf("%.1f µs", s*1e6) }

// NoLibraryCells begins the reason of a library verdict that the folder
// cannot give: none of the twins was measured in it.
const NoLibraryCells = "no library cells"

// EvaluateLibraries judges every claim a side of which selects a layer
// variant with a library twin once more, each such variant replaced by its
// twins (both sides where both have them), on the same folder's dataset,
// and attaches it to the as-published result (Result.Library). A claim
// over no layer variant with a twin gets none.
func EvaluateLibraries(claims []reportspec.Claim, published []Result, ds *dataset.Set, voc *results.Vocabulary) {
	for i, c := range claims {
		lc, ok := LibraryClaim(c, voc)
		if !ok {
			continue
		}
		l := Result{Claim: lc, Outcome: NotMeasurable}
		switch {
		case slices.Equal(lc.Numerator.Variants, lc.Denominator.Variants) && slices.Equal(lc.KernelsOf(lc.Numerator), lc.KernelsOf(lc.Denominator)):
			l.Reason = "both sides stand for the same library variants (" + strings.Join(lc.Numerator.Variants, ", ") + ")"
		case !measures(ds, lc, c):
			l.Reason = fmt.Sprintf("%s: %s not measured in this folder", NoLibraryCells, strings.Join(twinsOf(c, lc), ", "))
		default:
			l = evaluate(lc, ds)
		}
		published[i].Library = &l
	}
}

// LibraryClaim is c with every variant of a side that has library twins
// replaced by them (voc: TwinsOf); false when no side selects one.
func LibraryClaim(c reportspec.Claim, voc *results.Vocabulary) (reportspec.Claim, bool) {
	num, nok := substitute(c.Numerator, voc)
	den, dok := substitute(c.Denominator, voc)
	if !nok && !dok {
		return c, false
	}
	c.Numerator, c.Denominator = num, den
	c.SetRanOn(voc) // a layer variant left without a twin does not pair with a library variant
	return c, true
}

func substitute(s reportspec.Selector, voc *results.Vocabulary) (reportspec.Selector, bool) {
	var vs []string
	changed := false
	for _, v := range s.Variants {
		if tw := voc.TwinsOf(v); len(tw) > 0 {
			vs = results.AppendNew(vs, tw...)
			changed = true
		} else {
			vs = results.AppendNew(vs, v)
		}
	}
	s.Variants = vs
	return s, changed
}

// twinsOf lists the library variants lc selects that c did not.
func twinsOf(c, lc reportspec.Claim) []string {
	var out []string
	for _, v := range append(slices.Clone(lc.Numerator.Variants), lc.Denominator.Variants...) {
		if !slices.Contains(c.Numerator.Variants, v) && !slices.Contains(c.Denominator.Variants, v) {
			out = results.AppendNew(out, v)
		}
	}
	return out
}

// measures says whether ds holds a series of a library variant the
// substituted claim selects.
func measures(ds *dataset.Set, lc, c reportspec.Claim) bool {
	twins := twinsOf(c, lc)
	for _, side := range []reportspec.Selector{lc.Numerator, lc.Denominator} {
		for _, k := range ds.Select(lc.KernelsOf(side), lc.Target, side) {
			if slices.Contains(twins, k.Variant) {
				return true
			}
		}
	}
	return false
}

// LibraryVerdict is the claim's verdict with the library twins in place of
// the layer variants: "" where the claim selects no layer variant with a
// twin, NoLibraryCells where the folder measured none.
func (r Result) LibraryVerdict() string {
	l := r.Library
	switch {
	case l == nil:
		return ""
	case l.Outcome == NotMeasurable:
		return fmt.Sprintf("not measurable (%s)", l.Reason)
	case l.Outcome == Reproduced:
		return fmt.Sprintf("%s (measured %s)", l.Verdict(), l.Measured())
	}
	return l.Verdict()
}

// LibraryMeasured says whether the folder judged the claim on the
// libraries: some library twin was measured.
func (r Result) LibraryMeasured() bool {
	return r.Library != nil && !strings.HasPrefix(r.Library.Reason, NoLibraryCells)
}

// LibrarySummary counts the library verdicts of the claims the folder
// measured on the libraries.
func LibrarySummary(results []Result) string {
	m := map[Outcome]int{}
	n, twins := 0, 0
	for _, r := range results {
		if r.Library != nil {
			twins++
		}
		if r.LibraryMeasured() {
			m[r.Library.Outcome]++
			n++
		}
	}
	return fmt.Sprintf("on the libraries (each layer variant replaced by the library variants that stand for it): %d of %d claims over a layer with a library twin measured, %d reproduced, %d not reproduced, %d inconclusive, %d not measurable",
		n, twins, m[Reproduced], m[NotReproduced], m[Inconclusive], m[NotMeasurable])
}

package claims

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Outcome is the verdict on a claim.
type Outcome string

// The verdicts.
const (
	Reproduced    Outcome = "reproduced"     // the interval lies in the band
	NotReproduced Outcome = "not reproduced" // the interval lies outside the band
	Inconclusive  Outcome = "inconclusive"   // the interval straddles a bound
	NotMeasurable Outcome = "not measurable"
)

// Ratio is one compared pair: numerator GB/s over denominator GB/s of a
// kernel at a size, with the 95% bootstrap interval of the ratio of the two
// medians. Numerator and Denominator read "variant@toolchain".
type Ratio struct {
	Kernel      string
	Size        int64
	From        int64 // sizes growth: the smaller size the ratio at Size is divided by
	Numerator   string
	Denominator string
	// What each side measured: its size (the numerator's is Size; they
	// differ never) and its tuning configuration (nil: as published).
	DenSize              int64
	NumConfig, DenConfig map[string]int64
	Value                float64
	Lo, Hi               float64
	boot                 []float64 // replicates: numerator's over denominator's, replicate by replicate
}

// Sizes names the size of the ratio, "8→64" for a growth.
func (r Ratio) Sizes() string {
	if r.From != 0 {
		return fmt.Sprintf("%d→%d", r.From, r.Size)
	}
	return fmt.Sprint(r.Size)
}

// Interval is the ratio's interval as text.
func (r Ratio) Interval() string { return fmt.Sprintf("[%.3f, %.3f]", r.Lo, r.Hi) }

// Result is a claim evaluated against one run.
type Result struct {
	Claim     reportspec.Claim
	Outcome   Outcome
	Value     float64 // the aggregate of the ratios (median of the values for "all")
	Lo, Hi    float64 // its interval; for "all" the lowest and highest interval bound
	Min       float64
	Max       float64
	Ratios    []Ratio
	Identical []string // pairs left out: the same device code (never ranked)
	// Unlike: pairs left out because their clocks differ (dataset.Unlike),
	// each "numerator / denominator at size: clocks differ: a against b".
	Unlike []string
	// Mixed: pairs left out because one side runs on the project's layer
	// and the other on a library, where the claim keeps the library
	// (reportspec.Claim.MixesLibrary), each "numerator / denominator:
	// pm layer against Kokkos 4.6.01".
	Mixed  []string
	Reason string // why not measurable
	// Premise is set where a tuned verdict is not measurable because no
	// tuned configuration of a side holds the claim's premises.
	Premise bool
	// Tuned is the same claim on the folder's tuned view (best configuration
	// against best); nil or not measurable: not tuned (TunedVerdict).
	Tuned *Result
	// Library is the same claim with each layer variant replaced by the
	// library variants that stand for it (EvaluateLibraries); nil where
	// the claim selects no layer variant with a twin (LibraryVerdict).
	Library *Result
}

// EvaluateFolder checks every claim against the usable records of res.
func EvaluateFolder(claims []reportspec.Claim, res *results.Folder) []Result {
	return Evaluate(claims, dataset.New(res))
}

func Evaluate(claims []reportspec.Claim, ds *dataset.Set) []Result {
	out := make([]Result, len(claims))
	for i, c := range claims {
		out[i] = evaluate(c, ds)
	}
	return out
}

func evaluate(c reportspec.Claim, ds *dataset.Set) Result {
	r := Result{Claim: c, Outcome: NotMeasurable}
	num := ds.Select(c.KernelsOf(c.Numerator), c.Target, c.Numerator)
	den := ds.Select(c.KernelsOf(c.Denominator), c.Target, c.Denominator)
	if c.Type == "time" {
		if len(num) == 0 {
			r.Reason = missing(ds, c.KernelsOf(c.Numerator), c.Target, c.Numerator)
			return r
		}
		r.Ratios = times(ds, c, num)
		if len(r.Ratios) == 0 {
			r.Reason = "the numerator has no measurement at the claim's sizes"
			return r
		}
		return judge(r)
	}
	switch {
	case len(num) == 0:
		r.Reason = missing(ds, c.KernelsOf(c.Numerator), c.Target, c.Numerator)
		return r
	case len(den) == 0:
		r.Reason = missing(ds, c.KernelsOf(c.Denominator), c.Target, c.Denominator)
		return r
	}
	r.Ratios, r.Identical, r.Unlike, r.Mixed = ratios(ds, c, num, den)
	if len(r.Ratios) == 0 {
		r.Reason = "numerator and denominator have no size in common"
		if c.SameToolchain {
			r.Reason = "numerator and denominator have no toolchain and size in common"
		}
		if c.WithinFamily && apartOnly(ds, c, num, den) {
			r.Reason = "numerator and denominator of one compiler family have no toolchain in common (the claim keeps the family's toolchain)"
		}
		if c.Sizes == "growth" {
			r.Reason = "numerator and denominator have fewer than two sizes in common"
		}
		if len(r.Mixed) > 0 {
			r.Reason = "numerator and denominator run on different implementations of the layer, which the claim keeps: " + r.Mixed[0]
		}
		if len(r.Identical) > 0 {
			r.Reason = "numerator and denominator run the same device code"
		}
		if len(r.Unlike) > 0 {
			r.Reason = unlikeReason(r.Unlike)
		}
		return r
	}
	return judge(r)
}

// judge sets the result's aggregate, interval and outcome from its ratios.
func judge(r Result) Result {
	c := r.Claim
	vals := make([]float64, len(r.Ratios))
	for i, x := range r.Ratios {
		vals[i] = x.Value
	}
	r.Min, r.Max = slices.Min(vals), slices.Max(vals)
	lo, hi := c.Band()
	if c.Aggregate == "all" {
		r.Value = stats.Median(vals)
		r.Lo, r.Hi = math.Inf(1), math.Inf(-1)
		// Counted per numerator toolchain: "all but N cases" speaks of one
		// compiler's kernels, so each toolchain may leave N out.
		inside, outside, count := map[string]int{}, map[string]int{}, map[string]int{}
		for _, x := range r.Ratios {
			r.Lo, r.Hi = math.Min(r.Lo, x.Lo), math.Max(r.Hi, x.Hi)
			tc := x.toolchain()
			count[tc]++
			switch stats.Against(x.Lo, x.Hi, lo, hi) {
			case stats.Inside:
				inside[tc]++
			case stats.Outside:
				outside[tc]++
			}
		}
		r.Outcome = Reproduced
		for tc, n := range count {
			switch {
			case outside[tc] > c.Except:
				r.Outcome = NotReproduced
			case inside[tc] < n-c.Except && r.Outcome == Reproduced:
				r.Outcome = Inconclusive
			}
		}
		return r
	}
	r.Value = aggregate(c.Aggregate, vals)
	r.Lo, r.Hi = aggregateInterval(c.Aggregate, r.Ratios)
	r.Outcome = map[stats.Verdict]Outcome{stats.Inside: Reproduced, stats.Outside: NotReproduced,
		stats.Straddle: Inconclusive}[stats.Against(r.Lo, r.Hi, lo, hi)]
	return r
}

func aggregate(how string, v []float64) float64 {
	switch how {
	case "geomean":
		return stats.Geomean(v)
	case "min":
		return slices.Min(v)
	case "max":
		return slices.Max(v)
	default:
		return stats.Median(v)
	}
}

// aggregateInterval is the interval of the aggregate: from the replicates,
// or, where a ratio has none (a tuning's), the aggregate of the ratios'
// bounds (every aggregate is monotone in each ratio, so these bound it).
func aggregateInterval(how string, rs []Ratio) (lo, hi float64) {
	for _, r := range rs {
		if len(r.boot) == 0 {
			los, his := make([]float64, len(rs)), make([]float64, len(rs))
			for i, x := range rs {
				los[i], his[i] = x.Lo, x.Hi
			}
			return aggregate(how, los), aggregate(how, his)
		}
	}
	return stats.Interval(aggregateBoot(how, rs))
}

// aggregateBoot applies the aggregate replicate by replicate: the ratios of
// replicate b come from the same resample of every measurement, so a
// measurement shared by several ratios moves them together.
func aggregateBoot(how string, rs []Ratio) []float64 {
	n := len(rs[0].boot)
	out := make([]float64, n)
	v := make([]float64, len(rs))
	for b := range out {
		for i, r := range rs {
			v[i] = r.boot[b]
		}
		out[b] = aggregate(how, v)
	}
	return out
}

// missing explains why a selector found nothing.
func missing(ds *dataset.Set, kernels []string, target string, sel reportspec.Selector) string {
	where := sel.Where()
	if target != "any" {
		where += " " + target
	}
	anyToolchain, neverRun := false, ""
	runs := false // a selected toolchain whose binaries may run
	for _, tc := range ds.Order {
		if ds.OnTarget(target, tc) && sel.Matches(tc, ds.Family(tc)) {
			anyToolchain = true
			if why := toolchain.NotRun(ds.Toolchains[tc].Target); why != "" {
				neverRun = why
			} else {
				runs = true
			}
		}
	}
	if !anyToolchain {
		return fmt.Sprintf("no %s toolchain in this run", where)
	}
	if !runs {
		return neverRun // AMD toolchains only: compiled, never run
	}
	return fmt.Sprintf("no verified %s results of %s on %s toolchains",
		strings.Join(kernels, "/"), strings.Join(sel.Variants, ", "), where)
}

// unlikeReason is why a claim whose pairs all have unlike clocks is not
// measurable: "clocks differ: host against cuda-event (3 pairs not compared)".
func unlikeReason(unlike []string) string {
	var whys []string
	for _, u := range unlike {
		_, why, _ := strings.Cut(u, ": ")
		if !slices.Contains(whys, why) {
			whys = append(whys, why)
		}
	}
	n := fmt.Sprintf("%d pairs", len(unlike))
	if len(unlike) == 1 {
		n = "1 pair"
	}
	return fmt.Sprintf("%s (%s not compared)", strings.Join(whys, "; "), n)
}

// ratios pairs every numerator series with every denominator series of the
// same kernel (and toolchain, if asked) at the claim's sizes. Pairs of
// identical device code are not ranked: they are returned by name instead;
// and pairs timed with different clocks are not compared (unlike).
func ratios(ds *dataset.Set, c reportspec.Claim, num, den []dataset.Key) (out []Ratio, same, unlike, mixed []string) {
	for _, n := range num {
		for _, d := range den {
			if n == d || (n.Kernel != d.Kernel && !c.AcrossKernels()) || !SamePairing(c, ds, n.Toolchain, d.Toolchain) {
				continue
			}
			if why := c.MixesLibrary(n.Variant, d.Variant); why != "" {
				mixed = results.AppendNew(mixed, n.Variant+" / "+d.Variant+": "+why)
				continue
			}
			if ds.Identical(n, d) {
				same = append(same, n.Variant+"@"+n.Toolchain+" = "+d.Variant+"@"+d.Toolchain)
				continue
			}
			rs, u := pairRatios(n, d, ds.Series[n], ds.Series[d], c.Sizes, c.At)
			out, unlike = append(out, rs...), append(unlike, u...)
		}
	}
	return out, same, unlike, mixed
}

// times are a time claim's values: each numerator series' median time per
// call in µs at the claim's sizes (largest, smallest, all, or the listed
// ones), with its 95% bootstrap interval; Denominator is empty.
func times(ds *dataset.Set, c reportspec.Claim, num []dataset.Key) []Ratio {
	var out []Ratio
	for _, n := range num {
		pts := ds.Series[n]
		var at []dataset.Point
		for _, p := range pts {
			if c.Sizes != "at" || slices.Contains(c.At, p.Size) {
				at = append(at, p)
			}
		}
		if len(at) == 0 {
			continue
		}
		switch c.Sizes {
		case "largest":
			at = at[len(at)-1:]
		case "smallest":
			at = at[:1]
		}
		for _, p := range at {
			var boot []float64
			for _, b := range p.M.Boot {
				boot = append(boot, b*1e6)
			}
			out = append(out, Ratio{Kernel: n.Kernel, Size: p.Size, DenSize: p.Size, Numerator: n.Variant + "@" + n.Toolchain,
				Value: p.MedianS * 1e6, Lo: p.M.Lo * 1e6, Hi: p.M.Hi * 1e6, boot: boot, NumConfig: p.Config})
		}
	}
	return out
}

// apartOnly says whether every pair of series of the two sides was left
// out for its toolchains (SamePairing).
func apartOnly(ds *dataset.Set, c reportspec.Claim, num, den []dataset.Key) bool {
	for _, n := range num {
		for _, d := range den {
			if n != d && (n.Kernel == d.Kernel || c.AcrossKernels()) && SamePairing(c, ds, n.Toolchain, d.Toolchain) {
				return false
			}
		}
	}
	return true
}

// SamePairing says whether the claim pairs a numerator series of
// toolchain a with a denominator series of toolchain b: keep toolchain asks
// one toolchain; keep family asks it of two series of one compiler family.
func SamePairing(c reportspec.Claim, ds *dataset.Set, a, b string) bool {
	switch {
	case c.SameToolchain:
		return a == b
	case c.WithinFamily:
		return a == b || ds.Family(a) != ds.Family(b)
	}
	return true
}

// pairRatios is the ratios of n's points over d's at the claim's sizes
// (those common to both, in one unit), and the pairs at those sizes left out
// because their clocks differ: the sizes are chosen first, so that a pair
// of unlike clocks at the largest size never gives way to a smaller one.
func pairRatios(n, d dataset.Key, np, dp []dataset.Point, sizes string, at []int64) ([]Ratio, []string) {
	byDen := map[int64]dataset.Point{}
	for _, p := range dp {
		byDen[p.Size] = p
	}
	type pair struct{ p, q dataset.Point }
	var pairs []pair
	for _, p := range np {
		q, ok := byDen[p.Size]
		if !ok || !dataset.Comparable(p, q) || (sizes == "at" && !slices.Contains(at, p.Size)) {
			continue
		}
		pairs = append(pairs, pair{p, q})
	}
	if len(pairs) == 0 {
		return nil, nil
	}
	switch sizes {
	case "largest":
		pairs = pairs[len(pairs)-1:]
	case "smallest":
		pairs = pairs[:1]
	case "growth":
		if len(pairs) < 2 {
			return nil, nil
		}
		pairs = []pair{pairs[0], pairs[len(pairs)-1]}
	}
	var out []Ratio
	var unlike []string
	for _, x := range pairs {
		p, q := x.p, x.q
		if why := dataset.Unlike(p, q); why != "" {
			unlike = append(unlike, fmt.Sprintf("%s@%s / %s@%s at %d: %s", n.Variant, n.Toolchain, d.Variant, d.Toolchain, p.Size, why))
			continue
		}
		out = append(out, PointRatio(n, d, p, q))
	}
	if sizes == "growth" {
		if len(out) < 2 {
			return nil, unlike
		}
		return growth(out), unlike
	}
	return out, unlike
}

// PointRatio is p's rate over q's (p of series n, q of d: the same kernel
// size, or the sizes a claim pairs), with the 95% interval of the ratio of
// the two medians from their bootstrap replicates, replicate by replicate.
// Of one kernel and size, the rates' ratio is q's time over p's. The
// caller has checked the clocks (dataset.Unlike) and the units
// (dataset.Comparable).
func PointRatio(n, d dataset.Key, p, q dataset.Point) Ratio {
	var boot []float64
	var lo, hi float64
	if len(p.M.Boot) > 0 && len(q.M.Boot) > 0 {
		boot = stats.Ratio(p.RateBoot(), q.RateBoot())
		lo, hi = stats.Interval(boot)
	} else { // a tuning's measurements carry their interval, not replicates: bound the ratio by the intervals
		lo = results.Rate(p.Bytes, p.M.Hi) / results.Rate(q.Bytes, q.M.Lo)
		hi = results.Rate(p.Bytes, p.M.Lo) / results.Rate(q.Bytes, q.M.Hi)
	}
	return Ratio{
		Kernel: kernelPair(n.Kernel, d.Kernel), Size: p.Size, Value: p.Rate() / q.Rate(), Lo: lo, Hi: hi, boot: boot,
		Numerator:   n.Variant + "@" + n.Toolchain,
		Denominator: d.Variant + "@" + d.Toolchain,
		DenSize:     q.Size, NumConfig: p.Config, DenConfig: q.Config,
	}
}

// growth is the ratio at the largest common size over the ratio at the
// smallest, replicate by replicate: above 1 when the numerator's lead grows
// with the size. None with fewer than two common sizes.
func growth(rs []Ratio) []Ratio {
	if len(rs) < 2 {
		return nil
	}
	first, last := rs[0], rs[len(rs)-1]
	g := last
	g.Value = last.Value / first.Value
	g.boot = stats.Ratio(last.boot, first.boot)
	g.Lo, g.Hi = stats.Interval(g.boot)
	g.From = first.Size
	return []Ratio{g}
}

// toolchain is the numerator's toolchain.
func (r Ratio) toolchain() string {
	_, tc, _ := strings.Cut(r.Numerator, "@")
	return tc
}

// Verdict is the result as one phrase: "reproduced", "not reproduced
// (measured 0.42 [0.40, 0.44])", "inconclusive (...)" or "not measurable (reason)".
func (r Result) Verdict() string {
	switch r.Outcome {
	case Reproduced:
		return string(Reproduced)
	case NotReproduced, Inconclusive:
		return fmt.Sprintf("%s (%s)", r.Outcome, r.why())
	default:
		return fmt.Sprintf("not measurable (%s)", r.Reason)
	}
}

// why names the ratios against the band: for "all" how many lie in, out of
// or across it, otherwise the interval of the aggregate.
func (r Result) why() string {
	if r.Claim.Aggregate != "all" {
		return fmt.Sprintf("%s interval [%.2f, %.2f]", r.Claim.Aggregate, r.Lo, r.Hi)
	}
	lo, hi := r.Claim.Band()
	n := map[stats.Verdict]int{}
	for _, x := range r.Ratios {
		n[stats.Against(x.Lo, x.Hi, lo, hi)]++
	}
	return fmt.Sprintf("of %d ratios %d in the band, %d outside, %d across a bound",
		len(r.Ratios), n[stats.Inside], n[stats.Outside], n[stats.Straddle])
}

// Expected describes what the claim asks of the ratios.
func (r Result) Expected() string {
	c := r.Claim
	at := "at the largest common size"
	switch c.Sizes {
	case "at":
		var sz []string
		for _, n := range c.At {
			sz = append(sz, fmt.Sprint(n))
		}
		at = "at sizes " + strings.Join(sz, ", ")
	case "all":
		at = "over all sizes"
	case "smallest":
		at = "at the smallest common size"
	case "growth":
		at = "of the ratio at the largest common size over that at the smallest"
	}
	agg := "the " + c.Aggregate + "'s 95% interval"
	switch {
	case c.Aggregate == "all" && c.Except > 0:
		agg = fmt.Sprintf("every ratio's 95%% interval but at most %d of each toolchain", c.Except)
	case c.Aggregate == "all":
		agg = "every ratio's 95% interval"
	}
	if held := heldText(c); held != "" {
		at += " (" + held + ")"
	}
	if c.Type == "order" {
		return fmt.Sprintf("%s above %.2f %s", agg, 1+c.Margin, at)
	}
	lo, hi := c.Range[0], c.Range[1]
	if c.Type == "time" {
		agg = strings.Replace(agg, "ratio's", "median time's", 1)
		return fmt.Sprintf("%s in [%.2f, %.2f] µs per call %s", agg, lo, hi, at)
	}
	switch {
	case math.IsInf(hi, 1):
		return fmt.Sprintf("%s ≥ %.2f %s", agg, lo, at)
	case math.IsInf(lo, -1):
		return fmt.Sprintf("%s ≤ %.2f %s", agg, hi, at)
	}
	return fmt.Sprintf("%s in [%.2f, %.2f] %s", agg, lo, hi, at)
}

// heldText names the premises each side is held at, tuned too: "numerator
// at snap_vector=32, denominator at snap_vector=1"; "" without.
func heldText(c reportspec.Claim) string {
	var out []string
	for _, side := range []struct {
		name string
		s    reportspec.Selector
	}{{"numerator", c.Numerator}, {"denominator", c.Denominator}} {
		if p := side.s.PremiseText(); p != "" {
			out = append(out, side.name+" at "+p)
		}
	}
	return strings.Join(out, ", ")
}

// Measured describes the measured ratios, or "–" when there are none.
func (r Result) Measured() string {
	n := len(r.Ratios)
	switch {
	case n == 0:
		return "–"
	case n == 1:
		x := r.Ratios[0]
		return fmt.Sprintf("%.2f [%.2f, %.2f] (1 ratio)", x.Value, x.Lo, x.Hi)
	case r.Claim.Aggregate == "all":
		return fmt.Sprintf("%.2f–%.2f, intervals %.2f–%.2f (%d ratios)", r.Min, r.Max, r.Lo, r.Hi, n)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f] (%s of %d ratios, range %.2f–%.2f)", r.Value, r.Lo, r.Hi, r.Claim.Aggregate, n, r.Min, r.Max)
}

// Counts counts results by outcome.
func Counts(results []Result) map[Outcome]int {
	m := map[Outcome]int{}
	for _, r := range results {
		m[r.Outcome]++
	}
	return m
}

func Summary(results []Result) string {
	m := Counts(results)
	return fmt.Sprintf("%d of %d claims reproduced, %d not reproduced, %d inconclusive, %d not measurable",
		m[Reproduced], len(results), m[NotReproduced], m[Inconclusive], m[NotMeasurable])
}

// Markdown renders the claims table of a run as Markdown, then every
// claim's component ratios with their intervals.
func Markdown(runID string, results []Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Claims: %s\n\n", runID)
	b.WriteString("Ratios are GB/s of the numerator over GB/s of the denominator, same kernel and size;\n")
	b.WriteString("only verified measurements count. Intervals are 95% bootstrap intervals (trials, then\n")
	b.WriteString("repetitions, resampled). A claim is reproduced when its interval lies in the band, not\n")
	b.WriteString("reproduced when it lies outside, inconclusive when it straddles a bound. Written by\n")
	b.WriteString("`portmatrix report` from results.jsonl.\n\n")
	b.WriteString("Every claim is judged twice: as published (the generated launch parameters or the machine\n")
	b.WriteString("model's defaults) and tuned (each side at its best configuration of the folder's tuning\n")
	b.WriteString("records); \"not tuned\" where no tuned measurement decides it.\n\n")
	b.WriteString("A claim over a variant of the project's own layers (kk-*, raja-*) is judged a third time with each\n")
	b.WriteString("such variant replaced by the library variants that stand for it (Kokkos, RAJA: variants/strategies.yaml's\n")
	b.WriteString("`twins:`), where the folder measured them; \"–\" where the claim names no such variant or the folder no library cell.\n\n")
	fmt.Fprintf(&b, "As published: %s. %s. %s.\n\n", Summary(results), strings.ToUpper(TunedSummary(results)[:1])+TunedSummary(results)[1:],
		strings.ToUpper(LibrarySummary(results)[:1])+LibrarySummary(results)[1:])
	b.WriteString("| claim | paper | quote | expected | measured | as published | tuned | on the libraries |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		lib := "–"
		if r.LibraryMeasured() {
			lib = r.LibraryVerdict()
		}
		cells := []string{r.Claim.ID, r.Claim.Paper, "“" + r.Claim.Quote + "”", r.Expected(), r.Measured(), r.Verdict(), r.TunedVerdict(), lib}
		for i, c := range cells {
			cells[i] = mdCell(c)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n## Component ratios\n")
	for _, r := range results {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", r.Claim.ID, mdCell(r.Claim.Statement))
		if len(r.Ratios) == 0 && len(r.Identical) == 0 && len(r.Unlike) == 0 && len(r.Mixed) == 0 {
			b.WriteString("No ratio.\n")
			libraryRatios(&b, r)
			continue
		}
		ratioTable(&b, r)
		for _, s := range r.Identical {
			fmt.Fprintf(&b, "\nNot ranked, the same device code: %s.\n", s)
		}
		for _, s := range r.Unlike {
			fmt.Fprintf(&b, "\nNot compared, %s.\n", s)
		}
		for _, s := range r.Mixed {
			fmt.Fprintf(&b, "\nNot paired, the claim keeps the library: %s.\n", s)
		}
		if t := r.Tuned; t != nil && len(t.Ratios) > 0 {
			b.WriteString("\nTuned (each side at its best configuration):\n\n")
			ratioTable(&b, *t)
		}
		libraryRatios(&b, r)
	}
	return b.Bytes()
}

// libraryRatios writes a claim's ratios on the libraries, where measured.
func libraryRatios(b *bytes.Buffer, r Result) {
	l := r.Library
	if !r.LibraryMeasured() {
		return
	}
	fmt.Fprintf(b, "\nOn the libraries (%s): %s.\n", strings.Join(twinsOf(r.Claim, l.Claim), ", "), r.LibraryVerdict())
	if len(l.Ratios) > 0 {
		b.WriteString("\n")
		ratioTable(b, *l)
	}
	for _, s := range l.Unlike {
		fmt.Fprintf(b, "\nNot compared, %s.\n", s)
	}
	for _, s := range l.Mixed {
		fmt.Fprintf(b, "\nNot paired, the claim keeps the library: %s.\n", s)
	}
}

// ratioTable writes a claim's component ratios against its band.
func ratioTable(b *bytes.Buffer, r Result) {
	lo, hi := r.Claim.Band()
	switch {
	case len(r.Ratios) > 0 && r.Claim.Type == "time":
		b.WriteString("| kernel | size | cell | – | µs per call | 95% interval | against the band |\n")
		b.WriteString("|---|---:|---|---|---:|---|---|\n")
	case len(r.Ratios) > 0:
		b.WriteString("| kernel | size | numerator | denominator | ratio | 95% interval | against the band |\n")
		b.WriteString("|---|---:|---|---|---:|---|---|\n")
	}
	for _, x := range SortedRatios(r.Ratios) {
		where := map[stats.Verdict]string{stats.Inside: "in", stats.Outside: "outside", stats.Straddle: "across a bound"}[stats.Against(x.Lo, x.Hi, lo, hi)]
		fmt.Fprintf(b, "| %s | %s | %s | %s | %.3f | %s | %s |\n", x.Kernel, x.Sizes(), x.Numerator, x.Denominator, x.Value, x.Interval(), where)
	}
}

func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// SortedRatios returns the ratios ordered for display.
func SortedRatios(rs []Ratio) []Ratio {
	out := append([]Ratio(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kernel != b.Kernel {
			return a.Kernel < b.Kernel
		}
		if a.Numerator != b.Numerator {
			return a.Numerator < b.Numerator
		}
		if a.Denominator != b.Denominator {
			return a.Denominator < b.Denominator
		}
		return a.Size < b.Size
	})
	return out
}

// kernelPair names the kernel of a ratio: one, or numerator/denominator.
func kernelPair(n, d string) string {
	if n == d {
		return n
	}
	return n + "/" + d
}

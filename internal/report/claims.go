package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

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
	Numerator   string
	Denominator string
	Value       float64
	Lo, Hi      float64
	boot        []float64 // replicates: numerator's over denominator's, replicate by replicate
}

// Interval is the ratio's interval as text.
func (r Ratio) Interval() string { return fmt.Sprintf("[%.3f, %.3f]", r.Lo, r.Hi) }

// ClaimResult is a claim evaluated against one run.
type ClaimResult struct {
	Claim     ClaimSpec
	Outcome   Outcome
	Value     float64 // the aggregate of the ratios (median of the values for "all")
	Lo, Hi    float64 // its interval; for "all" the lowest and highest interval bound
	Min       float64
	Max       float64
	Ratios    []Ratio
	Identical []string // pairs left out: the same device code (never ranked)
	Reason    string   // why not measurable
	// Tuned is the same claim on the folder's tuned view (best configuration
	// against best); nil or not measurable: not tuned (TunedVerdict).
	Tuned *ClaimResult
}

// EvaluateClaims checks every claim against the usable records of res.
func EvaluateClaims(claims []ClaimSpec, res *Results) []ClaimResult {
	return evaluateAll(claims, newDataset(res))
}

func evaluateAll(claims []ClaimSpec, ds *dataset) []ClaimResult {
	out := make([]ClaimResult, len(claims))
	for i, c := range claims {
		out[i] = evaluate(c, ds)
	}
	return out
}

func evaluate(c ClaimSpec, ds *dataset) ClaimResult {
	r := ClaimResult{Claim: c, Outcome: NotMeasurable}
	num := ds.selectSeries(c.Kernels, c.Target, c.Numerator)
	den := ds.selectSeries(c.Kernels, c.Target, c.Denominator)
	switch {
	case len(num) == 0:
		r.Reason = ds.missing(c.Kernels, c.Target, c.Numerator)
		return r
	case len(den) == 0:
		r.Reason = ds.missing(c.Kernels, c.Target, c.Denominator)
		return r
	}
	r.Ratios, r.Identical = ds.ratios(c, num, den)
	if len(r.Ratios) == 0 {
		r.Reason = "numerator and denominator have no size in common"
		if c.SameToolchain {
			r.Reason = "numerator and denominator have no toolchain and size in common"
		}
		if len(r.Identical) > 0 {
			r.Reason = "numerator and denominator run the same device code"
		}
		return r
	}
	vals := make([]float64, len(r.Ratios))
	for i, x := range r.Ratios {
		vals[i] = x.Value
	}
	r.Min, r.Max = slices.Min(vals), slices.Max(vals)
	lo, hi := c.band()
	if c.Aggregate == "all" {
		r.Value = stats.Median(vals)
		r.Lo, r.Hi = math.Inf(1), math.Inf(-1)
		inside, outside := 0, 0
		for _, x := range r.Ratios {
			r.Lo, r.Hi = math.Min(r.Lo, x.Lo), math.Max(r.Hi, x.Hi)
			switch stats.Against(x.Lo, x.Hi, lo, hi) {
			case stats.Inside:
				inside++
			case stats.Outside:
				outside++
			}
		}
		switch {
		case inside == len(r.Ratios):
			r.Outcome = Reproduced
		case outside > 0:
			r.Outcome = NotReproduced
		default:
			r.Outcome = Inconclusive
		}
		return r
	}
	r.Value = aggregate(c.Aggregate, vals)
	r.Lo, r.Hi = aggregateInterval(c.Aggregate, r.Ratios)
	r.Outcome = map[stats.Verdict]Outcome{stats.Inside: Reproduced, stats.Outside: NotReproduced,
		stats.Straddle: Inconclusive}[stats.Against(r.Lo, r.Hi, lo, hi)]
	return r
}

// band is the interval the claim accepts: range, or above 1 + margin for
// an order claim.
func (c ClaimSpec) band() (lo, hi float64) {
	if c.Type == "order" {
		return 1 + c.Margin, math.Inf(1)
	}
	return c.Range[0], c.Range[1]
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

// selectSeries returns the series of kernels matching sel on the target's
// toolchains, in claim order.
func (ds *dataset) selectSeries(kernels []string, target string, sel Selector) []seriesKey {
	var out []seriesKey
	for _, k := range kernels {
		for _, v := range sel.Variants {
			for _, key := range ds.keys(k, v) {
				if ds.onTarget(target, key.Toolchain) && sel.matches(key.Toolchain, ds.family(key.Toolchain)) {
					out = append(out, key)
				}
			}
		}
	}
	return out
}

func (s Selector) matches(tc, family string) bool {
	if len(s.Families) == 0 && len(s.Toolchains) == 0 {
		return true
	}
	return slices.Contains(s.Families, family) || slices.Contains(s.Toolchains, tc)
}

// missing explains why a selector found nothing.
func (ds *dataset) missing(kernels []string, target string, sel Selector) string {
	where := sel.where()
	if target != "any" {
		where += " " + target
	}
	anyToolchain, neverRun := false, ""
	runs := false // a selected toolchain whose binaries may run
	for _, tc := range ds.order {
		if ds.onTarget(target, tc) && sel.matches(tc, ds.family(tc)) {
			anyToolchain = true
			if why := toolchain.NotRun(ds.toolchains[tc].Target); why != "" {
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

func (s Selector) where() string {
	names := append(append([]string(nil), s.Families...), s.Toolchains...)
	if len(names) == 0 {
		return "any"
	}
	return strings.Join(names, "/")
}

// ratios pairs every numerator series with every denominator series of the
// same kernel (and toolchain, if asked) at the claim's sizes. Pairs of
// identical device code are not ranked: they are returned by name instead.
func (ds *dataset) ratios(c ClaimSpec, num, den []seriesKey) ([]Ratio, []string) {
	var out []Ratio
	var same []string
	for _, n := range num {
		for _, d := range den {
			if n == d || n.Kernel != d.Kernel || (c.SameToolchain && n.Toolchain != d.Toolchain) {
				continue
			}
			if ds.identical(n, d) {
				same = append(same, n.Variant+"@"+n.Toolchain+" = "+d.Variant+"@"+d.Toolchain)
				continue
			}
			out = append(out, pairRatios(n, d, ds.series[n], ds.series[d], c.Sizes)...)
		}
	}
	return out, same
}

func pairRatios(n, d seriesKey, np, dp []point, sizes string) []Ratio {
	byDen := map[int64]point{}
	for _, p := range dp {
		byDen[p.Size] = p
	}
	var out []Ratio
	for _, p := range np {
		q, ok := byDen[p.Size]
		if !ok || !comparable(p, q) {
			continue
		}
		var boot []float64
		var lo, hi float64
		if len(p.M.Boot) > 0 && len(q.M.Boot) > 0 {
			boot = stats.Ratio(p.rateBoot(), q.rateBoot())
			lo, hi = stats.Interval(boot)
		} else { // a tuning's measurements carry their interval, not replicates: bound the ratio by the intervals
			lo = results.Rate(p.Bytes, p.M.Hi) / results.Rate(q.Bytes, q.M.Lo)
			hi = results.Rate(p.Bytes, p.M.Lo) / results.Rate(q.Bytes, q.M.Hi)
		}
		out = append(out, Ratio{
			Kernel: n.Kernel, Size: p.Size, Value: p.rate() / q.rate(), Lo: lo, Hi: hi, boot: boot,
			Numerator:   n.Variant + "@" + n.Toolchain,
			Denominator: d.Variant + "@" + d.Toolchain,
		})
	}
	if len(out) == 0 {
		return out
	}
	switch sizes {
	case "largest":
		return out[len(out)-1:]
	case "smallest":
		return out[:1]
	}
	return out
}

// Verdict is the result as one phrase: "reproduced", "not reproduced
// (measured 0.42 [0.40, 0.44])", "inconclusive (...)" or "not measurable (reason)".
func (r ClaimResult) Verdict() string {
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
func (r ClaimResult) why() string {
	if r.Claim.Aggregate != "all" {
		return fmt.Sprintf("%s interval [%.2f, %.2f]", r.Claim.Aggregate, r.Lo, r.Hi)
	}
	lo, hi := r.Claim.band()
	n := map[stats.Verdict]int{}
	for _, x := range r.Ratios {
		n[stats.Against(x.Lo, x.Hi, lo, hi)]++
	}
	return fmt.Sprintf("of %d ratios %d in the band, %d outside, %d across a bound",
		len(r.Ratios), n[stats.Inside], n[stats.Outside], n[stats.Straddle])
}

// Expected describes what the claim asks of the ratios.
func (r ClaimResult) Expected() string {
	c := r.Claim
	at := "at the largest common size"
	switch c.Sizes {
	case "all":
		at = "over all sizes"
	case "smallest":
		at = "at the smallest common size"
	}
	agg := "the " + c.Aggregate + "'s 95% interval"
	if c.Aggregate == "all" {
		agg = "every ratio's 95% interval"
	}
	if c.Type == "order" {
		return fmt.Sprintf("%s above %.2f %s", agg, 1+c.Margin, at)
	}
	lo, hi := c.Range[0], c.Range[1]
	switch {
	case math.IsInf(hi, 1):
		return fmt.Sprintf("%s ≥ %.2f %s", agg, lo, at)
	case math.IsInf(lo, -1):
		return fmt.Sprintf("%s ≤ %.2f %s", agg, hi, at)
	}
	return fmt.Sprintf("%s in [%.2f, %.2f] %s", agg, lo, hi, at)
}

// Measured describes the measured ratios, or "–" when there are none.
func (r ClaimResult) Measured() string {
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

// ClaimCounts counts results by outcome.
func ClaimCounts(results []ClaimResult) map[Outcome]int {
	m := map[Outcome]int{}
	for _, r := range results {
		m[r.Outcome]++
	}
	return m
}

func claimSummary(results []ClaimResult) string {
	m := ClaimCounts(results)
	return fmt.Sprintf("%d of %d claims reproduced, %d not reproduced, %d inconclusive, %d not measurable",
		m[Reproduced], len(results), m[NotReproduced], m[Inconclusive], m[NotMeasurable])
}

// ClaimsMarkdown renders the claims table of a run as Markdown, then every
// claim's component ratios with their intervals.
func ClaimsMarkdown(runID string, results []ClaimResult) []byte {
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
	fmt.Fprintf(&b, "As published: %s. %s.\n\n", claimSummary(results), strings.ToUpper(tunedSummary(results)[:1])+tunedSummary(results)[1:])
	b.WriteString("| claim | paper | quote | expected | measured | as published | tuned |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		cells := []string{r.Claim.ID, r.Claim.Paper, "“" + r.Claim.Quote + "”", r.Expected(), r.Measured(), r.Verdict(), r.TunedVerdict()}
		for i, c := range cells {
			cells[i] = mdCell(c)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n## Component ratios\n")
	for _, r := range results {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", r.Claim.ID, mdCell(r.Claim.Statement))
		if len(r.Ratios) == 0 && len(r.Identical) == 0 {
			b.WriteString("No ratio.\n")
			continue
		}
		ratioTable(&b, r)
		for _, s := range r.Identical {
			fmt.Fprintf(&b, "\nNot ranked, the same device code: %s.\n", s)
		}
		if t := r.Tuned; t != nil && len(t.Ratios) > 0 {
			b.WriteString("\nTuned (each side at its best configuration):\n\n")
			ratioTable(&b, *t)
		}
	}
	return b.Bytes()
}

// ratioTable writes a claim's component ratios against its band.
func ratioTable(b *bytes.Buffer, r ClaimResult) {
	lo, hi := r.Claim.band()
	if len(r.Ratios) > 0 {
		b.WriteString("| kernel | size | numerator | denominator | ratio | 95% interval | against the band |\n")
		b.WriteString("|---|---:|---|---|---:|---|---|\n")
	}
	for _, x := range sortedRatios(r.Ratios) {
		where := map[stats.Verdict]string{stats.Inside: "in", stats.Outside: "outside", stats.Straddle: "across a bound"}[stats.Against(x.Lo, x.Hi, lo, hi)]
		fmt.Fprintf(b, "| %s | %d | %s | %s | %.3f | %s | %s |\n", x.Kernel, x.Size, x.Numerator, x.Denominator, x.Value, x.Interval(), where)
	}
}

func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// sortedRatios returns the ratios ordered for display.
func sortedRatios(rs []Ratio) []Ratio {
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

package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Outcome is the verdict on a claim.
type Outcome string

// The three verdicts.
const (
	Reproduced    Outcome = "reproduced"
	NotReproduced Outcome = "not reproduced"
	NotMeasurable Outcome = "not measurable"
)

// Ratio is one compared pair: numerator GB/s over denominator GB/s of a
// kernel at a size. Numerator and Denominator read "variant@toolchain".
type Ratio struct {
	Kernel      string
	Size        int64
	Numerator   string
	Denominator string
	Value       float64
}

// ClaimResult is a claim evaluated against one run.
type ClaimResult struct {
	Claim   ClaimSpec
	Outcome Outcome
	Value   float64 // the aggregate of the ratios (median for "all")
	Min     float64
	Max     float64
	Ratios  []Ratio
	Reason  string // why not measurable
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
	r.Ratios = ds.ratios(c, num, den)
	if len(r.Ratios) == 0 {
		r.Reason = "numerator and denominator have no size in common"
		if c.SameToolchain {
			r.Reason = "numerator and denominator have no toolchain and size in common"
		}
		return r
	}
	vals := make([]float64, len(r.Ratios))
	for i, x := range r.Ratios {
		vals[i] = x.Value
	}
	r.Min, r.Max = minOf(vals), maxOf(vals)
	r.Value = aggregate(c.Aggregate, vals)
	r.Outcome = NotReproduced
	if c.holds(r) {
		r.Outcome = Reproduced
	}
	return r
}

func aggregate(how string, v []float64) float64 {
	switch how {
	case "geomean":
		return geomean(v)
	case "min":
		return minOf(v)
	case "max":
		return maxOf(v)
	default:
		return median(v)
	}
}

// holds reports whether the measured ratios satisfy the claim.
func (c ClaimSpec) holds(r ClaimResult) bool {
	if c.Type == "order" {
		v := r.Value
		if c.Aggregate == "all" {
			v = r.Min
		}
		return v > 1+c.Margin
	}
	lo, hi := c.Range[0], c.Range[1]
	if c.Aggregate == "all" {
		return r.Min >= lo && r.Max <= hi
	}
	return r.Value >= lo && r.Value <= hi
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
	anyToolchain := false
	for _, tc := range ds.order {
		anyToolchain = anyToolchain || ds.onTarget(target, tc) && sel.matches(tc, ds.family(tc))
	}
	if !anyToolchain {
		return fmt.Sprintf("no %s toolchain in this run", where)
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
// same kernel (and toolchain, if asked) at the claim's sizes.
func (ds *dataset) ratios(c ClaimSpec, num, den []seriesKey) []Ratio {
	var out []Ratio
	for _, n := range num {
		for _, d := range den {
			if n == d || n.Kernel != d.Kernel || (c.SameToolchain && n.Toolchain != d.Toolchain) {
				continue
			}
			out = append(out, pairRatios(n, d, ds.series[n], ds.series[d], c.Sizes)...)
		}
	}
	return out
}

func pairRatios(n, d seriesKey, np, dp []point, sizes string) []Ratio {
	byDen := map[int64]float64{}
	for _, p := range dp {
		byDen[p.Size] = p.GBps
	}
	var out []Ratio
	for _, p := range np {
		if g, ok := byDen[p.Size]; ok && g > 0 {
			out = append(out, Ratio{
				Kernel: n.Kernel, Size: p.Size, Value: p.GBps / g,
				Numerator:   n.Variant + "@" + n.Toolchain,
				Denominator: d.Variant + "@" + d.Toolchain,
			})
		}
	}
	if sizes == "largest" && len(out) > 0 {
		return out[len(out)-1:]
	}
	return out
}

// Verdict is the result as one phrase: "reproduced", "not reproduced
// (measured ratio 0.42)" or "not measurable (reason)".
func (r ClaimResult) Verdict() string {
	switch r.Outcome {
	case Reproduced:
		return string(Reproduced)
	case NotReproduced:
		return fmt.Sprintf("not reproduced (measured ratio %s)", r.measuredValue())
	default:
		return fmt.Sprintf("not measurable (%s)", r.Reason)
	}
}

// Expected describes what the claim asks of the ratios.
func (r ClaimResult) Expected() string {
	c := r.Claim
	at := "at the largest common size"
	if c.Sizes == "all" {
		at = "over all sizes"
	}
	agg := c.Aggregate
	if agg == "all" {
		agg = "every ratio"
	}
	if c.Type == "order" {
		if c.Aggregate == "all" {
			agg = "min"
		}
		return fmt.Sprintf("%s > %.2f %s", agg, 1+c.Margin, at)
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
		return fmt.Sprintf("%.2f (1 ratio)", r.Value)
	case r.Claim.Aggregate == "all":
		return fmt.Sprintf("%.2f–%.2f (%d ratios)", r.Min, r.Max, n)
	}
	return fmt.Sprintf("%.2f (%s of %d ratios, range %.2f–%.2f)", r.Value, r.Claim.Aggregate, n, r.Min, r.Max)
}

func (r ClaimResult) measuredValue() string {
	if r.Claim.Aggregate == "all" && len(r.Ratios) > 1 {
		return fmt.Sprintf("%.2f–%.2f", r.Min, r.Max)
	}
	return fmt.Sprintf("%.2f", r.Value)
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
	return fmt.Sprintf("%d of %d claims reproduced, %d not reproduced, %d not measurable",
		m[Reproduced], len(results), m[NotReproduced], m[NotMeasurable])
}

// ClaimsMarkdown renders the claims table of a run as Markdown.
func ClaimsMarkdown(runID string, results []ClaimResult) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Claims: %s\n\n", runID)
	b.WriteString("Ratios are GB/s of the numerator over GB/s of the denominator, same kernel and size;\n")
	b.WriteString("only verified measurements count. Written by `portmatrix report` from results.jsonl.\n\n")
	fmt.Fprintf(&b, "%s.\n\n", claimSummary(results))
	b.WriteString("| claim | paper | statement | expected | measured | result |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range results {
		cells := []string{r.Claim.ID, r.Claim.Paper, r.Claim.Statement, r.Expected(), r.Measured(), r.Verdict()}
		for i, c := range cells {
			cells[i] = mdCell(c)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return b.Bytes()
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

package portability

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// MarkdownFile is the portability page of a folder.
const MarkdownFile = "portability.md"

func (i Interval) String() string { return fmt.Sprintf("%.2f [%.2f, %.2f]", i.V, i.Lo, i.Hi) }

func optString(i *Interval) string {
	if i == nil {
		return "–"
	}
	return i.String()
}

// Markdown renders the analysis: the platform set, the platforms, and for
// each problem its strategies and variants ranked by PP, with the
// efficiency on each platform. figures maps a problem to the cascade plot
// (and "" to the navigation chart) to link; nil links none.
func (a *Analysis) Markdown(figures map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# Performance portability\n\n")
	b.WriteString("PP is Pennycook, Sewall and Lee's metric: the harmonic mean of an application's efficiencies over\n")
	b.WriteString("the platform set H, 0 when it does not run (or fails verification) on any platform of H. A platform\n")
	b.WriteString("is a (device, toolchain) pair. Application efficiency is against the best result of the problem on\n")
	b.WriteString("the platform; architectural efficiency is minimum-traffic GB/s against the device's measured STREAM\n")
	b.WriteString("roofline (and its datasheet bandwidth where known). A strategy takes its best variant on each\n")
	b.WriteString("platform. Intervals are 95% bootstrap intervals carried from the times. Code divergence is the\n")
	b.WriteString("average pairwise Jaccard distance of the generated programs the platforms run. \"PP where it runs\"\n")
	b.WriteString("is PP over the platforms of H it runs on (Pennycook et al. 2019: PP of a subset, read with its size).\n")
	b.WriteString("See docs/portability.md.\n\n")
	fmt.Fprintf(&b, "**Platform set H: %s** (%d platforms)", a.Set.Name, len(a.Set.Platforms))
	if len(a.Set.Excluded) > 0 {
		var ex []string
		for _, e := range a.Set.Excluded {
			ex = append(ex, fmt.Sprintf("%s (%s)", e.Platform, e.Reason))
		}
		fmt.Fprintf(&b, "; excluded: %s", strings.Join(ex, ", "))
	}
	b.WriteString(".\n\n| platform | device | toolchain | status | roofline GB/s |\n|---|---|---|---|---:|\n")
	roof := map[string]float64{}
	for _, e := range a.Efficiencies {
		if e.Roof > 0 {
			roof[e.Device] = e.Roof
		}
	}
	for _, p := range a.Platforms {
		r := "–"
		if v := roof[p.Device]; v > 0 {
			r = fmt.Sprintf("%.0f", v)
		}
		status := p.Status
		if p.Reason != "" {
			status += ": " + p.Reason
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", p.Name(), p.Device, p.Toolchain, status, r)
	}
	if a.DivergenceErr != nil {
		fmt.Fprintf(&b, "\nCode divergence is missing where a program was not found: %v.\n", a.DivergenceErr)
	}
	if f := figures[""]; f != "" {
		fmt.Fprintf(&b, "\n![navigation chart](%s)\n", f)
	}
	for _, p := range a.Problems() {
		fmt.Fprintf(&b, "\n## %s at size %d\n\n", p.Kernel, p.Size)
		if f := figures[p.String()]; f != "" {
			fmt.Fprintf(&b, "![cascade %s](%s)\n\n", p, f)
		}
		a.scoreTable(&b, a.ScoresOf(p, StrategyLevel), "strategy")
		b.WriteString("\n")
		a.scoreTable(&b, a.ScoresOf(p, VariantLevel), "variant")
	}
	return b.Bytes()
}

func (a *Analysis) scoreTable(b *bytes.Buffer, scores []Score, what string) {
	sort.SliceStable(scores, func(i, j int) bool {
		x, y := scores[i], scores[j]
		if x.App.V != y.App.V {
			return x.App.V > y.App.V
		}
		if x.RunsOn != y.RunsOn {
			return x.RunsOn > y.RunsOn
		}
		return x.Supported.V > y.Supported.V
	})
	sheet := false
	for _, e := range a.Efficiencies {
		sheet = sheet || e.Datasheet != nil
	}
	cols := []string{what, "PP (app eff)", "PP (arch eff)"}
	if sheet {
		cols = append(cols, "PP (datasheet)")
	}
	cols = append(cols, "divergence", "runs on", "PP where it runs")
	cols = append(cols, a.Set.Platforms...)
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, s := range scores {
		div := "–"
		if s.Divergence != nil {
			div = fmt.Sprintf("%.2f", *s.Divergence)
		}
		fmt.Fprintf(b, "| %s | %s | %s |", s.Application, s.App, optString(s.Arch))
		if sheet {
			fmt.Fprintf(b, " %s |", optString(s.Datasheet))
		}
		fmt.Fprintf(b, " %s | %d/%d | %s |", div, s.RunsOn, len(s.On), s.Supported)
		for _, o := range s.On {
			cell := o.Status
			if o.Runs() {
				cell = fmt.Sprintf("%.2f", o.Eff.App.V)
				if s.Level == StrategyLevel {
					cell += " " + o.Variant
				}
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		b.WriteString("\n")
	}
}

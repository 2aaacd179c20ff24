package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// NotTuned is the tuned verdict of a claim that no tuned measurement of the
// folder decides: no configuration was searched for one of its sides.
const NotTuned = "not tuned"

// ConfigKey names a record's configuration ("" for the generated values):
// name=value pairs sorted by name, as the harness's --config takes them.
func ConfigKey(r Record) string { return tune.Config(r.Config).String() }

// splitViews parts a folder's kernel records into the view "as published"
// (records of no tuning configuration) and the view "tuned": for every
// (cell, size) with a tuned record, the records of its fastest verified
// configuration (best against best; the as-published records compete as one
// configuration). A (cell, size) without a tuned record has no tuned view.
func splitViews(recs []Record) (published, tuned []Record) {
	type group struct {
		cs  results.CellSize
		cfg string
	}
	by := map[group][]Record{}
	hasTuned := map[results.CellSize]bool{}
	for _, r := range recs {
		if !r.Tuned() {
			published = append(published, r)
		} else {
			hasTuned[r.Key()] = true
		}
		g := group{r.Key(), ConfigKey(r)}
		if r.Tuned() {
			g.cfg = "tuned:" + g.cfg // a run at a tuned configuration is apart from the published one, config or not
		}
		by[g] = append(by[g], r)
	}
	best := map[results.CellSize]group{}
	bestS := map[results.CellSize]float64{}
	for _, g := range slices.SortedFunc(maps.Keys(by), func(a, b group) int {
		return strings.Compare(a.cs.Cell+"\x00"+a.cfg, b.cs.Cell+"\x00"+b.cfg)
	}) {
		if !hasTuned[g.cs] {
			continue
		}
		m := results.Measurements(by[g], "")[g.cs]
		if m.Stats == nil {
			continue // a failed or unverified configuration never wins
		}
		if s, ok := bestS[g.cs]; !ok || m.Stats.Median < s {
			best[g.cs], bestS[g.cs] = g, m.Stats.Median
		}
	}
	for _, cs := range slices.SortedFunc(maps.Keys(best), func(a, b results.CellSize) int {
		if a.Cell != b.Cell {
			return strings.Compare(a.Cell, b.Cell)
		}
		return int(a.Size - b.Size)
	}) {
		tuned = append(tuned, by[best[cs]]...)
	}
	return published, tuned
}

// viewOf is res with only recs as its kernel records.
func viewOf(res *Results, recs []Record) *Results {
	v := *res
	v.Kernel = recs
	return &v
}

// evaluateTuned evaluates every claim on the tuned view and attaches it to
// the as-published results: a claim with a side that has no tuned
// measurement gets NotTuned and says which.
func evaluateTuned(claims []ClaimSpec, published []ClaimResult, tunedDS *dataset) {
	if len(tunedDS.series) == 0 {
		return // no tuned measurement: every claim not tuned, for one reason
	}
	for i, c := range claims {
		t := evaluate(c, tunedDS)
		switch {
		case t.Outcome != NotMeasurable:
		case published[i].Outcome == NotMeasurable:
			t.Reason = published[i].Reason
		case len(tunedDS.selectSeries(c.Kernels, c.Target, c.Numerator)) == 0:
			t.Reason = "no tuned configuration of the numerator: " + strings.Join(c.Numerator.Variants, ", ") + " on " + c.Numerator.where()
		case len(tunedDS.selectSeries(c.Kernels, c.Target, c.Denominator)) == 0:
			t.Reason = "no tuned configuration of the denominator: " + strings.Join(c.Denominator.Variants, ", ") + " on " + c.Denominator.where()
		}
		published[i].Tuned = &t
	}
}

// TunedVerdict is the claim's verdict on the tuned view: NotTuned with the
// reason where no tuned measurement decides it.
func (r ClaimResult) TunedVerdict() string {
	if r.Tuned == nil || r.Tuned.Outcome == NotMeasurable {
		why := "no tuned measurement in this folder"
		if r.Tuned != nil && r.Tuned.Reason != "" {
			why = r.Tuned.Reason
		}
		return fmt.Sprintf("%s (%s)", NotTuned, why)
	}
	v := r.Tuned.Verdict()
	if r.Tuned.Outcome != Reproduced {
		return v
	}
	return fmt.Sprintf("%s (measured %s)", v, r.Tuned.Measured())
}

// tunedSummary counts the tuned verdicts.
func tunedSummary(results []ClaimResult) string {
	m := map[Outcome]int{}
	n := 0
	for _, r := range results {
		if r.Tuned != nil && r.Tuned.Outcome != NotMeasurable {
			m[r.Tuned.Outcome]++
			n++
		}
	}
	return fmt.Sprintf("tuned (best configuration against best): %d claims decided, %d reproduced, %d not reproduced, %d inconclusive, %d %s",
		n, m[Reproduced], m[NotReproduced], m[Inconclusive], len(results)-n, NotTuned)
}

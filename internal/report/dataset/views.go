package dataset

import (
	"maps"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// ConfigKey names a record's configuration ("" for the generated values):
// name=value pairs sorted by name, as the harness's --config takes them.
func ConfigKey(r results.Record) string { return tune.Config(r.Config).String() }

// SplitViews parts a folder's kernel records into the view "as published"
// (records of no tuning configuration) and the view "tuned": for every
// (cell, size) with a tuned record, the records of its fastest verified
// configuration (best against best; the as-published records compete as one
// configuration). A (cell, size) without a tuned record has no tuned view.
func SplitViews(recs []results.Record) (published, tuned []results.Record) {
	return splitViews(recs, nil)
}

// TunedHolding is the tuned view of SplitViews with only the tuned
// configurations that holds accepts competing for each (cell, size): a
// claim's premises (reportspec.Selector.Holds). The as-published records
// always compete: they are the generated values, which a claim's premises
// hold (reportspec checks them against the source tree).
func TunedHolding(recs []results.Record, holds func(r results.Record) bool) []results.Record {
	_, tuned := splitViews(recs, holds)
	return tuned
}

func splitViews(recs []results.Record, holds func(r results.Record) bool) (published, tuned []results.Record) {
	type group struct {
		cs  results.CellSize
		cfg string
	}
	by := map[group][]results.Record{}
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
		if r := by[g][0]; holds != nil && r.Tuned() && !holds(r) {
			continue // a configuration that drops a premise of the claim
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

// View is res with only recs as its kernel records.
func View(res *results.Folder, recs []results.Record) *results.Folder {
	v := *res
	v.Kernel = recs
	return &v
}

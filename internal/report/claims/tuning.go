package claims

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// EvaluateTuning judges claims on a tuning folder alone, best against best:
// each (cell, size) at its best verified configuration of tuning.jsonl
// (over devices and binaries, the fastest), the toolchains from its
// run.json. A tuning stores each configuration's median and interval, not
// its replicates, so a ratio's interval is bounded by the two intervals
// (the numerator's low over the denominator's high, and the reverse):
// wider than the report's bootstrap, never narrower.
//
// A claim with premises takes each (cell, size) of a side at the fastest
// verified configuration that holds the side's premises (000 Fig. 7's
// Kokkos-OMP at snap_vector 1), whichever the tuner found best; where no
// evaluation holds them, the claim is not measurable tuned and says so
// (Result.Premise).
func EvaluateTuning(dir string, claims []reportspec.Claim) ([]Result, error) {
	cells, err := tune.Tuned(dir)
	if err != nil {
		return nil, err
	}
	run, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	all := tuningSet(run, cells, nil)
	out := make([]Result, len(claims))
	for i, c := range claims {
		if !HasPremises(c) {
			out[i] = evaluate(c, all)
			continue
		}
		ds := tuningSet(run, cells, func(k dataset.Key, cfg tune.Config) bool { return Holds(c, all, k, cfg) })
		out[i] = evaluate(c, ds)
		if out[i].Outcome != NotMeasurable {
			continue
		}
		for _, s := range []reportspec.Selector{c.Numerator, c.Denominator} {
			if len(s.Premises) > 0 && len(ds.Select(c.KernelsOf(s), c.Target, s)) == 0 && len(all.Select(c.KernelsOf(s), c.Target, s)) > 0 {
				out[i].Reason = fmt.Sprintf("no tuned configuration of %s on %s holds %s", strings.Join(s.Variants, ", "), s.Where(), s.PremiseText())
				out[i].Premise = true
				break
			}
		}
	}
	return out, nil
}

// tuningSet is the set of each (cell, size)'s best verified configuration
// of the tuning, among those holds accepts (nil: the tuner's best).
func tuningSet(run results.Run, cells []*tune.CellResult, holds func(dataset.Key, tune.Config) bool) *dataset.Set {
	ds := dataset.Empty(run.Toolchains)
	family := map[string]string{}
	for _, t := range run.Toolchains {
		family[t.ID] = t.Family
	}
	best := map[dataset.Key]map[int64]dataset.Point{}
	for _, c := range cells {
		parts := strings.SplitN(c.Cell, ".", 3)
		if len(parts) < 3 {
			continue
		}
		k := dataset.Key{Kernel: parts[0], Variant: parts[1], Toolchain: parts[2]}
		b := c.Best
		if holds != nil {
			b = nil
			for i, m := range c.Measured {
				if m.Verified && m.Error == "" && m.MedianS > 0 && holds(k, m.Config) && (b == nil || m.MedianS < b.MedianS) {
					b = &c.Measured[i]
				}
			}
		}
		if b == nil {
			continue
		}
		bytes := b.GBps * b.MedianS * 1e9
		// The clock of the evaluation; an older entry names none: the clock
		// its toolchain's records had then (results.InferClock).
		clock := b.Clock
		if clock == "" {
			clock = results.InferClock(family[k.Toolchain], k.Toolchain)
		}
		p := dataset.Point{Size: c.Size, MedianS: b.MedianS, Bytes: bytes, GBps: b.GBps, Config: b.Config, Clock: clock,
			M: &stats.Measurement{Median: b.MedianS, Lo: b.LoS, Hi: b.HiS}}
		if bytes > 0 {
			p.Lo, p.Hi = bytes/b.HiS/1e9, bytes/b.LoS/1e9
		}
		if best[k] == nil {
			best[k] = map[int64]dataset.Point{}
		}
		if q, ok := best[k][c.Size]; !ok || p.MedianS < q.MedianS {
			best[k][c.Size] = p
		}
		if _, ok := ds.Toolchains[k.Toolchain]; !ok {
			ds.AddToolchain(results.Toolchain{ID: k.Toolchain})
		}
	}
	for k, bySize := range best {
		for _, size := range slices.Sorted(maps.Keys(bySize)) {
			ds.Series[k] = append(ds.Series[k], bySize[size])
		}
	}
	return ds
}

package claims

import (
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
func EvaluateTuning(dir string, claims []reportspec.Claim) ([]Result, error) {
	cells, err := tune.Tuned(dir)
	if err != nil {
		return nil, err
	}
	run, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	ds := dataset.Empty(run.Toolchains)
	best := map[dataset.Key]map[int64]dataset.Point{}
	for _, c := range cells {
		b := c.Best
		if b == nil {
			continue
		}
		parts := strings.SplitN(c.Cell, ".", 3)
		if len(parts) < 3 {
			continue
		}
		k := dataset.Key{Kernel: parts[0], Variant: parts[1], Toolchain: parts[2]}
		bytes := b.GBps * b.MedianS * 1e9
		p := dataset.Point{Size: c.Size, MedianS: b.MedianS, Bytes: bytes, GBps: b.GBps,
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
	return Evaluate(claims, ds), nil
}

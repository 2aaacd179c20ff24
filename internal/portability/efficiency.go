package portability

import (
	"math"

	"github.com/portmatrix/portmatrix/internal/stats"
)

// Options tune the efficiencies.
type Options struct {
	// BestKnown is a best-known time (seconds) of a problem on a platform,
	// e.g. from a tuned run: application efficiency is taken against the
	// faster of it and the best measured result.
	BestKnown map[ProblemPlatform]float64
	// Datasheet is each device's datasheet memory bandwidth in GB/s (the
	// machine model), for the second architectural efficiency.
	Datasheet map[string]float64
	// Generated is the folder of generated programs (generated/), for code
	// divergence; empty leaves divergence out.
	Generated string
}

// ProblemPlatform keys a best-known result.
type ProblemPlatform struct {
	Problem  Problem
	Platform string
}

// Efficiency is one measurement's efficiencies. A measurement that failed
// (an unverified or erroring trial) has none: every efficiency 0.
type Efficiency struct {
	Measurement
	App Interval // against the best result of its problem on its platform
	// Against the device's measured roofline (Roof) and its datasheet
	// bandwidth (Sheet): minimum-traffic GB/s over the bandwidth, at most
	// 1; nil where the kernel has no minimum traffic or the device no
	// bandwidth.
	Arch, Datasheet *Interval
	GBpsMin         Interval
	Roof, Sheet     float64 // GB/s
	AboveRoof       bool    // the minimum-traffic GB/s beat the roofline (a cache-resident size): Arch is capped at 1
	Best            string  // the variant whose time is the best, or "best known"
}

// Efficiencies computes the efficiencies of every measurement of in. The
// application efficiency is a ratio of two times: a measurement is compared
// with the best of its problem and platform among those of its own clock
// only (results.ClocksDiffer: a platform is one toolchain, whose cells share
// a clock unless a merged folder holds runs of two harnesses).
func Efficiencies(in Input, opts Options) []Efficiency {
	type clocked struct {
		ProblemPlatform
		clock string
	}
	best := map[clocked]Measurement{}
	for _, m := range in.Measurements {
		k := clocked{ProblemPlatform{m.Problem, m.Platform}, m.Clock}
		if b, ok := best[k]; m.OK && (!ok || m.Seconds < b.Seconds) {
			best[k] = m
		}
	}
	out := make([]Efficiency, 0, len(in.Measurements))
	for _, m := range in.Measurements {
		e := Efficiency{Measurement: m}
		if !m.OK {
			out = append(out, e)
			continue
		}
		k := ProblemPlatform{m.Problem, m.Platform}
		b := best[clocked{k, m.Clock}]
		e.Best = b.Variant
		if t, ok := opts.BestKnown[k]; ok && t > 0 && t < b.Seconds {
			b, e.Best = Measurement{Seconds: t}, "best known"
		}
		e.App = appEfficiency(m, b)
		e.GBpsMin = m.GBpsMin()
		e.Roof, e.Sheet = in.Rooflines[m.Device], opts.Datasheet[m.Device]
		e.Arch = archEfficiency(e.GBpsMin, e.Roof)
		e.Datasheet = archEfficiency(e.GBpsMin, e.Sheet)
		e.AboveRoof = e.Roof > 0 && e.GBpsMin.V > e.Roof
		out = append(out, e)
	}
	return out
}

// appEfficiency is best's time over m's. With the bootstrap replicates of
// both, the interval is that of their replicate-by-replicate ratio (as the
// report's ratios); otherwise best is taken as exact and m's time interval
// carried. Efficiencies are at most 1: a variant faster than the best
// would be the best.
func appEfficiency(m, best Measurement) Interval {
	v := best.Seconds / m.Seconds
	var lo, hi float64
	if len(best.Boot) > 0 && len(best.Boot) == len(m.Boot) {
		lo, hi = stats.Interval(stats.Ratio(best.Boot, m.Boot))
	} else {
		lo, hi = best.Seconds/m.Hi, best.Seconds/m.Lo
	}
	return Interval{math.Min(v, 1), math.Min(lo, 1), math.Min(hi, 1)}
}

// archEfficiency is g over the bandwidth bw, capped at 1.
func archEfficiency(g Interval, bw float64) *Interval {
	if g.V <= 0 || bw <= 0 {
		return nil
	}
	return &Interval{math.Min(g.V/bw, 1), math.Min(g.Lo/bw, 1), math.Min(g.Hi/bw, 1)}
}

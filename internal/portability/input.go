package portability

import (
	"fmt"
	"slices"
	"sort"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Input is what the measures are computed from: one entry per measured
// (problem, platform, variant), the platforms, and each device's measured
// bandwidth roofline. FromRecords makes it from a results folder; tests
// build it by hand.
type Input struct {
	Measurements []Measurement
	Platforms    []Platform         // sorted by name
	Rooflines    map[string]float64 // device -> best median GB/s of any STREAM op on it (copy records in older folders)
	Builds       []Build            // every cell the build stage considered: what did not run, and why
}

// Build is one cell of build.csv: a variant of a kernel with a toolchain
// and its build status (built, cached, failed, skipped).
type Build struct {
	Kernel, Strategy, Variant, Toolchain string
	Status, Reason                       string
}

// Measurement is every trial of one (problem, platform, variant) pooled.
type Measurement struct {
	Problem  Problem
	Platform string // Platform.Name
	Device   string
	Strategy string
	Variant  string
	OK       bool    // every trial verified, without error, with a time
	Seconds  float64 // median of every repetition
	Lo, Hi   float64 // 95% bootstrap interval of the median, seconds
	BytesMin float64 // minimum memory traffic of one call; 0 when the record has none
	Boot     []float64
	// Clock is the clock of its times (results.ClockOf): application
	// efficiency compares a measurement with the best of its own clock only.
	Clock string
}

// GBpsMin is the minimum-traffic bandwidth and its interval (0s without bytes_min).
func (m Measurement) GBpsMin() Interval {
	if m.BytesMin <= 0 || m.Seconds <= 0 {
		return Interval{}
	}
	return Interval{m.BytesMin / m.Seconds / 1e9, m.BytesMin / m.Hi / 1e9, m.BytesMin / m.Lo / 1e9}
}

// Interval is a value and its 95% interval.
type Interval struct{ V, Lo, Hi float64 }

// Load reads a results folder (run.json, results.jsonl, build.csv) into an
// Input.
func Load(dir string) (Input, error) {
	run, err := results.ReadRun(dir)
	if err != nil {
		return Input{}, err
	}
	recs, err := results.ReadJSONL(dir)
	if err != nil {
		return Input{}, err
	}
	builds, err := results.ReadBuildCSV(dir)
	if err != nil {
		return Input{}, err
	}
	return FromRecords(recs, run, builds), nil
}

// FromRecords is the one adapter from the results package: kernel records
// pooled per (cell, size) over the last record of each trial (the report's
// pooling and its bootstrap key, so intervals agree with its tables), the
// rooflines of the stream (or copy) records, and the platforms: those
// measured, and those of toolchains whose cells built (build.csv) but never
// ran, as CompilesNotRun.
func FromRecords(recs []results.Record, run results.Run, builds []results.BuildRow) Input {
	in := Input{Rooflines: rooflines(recs, run)}
	// A merged folder may hold one cell measured on two devices: they are
	// two platforms.
	type cellDevice struct {
		cs     results.CellSize
		device string
	}
	type trialKey struct {
		cellDevice
		trial int
	}
	last := map[trialKey]results.Record{}
	var order []cellDevice
	seen := map[cellDevice]bool{}
	for _, r := range recs {
		if r.Kind != results.KindKernel && r.Kind != "" || r.Tuned() {
			continue // tuning configurations: PP is of the launch as published
		}
		k := trialKey{cellDevice{r.Key(), deviceOf(r.Device, r.Target, run.Host.CPU)}, r.Unit().Trial}
		last[k] = r
		if !seen[k.cellDevice] {
			seen[k.cellDevice] = true
			order = append(order, k.cellDevice)
		}
	}
	trials := map[cellDevice][]results.Record{}
	for k, r := range last {
		trials[k.cellDevice] = append(trials[k.cellDevice], r)
	}
	platforms := map[string]Platform{}
	for _, cd := range order {
		ts := trials[cd]
		sort.Slice(ts, func(i, j int) bool { return ts[i].Unit().Trial < ts[j].Unit().Trial })
		m := pool(ts, run.Host.CPU)
		in.Measurements = append(in.Measurements, m)
		platforms[m.Platform] = Platform{Device: m.Device, Toolchain: ts[0].Toolchain, Status: Measured}
	}
	ran := map[string]bool{}
	for _, p := range platforms {
		ran[p.Toolchain] = true
	}
	strategyOf := map[string]string{}
	if v := run.Vocabulary; v != nil {
		for _, s := range v.Strategies {
			for _, name := range s.Variants {
				strategyOf[name] = s.Name
			}
		}
	}
	for _, m := range in.Measurements {
		strategyOf[m.Variant] = m.Strategy
	}
	for _, b := range builds {
		st := strategyOf[b.Variant]
		if st == "" {
			st = b.Variant
		}
		in.Builds = append(in.Builds, Build{b.Kernel, st, b.Variant, b.Toolchain, b.Status, b.Reason})
		if ran[b.Toolchain] || b.Status != build.Built && b.Status != build.Cached {
			continue
		}
		p := Platform{Device: targetOf(run, b.Toolchain), Toolchain: b.Toolchain, Status: CompilesNotRun,
			Reason: "its cells were built; none ran in this folder"}
		if why := toolchain.NotRun(p.Device); why != "" {
			p.Reason = why // an AMD target: never run anywhere
		}
		platforms[p.Name()] = p
	}
	for _, p := range platforms {
		in.Platforms = append(in.Platforms, p)
	}
	sort.Slice(in.Platforms, func(i, j int) bool { return in.Platforms[i].Name() < in.Platforms[j].Name() })
	return in
}

// pool makes one measurement of the trials of one (cell, size).
func pool(ts []results.Record, hostCPU string) Measurement {
	r := ts[0]
	dev := deviceOf(r.Device, r.Target, hostCPU)
	m := Measurement{Problem: Problem{r.Kernel, r.Size}, Device: dev, Platform: PlatformName(dev, r.Toolchain),
		Strategy: r.Strategy, Variant: r.Variant, BytesMin: r.BytesMin, Clock: results.ClockOf(ts)}
	var times [][]float64
	for _, t := range ts {
		if !t.Usable() {
			return m
		}
		x := t.TimesS
		if len(x) == 0 {
			x = []float64{t.MedianS}
		}
		times = append(times, x)
	}
	s := stats.Measure(fmt.Sprintf("%s@%d", r.Cell, r.Size), times)
	if s == nil {
		return m
	}
	m.OK, m.Seconds, m.Lo, m.Hi, m.Boot = true, s.Median, s.Lo, s.Hi, s.Boot
	return m
}

// targetOf is the device a toolchain that never ran builds for: its target.
func targetOf(run results.Run, toolchain string) string {
	for _, tc := range run.Toolchains {
		if tc.ID == toolchain && tc.Target != "" {
			return tc.Target
		}
	}
	return "unknown device"
}

// rooflines is each device's measured bandwidth (results.DeviceBandwidths,
// the report's roofline: the best STREAM op on it, or the copy records of
// older folders), by the device names of this package (deviceOf).
func rooflines(recs []results.Record, run results.Run) map[string]float64 {
	family := map[string]string{}
	for _, t := range run.Toolchains {
		family[t.ID] = t.Family
	}
	var bw []results.Record
	for _, r := range recs {
		if r.Kind == results.KindStream || r.Kind == results.KindCopy {
			r.Device = deviceOf(r.Device, r.Target, run.Host.CPU)
			bw = append(bw, r)
		}
	}
	out := map[string]float64{}
	for dev, b := range results.DeviceBandwidths(bw, func(tc string) string { return family[tc] }) {
		out[dev] = b.GBps
	}
	return out
}

// problems lists the problems of in, ordered.
func (in Input) problems() []Problem {
	var out []Problem
	for _, m := range in.Measurements {
		if !slices.Contains(out, m.Problem) {
			out = append(out, m.Problem)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

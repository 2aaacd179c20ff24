package portability

import (
	"slices"
	"sort"

	"github.com/portmatrix/portmatrix/internal/build"
)

// Levels of an application.
const (
	VariantLevel  = "variant"  // one variant, as it is, on every platform
	StrategyLevel = "strategy" // a strategy's best variant on each platform (tuned by choice of variant)
)

// Statuses of an application on a platform of the set.
const (
	Failed      = "failed verification" // ran; a trial was unverified or erred
	BuildFailed = "build failed"
	NotBuilt    = "not built"      // skipped: a capability or pattern the toolchain lacks
	NotRun      = "built, not run" // on a measured platform, at this size
	NoRecord    = "no cell"        // neither a build row nor a record: the matrix has no such cell
)

// Score is the performance portability of one application solving one
// problem over a platform set: PP of its application efficiencies, of its
// architectural efficiencies (roofline, datasheet), the efficiency used on
// each platform of the set, and its code divergence.
type Score struct {
	Problem     Problem
	Level       string // VariantLevel or StrategyLevel
	Application string // the variant, or the strategy
	Strategy    string
	Set         string // PlatformSet.Name
	App         Interval
	// nil where a platform of the set lacks the efficiency (no minimum
	// traffic, no roofline or datasheet) while the application ran there.
	Arch, Datasheet *Interval
	// PP over the platforms of the set it runs on, and how many they are
	// (what PP alone hides: a 0 from one missing platform).
	Supported  Interval
	RunsOn     int
	On         []OnPlatform // one per platform of the set, in its order
	Divergence *float64     // code divergence over the platforms it ran on; nil without sources
}

// OnPlatform is an application's efficiency on one platform of the set:
// that of its measurement (for a strategy, of its chosen variant), or 0
// with the status saying why.
type OnPlatform struct {
	Platform string
	Status   string // Measured, Failed, BuildFailed, NotBuilt, NotRun, NoRecord or the platform's own status (CompilesNotRun)
	Reason   string // the build's reason, for BuildFailed and NotBuilt
	Variant  string // the variant measured (a strategy's choice)
	Eff      *Efficiency
}

// Runs reports whether it has an efficiency there.
func (o OnPlatform) Runs() bool { return o.Eff != nil }

// PP is Pennycook, Sewall and Lee's metric: the harmonic mean of effs, 0
// when any is 0 (an application that does not run on a platform of the
// set) or when there are none.
func PP(effs []float64) float64 {
	if len(effs) == 0 {
		return 0
	}
	sum := 0.0
	for _, e := range effs {
		if e <= 0 {
			return 0
		}
		sum += 1 / e
	}
	return float64(len(effs)) / sum
}

// ppInterval is PP of the values and of each bound (PP is monotone in every
// efficiency, so the bounds' PPs bound it).
func ppInterval(effs []Interval) Interval {
	var v, lo, hi []float64
	for _, e := range effs {
		v, lo, hi = append(v, e.V), append(lo, e.Lo), append(hi, e.Hi)
	}
	return Interval{PP(v), PP(lo), PP(hi)}
}

// Scores computes PP over h for every problem, per variant and per
// strategy: every application with a measurement of the problem on any
// platform, or a build row of its kernel, gets a score (0 when it runs on
// no platform of h).
func Scores(in Input, effs []Efficiency, h PlatformSet) []Score {
	ix := newIndex(in, effs)
	var out []Score
	for _, prob := range in.problems() {
		variants := ix.variants(prob)
		var strategies []string
		for _, v := range variants {
			strategies = appendNew(strategies, ix.strategyOf[v])
		}
		sort.Strings(strategies)
		for _, v := range variants {
			s := Score{Problem: prob, Level: VariantLevel, Application: v, Strategy: ix.strategyOf[v], Set: h.Name}
			for _, p := range h.Platforms {
				s.On = append(s.On, ix.on(prob, p, v))
			}
			out = append(out, s.finish())
		}
		for _, st := range strategies {
			s := Score{Problem: prob, Level: StrategyLevel, Application: st, Strategy: st, Set: h.Name}
			for _, p := range h.Platforms {
				var best OnPlatform
				for _, v := range variants {
					if o := ix.on(prob, p, v); ix.strategyOf[v] == st && (best.Platform == "" || better(o, best)) {
						best = o
					}
				}
				if !best.Runs() {
					best.Variant = ""
				}
				s.On = append(s.On, best)
			}
			out = append(out, s.finish())
		}
	}
	return out
}

// index finds what an application did on a platform.
type index struct {
	platforms  map[string]Platform
	effs       map[measured]*Efficiency
	builds     map[cell]Build
	strategyOf map[string]string    // variant -> strategy
	measured   map[Problem][]string // problem -> variants measured
	tried      map[string][]string  // kernel -> variants of its build rows
}

type measured struct {
	problem           Problem
	platform, variant string
}

type cell struct{ kernel, variant, toolchain string }

func newIndex(in Input, effs []Efficiency) *index {
	ix := &index{platforms: map[string]Platform{}, effs: map[measured]*Efficiency{}, builds: map[cell]Build{},
		strategyOf: map[string]string{}, measured: map[Problem][]string{}, tried: map[string][]string{}}
	for _, p := range in.Platforms {
		ix.platforms[p.Name()] = p
	}
	for i := range effs {
		e := &effs[i]
		ix.effs[measured{e.Problem, e.Platform, e.Variant}] = e
		ix.strategyOf[e.Variant] = e.Strategy
		ix.measured[e.Problem] = appendNew(ix.measured[e.Problem], e.Variant)
	}
	for _, b := range in.Builds {
		ix.builds[cell{b.Kernel, b.Variant, b.Toolchain}] = b
		ix.tried[b.Kernel] = appendNew(ix.tried[b.Kernel], b.Variant)
		if ix.strategyOf[b.Variant] == "" {
			ix.strategyOf[b.Variant] = b.Strategy
		}
	}
	return ix
}

// variants is the applications of a problem, sorted.
func (ix *index) variants(p Problem) []string {
	out := appendNew(slices.Clone(ix.measured[p]), ix.tried[p.Kernel]...)
	sort.Strings(out)
	return out
}

// on is variant v on a platform: its efficiency, or why it has none.
func (ix *index) on(prob Problem, platform, v string) OnPlatform {
	o := OnPlatform{Platform: platform, Variant: v, Status: NoRecord}
	if e := ix.effs[measured{prob, platform, v}]; e != nil {
		o.Status = Failed
		if e.OK {
			o.Status, o.Eff = Measured, e
		}
		return o
	}
	pf := ix.platforms[platform]
	b, built := ix.builds[cell{prob.Kernel, v, pf.Toolchain}]
	switch {
	case built && b.Status == build.Failed:
		o.Status, o.Reason = BuildFailed, b.Reason
	case built && b.Status == build.Skipped:
		o.Status, o.Reason = NotBuilt, b.Reason
	case pf.Status != Measured && pf.Status != "":
		o.Status, o.Reason = pf.Status, pf.Reason
	case built:
		o.Status = NotRun
	}
	return o
}

// better reports whether o is a better choice of variant than b: one that
// runs over one that does not, a higher application efficiency, a failure
// over nothing (it says more).
func better(o, b OnPlatform) bool {
	switch {
	case o.Runs() && b.Runs():
		return o.Eff.App.V > b.Eff.App.V
	case o.Runs() != b.Runs():
		return o.Runs()
	}
	return o.Status == Failed && b.Status != Failed
}

// finish computes the PPs of s.On.
func (s Score) finish() Score {
	var app, arch, sheet, runs []Interval
	archOK, sheetOK := true, true
	for _, o := range s.On {
		if o.Runs() {
			runs = append(runs, o.Eff.App)
		}
		if !o.Runs() {
			app, arch, sheet = append(app, Interval{}), append(arch, Interval{}), append(sheet, Interval{})
			continue
		}
		app = append(app, o.Eff.App)
		if o.Eff.Arch != nil {
			arch = append(arch, *o.Eff.Arch)
		} else {
			archOK = false
		}
		if o.Eff.Datasheet != nil {
			sheet = append(sheet, *o.Eff.Datasheet)
		} else {
			sheetOK = false
		}
	}
	s.App, s.Supported, s.RunsOn = ppInterval(app), ppInterval(runs), len(runs)
	if archOK {
		v := ppInterval(arch)
		s.Arch = &v
	}
	if sheetOK {
		v := ppInterval(sheet)
		s.Datasheet = &v
	}
	return s
}

// appendNew appends the values of more that have lacks.
func appendNew[T comparable](have []T, more ...T) []T {
	for _, x := range more {
		if !slices.Contains(have, x) {
			have = append(have, x)
		}
	}
	return have
}

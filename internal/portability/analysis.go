package portability

import (
	"sort"
)

// Analysis is every measure of one results folder over one platform set.
type Analysis struct {
	Set          PlatformSet
	Platforms    []Platform
	Efficiencies []Efficiency
	Scores       []Score // by problem; each problem's variants, then its strategies, by name
	// DivergenceErr says why divergence is missing (a generated program not found).
	DivergenceErr error
}

// Analyze computes efficiencies, PP over h and, when opts.Generated is
// set, code divergence.
func Analyze(in Input, h PlatformSet, opts Options) *Analysis {
	a := &Analysis{Set: h, Platforms: in.Platforms, Efficiencies: Efficiencies(in, opts)}
	a.Scores = Scores(in, a.Efficiencies, h)
	if opts.Generated != "" {
		a.DivergenceErr = divergences(a.Scores, opts.Generated)
	}
	return a
}

// Problems lists the problems scored, ordered.
func (a *Analysis) Problems() []Problem {
	var out []Problem
	for _, s := range a.Scores {
		if len(out) == 0 || out[len(out)-1] != s.Problem {
			out = append(out, s.Problem)
		}
	}
	return out
}

// Headline is each kernel's problem that PP is read at: the largest size
// among those run on the most platforms of the set. A kernel measured at
// its largest size on the GPUs only is so shown where the CPU measured it
// too, not as PP 0 for want of a measurement.
func (a *Analysis) Headline() map[string]Problem {
	runs := map[Problem]map[string]bool{}
	for _, s := range a.Scores {
		if runs[s.Problem] == nil {
			runs[s.Problem] = map[string]bool{}
		}
		for _, o := range s.On {
			if o.Runs() {
				runs[s.Problem][o.Platform] = true
			}
		}
	}
	out := map[string]Problem{}
	for _, p := range a.Problems() { // ordered by size within a kernel
		if q, ok := out[p.Kernel]; !ok || len(runs[p]) >= len(runs[q]) {
			out[p.Kernel] = p
		}
	}
	return out
}

// ScoresOf is the scores of one problem at one level.
func (a *Analysis) ScoresOf(p Problem, level string) []Score {
	var out []Score
	for _, s := range a.Scores {
		if s.Problem == p && s.Level == level {
			out = append(out, s)
		}
	}
	return out
}

// CascadeLine is one application of a cascade plot: its efficiencies on
// the platforms of the set, highest first, and the PP of the platforms up
// to each (Sewall et al.'s cascade: the PP line falls as harder platforms
// join; a platform it does not run on drops it to 0).
type CascadeLine struct {
	Application string
	Steps       []CascadeStep
	PP          Interval // over the whole set
}

// CascadeStep is one platform of a cascade line.
type CascadeStep struct {
	Platform string
	Status   string
	Eff      Interval // application efficiency (0 where it does not run)
	PP       float64  // PP of this platform and those before it
}

// Cascade is the cascade plot of one problem at one level.
type Cascade struct {
	Problem Problem
	Level   string
	Set     string
	Lines   []CascadeLine // highest PP first
}

// Cascade arranges the cascade plot of a problem at a level.
func (a *Analysis) Cascade(p Problem, level string) Cascade {
	c := Cascade{Problem: p, Level: level, Set: a.Set.Name}
	for _, s := range a.ScoresOf(p, level) {
		line := CascadeLine{Application: s.Application, PP: s.App}
		for _, o := range s.On {
			st := CascadeStep{Platform: o.Platform, Status: o.Status}
			if o.Runs() {
				st.Eff = o.Eff.App
			}
			line.Steps = append(line.Steps, st)
		}
		sort.SliceStable(line.Steps, func(i, j int) bool { return line.Steps[i].Eff.V > line.Steps[j].Eff.V })
		var effs []float64
		for i := range line.Steps {
			effs = append(effs, line.Steps[i].Eff.V)
			line.Steps[i].PP = PP(effs)
		}
		c.Lines = append(c.Lines, line)
	}
	sort.SliceStable(c.Lines, func(i, j int) bool { return c.Lines[i].PP.V > c.Lines[j].PP.V })
	return c
}

// NavPoint is one strategy on a navigation chart: PP against code
// divergence (the chart's x axis is code convergence, 1 - divergence).
type NavPoint struct {
	Problem    Problem
	Strategy   string
	PP         Interval
	Divergence float64
}

// NavChart is the navigation chart points of a problem: its strategies with
// a code divergence.
func (a *Analysis) NavChart(p Problem) []NavPoint {
	var out []NavPoint
	for _, s := range a.ScoresOf(p, StrategyLevel) {
		if s.Divergence != nil {
			out = append(out, NavPoint{p, s.Application, s.App, *s.Divergence})
		}
	}
	return out
}

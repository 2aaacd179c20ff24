package tune

import (
	"cmp"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Scorer is a model that also ranks: how promising a configuration is,
// higher first. Guided orders what it tries by it (Occupancy is one).
type Scorer interface {
	Score(t Target, c Config) float64
}

// GuidedRound is Guided's configurations a round (one process of the
// cell's program) where Options.Round is 0: a round is a process, whose
// set-up (CG-Solve's 8 s of data and reference on an H200) costs as much
// as 20 configurations, so two rounds of 16 measure more for the time
// than four of 8 (docs/tuning.md, "The guided search").
const GuidedRound = 16

// guide is Guided's search over a target's candidates. Each round
// searches around the GuidedBases fastest configurations measured so far
// (the default in the first round): their untried neighbours (one
// tunable one step along its values, the values the candidates have) and
// the moves of two tunables at once (a constraint such as rows_per_team
// >= team_size, or two launch bounds set together, makes some optima
// reachable only so), ordered by the time a surrogate predicts: the
// base's time, times each step's effect learned from the pairs of
// neighbours measured so far (learn). What is left of a round restarts
// from the prior's best untried candidates. The prior is the model's
// score (Scorer, higher first; none: all equal), then the distance from
// the default (steps summed over the tunables), then a hash of the seed
// and the configuration: the same seed takes the same path over the same
// measurements.
type guide struct {
	size       int // the round: configurations a call of next proposes at most
	max        int // configurations the budget allows, the default included
	def        string
	hasDefault bool // the default is measured first (not ruled out)
	byName     map[string]Config
	prior      []string // candidates, best first
	rank       map[string]int
	names      []string
	values     map[string][]int64 // each tunable's values, sorted
	tried      map[string]bool
	proposed   int
	started    bool
	pending    []string            // proposed, not yet learned from
	effects    map[move][2]float64 // the surrogate: each step's log time ratios, summed, and their count
}

func (o *Options) guide(t Target, cr *CellResult, cands []Config) *guide {
	g := &guide{size: o.Round, def: t.Space.Default.String(), hasDefault: cr.DefaultOut == "",
		byName: map[string]Config{}, rank: map[string]int{}, values: map[string][]int64{}, tried: map[string]bool{}}
	if g.size <= 0 {
		g.size = GuidedRound
	}
	set := map[string]map[int64]bool{}
	add := func(c Config) {
		for n, v := range c {
			if set[n] == nil {
				set[n] = map[int64]bool{}
			}
			set[n][v] = true
		}
	}
	add(t.Space.Default)
	for _, c := range cands {
		g.byName[c.String()] = c
		add(c)
	}
	g.names = slices.Sorted(maps.Keys(set))
	for _, n := range g.names {
		g.values[n] = slices.Sorted(maps.Keys(set[n]))
	}
	scorer, _ := o.Model.(Scorer)
	type ranked struct {
		key   string
		score float64
		dist  int
		tie   uint64
	}
	rs := make([]ranked, 0, len(cands))
	for _, c := range cands {
		r := ranked{key: c.String(), dist: g.distance(c, t.Space.Default), tie: tieHash(o.Seed, c.String())}
		if scorer != nil {
			// Coarse: the model tells a half-empty SM from a full one, not 0.94 from 1.
			r.score = math.Round(8*scorer.Score(t, c)) / 8
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.dist, b.dist), cmp.Compare(a.tie, b.tie), cmp.Compare(a.key, b.key))
	})
	for i, r := range rs {
		g.prior = append(g.prior, r.key)
		g.rank[r.key] = i
	}
	g.max = len(cands)
	if _, in := g.byName[g.def]; g.hasDefault && !in {
		g.max++
		g.byName[g.def] = maps.Clone(t.Space.Default)
	}
	if o.MaxEvals > 0 {
		g.max = min(g.max, o.MaxEvals)
	}
	return g
}

func tieHash(seed uint64, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strconv.FormatUint(seed, 10) + "\x00" + key))
	return h.Sum64()
}

// distance is the steps from c to d, summed over the tunables.
func (g *guide) distance(c, d Config) int {
	n := 0
	for name, v := range c {
		vs := g.values[name]
		i, _ := slices.BinarySearch(vs, v)
		j, _ := slices.BinarySearch(vs, d[name])
		n += max(i-j, j-i)
	}
	return n
}

func (g *guide) round() int  { return g.size }
func (g *guide) budget() int { return g.max }

// PairSlack is how much slower than the best configuration a move of two
// tunables at once may be predicted to be and still be tried before a
// restart: the surrogate's estimate is rough (GuidedRound's rounds).
const PairSlack = 0.02

// next proposes the next round, at most n configurations, from what has
// been measured of the earlier rounds (measured, by configuration); none
// when every candidate has been tried or the budget is spent. A round
// searches around the fastest configuration measured so far (the default
// in the first round): its untried neighbours, then the moves of two
// tunables at once that the surrogate (effects) predicts no more than
// PairSlack slower than it, each tier in the order of the prediction and
// then of the prior; what is left of the round restarts from the prior's
// best untried.
func (g *guide) next(measured map[string]Measurement, n int) []Config {
	n = min(n, g.max-g.proposed)
	if n <= 0 {
		return nil
	}
	g.learn(measured)
	var out []Config
	take := func(k string) {
		g.tried[k] = true
		g.pending = append(g.pending, k)
		out = append(out, maps.Clone(g.byName[k]))
	}
	if !g.started {
		g.started = true
		if g.hasDefault {
			take(g.def)
		}
	}
	bases, logT := g.bases(measured)
	if len(bases) == 0 && len(out) > 0 { // the first round: around the default
		bases, logT = []string{g.def}, []float64{0}
	}
	for _, k := range g.around(bases, logT) {
		if len(out) == n {
			break
		}
		take(k)
	}
	for _, k := range g.prior { // a restart: the prior's best untried
		if len(out) == n {
			break
		}
		if !g.tried[k] {
			take(k)
		}
	}
	g.proposed += len(out)
	return out
}

// bases are the GuidedBases fastest verified configurations of those
// tried, with their log times (equal times by name).
func (g *guide) bases(measured map[string]Measurement) ([]string, []float64) {
	var ks []string
	for k := range g.tried {
		if m, ok := measured[k]; ok && m.ok() {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(x, y string) int {
		return cmp.Or(cmp.Compare(measured[x].MedianS, measured[y].MedianS), strings.Compare(x, y))
	})
	ks = ks[:min(len(ks), GuidedBases)]
	logT := make([]float64, len(ks))
	for i, k := range ks {
		logT[i] = math.Log(measured[k].MedianS)
	}
	return ks, logT
}

// GuidedBases is how many of the fastest configurations measured a round
// searches around.
const GuidedBases = 3

// around are the untried configurations near the bases (configurations
// measured, the fastest first, with their log times), in the order they
// are tried: each base's neighbours (one tunable one step) and the moves
// of two tunables one step each predicted within PairSlack of the base,
// all by the time the surrogate predicts (the base's, times the steps'
// effects; the lowest where several bases reach one), a single step
// before a pair where they are predicted alike, then by the prior.
func (g *guide) around(bases []string, logT []float64) []string {
	type cand struct {
		pred float64
		tier int
	}
	best := map[string]cand{}
	add := func(k string, x cand) {
		if !g.candidate(k) {
			return
		}
		if have, ok := best[k]; !ok || x.pred < have.pred || (x.pred == have.pred && x.tier < have.tier) {
			best[k] = x
		}
	}
	for bi, key := range bases {
		c := g.byName[key]
		for i, a := range g.names {
			for _, va := range g.steps(a, c[a]) {
				nb := maps.Clone(c)
				nb[a] = va
				ea := g.effect(a, c[a], va)
				add(nb.String(), cand{logT[bi] + ea, 0})
				for _, b := range g.names[i+1:] {
					for _, vb := range g.steps(b, c[b]) {
						nb2 := maps.Clone(nb)
						nb2[b] = vb
						if pred := ea + g.effect(b, c[b], vb); pred <= math.Log1p(PairSlack) {
							add(nb2.String(), cand{logT[bi] + pred, 1})
						}
					}
				}
			}
		}
	}
	out := slices.Collect(maps.Keys(best))
	slices.SortFunc(out, func(x, y string) int {
		return cmp.Or(cmp.Compare(best[x].pred, best[y].pred), cmp.Compare(best[x].tier, best[y].tier), cmp.Compare(g.rank[x], g.rank[y]))
	})
	return out
}

// candidate says whether key is an untried candidate.
func (g *guide) candidate(key string) bool {
	_, in := g.rank[key]
	return in && !g.tried[key]
}

// steps are the values one step from v along name's values.
func (g *guide) steps(name string, v int64) []int64 {
	vs := g.values[name]
	i, found := slices.BinarySearch(vs, v)
	if !found {
		return nil
	}
	var out []int64
	for _, j := range []int{i - 1, i + 1} {
		if j >= 0 && j < len(vs) {
			out = append(out, vs[j])
		}
	}
	return out
}

// move is one tunable's step from one value to the next.
type move struct {
	name     string
	from, to int64
}

// learn is the surrogate's training: for every configuration proposed
// since the last round that was measured and verified, the log of the
// time ratio to each measured neighbour is an observation of that step's
// effect (both ways). A step's effect is the mean of its observations:
// the model assumes that a step costs or saves about the same wherever
// it is taken.
func (g *guide) learn(measured map[string]Measurement) {
	for _, k := range g.pending {
		m, ok := measured[k]
		if !ok || !m.ok() {
			continue
		}
		c := g.byName[k]
		for _, name := range g.names {
			for _, v := range g.steps(name, c[name]) {
				nb := maps.Clone(c)
				nb[name] = v
				o, ok := measured[nb.String()]
				if !ok || !o.ok() || !g.tried[nb.String()] {
					continue
				}
				r := math.Log(o.MedianS / m.MedianS)
				g.observe(move{name, c[name], v}, r)
				g.observe(move{name, v, c[name]}, -r)
			}
		}
	}
	g.pending = g.pending[:0]
}

func (g *guide) observe(mv move, r float64) {
	if g.effects == nil {
		g.effects = map[move][2]float64{}
	}
	e := g.effects[mv]
	g.effects[mv] = [2]float64{e[0] + r, e[1] + 1}
}

// effect is the surrogate's predicted log time ratio of a step (0: no
// observation).
func (g *guide) effect(name string, from, to int64) float64 {
	e, ok := g.effects[move{name, from, to}]
	if !ok || e[1] == 0 {
		return 0
	}
	return e[0] / e[1]
}

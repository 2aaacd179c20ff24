package tune

import (
	"cmp"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Scorer is a model that also ranks: how promising a configuration is,
// higher first. Guided orders what it tries by it (Occupancy is one).
type Scorer interface {
	Score(t Target, c Config) float64
}

// GuidedRound is Guided's configurations a round (one process of the
// cell's program) where Options.Round is 0: about the neighbours of a
// configuration of four tunables (two each), so that a climb's step is
// one process.
const GuidedRound = 8

// guide is Guided's search over a target's candidates: a climb from the
// default, each round measuring the untried neighbours of the current
// configuration (one tunable one step along its values, the values the
// candidates have), in the order of the prior, and moving to the fastest
// of them where it beats the current one. Where no neighbour is left, it
// restarts from the prior's best untried candidates (a round of them) and
// climbs from the fastest. The prior is the model's score (Scorer, higher
// first; none: all equal), then the distance from the default (steps
// summed over the tunables), then a hash of the seed and the
// configuration: the same seed takes the same path over the same
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
	cur        string   // the configuration climbed from ("": none yet)
	restart    []string // the last round, when it was a restart
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

// neighbours of key among the candidates, untried, best of the prior first.
func (g *guide) neighbours(key string) []string {
	c := g.byName[key]
	var out []string
	for _, name := range g.names {
		vs := g.values[name]
		i, found := slices.BinarySearch(vs, c[name])
		if !found {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(vs) {
				continue
			}
			nb := maps.Clone(c)
			nb[name] = vs[j]
			k := nb.String()
			if _, in := g.rank[k]; in && !g.tried[k] {
				out = append(out, k)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(g.rank[a], g.rank[b]) })
	return out
}

// faster says whether a's measurement is verified and faster than b's
// (b missing or failed: any verified a).
func faster(measured map[string]Measurement, a, b string) bool {
	ma, ok := measured[a]
	if !ok || !ma.ok() {
		return false
	}
	mb, ok := measured[b]
	return !ok || !mb.ok() || ma.MedianS < mb.MedianS
}

// next proposes the next round, at most n configurations, from what has
// been measured of the earlier rounds (measured, by configuration); none
// when every candidate has been tried or the budget is spent.
func (g *guide) next(measured map[string]Measurement, n int) []Config {
	n = min(n, g.max-g.proposed)
	if n <= 0 {
		return nil
	}
	var out []Config
	take := func(k string) {
		g.tried[k] = true
		out = append(out, maps.Clone(g.byName[k]))
	}
	if !g.started {
		g.started = true
		if g.hasDefault {
			take(g.def)
			g.cur = g.def
		}
	} else if g.restart != nil {
		// Climb on from the fastest of the restart's round.
		g.cur = ""
		for _, k := range g.restart {
			if faster(measured, k, g.cur) {
				g.cur = k
			}
		}
		g.restart = nil
	} else if g.cur != "" {
		best := g.cur
		for _, k := range g.climbed(g.cur) {
			if faster(measured, k, best) {
				best = k
			}
		}
		g.cur = best
	}
	if g.cur != "" && (len(out) > 0 || measured[g.cur].ok()) {
		for _, k := range g.neighbours(g.cur) {
			if len(out) == n {
				break
			}
			take(k)
		}
	}
	if len(out) == 0 { // no climb left: restart from the prior's best untried
		for _, k := range g.prior {
			if len(out) == n {
				break
			}
			if !g.tried[k] {
				take(k)
				g.restart = append(g.restart, k)
			}
		}
	}
	g.proposed += len(out)
	return out
}

// climbed are key's neighbours (tried or not) among the candidates.
func (g *guide) climbed(key string) []string {
	c := g.byName[key]
	var out []string
	for _, name := range g.names {
		vs := g.values[name]
		i, found := slices.BinarySearch(vs, c[name])
		if !found {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(vs) {
				nb := maps.Clone(c)
				nb[name] = vs[j]
				if _, in := g.byName[nb.String()]; in {
					out = append(out, nb.String())
				}
			}
		}
	}
	return out
}

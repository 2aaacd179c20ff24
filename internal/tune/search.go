package tune

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Strategy is how the configurations of a space are chosen.
type Strategy string

// The search strategies.
const (
	// Auto is Exhaustive when the feasible space fits MaxEvals, else
	// BeyondBudget.
	Auto Strategy = "auto"
	// Exhaustive walks every feasible configuration in order.
	Exhaustive Strategy = "exhaustive"
	// Random walks a seeded shuffle of the feasible configurations, so that
	// the first MaxEvals are a uniform sample, the same for the same seed.
	Random Strategy = "random"
	// Pruned discards what the model rules out before evaluating anything,
	// then walks the rest as Auto would.
	Pruned Strategy = "pruned"
	// Guided searches, in rounds, around the fastest configurations
	// measured (their neighbours and moves of two tunables at once), in
	// the order a surrogate learned from the measurements predicts, and
	// restarts from the model's ranking when nothing near is left (guide).
	Guided Strategy = "guided"
)

// Strategies lists them, for flags and errors.
var Strategies = []Strategy{Auto, Exhaustive, Random, Pruned, Guided}

// BeyondBudget is the search Auto and Pruned take where the candidates do
// not fit MaxEvals. The ground truth's search-quality curves decide it
// (tunecheck, docs/tuning.md "Which search beyond the budget"): a change
// of this one line.
var BeyondBudget = Guided

// Target is one (cell, size) to tune.
type Target struct {
	Cell     string
	Size     int64
	BuildKey string // the binary's content hash: part of every cache key
	// DeviceHash is the binary's device code (GPU cells): recorded with
	// each evaluation, so a later binary of the same device code finds its best.
	DeviceHash string
	Space      *CellSpace // Recorded.At
}

func (t Target) key(device string, c Config) Key {
	return Key{Cell: t.Cell, Size: t.Size, Config: c.String(), BuildKey: t.BuildKey, Device: device}
}

// Batch is configurations of one target for one Evaluate call: one process
// of the cell's program measures them all over the same data.
type Batch struct {
	Target  Target
	Configs []Config
}

// Evaluator measures configurations. It calls got once per configuration
// measured, as soon as it is (so that a batch cut midway keeps what it
// measured), and returns when the batch is done or cannot go on; a
// configuration it did not report is evaluated again by a later tuning. A
// configuration that fails (a launch the device refuses, a crash) is a
// Measurement with Error, data like any other; an error return stops the
// tuning (the machine is gone, the context is cancelled).
type Evaluator interface {
	Evaluate(ctx context.Context, b Batch, got func(Measurement) error) error
}

// Model rules configurations out before they are run: the occupancy model
// of the device (a team larger than a block may be, registers or shared
// memory that leave no block resident). Admits returns nil, or why not.
type Model interface {
	Admits(t Target, c Config) error
}

// Options of a tuning.
type Options struct {
	Dir    string // results folder: its tuning.jsonl is the cache
	Device string // GPU UUID or the device's model name: part of every cache key
	// DeviceName is the model name of a device keyed by its UUID, written
	// beside every evaluation (tuning.jsonl's device_name).
	DeviceName string
	Targets    []Target
	Strategy   Strategy      // "" is Auto
	Seed       uint64        // of Random's (and Pruned's) shuffle
	MaxEvals   int           // configurations per target, cached ones included, the default first; 0: all
	MaxTime    time.Duration // wall time of new evaluations in this call; 0: none
	BatchSize  int           // configurations per Evaluate call; 0: 16
	Round      int           // Guided: configurations a round (one Evaluate call); 0: GuidedRound
	Machine    Machine       // properties the constraints read; nil: constraints reading them are not checked
	Model      Model         // for Pruned
	// Hold holds tunables at these values wherever a target has them (a
	// claim's premises, PM_TUNE_HOLD: Kokkos-OMP's TestSNAP at
	// snap_vector 1): a configuration that differs is ruled out as by a
	// constraint, counted as "snap_vector == 1 (held)".
	Hold      Config
	Evaluator Evaluator
	Log       io.Writer // progress; nil: none
}

// Result of a tuning: one cell result per target, in target order.
type Result struct {
	Device  string
	Cells   []*CellResult
	Stopped string // why the tuning stopped before its plan was measured ("" when it did not)
}

// CellResult is what the tuning knows of one (cell, size, device).
type CellResult struct {
	Cell       string
	Size       int64
	BuildKey   string
	DeviceHash string // the binary's device code, where the cache knows it
	Device     string
	DeviceName string         // the device's model name, where Device is its UUID (read from the cache)
	Space      int            // configurations of the space
	Infeasible map[string]int // configurations a constraint rules out, by constraint
	Pruned     map[string]int // configurations the model rules out, by its reason
	Planned    int            // configurations the budget allows (the default included)
	Cached     int            // of Planned, found in the cache
	Evaluated  int            // of Planned, measured by this call
	Measured   []Measurement  // in plan order
	Default    *Measurement   // the configuration the program is generated with
	Best       *Measurement   // the fastest verified configuration
	Ties       []Measurement  // verified configurations whose intervals overlap Best's: indistinguishable from it
	Unverified int            // measured, but failed verification or evaluation
	Unchecked  []string       // constraints not checked on this machine
	DefaultOut string         // why the default is not measured: the constraint it breaks, or the model's reason
	// DefaultGuessed: read from a tuning.jsonl without the default's mark,
	// the default is taken to be the first evaluation (Tuned).
	DefaultGuessed bool
}

// Missing is the number of planned configurations not measured (a cut tuning).
func (c *CellResult) Missing() int { return c.Planned - len(c.Measured) }

// Run tunes every target: plans each one's configurations (feasible,
// admitted by the model for Pruned, within MaxEvals, the default first),
// takes what the cache holds, evaluates the rest in batches while MaxTime
// lasts, caching each evaluation as it comes, and picks the best of each.
// A cut tuning (context cancelled, an evaluator error) returns what it has,
// the cached evaluations of every target included, with the error; one out
// of time returns it with Stopped set. Run again, it resumes.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 16
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	cache, err := OpenCache(o.Dir)
	if err != nil {
		return nil, err
	}
	defer cache.Close()
	cache.DeviceName = o.DeviceName
	res := &Result{Device: o.Device}
	plans := make([][]Config, len(o.Targets))
	guides := make([]*guide, len(o.Targets))
	for i, t := range o.Targets {
		cr, cands, err := o.candidates(t)
		if err != nil {
			return nil, err
		}
		if o.mode(len(cands)) == Guided {
			guides[i] = o.guide(t, cr, cands)
			cr.Planned = guides[i].budget()
		} else {
			plans[i] = o.order(t, cr, cands, o.MaxEvals)
			cr.Planned = len(plans[i])
		}
		res.Cells = append(res.Cells, cr)
	}
	start := time.Now()
	var runErr error
	for i, t := range o.Targets {
		switch {
		case runErr == nil && guides[i] != nil:
			runErr = o.measureGuided(ctx, cache, t, res, i, guides[i], start, true)
		case runErr == nil:
			runErr = o.measure(ctx, cache, t, res, i, plans[i], start)
		case guides[i] != nil:
			// What the cache holds of the rounds the guide would take.
			o.measureGuided(ctx, cache, t, res, i, guides[i], start, false)
		default:
			o.collect(cache, t, res.Cells[i], plans[i], nil) // what the cache holds
		}
	}
	if runErr != nil {
		res.Stopped = runErr.Error()
		return res, fmt.Errorf("tuning cut after %s: %w", time.Since(start).Round(time.Millisecond), runErr)
	}
	return res, nil
}

// breaksHold names the first held tunable (by name) that c has at another
// value, as "name == value (held)"; "" where c holds them all.
func (o *Options) breaksHold(c Config) string {
	for _, name := range slices.Sorted(maps.Keys(o.Hold)) {
		if v, has := c[name]; has && v != o.Hold[name] {
			return fmt.Sprintf("%s == %d (held)", name, o.Hold[name])
		}
	}
	return ""
}

// measure evaluates what the cache lacks of target i's plan in batches,
// while the time budget lasts, and picks its best.
func (o *Options) measure(ctx context.Context, cache *Cache, t Target, res *Result, i int, plan []Config, start time.Time) error {
	cr := res.Cells[i]
	got := map[string]Measurement{}
	todo := o.cached(cache, t, cr, plan, got)
	var err error
	for len(todo) > 0 && err == nil {
		if o.MaxTime > 0 && time.Since(start) >= o.MaxTime {
			res.Stopped = fmt.Sprintf("time budget of %s spent", o.MaxTime)
			break
		}
		n := min(o.BatchSize, len(todo))
		err = o.evaluate(ctx, cache, t, cr, todo[:n], got)
		todo = todo[n:]
		fmt.Fprintf(o.Log, "tune %s size %d: %d of %d configurations measured (%d cached)\n",
			t.Cell, t.Size, len(got), len(plan), cr.Cached)
	}
	o.collect(cache, t, cr, plan, got)
	return err
}

// measureGuided is measure for Guided: each round's configurations depend
// on what the earlier rounds measured, so the plan grows a round at a
// time, each round one batch of what the cache lacks. Without eval it
// takes what the cache holds, up to the first round it lacks (a cut tuning).
func (o *Options) measureGuided(ctx context.Context, cache *Cache, t Target, res *Result, i int, g *guide, start time.Time, eval bool) error {
	cr := res.Cells[i]
	got := map[string]Measurement{}
	var plan []Config
	var err error
	for err == nil && len(plan) < g.budget() {
		round := g.next(got, min(g.round(), g.budget()-len(plan)))
		if len(round) == 0 {
			break
		}
		plan = append(plan, round...)
		todo := o.cached(cache, t, cr, round, got)
		if len(todo) == 0 {
			continue
		}
		if !eval {
			break
		}
		if o.MaxTime > 0 && time.Since(start) >= o.MaxTime {
			res.Stopped = fmt.Sprintf("time budget of %s spent", o.MaxTime)
			break
		}
		err = o.evaluate(ctx, cache, t, cr, todo, got)
		fmt.Fprintf(o.Log, "tune %s size %d: %d of %d configurations measured (%d cached), guided\n",
			t.Cell, t.Size, len(got), g.budget(), cr.Cached)
	}
	o.collect(cache, t, cr, plan, got)
	return err
}

// cached puts what the cache holds of configs into got, and returns the rest.
func (o *Options) cached(cache *Cache, t Target, cr *CellResult, configs []Config, got map[string]Measurement) []Config {
	var todo []Config
	for _, c := range configs {
		if m, ok := cache.Get(t.key(o.Device, c)); ok {
			got[c.String()] = m
			cr.Cached++
		} else {
			todo = append(todo, c)
		}
	}
	return todo
}

// evaluate measures one batch of configurations of t (one Evaluate call),
// caching each measurement as it comes and putting it into got.
func (o *Options) evaluate(ctx context.Context, cache *Cache, t Target, cr *CellResult, configs []Config, got map[string]Measurement) error {
	batch := Batch{Target: t, Configs: configs}
	asked := map[string]bool{}
	for _, c := range batch.Configs {
		asked[c.String()] = true
	}
	var mu sync.Mutex // an evaluator may report from several goroutines
	err := o.Evaluator.Evaluate(ctx, batch, func(m Measurement) error {
		mu.Lock()
		defer mu.Unlock()
		s := m.Config.String()
		if !asked[s] {
			return fmt.Errorf("%s: the evaluator measured %q, which the batch did not ask for", t.Cell, s)
		}
		delete(asked, s)
		m.Default = s == t.Space.Default.String()
		if err := cache.Put(t.key(o.Device, m.Config), t.DeviceHash, m); err != nil {
			return err
		}
		got[s] = m
		cr.Evaluated++
		return nil
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// collect puts the measurements of plan (those of got, else the cache's)
// into cr in plan order, and picks the best.
func (o *Options) collect(cache *Cache, t Target, cr *CellResult, plan []Config, got map[string]Measurement) {
	for _, c := range plan {
		m, ok := got[c.String()]
		if !ok && got == nil {
			if m, ok = cache.Get(t.key(o.Device, c)); ok {
				cr.Cached++
			}
		}
		if ok {
			cr.Measured = append(cr.Measured, m)
		}
	}
	cr.pick(t.Space.Default)
}

func (o *Options) check() error {
	if o.Strategy == "" {
		o.Strategy = Auto
	}
	if !slices.Contains(Strategies, o.Strategy) {
		return fmt.Errorf("unknown search strategy %q (known: auto, exhaustive, random, pruned, guided)", o.Strategy)
	}
	if o.Strategy == Pruned && o.Model == nil {
		return fmt.Errorf("the pruned search needs a machine model")
	}
	return nil
}

// Plan lists the configurations a target's tuning measures, in order, and
// counts what the constraints and the model rule out: a dry run. For
// Guided, whose later configurations depend on what the earlier measured,
// it lists its first round and plans MaxEvals (or every candidate).
func (o *Options) Plan(t Target) (*CellResult, []Config, error) {
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	cr, feasible, err := o.candidates(t)
	if err != nil {
		return nil, nil, err
	}
	if o.mode(len(feasible)) == Guided {
		g := o.guide(t, cr, feasible)
		plan := g.next(nil, g.round())
		cr.Planned = g.budget()
		return cr, plan, nil
	}
	plan := o.order(t, cr, feasible, o.MaxEvals)
	cr.Planned = len(plan)
	return cr, plan, nil
}

// candidates enumerates t's space and keeps what the constraints (and the
// held tunables) allow, and for Pruned and Guided what the model admits,
// counting what they rule out into the cell result; it notes why the
// default is not measured, where it is not.
func (o *Options) candidates(t Target) (*CellResult, []Config, error) {
	s := t.Space
	cr := &CellResult{Cell: t.Cell, Size: t.Size, BuildKey: t.BuildKey, DeviceHash: t.DeviceHash, Device: o.Device, Space: s.Len(),
		Infeasible: map[string]int{}, Pruned: map[string]int{}, Unchecked: s.Unchecked(o.Machine)}
	var feasible []Config
	for _, c := range s.All() {
		ok, why, err := s.Feasible(c, o.Machine)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.Cell, err)
		}
		if !ok {
			cr.Infeasible[why]++
			continue
		}
		if why := o.breaksHold(c); why != "" {
			cr.Infeasible[why]++
			continue
		}
		feasible = append(feasible, c)
	}
	// The default is measured first, as the baseline of the gap, wherever
	// it lies, unless a constraint or the model rules it out.
	if ok, why, err := s.Feasible(s.Default, o.Machine); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.Cell, err)
	} else if !ok {
		cr.DefaultOut = "breaks " + why
	} else if why := o.breaksHold(s.Default); why != "" {
		cr.DefaultOut = "breaks " + why
	}
	if (o.Strategy == Pruned || o.Strategy == Guided) && o.Model != nil {
		var kept []Config
		for _, c := range feasible {
			if err := o.Model.Admits(t, c); err != nil {
				cr.Pruned[err.Error()]++
				continue
			}
			kept = append(kept, c)
		}
		feasible = kept
		if err := o.Model.Admits(t, s.Default); err != nil && !errors.Is(err, ErrFewResident) && cr.DefaultOut == "" {
			cr.DefaultOut = "the model rules it out: " + err.Error()
		}
	}
	return cr, feasible, nil
}

// order is the plan of a static strategy (every one but Guided) over the
// candidates: the default first, then the strategy's order, cut at
// maxEvals (0: all). feasible is shuffled in place for Random.
func (o *Options) order(t Target, cr *CellResult, feasible []Config, maxEvals int) []Config {
	s := t.Space
	def := s.Default.String()
	if o.modeAt(len(feasible), maxEvals) == Random {
		h := fnv.New64a()
		h.Write([]byte(t.Cell + "\x00" + strconv.FormatInt(t.Size, 10)))
		rng := rand.New(rand.NewPCG(o.Seed, h.Sum64()))
		feasible = slices.Clone(feasible)
		rng.Shuffle(len(feasible), func(i, j int) { feasible[i], feasible[j] = feasible[j], feasible[i] })
	}
	var plan []Config
	if cr.DefaultOut == "" {
		plan = append(plan, maps.Clone(s.Default))
	}
	for _, c := range feasible {
		if c.String() != def {
			plan = append(plan, c)
		}
	}
	if maxEvals > 0 && len(plan) > maxEvals {
		plan = plan[:maxEvals]
	}
	return plan
}

// mode is the search a target of n candidates takes: Auto's and Pruned's
// choice resolved (Exhaustive when the default and the candidates fit
// MaxEvals, else BeyondBudget).
func (o *Options) mode(n int) Strategy { return o.modeAt(n, o.MaxEvals) }

func (o *Options) modeAt(n, maxEvals int) Strategy {
	switch o.Strategy {
	case Auto, Pruned:
		if maxEvals > 0 && n+1 > maxEvals {
			return BeyondBudget
		}
		return Exhaustive
	}
	return o.Strategy
}

// pick chooses the best verified configuration and those indistinguishable
// from it: intervals that overlap the best's are never ranked.
func (c *CellResult) pick(def Config) {
	for i := range c.Measured {
		m := &c.Measured[i]
		if def != nil && m.Config.String() == def.String() {
			c.Default = m
		}
		if !m.ok() {
			c.Unverified++
			continue
		}
		if c.Best == nil || m.MedianS < c.Best.MedianS {
			c.Best = m
		}
	}
	if c.Best == nil {
		return
	}
	for _, m := range c.Measured {
		if m.ok() && m.Config.String() != c.Best.Config.String() && overlap(m, *c.Best) {
			c.Ties = append(c.Ties, m)
		}
	}
}

func (m Measurement) ok() bool { return m.Verified && m.Error == "" && m.MedianS > 0 }

func overlap(a, b Measurement) bool { return a.LoS <= b.HiS && b.LoS <= a.HiS }

// DefaultGap is how much slower the default's median is than the best's
// (0.05: 5% slower), and whether the two are indistinguishable (the
// default is the best, or its interval overlaps the best's); ok is false
// when either is missing.
func (c *CellResult) DefaultGap() (gap float64, tied, ok bool) {
	if c.Best == nil || c.Default == nil || !c.Default.ok() {
		return 0, false, false
	}
	return c.Default.MedianS/c.Best.MedianS - 1, overlap(*c.Default, *c.Best), true
}

package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// synthetic is a space of two tunables, a in 1..64 and b in 1..32 (powers
// of two), under a * b <= 1024 (a machine-read constraint: threads per
// block); its default is a=16, b=8.
func synthetic(t *testing.T) Target {
	t.Helper()
	spaces := syntheticSpaces(t)
	k := &spec.Kernel{Name: "k", Tunables: []spec.Tunable{{Name: "a", Value: 16}, {Name: "b", Value: 8}}}
	v := &matrix.Variant{ID: "s", Strategy: &matrix.Strategy{Name: "s"}, Tunables: map[string]int64{}}
	space, err := spaces.Cell(k, nil, v, 100)
	require.NoError(t, err)
	return Target{Cell: "k.s.tc", Size: 100, BuildKey: "build-1", Space: space}
}

// syntheticSpaces is synthetic's tuning.yaml.
func syntheticSpaces(t *testing.T) *Spaces {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tuning.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`machine: {max_threads_per_block: threads}
tunables:
  a: {min: 1, space: {pow2: [1, 64]}}
  b: {min: 1, space: {pow2: [1, 32]}}
constraints: [a * b <= max_threads_per_block]
`), 0o644))
	spaces, err := Load(file)
	require.NoError(t, err)
	return spaces
}

var device1024 = Machine{"max_threads_per_block": 1024}

// feasible is the number of configurations of synthetic under device1024:
// 7 x 6 = 42, less a*b > 1024 (64x32).
const feasible = 41

// cost has its minimum 1 at a=8, b=4; the configuration a=1, b=1 is faster
// still but does not verify.
func cost(c Config) (median float64, verified bool) {
	la, lb := float64(bits.Len64(uint64(c["a"]))-1), float64(bits.Len64(uint64(c["b"]))-1)
	if c["a"] == 1 && c["b"] == 1 {
		return 0.5, false
	}
	return 1 + (la-3)*(la-3) + (lb-2)*(lb-2), true
}

// fake measures cost with an interval of half-width width, counting every
// evaluation; after cutAfter evaluations (0: never) it cancels the tuning,
// as a killed process would.
type fake struct {
	mu       sync.Mutex
	width    float64
	count    map[string]int
	order    []string
	cutAfter int
	cancel   context.CancelFunc
	reject   func(Config) bool // configurations it must never be asked for
	t        *testing.T
}

func newFake(t *testing.T) *fake { return &fake{t: t, width: 0.1, count: map[string]int{}} }

func (f *fake) Evaluate(ctx context.Context, b Batch, got func(Measurement) error) error {
	for _, c := range b.Configs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if f.reject != nil && f.reject(c) {
			f.t.Errorf("evaluated %s, which the model rules out", c)
		}
		f.mu.Lock()
		f.count[c.String()]++
		f.order = append(f.order, c.String())
		n := len(f.order)
		f.mu.Unlock()
		med, ok := cost(c)
		if err := got(Measurement{Config: c, MedianS: med, LoS: med - f.width, HiS: med + f.width, Verified: ok}); err != nil {
			return err
		}
		if f.cutAfter > 0 && n == f.cutAfter {
			f.cancel()
		}
	}
	return nil
}

func (f *fake) evaluations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.order)
}

func run(t *testing.T, dir string, f *fake, o Options) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.cancel = cancel
	if o.Targets == nil {
		o.Targets = []Target{synthetic(t)}
	}
	if o.Device == "" {
		o.Device = "GPU-0000"
	}
	if o.Machine == nil {
		o.Machine = device1024
	}
	o.Dir, o.Evaluator, o.BatchSize = dir, f, 5
	return Run(ctx, o)
}

func TestExhaustiveFindsTheOptimum(t *testing.T) {
	f := newFake(t)
	res, err := run(t, t.TempDir(), f, Options{Strategy: Exhaustive})
	require.NoError(t, err)
	c := res.Cells[0]
	assert.Equal(t, 42, c.Space)
	assert.Equal(t, map[string]int{"a * b <= max_threads_per_block": 1}, c.Infeasible)
	assert.Equal(t, feasible, c.Planned)
	assert.Equal(t, feasible, f.evaluations())
	require.NotNil(t, c.Best)
	assert.Equal(t, "a=8,b=4", c.Best.Config.String(), "the unverified a=1,b=1 is faster and must not win")
	assert.Equal(t, 1, c.Unverified)
	assert.Empty(t, c.Ties, "every neighbour is 1 slower, the intervals 0.2 wide")
	assert.Equal(t, "a=16,b=8", f.order[0], "the default is measured first")
	gap, tied, ok := c.DefaultGap()
	assert.True(t, ok)
	assert.False(t, tied)
	assert.InDelta(t, 2.0, gap, 1e-12) // cost 3 against 1
}

func TestOverlappingIntervalsAreTies(t *testing.T) {
	f := newFake(t)
	f.width = 0.6 // the four neighbours (cost 2) overlap the best's [0.4, 1.6]
	res, err := run(t, t.TempDir(), f, Options{Strategy: Exhaustive})
	require.NoError(t, err)
	c := res.Cells[0]
	assert.Equal(t, "a=8,b=4", c.Best.Config.String())
	var ties []string
	for _, m := range c.Ties {
		ties = append(ties, m.Config.String())
	}
	assert.ElementsMatch(t, []string{"a=4,b=4", "a=16,b=4", "a=8,b=2", "a=8,b=8"}, ties)
}

func TestRandomWithinBudget(t *testing.T) {
	sample := func(seed uint64) (*Result, *fake) {
		f := newFake(t)
		res, err := run(t, t.TempDir(), f, Options{Strategy: Random, Seed: seed, MaxEvals: 12})
		require.NoError(t, err)
		return res, f
	}
	res, f := sample(1)
	c := res.Cells[0]
	assert.Equal(t, 12, f.evaluations(), "the budget is the number of configurations")
	assert.Equal(t, 12, c.Planned)
	assert.Equal(t, "a=16,b=8", f.order[0])
	best := math.Inf(1)
	for _, s := range f.order {
		cfg, _ := ParseConfig(s)
		if m, ok := cost(cfg); ok {
			best = min(best, m)
		}
	}
	assert.Equal(t, best, c.Best.MedianS, "the best of the sample")
	_, again := sample(1)
	assert.Equal(t, f.order, again.order, "the same seed draws the same sample")
	_, other := sample(2)
	assert.NotEqual(t, f.order, other.order)

	// Auto: random when the space exceeds the budget, exhaustive otherwise.
	f = newFake(t)
	res, err := run(t, t.TempDir(), f, Options{MaxEvals: 100})
	require.NoError(t, err)
	assert.Equal(t, feasible, f.evaluations())
	assert.Equal(t, "a=8,b=4", res.Cells[0].Best.Config.String())
}

// small admits a * b <= 64: the optimum (32) is admissible.
type small struct{}

func (small) Admits(_ Target, c Config) error {
	if c["a"]*c["b"] > 64 {
		return fmt.Errorf("more than 64 threads")
	}
	return nil
}

func TestPrunedNeverEvaluatesWhatTheModelRulesOut(t *testing.T) {
	f := newFake(t)
	f.reject = func(c Config) bool { return c["a"]*c["b"] > 64 }
	res, err := run(t, t.TempDir(), f, Options{Strategy: Pruned, Model: small{}})
	require.NoError(t, err)
	c := res.Cells[0]
	admitted := 0
	for _, cfg := range synthetic(t).Space.All() {
		if cfg["a"]*cfg["b"] <= 64 {
			admitted++
		}
	}
	assert.Equal(t, map[string]int{"more than 64 threads": feasible - admitted}, c.Pruned)
	assert.Equal(t, admitted, f.evaluations())
	assert.Equal(t, "a=8,b=4", c.Best.Config.String())
	assert.Equal(t, "the model rules it out: more than 64 threads", c.DefaultOut, "the default (128 threads) is not run either")
	var out bytes.Buffer
	require.NoError(t, res.Report(&out))
	assert.Contains(t, out.String(), "pruned by the model: more than 64 threads")

	_, err = run(t, t.TempDir(), newFake(t), Options{Strategy: Pruned})
	assert.ErrorContains(t, err, "needs a machine model")
}

// idle prunes a * b >= 128 as the residency heuristic does: a launch that
// runs, leaving the SM mostly idle.
type idle struct{}

func (idle) Admits(_ Target, c Config) error {
	if c["a"]*c["b"] >= 128 {
		return ErrFewResident
	}
	return nil
}

// The heuristic prunes the search, never the default: the as-published
// launch is measured beside the tuned best.
func TestHeuristicKeepsTheDefault(t *testing.T) {
	f := newFake(t)
	res, err := run(t, t.TempDir(), f, Options{Strategy: Pruned, Model: idle{}})
	require.NoError(t, err)
	c := res.Cells[0]
	assert.Empty(t, c.DefaultOut)
	require.NotNil(t, c.Default, "the default (128 threads) is measured")
	assert.Positive(t, c.Pruned[ErrFewResident.Error()])
}

// TestCutTuningResumes: a tuning killed after 7 evaluations resumes, and
// over both runs every configuration is measured exactly once; a repeated
// tuning evaluates nothing.
func TestCutTuningResumes(t *testing.T) {
	dir := t.TempDir()
	f := newFake(t)
	f.cutAfter = 7
	res, err := run(t, dir, f, Options{Strategy: Exhaustive})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 7, f.evaluations())
	assert.Equal(t, feasible-7, res.Cells[0].Missing())
	assert.Contains(t, res.Stopped, "context canceled")

	f.cutAfter = 0
	res, err = run(t, dir, f, Options{Strategy: Exhaustive})
	require.NoError(t, err)
	assert.Equal(t, feasible, f.evaluations())
	for cfg, n := range f.count {
		assert.Equal(t, 1, n, cfg)
	}
	assert.Equal(t, 7, res.Cells[0].Cached)
	assert.Equal(t, feasible-7, res.Cells[0].Evaluated)
	assert.Equal(t, "a=8,b=4", res.Cells[0].Best.Config.String())

	again := newFake(t)
	res, err = run(t, dir, again, Options{Strategy: Exhaustive})
	require.NoError(t, err)
	assert.Zero(t, again.evaluations(), "a repeated tuning costs nothing")
	assert.Equal(t, feasible, res.Cells[0].Cached)
	assert.Equal(t, "a=8,b=4", res.Cells[0].Best.Config.String())
}

func TestCacheKeys(t *testing.T) {
	dir := t.TempDir()
	measure := func(o Options) int {
		f := newFake(t)
		_, err := run(t, dir, f, o)
		require.NoError(t, err)
		return f.evaluations()
	}
	assert.Equal(t, feasible, measure(Options{Device: "GPU-a"}))
	assert.Equal(t, feasible, measure(Options{Device: "GPU-b"}), "another device measures again")
	other := synthetic(t)
	other.BuildKey = "build-2"
	assert.Equal(t, feasible, measure(Options{Device: "GPU-a", Targets: []Target{other}}), "another binary measures again")
	bigger := synthetic(t)
	bigger.Size = 200
	assert.Equal(t, feasible, measure(Options{Device: "GPU-a", Targets: []Target{bigger}}), "another size measures again")
	assert.Zero(t, measure(Options{Device: "GPU-a"}))
	assert.Zero(t, measure(Options{Device: "GPU-b"}))
	cache, err := OpenCache(dir)
	require.NoError(t, err)
	assert.Equal(t, 4*feasible, cache.Len())
	require.NoError(t, cache.Close())

	// The folder alone gives the best per (cell, size, device, binary).
	tuned, err := Tuned(dir)
	require.NoError(t, err)
	var groups []string
	for _, r := range tuned {
		groups = append(groups, fmt.Sprintf("%s %d %s %s", r.Cell, r.Size, r.Device, r.BuildKey))
		assert.Equal(t, "a=8,b=4", r.Best.Config.String())
		assert.Equal(t, feasible, len(r.Measured))
		require.NotNil(t, r.Default, "the default is marked in tuning.jsonl")
		assert.Equal(t, "a=16,b=8", r.Default.Config.String())
		assert.False(t, r.DefaultGuessed)
	}
	assert.Equal(t, []string{"k.s.tc 100 GPU-a build-1", "k.s.tc 100 GPU-a build-2", "k.s.tc 100 GPU-b build-1", "k.s.tc 200 GPU-a build-1"}, groups)

	// A file older than the mark: the first evaluation of each group, which
	// the tuner measures first, is taken as the default, and said to be.
	file := filepath.Join(dir, CacheFile)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, 4, strings.Count(string(data), `"default":true`))
	require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(string(data), `,"default":true`, "")), 0o644))
	tuned, err = Tuned(dir)
	require.NoError(t, err)
	for _, r := range tuned {
		require.NotNil(t, r.Default)
		assert.Equal(t, "a=16,b=8", r.Default.Config.String())
		assert.True(t, r.DefaultGuessed)
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	_, err := run(t, dir, newFake(t), Options{})
	require.NoError(t, err)
	file := filepath.Join(dir, CacheFile)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	// Cut the file inside its last line, as a kill while writing leaves it.
	cut := bytes.LastIndexByte(data[:len(data)-1], '\n') + 10
	require.NoError(t, os.WriteFile(file, data[:cut], 0o644))
	var warn bytes.Buffer
	Warnings = &warn
	defer func() { Warnings = os.Stderr }()
	f := newFake(t)
	_, err = run(t, dir, f, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, f.evaluations(), "only the torn configuration again")
	assert.Regexp(t, `tuning.jsonl:41: torn last line \(9 bytes\) dropped`, warn.String())
	data, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, feasible, bytes.Count(data, []byte{'\n'}))

	// A bad line elsewhere is an error at its line.
	require.NoError(t, os.WriteFile(file, append([]byte("{\"cell\": 3}\n"), data...), 0o644))
	_, err = OpenCache(dir)
	assert.ErrorContains(t, err, "tuning.jsonl:1: ")
}

func TestTimeBudget(t *testing.T) {
	f := newFake(t)
	res, err := run(t, t.TempDir(), f, Options{MaxTime: time.Nanosecond})
	require.NoError(t, err)
	assert.Zero(t, f.evaluations())
	assert.Equal(t, "time budget of 1ns spent", res.Stopped)
	assert.Equal(t, feasible, res.Cells[0].Missing())
}

// An evaluator that reports what it was not asked for is an error, not data.
type liar struct{}

func (liar) Evaluate(_ context.Context, _ Batch, got func(Measurement) error) error {
	return got(Measurement{Config: Config{"a": 3}, MedianS: 1, Verified: true})
}

func TestEvaluatorMisreports(t *testing.T) {
	_, err := Run(context.Background(), Options{Dir: t.TempDir(), Targets: []Target{synthetic(t)}, Evaluator: liar{}})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), `measured "a=3", which the batch did not ask for`), err.Error())
	assert.False(t, errors.Is(err, context.Canceled))
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	f := newFake(t)
	f.cutAfter = 30
	res, err := run(t, dir, f, Options{Strategy: Exhaustive})
	require.Error(t, err)
	var out bytes.Buffer
	require.NoError(t, res.Report(&out))
	t.Log("\n" + out.String())
	lines := strings.Split(out.String(), "\n")
	assert.Regexp(t, `^cell +size +measured +best +median \[95% interval\] +ties +default$`, lines[0])
	assert.Regexp(t, `^k\.s\.tc +100 +30/41 +a=8,b=4 +1s \[900ms, 1\.1s\] +0 +200\.0% slower than best$`, lines[1])
	assert.Contains(t, out.String(), "k.s.tc size 100: 11 planned configurations not measured; 1 unverified or failed (never the best); 1 ruled out by a * b <= max_threads_per_block\n")
	assert.Contains(t, out.String(), "stopped: context canceled (run again to resume)")

	f = newFake(t)
	res, err = run(t, dir, f, Options{Strategy: Pruned, Model: small{}, MaxEvals: 20, Machine: Machine{}})
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, res.Report(&out))
	t.Log("\n" + out.String())
	lines = strings.Split(out.String(), "\n")
	assert.Regexp(t, `^k\.s\.tc +100 +20/20 \(\d+ cached\) +a=8,b=4 +1s \[900ms, 1\.1s\] +0 +not measured: the model rules it out: more than 64 threads$`, lines[1])
	assert.Contains(t, out.String(), "15 pruned by the model: more than 64 threads; not checked: a * b <= max_threads_per_block (no max_threads_per_block)")
}

// A default whose interval overlaps the best's is reported as
// indistinguishable from it, with its gap.
func TestDefaultTied(t *testing.T) {
	target := synthetic(t)
	target.Space.Default = Config{"a": 16, "b": 4} // cost 2, next to the optimum's 1
	f := newFake(t)
	f.width = 0.6
	res, err := run(t, t.TempDir(), f, Options{Targets: []Target{target}})
	require.NoError(t, err)
	c := res.Cells[0]
	gap, tied, ok := c.DefaultGap()
	assert.True(t, ok)
	assert.True(t, tied)
	assert.InDelta(t, 1.0, gap, 1e-12)
	assert.Equal(t, "within 100.0% of best (indistinguishable)", c.defaultText())
}

func TestMeasure(t *testing.T) {
	c := Config{"a": 2}
	m := Measure("k a=2", c, [][]float64{{3e-3, 1e-3, 2e-3}, {2e-3, 2.5e-3}}, true, 4e6)
	assert.Equal(t, 2e-3, m.MedianS)
	assert.LessOrEqual(t, m.LoS, m.MedianS)
	assert.GreaterOrEqual(t, m.HiS, m.MedianS)
	assert.InDelta(t, 2.0, m.GBps, 1e-12)
	assert.True(t, m.ok())
	assert.Equal(t, m, Measure("k a=2", c, [][]float64{{3e-3, 1e-3, 2e-3}, {2e-3, 2.5e-3}}, true, 4e6), "deterministic")
	bad := Measure("k a=2", c, nil, true, 0)
	assert.False(t, bad.ok())
	assert.Equal(t, "no repetition time", bad.Error)
}

// A cut tuning still reports what the cache holds of the targets after the cut.
func TestCutKeepsLaterTargets(t *testing.T) {
	dir := t.TempDir()
	a, b := synthetic(t), synthetic(t)
	b.Size = 200
	_, err := run(t, dir, newFake(t), Options{Targets: []Target{b}})
	require.NoError(t, err)
	f := newFake(t)
	f.cutAfter = 3
	res, err := run(t, dir, f, Options{Targets: []Target{a, b}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 3, len(res.Cells[0].Measured))
	assert.Equal(t, feasible, res.Cells[1].Cached)
	assert.Equal(t, "a=8,b=4", res.Cells[1].Best.Config.String())
}

func TestPlanIsADryRun(t *testing.T) {
	o := Options{Machine: device1024, MaxEvals: 10, Seed: 3, Strategy: Random}
	_, plan, err := o.Plan(synthetic(t))
	require.NoError(t, err)
	assert.Len(t, plan, 10)
	assert.Equal(t, "a=16,b=8", plan[0].String())
	f := newFake(t)
	_, err = run(t, t.TempDir(), f, Options{MaxEvals: 10, Seed: 3, Strategy: Random})
	require.NoError(t, err)
	var planned []string
	for _, c := range plan {
		planned = append(planned, c.String())
	}
	assert.Equal(t, planned, f.order, "the tuning measures what the plan says, in order")
	_, _, err = (&Options{Strategy: "annealing"}).Plan(synthetic(t))
	assert.ErrorContains(t, err, `unknown search strategy "annealing"`)
}

// A held tunable (a claim's premise) is searched at its value only: the
// rest of the space is ruled out as by a constraint, the default kept
// where it holds, and a tunable the target lacks holds nothing back.
func TestHoldKeepsAPremise(t *testing.T) {
	o := Options{Machine: device1024, Hold: Config{"b": 8, "snap_vector": 1}}
	cr, plan, err := o.Plan(synthetic(t))
	require.NoError(t, err)
	assert.Equal(t, "a=16,b=8", plan[0].String(), "the default holds b=8: measured first")
	assert.Len(t, plan, 7, "a's seven values at b=8")
	for _, c := range plan {
		assert.Equal(t, int64(8), c["b"])
	}
	assert.Equal(t, feasible-7, cr.Infeasible["b == 8 (held)"])
	f := newFake(t)
	res, err := run(t, t.TempDir(), f, Options{Hold: Config{"b": 8}})
	require.NoError(t, err)
	assert.Equal(t, "a=8,b=8", res.Cells[0].Best.Config.String(), "the best at b=8, not the free best a=8,b=4")

	cr, plan, err = (&Options{Machine: device1024, Hold: Config{"b": 4}}).Plan(synthetic(t))
	require.NoError(t, err)
	assert.Equal(t, "breaks b == 4 (held)", cr.DefaultOut, "a default that breaks the hold is not measured")
	assert.Len(t, plan, 7)
}

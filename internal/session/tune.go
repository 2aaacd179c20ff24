package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/tune"
	"github.com/portmatrix/portmatrix/internal/work"
)

// tuneBatch is how many configurations one process measures: a GPU-sized
// data set takes seconds to make, a configuration a fraction of one.
const tuneBatch = 64

// Tune searches the run-time tunables of the selected built cells that can
// run here, at the selected sizes, into the folder PM_OUT (a new results
// folder when unset): every configuration measured by the cell's own
// program and verified like any run, cached in the folder's tuning.jsonl,
// so that a cut tuning resumes and a repeated one measures nothing. It
// reads the build folder only (the manifest, with each cell's recorded
// tuning space, and the binaries); no source tree is read and no compiler
// probed. It returns the folder.
func Tune(ctx context.Context, cfg config.Config) (string, error) {
	s, err := openStage(cfg)
	if err != nil {
		return "", err
	}
	cfg, m, mach := s.cfg, s.m, s.mach
	built := tune.Built{BuildDir: cfg.BuildDir, Manifest: m}
	dir, err := s.folder("-tune")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("PM_OUT: %w", err)
	}
	// run.json says what tuned: the machine, its GPUs, the compilers, the commit.
	started := time.Now().UTC()
	stamp := func(state string) error {
		r := s.provenance(m, dir, started, nil)
		r.State, r.PID = state, os.Getpid()
		return results.WriteRun(dir, r)
	}
	if err := stamp(results.StateRunning); err != nil {
		return dir, err
	}
	sizes := func(e build.Entry) []int64 { return tuneSizes(cfg, e) }
	pick := func(e build.Entry) bool { return cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) }
	targets, entries, err := built.Targets(pick, sizes, s.gpu)
	if err != nil {
		return dir, err
	}
	if cfg.TuneTargets != "" {
		if targets, err = tuneLike(targets, cfg.TuneTargets); err != nil {
			return dir, err
		}
	}
	if cfg.TuneShard != "" {
		k, n, err := config.ParseShard(cfg.TuneShard)
		if err != nil {
			return dir, fmt.Errorf("PM_TUNE_SHARD: %w", err)
		}
		targets = tune.Shard(targets, k, n)
	}
	model, _ := s.model()
	if model != nil && model.Kind != machine.KindGPU {
		model = nil
	}
	if slices.ContainsFunc(targets, func(t tune.Target) bool { return entries[t.Cell].Target != "host" }) {
		if err := checkDevice(ctx, cfg, model); err != nil { // before anything is measured
			return dir, err
		}
	}
	modelDefaults(model, targets, entries)
	hold, err := tune.ParseConfig(cfg.TuneHold)
	if err != nil {
		return dir, fmt.Errorf("PM_TUNE_HOLD: %w", err)
	}
	// Host and GPU cells are measured on different devices: a tuning each,
	// keyed by the device that measured it.
	var host, dev []tune.Target
	for _, t := range targets {
		if entries[t.Cell].Target == "host" {
			host = append(host, t)
		} else {
			dev = append(dev, t)
		}
	}
	logf, err := tune.OpenLog(dir)
	if err != nil {
		return dir, err
	}
	defer logf.Close()
	refs, err := run.NewRefCache()
	if err != nil {
		return dir, err
	}
	defer os.RemoveAll(refs)
	opt := tuneProtocol(s.options(), cfg, refs)
	program := func(ctx context.Context, t tune.Target, file string) ([]results.Record, error) {
		started := time.Now()
		recs, err := run.Configs(ctx, entries[t.Cell], t.Size, file, opt, logf)
		tune.LogProcess(logf, len(recs), time.Since(started).Seconds())
		return recs, err
	}
	var report bytes.Buffer
	stopped := "" // why a group's tuning stopped before its plan was measured
	// GPU cells are searched pruned by the occupancy model of the GPU (when
	// one reports it and no search is asked for): what it rules out never runs.
	occupancy := tune.Occupancy{Model: model, Resources: map[string][]machine.Resources{}}
	for id, e := range entries {
		for _, k := range e.Kernels {
			occupancy.Resources[id] = append(occupancy.Resources[id], k.Resources())
		}
	}
	// The tuned binaries' kernels, by build key, for the report's account
	// of the tuning (the gap reasons' registers).
	kernels := tune.Kernels{}
	for _, t := range targets {
		if rs := occupancy.Resources[t.Cell]; len(rs) > 0 && t.BuildKey != "" {
			kernels[t.BuildKey] = rs
		}
	}
	if err := tune.WriteKernels(dir, kernels); err != nil {
		return dir, err
	}
	for _, group := range []struct {
		targets    []tune.Target
		device     string
		deviceName string
		model      tune.Machine
		occupancy  tune.Model
	}{{host, mach.Machine.CPU, "", nil, nil}, {dev, deviceKey(mach), mach.GPUName(), deviceMachine(model), occupancy}} {
		if len(group.targets) == 0 {
			continue
		}
		strategy := tune.Strategy(cfg.TuneStrategy)
		if strategy == "" && model != nil && group.occupancy != nil {
			strategy = tune.Pruned
		}
		var pruneWith tune.Model
		if strategy == tune.Pruned {
			pruneWith = group.occupancy
			if pruneWith == nil {
				pruneWith = tune.Occupancy{} // the host: only repeated launch bounds
			}
		}
		res, err := tune.Run(ctx, tune.Options{Dir: dir, Device: group.device, DeviceName: group.deviceName, Targets: group.targets,
			Strategy: strategy, MaxEvals: cfg.TuneEvals, MaxTime: time.Duration(cfg.TuneSeconds) * time.Second,
			Machine: group.model, Model: pruneWith, Hold: hold, Evaluator: tune.Harness{Run: program}, Log: cfg.Log, BatchSize: tuneBatch})
		if res != nil {
			if res.Stopped != "" {
				stopped = res.Stopped
			}
			if rerr := res.Report(&report); rerr != nil && err == nil {
				err = rerr
			}
		}
		if err != nil {
			tune.AppendReport(dir, started, report.Bytes())
			return dir, err
		}
	}
	if report.Len() == 0 {
		return dir, errors.New("tune: no built cell of the selection can run here (doctor says which are on; GPU cells need a GPU)")
	}
	if err := tune.AppendReport(dir, started, report.Bytes()); err != nil {
		return dir, err
	}
	// A tuning its time budget cut is interrupted: run.json says so, and a
	// scheduler gives its shard again (the cache keeps what it measured).
	state := results.StateFinished
	if stopped != "" {
		state = results.StateInterrupted
	}
	if err := stamp(state); err != nil {
		return dir, err
	}
	io.Copy(cfg.Log, &report)
	fmt.Fprintf(cfg.Log, "tune: %s (again with PM_OUT=%s: what is cached is not measured again)\n", dir, dir)
	return dir, nil
}

// tuneLike keeps the targets that the tuning folder like tuned (its
// tuning.jsonl's (cell, size) pairs): PM_TUNE_TARGETS.
func tuneLike(targets []tune.Target, like string) ([]tune.Target, error) {
	keys, err := tune.MatrixTargets(like)
	if err != nil {
		return nil, fmt.Errorf("PM_TUNE_TARGETS: %w", err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("PM_TUNE_TARGETS: %s has tuned nothing (no evaluation in its %s)", like, tune.CacheFile)
	}
	held := map[tune.Key]bool{}
	for _, k := range keys {
		held[k] = true
	}
	var out []tune.Target
	for _, t := range targets {
		if held[tune.Key{Cell: t.Cell, Size: t.Size}] {
			out = append(out, t)
		}
	}
	return out, nil
}

// tuneProtocol is how a tuning's programs measure each configuration,
// where PM_WARMUP and PM_REP_SECONDS do not say otherwise: its first run
// (untimed, verified) is its warm-up, its timed calls are bounded by
// tune.TuneRepSeconds, a composite's sections are not timed, and the programs
// of the tuning share the float64 references and generated matrices they
// compute in refs (made once per kernel, size and toolchain, not once per
// process). Every run of every configuration is still verified.
func tuneProtocol(opt run.Options, cfg config.Config, refs string) run.Options {
	if !cfg.WarmupSet {
		opt.Warmup = 0
	}
	if !cfg.RepSecondsSet {
		opt.RepSeconds = tune.TuneRepSeconds
	}
	opt.NoSections = true
	opt.RefCache = refs
	return opt
}

// TuneTargets counts the (cell, size) targets a tuning of cfg's selection
// has before it is sharded: what a scheduler splits into shards. It reads
// what Tune reads, and runs nothing.
func TuneTargets(cfg config.Config) (int, error) {
	s, err := openStage(cfg)
	if err != nil {
		return 0, err
	}
	cfg = s.cfg
	built := tune.Built{BuildDir: cfg.BuildDir, Manifest: s.m}
	targets, _, err := built.Targets(func(e build.Entry) bool { return cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) },
		func(e build.Entry) []int64 { return tuneSizes(cfg, e) }, s.gpu)
	return len(targets), err
}

// tuneSizes are the sizes a cell is tuned at: PM_SIZES, else the size set's.
func tuneSizes(cfg config.Config, e build.Entry) []int64 {
	if s := cfg.Sizes.For(e.Kernel); len(s) > 0 {
		return s
	}
	return e.Sizes[cfg.SizeSet]
}

// deviceKey names the GPU that measures: its UUID, else its name.
func deviceKey(mach host.Info) string {
	// A scheduler's worker: its own GPU (PM_GPU_UUID, or the one
	// CUDA_VISIBLE_DEVICES names, as Slurm gives it), not the node's first.
	if id := work.Here("").GPUUUID; id != "" {
		return id
	}
	if id := mach.GPUUUID(); id != "" {
		return id
	}
	return mach.GPUName()
}

// deviceMachine is what the constraints read of the GPU here, from its
// machine model, shared_mem_per_block being the opt-in limit where it has
// one (nil when no model names it: those constraints are listed as
// unchecked).
func deviceMachine(model *machine.Model) tune.Machine {
	if model == nil {
		return nil
	}
	g := model.GPU
	// The team layers opt in to more than the default per block
	// (cudaFuncSetAttribute; LLVM's plugin does for ompx_dyn_cgroup_mem).
	return tune.MachineOf(g.MaxThreadsPerBlock, g.WarpSize, max(g.SharedMemoryPerBlockBytes, g.SharedMemoryPerBlockOptin))
}

// tunedJobs gives each job the tuned best of the tuning folder cfg.Tuned for
// its binary, sizes and device model (the GPU's name, the host's CPU model),
// and returns how many (cell, size) have one. The rest run as published.
func tunedJobs(cfg config.Config, jobs []run.Job, mach host.Info) (int, error) {
	byGPU, err := tune.Best(cfg.Tuned, mach.GPUName())
	if err != nil {
		return 0, fmt.Errorf("PM_TUNED: %w", err)
	}
	byCPU, err := tune.Best(cfg.Tuned, mach.Machine.CPU)
	if err != nil {
		return 0, fmt.Errorf("PM_TUNED: %w", err)
	}
	// A configuration's render-time tunables (a scratch level) are the
	// binary's own and no run-time flag: the program refuses them. The
	// build recorded which they are with the cell's space.
	flag := func(e build.Entry, size int64, c tune.Config) string {
		rec, err := tune.SpaceOf(e)
		if err != nil {
			return c.String()
		}
		return rec.At(size).Flag(c)
	}
	n := 0
	for i := range jobs {
		e := jobs[i].Entry
		best := byGPU
		if e.Target == "host" {
			best = byCPU
		}
		key, err := os.ReadFile(filepath.Join(cfg.BuildDir, e.Binary+".key"))
		if err != nil {
			continue // no build key: nothing tuned can be this binary
		}
		for _, size := range jobs[i].Sizes {
			m, ok := best[tune.Pick{Cell: e.ID, Size: size, BuildKey: strings.TrimSpace(string(key))}]
			if !ok && e.Target != "host" && e.DeviceHash != "" {
				// a later build of the tuned device code (only the harness's host code changed)
				m, ok = best[tune.Pick{Cell: e.ID, Size: size, DeviceHash: e.DeviceHash}]
			}
			if !ok || len(m.Config) == 0 {
				continue
			}
			f := flag(e, size, m.Config)
			if f == "" {
				continue // only render-time tunables: the as-published binary is the best
			}
			if jobs[i].Tuned == nil {
				jobs[i].Tuned = map[int64]string{}
			}
			jobs[i].Tuned[size] = f
			n++
		}
	}
	return n, nil
}

// modelDefaults makes the machine model's launch defaults (the papers'
// "as published" launch, run.ModelDefaults: kk-ompx's occupancy max_teams)
// the default configuration of each GPU target, the one measured first and
// against which the gap to the best is taken, and a value of its space.
func modelDefaults(model *machine.Model, targets []tune.Target, entries map[string]build.Entry) {
	for _, t := range targets {
		d, _ := run.ModelDefaults(model, entries[t.Cell])
		t.Space.JoinDefaults(d)
	}
}

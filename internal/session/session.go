// Package session is the run stage's policy: one run of the built cells into
// a results folder, from the build folder alone. It chooses the folder and
// the defaults (trials, the copy size), resumes a cut run, copies the build
// logs, stamps every record and verifies the folder at the end.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/work"
)

// BuildInfoFile is written by the build stage beside the manifest: what the
// run stage records in run.json of the project without reading it.
const BuildInfoFile = "project.json"

// BuildInfo is build/project.json.
type BuildInfo struct {
	Vocabulary *results.Vocabulary `json:"vocabulary"`
	Templates  map[string]string   `json:"templates"` // sha256 by path
}

var (
	probeOnce sync.Once
	probed    host.Info
)

// Machine probes the host once per process.
func Machine(cfg config.Config) host.Info {
	probeOnce.Do(func() { probed = host.Probe(context.Background(), cfg.Root, cfg.Commit, host.Exec) })
	return probed
}

// GPU reports whether GPU cells run here (PM_GPU overrides the probe).
func GPU(c config.Config) bool {
	switch c.GPU {
	case "1":
		return true
	case "0":
		return false
	}
	return len(Machine(c).GPUs) > 0
}

// Run runs the built cells of the selection that can run here, writing a new
// results folder, and returns its path. It reads only the build folder: the
// manifest, the binaries, their logs and project.json.
func Run(ctx context.Context, cfg config.Config) (string, error) {
	cfg.Defaults()
	m, err := build.ReadManifest(cfg.BuildDir)
	if err != nil {
		return "", fmt.Errorf("no build manifest in %s (run the build stage first): %w", cfg.BuildDir, err)
	}
	if err := checkManifestFilters(cfg, m); err != nil {
		return "", err
	}
	m = SampleManifest(cfg, m, cfg.Log)
	info, err := readBuildInfo(cfg.BuildDir)
	if err != nil {
		return "", err
	}
	mach := Machine(cfg)
	gpu := GPU(cfg)
	model, modelNote := run.Model(cfg.BuildDir, cfg.Root, mach.GPUName(), cfg.Log) // the papers' launch defaults (docs/machines.md)
	// Before anything is written: the GPU must be the one its model describes.
	if gpu && !strings.HasPrefix(cfg.Work, "plan:") && runsGPUCells(cfg, m) {
		if err := checkDevice(ctx, cfg, model); err != nil {
			return "", err
		}
	}
	dir := cfg.Out
	if dir == "" {
		if dir, err = results.NewFolder(filepath.Join(cfg.Root, results.RunsDir), time.Now(), mach.Machine.Hostname); err != nil {
			return "", err
		}
	}
	started := time.Now().UTC()
	var prev *results.Run
	var w *results.Writer
	if cfg.Resume && results.Exists(dir) {
		r, err := results.ReadRun(dir)
		if err != nil {
			return dir, fmt.Errorf("PM_OUT: cannot resume %s: %w", dir, err)
		}
		if r.Status() == results.StateRunning {
			return dir, fmt.Errorf("PM_OUT: %s is being written by process %d; not resumed", dir, r.PID)
		}
		prev = &r
		if t, err := time.Parse(time.RFC3339, r.Started); err == nil {
			started = t
		}
		w, err = results.Open(dir)
		if err != nil {
			return dir, err
		}
	} else {
		if w, err = results.Create(dir); err != nil {
			return dir, fmt.Errorf("PM_OUT: %w", err)
		}
	}
	defer w.Close()
	trials := cfg.Trials
	if trials == 0 && prev != nil && prev.Trials > 0 {
		trials = prev.Trials
	}
	if trials == 0 {
		trials = 1
		if gpu {
			trials = 3
		}
	}
	// The folder's records, read once (by Open when resuming).
	done := results.FinishedOf(w.Records())
	haveCopy := map[string]bool{}
	for _, r := range w.Records() {
		if r.IsRoofline() {
			haveCopy[r.Toolchain] = true
		}
	}
	var jobs []run.Job
	var rows []results.BuildRow
	for _, e := range m.Cells {
		if !cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			continue
		}
		row := results.BuildRow{Cell: e.ID, Kernel: e.Kernel, Variant: e.Variant, Toolchain: e.Toolchain,
			Status: e.Status, Reason: e.Reason, Seconds: e.Seconds, DeviceHash: e.DeviceHash}
		if e.Log != "" {
			row.Log = results.BuildLog(e.ID)
			err := results.CopyFile(filepath.Join(cfg.BuildDir, e.Log), filepath.Join(dir, filepath.FromSlash(row.Log)))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				row.Log = "" // a build folder copied without its logs
			case err != nil:
				return dir, err
			}
		}
		if e.Binary != "" {
			if why := toolchain.NotRun(e.Target); why != "" {
				row.Reason = why
			} else if e.Target != "host" && !gpu {
				row.Reason = "built; not run: no GPU here"
			} else {
				sizes := cfg.Sizes.For(e.Kernel)
				if len(sizes) == 0 {
					sizes = e.Sizes[cfg.SizeSet]
				}
				jobs = append(jobs, run.Job{Entry: e, Sizes: sizes})
			}
		}
		rows = append(rows, row)
	}
	if err := results.WriteBuildCSV(dir, rows); err != nil {
		return dir, err
	}
	if cfg.Tuned != "" {
		n, err := tunedJobs(cfg, jobs, mach)
		if err != nil {
			return dir, err
		}
		fmt.Fprintf(cfg.Log, "run: %d (cell, size) measured again at their tuned best from %s\n", n, cfg.Tuned)
	}
	resumed := time.Now().UTC().Format(time.RFC3339)
	prov := func(state string) results.Run {
		r := provenance(cfg, m, info, mach, dir, started, w.Records())
		r.MachineModel, r.DefaultNotes = run.ModelProvenance(model, modelNote, jobs)
		r.State, r.PID, r.Trials = state, os.Getpid(), trials
		if prev != nil {
			// A resumption may run on another machine: the folder names
			// every GPU its records ran on (each record names its own).
			r.Resumed = append(slices.Clone(prev.Resumed), resumed)
			r.GPUs = results.AppendNew(slices.Clone(prev.GPUs), r.GPUs...)
		}
		if state == results.StateRunning {
			r.Finished = ""
		}
		return r
	}
	// Provenance first, so that a run stopped midway still says what ran it
	// (and a reader sees "running" with no live process: interrupted).
	if err := results.WriteRun(dir, prov(results.StateRunning)); err != nil {
		return dir, err
	}
	fmt.Fprintf(cfg.Log, "run: %d cells to run into %s\n", len(jobs), dir)
	stamp := run.Stamp{RunID: filepath.Base(dir), Commit: mach.Git.Commit, Dirty: mach.Git.Dirty, GPUUUID: mach.GPUUUID(),
		ToolchainVersions: map[string]string{}}
	if stamp.Commit == "" {
		stamp.Commit, stamp.Dirty = m.Commit, m.Dirty
	}
	for id, t := range m.Toolchains {
		stamp.ToolchainVersions[id] = t.Version
	}
	copyBytes := func(target string) int64 {
		switch {
		case cfg.CopyBytes > 0:
			return cfg.CopyBytes
		case target == "host":
			return 64 << 20
		}
		return 1 << 30
	}
	runErr := work.Run(ctx, cfg.Work, jobs, run.Options{BuildDir: cfg.BuildDir, Reps: cfg.Reps, Warmup: cfg.Warmup, RepSeconds: cfg.RepSeconds,
		Timeout: time.Duration(cfg.Timeout) * time.Second, CopyBytes: copyBytes, FlushL2: cfg.FlushL2, DeviceName: mach.GPUName(),
		Threads: hostThreads(cfg), Model: model, Log: cfg.Log, Stamp: stamp, Trials: trials, Done: done, HaveCopy: haveCopy}, w)
	closeErr := w.Close()
	state := results.StateFinished
	if ctx.Err() != nil {
		state = results.StateInterrupted
	}
	if err := results.WriteRun(dir, prov(state)); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		runErr = closeErr
	}
	if state == results.StateInterrupted {
		fmt.Fprintf(cfg.Log, "run: interrupted; resume with PM_RESUME=1 PM_OUT=%s (or -resume -out %s)\n", dir, dir)
	}
	if runErr != nil {
		return dir, runErr
	}
	return dir, verifiedAll(cfg, w.Records())
}

// deviceQuery asks the GPU this process runs on (a test gives a fake).
var deviceQuery = run.QueryDevice

// checkDevice checks the GPU against the machine model a run or tuning
// takes its launch defaults and constraints from (none: nothing to check):
// a mismatch is an error per field at the model's line.
func checkDevice(ctx context.Context, cfg config.Config, model *machine.Model) error {
	if model == nil || model.Kind != machine.KindGPU {
		return nil
	}
	note, err := run.CheckDevice(ctx, model, deviceQuery(cfg.BuildDir))
	if err != nil {
		return fmt.Errorf("the GPU is not the machine model's:\n%w", err)
	}
	fmt.Fprintln(cfg.Log, note)
	return nil
}

// runsGPUCells reports whether the selection has a built GPU cell that runs
// here (host runs are not checked).
func runsGPUCells(cfg config.Config, m *build.Manifest) bool {
	for _, e := range m.Cells {
		if e.Binary != "" && e.Target != "host" && toolchain.NotRun(e.Target) == "" && cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			return true
		}
	}
	return false
}

// checkManifestFilters rejects names the manifest does not know.
func checkManifestFilters(cfg config.Config, m *build.Manifest) error {
	var ks, vs, ts []string
	sets := map[string]bool{}
	for _, e := range m.Cells {
		ks, vs, ts = append(ks, e.Kernel), append(vs, e.Variant, e.Strategy), append(ts, e.Toolchain)
		for s := range e.Sizes {
			sets[s] = true
		}
	}
	var errs []string
	check := func(what string, asked, known []string) {
		slices.Sort(known)
		known = slices.Compact(known)
		for _, a := range asked {
			if !slices.Contains(known, a) {
				errs = append(errs, fmt.Sprintf("%s: unknown %s %q%s (built: %s)", config.KnobOf(what), what, a, diag.DidYouMean(a, known), strings.Join(known, ", ")))
			}
		}
	}
	check("kernel", cfg.Kernels, ks)
	check("variant", cfg.Variants, vs)
	check("toolchain", cfg.Toolchains, ts)
	for k := range cfg.Sizes {
		if k != "" {
			check("kernel (in sizes)", []string{k}, ks)
		}
	}
	if len(m.Cells) > 0 && !sets[cfg.SizeSet] {
		errs = append(errs, fmt.Sprintf("unknown size set %q", cfg.SizeSet))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// verifiedAll prints how many measurements of the folder verified and
// returns a Failures error listing those that did not.
func verifiedAll(cfg config.Config, recs []results.Record) error {
	ok := 0
	var f diag.Failures
	for _, r := range recs {
		if r.Kind != results.KindKernel {
			continue
		}
		if r.Verified {
			ok++
			continue
		}
		why := r.Error
		if why == "" {
			why = "not verified"
			if r.MaxRelErr != nil {
				why = fmt.Sprintf("not verified: error %.3g > tolerance %.3g", *r.MaxRelErr, r.Tolerance)
			}
		}
		f.Add("run", fmt.Sprintf("%s size %d trial %d", r.Cell, r.Size, r.Unit().Trial), why)
	}
	fmt.Fprintf(cfg.Log, "run: %d measurements verified, %d not\n", ok, len(f))
	return f.Err()
}

// hostThreads is the OpenMP threads and binding of the run's host programs.
func hostThreads(cfg config.Config) run.Threads {
	return run.HostThreads(cfg.Threads, cfg.Bind, os.Getenv, run.Affinity)
}

func provenance(cfg config.Config, m *build.Manifest, info BuildInfo, mach host.Info, dir string, started time.Time, recs []results.Record) results.Run {
	commit, dirty := mach.Git.Commit, mach.Git.Dirty
	if commit == "" {
		commit, dirty = m.Commit, m.Dirty
	}
	pr := results.Run{ID: filepath.Base(dir), Started: started.Format(time.RFC3339), Finished: time.Now().UTC().Format(time.RFC3339),
		Commit: commit, Dirty: dirty, BuildCommit: m.Commit, BuildDirty: m.Dirty, Host: mach.Machine, GPUs: mach.GPUs,
		Templates: info.Templates, Sizes: cfg.SizeSet, Reps: cfg.Reps, Warmup: cfg.Warmup, RepSeconds: cfg.RepSeconds, Vocabulary: info.Vocabulary}
	th := hostThreads(cfg)
	pr.HostThreads = &results.HostThreads{Threads: th.N, Bind: th.Bind, Places: th.Places, From: th.From}
	if pr.Templates == nil {
		pr.Templates = map[string]string{}
	}
	ids := make([]string, 0, len(m.Toolchains))
	for id := range m.Toolchains {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		pr.Toolchains = append(pr.Toolchains, m.Toolchains[id])
	}
	for _, e := range m.Cells {
		if cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			pr.Cells.AddBuild(e.Status)
		}
	}
	pr.Cells.CountRuns(recs)
	return pr
}

// readBuildInfo reads build/project.json; a build folder without one (copied
// without it) gives an empty BuildInfo.
func readBuildInfo(buildDir string) (BuildInfo, error) {
	var info BuildInfo
	file := filepath.Join(buildDir, BuildInfoFile)
	b, err := os.ReadFile(file)
	if err != nil {
		return info, nil
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", file, err)
	}
	return info, nil
}

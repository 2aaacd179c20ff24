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
	"github.com/portmatrix/portmatrix/internal/spec"
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
	// Footprints are each kernel's arrays, to refuse a size that cannot fit
	// before anything runs (CheckFit).
	Footprints map[string]spec.Footprint `json:"footprints,omitempty"`
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
	s, err := openStage(cfg)
	if err != nil {
		return "", err
	}
	cfg = s.cfg
	m := SampleManifest(cfg, s.m, cfg.Log)
	mach, gpu := s.mach, s.gpu
	model, modelNote := s.model()
	// Before anything is written: the GPU must be the one its model describes.
	if gpu && !strings.HasPrefix(cfg.Work, "plan:") && runsGPUCells(cfg, m) {
		if err := checkDevice(ctx, cfg, model); err != nil {
			return "", err
		}
	}
	// Before anything is written: every size must fit the machine.
	if !strings.HasPrefix(cfg.Work, "plan:") {
		if err := CheckFit(FitItems(cfg, m, gpu), s.info.Footprints, RoomHere(mach, model)); err != nil {
			return "", err
		}
	}
	dir, err := s.folder("")
	if err != nil {
		return "", err
	}
	started := time.Now().UTC()
	var prev *results.Run
	if cfg.Resume && results.Exists(dir) {
		r, err := results.ReadRun(dir)
		if err != nil {
			return dir, fmt.Errorf("PM_OUT: cannot resume %s: %w", dir, err)
		}
		if r.Status() == results.StateRunning {
			return dir, fmt.Errorf("PM_OUT: %s is being written by process %d; not resumed", dir, r.PID)
		}
		prev = &r
	}
	trials := trialsOf(cfg, prev, gpu)
	rows, jobs, logs := plan(cfg, m, gpu)
	var cells []string
	for _, j := range jobs {
		cells = append(cells, j.Entry.ID)
	}
	asked := selectionOf(cfg, trials, gpu, cells)
	commit, dirty := mach.Git.Commit, mach.Git.Dirty
	if commit == "" {
		commit, dirty = m.Commit, m.Dirty
	}
	// A resumption measures what the folder records, or adds a batch asked
	// for: decided before anything is written.
	var batch *results.Batch
	batchID := ""
	if prev != nil {
		if batch, err = resumption(cfg, dir, *prev, asked, started, commit, dirty); err != nil {
			return dir, err
		}
		batchID = currentBatch(*prev)
		if batch != nil {
			batchID = batch.ID
			fmt.Fprintf(cfg.Log, "run: %s: a new batch %s (PM_RESUME=batch) beside the records it holds\n", dir, batch.ID)
		} else if t, err := time.Parse(time.RFC3339, prev.Started); err == nil {
			started = t
		}
	}
	var w *results.Writer
	if prev != nil {
		w, err = results.Open(dir)
	} else if w, err = results.Create(dir); err != nil {
		err = fmt.Errorf("PM_OUT: %w", err)
	}
	if err != nil {
		return dir, err
	}
	defer w.Close()
	// build.csv: a resumption adds the rows of cells the folder has none of
	// (a batch's), and keeps every row it has, with its log.
	if prev != nil {
		have, err := results.ReadBuildCSV(dir)
		if err != nil {
			return dir, err
		}
		rows = slices.DeleteFunc(rows, func(r results.BuildRow) bool {
			return slices.ContainsFunc(have, func(h results.BuildRow) bool { return h.Cell == r.Cell })
		})
	}
	for i := range rows {
		if err := copyBuildLog(cfg.BuildDir, logs[rows[i].Cell], dir, &rows[i]); err != nil {
			return dir, err
		}
	}
	if _, err := results.AppendBuildCSV(dir, rows); err != nil {
		return dir, err
	}
	if cfg.Tuned != "" {
		n, err := tunedJobs(cfg, jobs, mach)
		if err != nil {
			return dir, err
		}
		fmt.Fprintf(cfg.Log, "run: %d (cell, size) measured again at their tuned best from %s\n", n, cfg.Tuned)
	}
	// The folder's records, read once (by Open when resuming): what this
	// batch measured before is not measured again.
	done := doneOf(w.Records(), batchID)
	haveCopy := map[string]bool{}
	for _, r := range w.Records() {
		if r.IsRoofline() {
			haveCopy[r.Toolchain] = true
		}
	}
	resumed := time.Now().UTC().Format(time.RFC3339)
	prov := func(state string) (results.Run, error) {
		var r results.Run
		if prev == nil {
			r = s.provenance(m, dir, started, w.Records())
			r.MachineModel, r.DefaultNotes = run.ModelProvenance(model, modelNote, jobs)
			r.Trials, r.Selection = trials, &asked
		} else {
			// What the folder records stays; a resumption adds its time,
			// the GPUs it ran on (each record names its own) and a batch
			// asked for.
			r = *prev
			r.Resumed = append(slices.Clone(prev.Resumed), resumed)
			r.GPUs = results.AppendNew(slices.Clone(prev.GPUs), mach.GPUs...)
			r.Batches = slices.Clone(prev.Batches)
			switch {
			case batch != nil && len(r.Batches) == 0:
				r.Batches = []results.Batch{firstBatch(*prev, prev.Selection), *batch}
			case batch != nil:
				r.Batches = append(r.Batches, *batch)
			case len(r.Batches) > 0:
				last := &r.Batches[len(r.Batches)-1]
				last.Resumed = append(slices.Clone(last.Resumed), resumed)
			}
			r.Finished = time.Now().UTC().Format(time.RFC3339)
			all, err := results.ReadBuildCSV(dir)
			if err != nil {
				return r, err
			}
			r.Cells = results.Cells{}
			for _, row := range all {
				r.Cells.AddBuild(row.Status)
			}
			r.Cells.CountRuns(w.Records())
		}
		r.State, r.PID = state, os.Getpid()
		if state == results.StateRunning {
			r.Finished = ""
		}
		return r, nil
	}
	// Provenance first, so that a run stopped midway still says what ran it
	// (and a reader sees "running" with no live process: interrupted).
	r, err := prov(results.StateRunning)
	if err == nil {
		err = results.WriteRun(dir, r)
	}
	if err != nil {
		return dir, err
	}
	fmt.Fprintf(cfg.Log, "run: %d cells to run into %s\n", len(jobs), dir)
	stamp := run.Stamp{RunID: filepath.Base(dir), BatchID: batchID, Commit: commit, Dirty: dirty, GPUUUID: mach.GPUUUID(),
		ToolchainVersions: map[string]string{}}
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
	opt := s.options()
	opt.CopyBytes, opt.Model, opt.Log, opt.Stamp, opt.Trials, opt.Done, opt.HaveCopy = copyBytes, model, cfg.Log, stamp, trials, done, haveCopy
	runErr := work.Run(ctx, cfg.Work, jobs, opt, w)
	closeErr := w.Close()
	state := results.StateFinished
	if ctx.Err() != nil {
		state = results.StateInterrupted
	} else if missing := missingUnits(cfg, jobs, trials, doneOf(w.Records(), batchID)); missing > 0 {
		// Never finished with a measurement it set out to make missing.
		state = results.StateInterrupted
		fmt.Fprintf(cfg.Log, "run: %d measurements of this run are missing; the folder stays unfinished\n", missing)
	}
	r, err = prov(state)
	if err == nil {
		err = results.WriteRun(dir, r)
	}
	if err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		runErr = closeErr
	}
	if state == results.StateInterrupted {
		env, flags := settingsOf(asked, dir, resumeKnobs)
		fmt.Fprintf(cfg.Log, "run: interrupted; resume with %s\n  (or %s)\n", env, flags)
	}
	if runErr != nil {
		return dir, runErr
	}
	return dir, verifiedAll(cfg, w.Records())
}

// plan is the build.csv rows of the selected cells of m, the jobs of those
// that run here, and the build logs by cell (relative to the build folder);
// it writes nothing.
func plan(cfg config.Config, m *build.Manifest, gpu bool) ([]results.BuildRow, []run.Job, map[string]string) {
	var jobs []run.Job
	var rows []results.BuildRow
	logs := map[string]string{}
	for _, e := range m.Cells {
		if !cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			continue
		}
		row := results.BuildRow{Cell: e.ID, Kernel: e.Kernel, Variant: e.Variant, Toolchain: e.Toolchain,
			Status: e.Status, Reason: e.Reason, Seconds: e.Seconds, DeviceHash: e.DeviceHash}
		if e.Log != "" {
			row.Log, logs[e.ID] = results.BuildLog(e.ID), e.Log
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
	return rows, jobs, logs
}

// copyBuildLog copies the build log src (relative to buildDir) of row's
// cell into the results folder dir (none: a build folder copied without its
// logs).
func copyBuildLog(buildDir, src, dir string, row *results.BuildRow) error {
	if row.Log == "" {
		return nil
	}
	err := results.CopyFile(filepath.Join(buildDir, src), filepath.Join(dir, filepath.FromSlash(row.Log)))
	if errors.Is(err, fs.ErrNotExist) {
		row.Log = ""
		return nil
	}
	return err
}

// missingUnits counts the measurements of jobs (every trial) that done
// lacks; a scheduler's worker measures the items it is given, none missing.
func missingUnits(cfg config.Config, jobs []run.Job, trials int, done map[results.Unit]bool) int {
	if cfg.Work != "" {
		return 0
	}
	n := 0
	for _, t := range run.Tasks(jobs, trials) {
		if !done[t.Unit()] {
			n++
		}
	}
	return n
}

// FitItems are the cells of m the run would run here, at their sizes.
func FitItems(cfg config.Config, m *build.Manifest, gpu bool) []FitItem {
	var out []FitItem
	for _, e := range m.Cells {
		if e.Binary == "" || !cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) || toolchain.NotRun(e.Target) != "" || e.Target != "host" && !gpu {
			continue
		}
		it := FitItem{Cell: e.ID, Kernel: e.Kernel, Target: e.Target, Sizes: cfg.Sizes.For(e.Kernel), From: "PM_SIZES"}
		if len(it.Sizes) == 0 {
			it.Sizes, it.From = e.Sizes[cfg.SizeSet], "size set "+cfg.SizeSet
		}
		out = append(out, it)
	}
	return out
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

package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"syscall"
	"time"

	"github.com/portmatrix/portmatrix/internal/book"
	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/cluster/work"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
)

// Needs is what a stage reads.
type Needs string

// What stages need.
const (
	NeedsProject  Needs = "project"         // templates/, variants/, toolchains.yaml, compilers
	NeedsManifest Needs = "manifest"        // build/manifest.json and the binaries only
	NeedsResults  Needs = "results folders" // results folders only
	NeedsNothing  Needs = "nothing"
)

// StageDef is one stage of the table both front ends are built from.
type StageDef struct {
	Name  string
	Doc   string // one sentence: the mage target's doc and the CLI's usage line
	Needs Needs
	Args  []string // positional arguments (mage target parameters)
	Deps  []string // stages mage runs first
	run   func(ctx context.Context, cfg Config) error
}

// Stages is the ordered table of stages.
var Stages = []StageDef{
	{Name: "generate", Needs: NeedsProject, Doc: "Generate renders every (kernel, variant) into generated/, writing only changed files.",
		run: withProject(Generate)},
	{Name: "check", Needs: NeedsProject, Doc: "Check fails when generated/ is not what the templates render (CI runs it).",
		run: withProject(Check)},
	{Name: "doctor", Needs: NeedsProject, Doc: "Doctor prints the toolchains found, their capabilities, and why each cell is on or off.",
		run: withProject(func(p *Project) error { Doctor(p, p.Cfg.Log); return nil })},
	{Name: "build", Needs: NeedsProject, Deps: []string{"generate"}, Doc: "Build compiles every cell this machine can build, in parallel and incrementally.",
		run: func(ctx context.Context, cfg Config) error {
			p, err := Load(ctx, cfg)
			if err != nil {
				return err
			}
			res, err := Build(ctx, p)
			if err != nil {
				return err
			}
			return p.buildFailures(res)
		}},
	{Name: "run", Needs: NeedsManifest, Deps: []string{"build"}, Doc: "Run runs every built cell this machine can run into a new results folder (PM_OUT).",
		run: func(ctx context.Context, cfg Config) error { _, err := Run(ctx, cfg); return err }},
	{Name: "report", Needs: NeedsResults, Doc: "Report draws figures, evaluates the papers' claims and writes report.html for a results folder (PM_OUT, default the newest).",
		run: func(_ context.Context, cfg Config) error {
			if len(cfg.Args) == 1 { // the CLI also takes the folder as an argument
				return Report(cfg, cfg.Args[0])
			}
			return Report(cfg, cfg.Out)
		}},
	{Name: "book", Needs: NeedsResults, Doc: "Book renders the results book (results/book/) from results/index.yaml: every paper's figures and claims with their folders' provenance.",
		run: func(_ context.Context, cfg Config) error {
			_, err := book.Render(book.Options{Root: cfg.Root, Progress: cfg.Log})
			return err
		}},
	{Name: "merge", Needs: NeedsResults, Args: []string{"folders"}, Doc: "Merge joins comma-separated results folders of one machine into PM_OUT; later folders win for a cell.",
		run: func(_ context.Context, cfg Config) error {
			if cfg.Out == "" {
				return fmt.Errorf("merge needs an output folder (PM_OUT or -out)")
			}
			return results.Merge(cfg.Out, argList(cfg.Args))
		}},
	{Name: "compare", Needs: NeedsResults, Args: []string{"a", "b"}, Doc: "Compare prints per-cell GB/s ratios of run b to run a and flags regressions beyond PM_THRESHOLD.",
		run: func(_ context.Context, cfg Config) error {
			if len(cfg.Args) != 2 {
				return fmt.Errorf("compare needs two results folders")
			}
			n, err := results.Compare(cfg.Args[0], cfg.Args[1], cfg.Threshold, cfg.Log)
			if err == nil && n > 0 {
				err = fmt.Errorf("%d regressions", n)
			}
			return err
		}},
	{Name: "collect", Needs: NeedsResults, Doc: "Collect merges the shards of a scheduled run (PM_OUT, a campaign folder) into one results folder.",
		run: extension("collect")},
	{Name: "status", Needs: NeedsResults, Doc: "Status prints the progress of a scheduled run (PM_OUT): items done, Slurm tasks and their states.",
		run: extension("status")},
	{Name: "all", Needs: NeedsProject, Doc: "All generates, builds, runs, verifies and reports: the whole pipeline.",
		run: withProject2(All)},
	{Name: "clean", Needs: NeedsNothing, Doc: "Clean removes build outputs (the build folder); generated/ and results/ are kept.",
		run: func(_ context.Context, cfg Config) error { return os.RemoveAll(cfg.BuildDir) }},
}

func withProject(f func(*Project) error) func(context.Context, Config) error {
	return func(ctx context.Context, cfg Config) error {
		p, err := Load(ctx, cfg)
		if err != nil {
			return err
		}
		return f(p)
	}
}

func withProject2(f func(context.Context, *Project) error) func(context.Context, Config) error {
	return func(ctx context.Context, cfg Config) error {
		p, err := Load(ctx, cfg)
		if err != nil {
			return err
		}
		return f(ctx, p)
	}
}

// argList splits comma-separated positional arguments (mage passes one string).
func argList(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, list(a)...)
	}
	return out
}

// StageNames lists the stages in order.
func StageNames() []string {
	var out []string
	for _, s := range Stages {
		out = append(out, s.Name)
	}
	return out
}

// Extension is a stage's code that lives in a package importing this one
// (internal/cluster: collect, status, and "schedule", which runs the run and
// all stages under PM_SCHEDULER); the front ends link it and it registers here.
type Extension func(ctx context.Context, stage string, cfg Config) error

var extensions = map[string]Extension{}

// Extend registers an extension under name.
func Extend(name string, f Extension) { extensions[name] = f }

func extension(name string) func(context.Context, Config) error {
	return func(ctx context.Context, cfg Config) error { return callExtension(ctx, name, name, cfg) }
}

func callExtension(ctx context.Context, name, stage string, cfg Config) error {
	f := extensions[name]
	if f == nil {
		return fmt.Errorf("%s: not linked into this program (internal/cluster registers it)", name)
	}
	return f(ctx, stage, cfg)
}

// Stage runs one named stage with cfg; args are its positional arguments.
func Stage(ctx context.Context, name string, cfg Config, args ...string) error {
	cfg.Defaults()
	if (name == "run" || name == "all") && cfg.Scheduler == "" {
		// Before anything is built: a bad PM_OUT is reported up front.
		if err := cfg.checkOut(); err != nil {
			return err
		}
	}
	if cfg.Scheduler != "" && (name == "run" || name == "all") {
		return callExtension(ctx, "schedule", name, cfg)
	}
	for _, s := range Stages {
		if s.Name == name {
			cfg.Args = args
			return s.run(ctx, cfg)
		}
	}
	return fmt.Errorf("unknown stage %q (known: %s)", name, strings.Join(StageNames(), ", "))
}

var (
	probeOnce sync.Once
	probed    host.Info
)

// machine probes the host once per process.
func machine(cfg Config) host.Info {
	probeOnce.Do(func() { probed = host.Probe(context.Background(), cfg.Root, cfg.Commit, host.Exec) })
	return probed
}

// gpu reports whether GPU cells run here (PM_GPU overrides the probe).
func (c *Config) gpu() bool {
	switch c.GPU {
	case "1":
		return true
	case "0":
		return false
	}
	return len(machine(*c).GPUs) > 0
}

// All generates, builds, runs and reports. A build failure outside the
// known-failure list, nothing built for a selected toolchain, or a
// measurement not verified makes it fail, after everything is written.
func All(ctx context.Context, p *Project) error {
	t0 := time.Now()
	if err := Generate(p); err != nil {
		return err
	}
	res, err := Build(ctx, p)
	if err != nil {
		return err
	}
	buildErr := p.buildFailures(res)
	dir, runErr := Run(ctx, p.Cfg)
	if _, ok := runErr.(Failures); runErr != nil && !ok {
		return runErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := Report(p.Cfg, dir); err != nil {
		return err
	}
	fmt.Fprintf(p.Cfg.Log, "all: took %s; results in %s\n", time.Since(t0).Round(time.Millisecond), dir)
	return join(buildErr, runErr)
}

// buildFailures is what a build did not do that was asked for: a failure
// outside the known-failure list (variants/known-failures.yaml, matched by
// cell and message), nothing built for a toolchain the selection names, or
// nothing built at all.
func (p *Project) buildFailures(res []build.Result) error {
	known, err := build.LoadKnown(p.path(build.KnownFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		return err
	}
	var f Failures
	ok := map[string]int{}
	skips := map[string][]string{}
	for _, r := range res {
		tc := r.Cell.Toolchain.ID
		switch {
		case r.OK():
			ok[tc]++
		case r.Status == build.Failed:
			if k := build.Match(known, r.Cell.ID, r.Reason); k != nil {
				fmt.Fprintf(p.Cfg.Log, "  known failure %s (%s)\n", r.Cell.ID, k.Pos)
				continue
			}
			f.Add("build", r.Cell.ID, r.Reason+" (log: "+r.Log+")")
		case r.Status == build.Skipped:
			if !slices.Contains(skips[tc], r.Reason) {
				skips[tc] = append(skips[tc], r.Reason)
			}
		}
	}
	for _, id := range p.Cfg.Toolchains {
		if ok[id] > 0 {
			continue
		}
		why := "no selected cell is on for it"
		for _, t := range p.Toolchains {
			switch {
			case t.ID != id:
			case !t.Found():
				why = t.Missing
			case len(skips[id]) == 0:
				why = fmt.Sprintf("no selected variant is for it (family %s, devices %s)", t.Family, strings.Join(t.Devices, ", "))
			}
		}
		if len(skips[id]) > 0 && why == "no selected cell is on for it" {
			why += ": " + strings.Join(skips[id], "; ")
		}
		f.Add("build", "toolchain "+id, "nothing built: "+why)
	}
	if len(p.Cfg.Toolchains) == 0 && len(ok) == 0 {
		f.Add("build", "selection", "nothing built (doctor says why each cell is off)")
	}
	return f.Err()
}

// buildInfoFile is written by the build stage beside the manifest: what the
// run stage records in run.json of the project without reading it.
const buildInfoFile = "project.json"

// buildInfo is build/project.json.
type buildInfo struct {
	Vocabulary *results.Vocabulary `json:"vocabulary"`
	Templates  map[string]string   `json:"templates"` // sha256 by path
}

// Build compiles every selected cell that is on and updates build/manifest.json.
func Build(ctx context.Context, p *Project) ([]build.Result, error) {
	t0 := time.Now()
	if err := p.renderError("build", ""); err != nil {
		return nil, err
	}
	// A manifest that does not read is reported before anything is built.
	if _, err := build.ReadManifest(p.Cfg.BuildDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	cells := p.Cells()
	res, err := build.Run(ctx, cells, build.Options{Root: p.Cfg.Root, Dir: p.Cfg.BuildDir, Jobs: p.Cfg.Jobs, Log: p.Cfg.Log})
	if err != nil {
		return res, err
	}
	for _, t := range p.Toolchains {
		if t.GPU() && builtWith(res, t.ID) {
			if err := build.Bundle(p.Cfg.BuildDir, t); err != nil {
				return res, err
			}
		}
	}
	git := machine(p.Cfg).Git
	if _, err := build.Update(p.Cfg.BuildDir, git.Commit, git.Dirty, p.Toolchains, res); err != nil {
		return res, err
	}
	if err := results.WriteJSON(p.Cfg.BuildDir, buildInfoFile, buildInfo{Vocabulary: results.VocabularyOf(p.Kernels, p.Strategies), Templates: p.templateHashes()}); err != nil {
		return res, err
	}
	counts := map[string]int{}
	for _, r := range res {
		counts[r.Status]++
	}
	fmt.Fprintf(p.Cfg.Log, "build: %d cells: %d built, %d cached, %d failed, %d skipped; took %s\n", len(res),
		counts[build.Built], counts[build.Cached], counts[build.Failed], counts[build.Skipped], time.Since(t0).Round(time.Millisecond))
	for _, r := range res {
		if r.Status == build.Failed {
			fmt.Fprintf(p.Cfg.Log, "  FAILED %s: %s (log: %s)\n", r.Cell.ID, r.Reason, r.Log)
		}
		if r.Status == build.Skipped && strings.HasPrefix(r.Reason, "cannot render") {
			fmt.Fprintf(p.Cfg.Log, "  OFF %s: %s\n", r.Cell.ID, r.Reason)
		}
	}
	return res, nil
}

func builtWith(res []build.Result, tc string) bool {
	for _, r := range res {
		if r.OK() && r.Cell.Toolchain.ID == tc {
			return true
		}
	}
	return false
}

// Run runs the built cells of the selection that can run here, writing a new
// results folder, and returns its path. It reads only the build folder: the
// manifest, the binaries, their logs and project.json.
func Run(ctx context.Context, cfg Config) (string, error) {
	cfg.Defaults()
	m, err := build.ReadManifest(cfg.BuildDir)
	if err != nil {
		return "", fmt.Errorf("no build manifest in %s (run the build stage first): %w", cfg.BuildDir, err)
	}
	if err := checkManifestFilters(cfg, m); err != nil {
		return "", err
	}
	var info buildInfo
	if b, err := os.ReadFile(filepath.Join(cfg.BuildDir, buildInfoFile)); err == nil {
		if err := json.Unmarshal(b, &info); err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Join(cfg.BuildDir, buildInfoFile), err)
		}
	}
	mach := machine(cfg)
	gpu := cfg.gpu()
	dir := cfg.Out
	if dir == "" {
		dir = filepath.Join(cfg.Root, "results", time.Now().UTC().Format("20060102-150405")+"-"+Slug(mach.Machine.Hostname))
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
	done, err := results.Finished(dir)
	if err != nil {
		return dir, err
	}
	haveCopy := map[string]bool{}
	if recs, err := results.ReadJSONL(dir); err == nil {
		for _, r := range recs {
			if r.IsRoofline() {
				haveCopy[r.Toolchain] = true
			}
		}
	}
	var jobs []run.Job
	var rows []results.BuildRow
	for _, e := range m.Cells {
		if !cfg.picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
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
			if e.Target != "host" && !gpu {
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
	resumed := time.Now().UTC().Format(time.RFC3339)
	model, modelNote := run.Model(cfg.Root, mach.GPUName()) // the papers' launch defaults (docs/machines.md)
	prov := func(state string) results.Run {
		r := provenance(cfg, m, info, mach, dir, started)
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
		Model: model, Log: cfg.Log, Stamp: stamp, Trials: trials, Done: done, HaveCopy: haveCopy}, w)
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
	return dir, verifiedAll(cfg, dir)
}

// checkManifestFilters rejects names the manifest does not know.
func checkManifestFilters(cfg Config, m *build.Manifest) error {
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
				errs = append(errs, fmt.Sprintf("%s: unknown %s %q%s (built: %s)", knobOf(what), what, a, diag.DidYouMean(a, known), strings.Join(known, ", ")))
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
func verifiedAll(cfg Config, dir string) error {
	recs, err := results.ReadJSONL(dir)
	if err != nil {
		return err
	}
	ok := 0
	var f Failures
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

// Report turns a results folder (the newest under results/ when dir is "")
// into figures, claims and an HTML page. It needs only the folder; an old
// folder whose run.json names no vocabulary takes the project's.
func Report(cfg Config, dir string) error {
	cfg.Defaults()
	if dir == "" {
		latest, err := Latest(filepath.Join(cfg.Root, "results"))
		if err != nil {
			return err
		}
		dir = latest
	}
	if run, err := results.ReadRun(dir); err == nil && run.Status() == results.StateInterrupted {
		// A killed run may have left results.csv behind results.jsonl.
		fmt.Fprintf(cfg.Log, "report: %s is an interrupted run (resume it with PM_RESUME=1)\n", dir)
		if err := results.WriteCSV(dir); err != nil {
			return err
		}
	}
	opt := report.Options{SpecDir: filepath.Join(cfg.Root, report.DefaultSpecDir), Progress: cfg.Log}
	// The specs are the source tree's: they may name what the folder's
	// vocabulary does not (a kernel added since), which the tree's covers.
	v, verr := results.LoadVocabulary(cfg.Root)
	if run, err := results.ReadRun(dir); err == nil && run.Vocabulary == nil && verr != nil {
		return fmt.Errorf("%s names no vocabulary and the project does not load: %w", filepath.Join(dir, results.RunFile), verr)
	}
	opt.Vocabulary = v
	if _, err := report.Generate(dir, opt); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Log, "report: %s\n", filepath.Join(dir, results.ReportFile))
	return nil
}

// Latest returns the newest results folder (by name, which starts with the time).
func Latest(root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(root, e.Name(), results.JSONLFile)); err == nil {
				dirs = append(dirs, e.Name())
			}
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no results folder under %s", root)
	}
	sort.Strings(dirs)
	return filepath.Join(root, dirs[len(dirs)-1]), nil
}

// Slug is s in lower-case letters, digits and '-' ("host" when none is left):
// the machine part of a results folder's name.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "host"
	}
	return b.String()
}

// templateHashes hashes every template and kernel description, by path
// relative to the root.
func (p *Project) templateHashes() map[string]string {
	out := map[string]string{}
	for path, src := range p.Templates() {
		sum := sha256.Sum256(src)
		rel, err := filepath.Rel(p.Cfg.Root, path)
		if err != nil {
			rel = path
		}
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
	}
	return out
}

func provenance(cfg Config, m *build.Manifest, info buildInfo, mach host.Info, dir string, started time.Time) results.Run {
	commit, dirty := mach.Git.Commit, mach.Git.Dirty
	if commit == "" {
		commit, dirty = m.Commit, m.Dirty
	}
	pr := results.Run{ID: filepath.Base(dir), Started: started.Format(time.RFC3339), Finished: time.Now().UTC().Format(time.RFC3339),
		Commit: commit, Dirty: dirty, BuildCommit: m.Commit, BuildDirty: m.Dirty, Host: mach.Machine, GPUs: mach.GPUs,
		Templates: info.Templates, Sizes: cfg.SizeSet, Reps: cfg.Reps, Warmup: cfg.Warmup, RepSeconds: cfg.RepSeconds, Vocabulary: info.Vocabulary}
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
		if cfg.picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			pr.Cells.AddBuild(e.Status)
		}
	}
	recs, _ := results.ReadJSONL(dir)
	pr.Cells.CountRuns(recs)
	return pr
}

// checkOut checks PM_OUT for a run: a folder that holds a run is refused
// unless PM_RESUME asks to continue it; a file, or a place that cannot be
// written, is refused.
func (c *Config) checkOut() error {
	if c.Resume && c.Out == "" {
		return fmt.Errorf("PM_RESUME: needs PM_OUT (-out), the folder to resume")
	}
	if c.Out == "" {
		return nil
	}
	st, err := os.Stat(c.Out)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("PM_OUT: %s is a file, not a results folder", c.Out)
	case err == nil && results.Exists(c.Out) && !c.Resume:
		r, rerr := results.ReadRun(c.Out)
		state := "a run"
		if rerr == nil {
			state = "a " + r.Status() + " run"
		}
		return fmt.Errorf("PM_OUT: %s holds %s; results folders are never overwritten: resume it with PM_RESUME=1 (-resume) or choose another folder", c.Out, state)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("PM_OUT: %w", err)
	}
	// The nearest existing ancestor must be a writable folder.
	dir := filepath.Dir(filepath.Clean(c.Out))
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("PM_OUT: %s: %s is not a folder", c.Out, dir)
			}
			if syscall.Access(dir, 2) != nil { // W_OK
				return fmt.Errorf("PM_OUT: %s: cannot create it in %s (not writable)", c.Out, dir)
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

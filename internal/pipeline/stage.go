package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/book"
	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/cluster"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/suite"
	"github.com/portmatrix/portmatrix/internal/testsnap"
	"github.com/portmatrix/portmatrix/internal/tune"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
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
	// CLIArgs are optional arguments the CLI takes after Args (report's
	// folder); Variadic takes any number of the last of Args.
	CLIArgs  []string
	Variadic bool
	Deps     []string // stages mage runs first
	run      func(ctx context.Context, cfg Config) error
}

// Stages is the ordered table of stages.
var Stages = []StageDef{
	{Name: "generate", Needs: NeedsProject, Doc: "Generate renders every (kernel, variant) into generated/, writing only changed files.",
		run: withProject(Generate)},
	{Name: "check", Needs: NeedsProject, Doc: "Check fails when generated/ is not what the templates render (CI runs it).",
		run: withProject(Check)},
	{Name: "doctor", Needs: NeedsProject, Doc: "Doctor prints the toolchains found, their capabilities, and why each cell is on or off.",
		run: withProject(func(p *Project) error { Doctor(p, p.Cfg.Log); return nil })},
	{Name: "explain", Needs: NeedsProject, Doc: "Explain prints how each kernel written as loops was mapped: dependences, each loop's level and why, sizes, the pattern tree.",
		run: func(_ context.Context, cfg Config) error {
			cfg.Defaults()
			return mapping.ExplainKernels(cfg.Root, cfg.Kernels, cfg.Log)
		}},
	{Name: "build", Needs: NeedsProject, Deps: []string{"generate"}, Doc: "Build compiles every cell this machine can build, in parallel and incrementally.",
		run: withProjectCtx(func(ctx context.Context, p *Project) error {
			res, err := Build(ctx, p)
			if err != nil {
				return err
			}
			return p.buildFailures(res)
		})},
	{Name: "run", Needs: NeedsManifest, Deps: []string{"build"}, Doc: "Run runs every built cell this machine can run into a new results folder (PM_OUT).",
		run: func(ctx context.Context, cfg Config) error { _, err := session.Run(ctx, cfg); return err }},
	{Name: "tune", Needs: NeedsManifest, Deps: []string{"build"}, Doc: "Tune searches the run-time tunables of every built cell this machine can run, each configuration verified, cached in PM_OUT's tuning.jsonl.",
		run: func(ctx context.Context, cfg Config) error { _, err := session.Tune(ctx, cfg); return err }},
	{Name: "tunecheck", Needs: NeedsResults, CLIArgs: []string{"folder"}, Doc: "Tunecheck replays every search against a folder's ground truth (whole spaces measured: scripts/tune-truth.sh) into its tuning-check.md and .csv; without a folder (PM_OUT), the dry run: the ground truth's spaces and GPU seconds, and a matrix tuning's.",
		run: func(ctx context.Context, cfg Config) error {
			if len(cfg.Args) == 1 { // the CLI also takes the folder as an argument
				return TuneCheck(ctx, cfg, cfg.Args[0])
			}
			return TuneCheck(ctx, cfg, cfg.Out)
		}},
	{Name: "report", Needs: NeedsResults, CLIArgs: []string{"folder"}, Doc: "Report draws figures, evaluates the papers' claims and writes report.html for a results folder (PM_OUT, default the newest).",
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
	{Name: "merge", Needs: NeedsResults, Args: []string{"folders"}, Variadic: true, Doc: "Merge joins comma-separated results folders of one platform into PM_OUT (which may be one of them), taking only PM_KERNELS, PM_VARIANTS and PM_TOOLCHAINS when given; later folders win for a cell. Tuning folders merge the same way, every evaluation kept (a later folder's wins for the same binary, configuration and device).",
		run: func(_ context.Context, cfg Config) error {
			if cfg.Out == "" {
				return fmt.Errorf("merge needs an output folder (PM_OUT or -out)")
			}
			dirs := argList(cfg.Args)
			tunings, err := tuningFolders(dirs)
			if err != nil {
				return err
			}
			if !tunings {
				return results.MergeWith(cfg.Out, dirs, results.MergeOptions{Kernels: cfg.Kernels, Variants: cfg.Variants, Toolchains: cfg.Toolchains})
			}
			if len(cfg.Kernels)+len(cfg.Variants)+len(cfg.Toolchains) > 0 {
				return fmt.Errorf("merge: tuning folders merge whole; PM_KERNELS, PM_VARIANTS and PM_TOOLCHAINS select from results folders only")
			}
			n, err := tune.Merge(cfg.Out, dirs)
			if err == nil {
				fmt.Fprintf(cfg.Log, "merge: %s holds %d evaluations\n", cfg.Out, n)
			}
			return err
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
		run: func(ctx context.Context, cfg Config) error {
			if cfg.Out == "" {
				return fmt.Errorf("collect needs the campaign folder: -out <folder> (PM_OUT)")
			}
			_, err := cluster.Collect(ctx, cfg.Out, cfg.Log)
			return err
		}},
	{Name: "status", Needs: NeedsResults, Doc: "Status prints the progress of a scheduled run (PM_OUT): items done, Slurm tasks and their states.",
		run: func(ctx context.Context, cfg Config) error {
			if cfg.Out == "" {
				return fmt.Errorf("status needs the campaign folder: -out <folder> (PM_OUT)")
			}
			_, err := cluster.Campaign{Dir: cfg.Out}.PrintStatus(ctx, cfg.Log)
			return err
		}},
	{Name: "folder", Needs: NeedsNothing, Args: []string{"parts"}, Variadic: true, Doc: "Folder makes a new, empty results folder under results/, named by the time and the comma-separated parts (unique within a second too), and prints its path.",
		run: func(_ context.Context, cfg Config) error {
			dir, err := results.NewFolder(layout.Path(cfg.Root, layout.Results), time.Now(), argList(cfg.Args)...)
			if err == nil {
				fmt.Fprintln(cfg.Log, dir)
			}
			return err
		}},
	{Name: "snapcheck", Needs: NeedsProject, Args: []string{"dump"}, Doc: "Snapcheck compares our SNAP with a LAMMPS dump's energies, forces and bispectra (potential PM_SNAP_POTENTIAL, timestep PM_SNAP_TIMESTEP; docs/inputs.md), printing the largest errors.",
		run: func(ctx context.Context, cfg Config) error {
			if len(cfg.Args) != 1 {
				return fmt.Errorf("snapcheck needs a LAMMPS dump file")
			}
			cfg.Defaults()
			return testsnap.CheckDump(ctx, cfg.Root, cfg.BuildDir, cfg.Args[0], cfg.Log)
		}},
	{Name: "verify", Needs: NeedsProject, Doc: "Verify checks the selection's build (every cell that is on compiled or a known failure) and PM_OUT's run (finished, every built cell measured and verified), with counts by target (CI runs it).",
		run: withProject(Verify)},
	{Name: "libraries", Needs: NeedsProject, Doc: "Libraries installs the libraries of variants/libraries.yaml (Kokkos, RAJA) for each backend and toolchain found, from the source releases in PM_DEPS (PM_LIBRARIES selects; docs/libraries.md).",
		run: Libraries},
	{Name: "all", Needs: NeedsProject, Doc: "All generates, builds, runs, verifies and reports: the whole pipeline.",
		run: withProjectCtx(All)},
	{Name: "clean", Needs: NeedsNothing, Doc: "Clean removes build outputs (the build folder); generated/ and results/ are kept.",
		run: func(_ context.Context, cfg Config) error { return os.RemoveAll(cfg.BuildDir) }},
}

func withProject(f func(*Project) error) func(context.Context, Config) error {
	return withProjectCtx(func(_ context.Context, p *Project) error { return f(p) })
}

// withProjectCtx runs f, which takes the stage's context, on the loaded project. Where kernel descriptions were
// refused, f runs for the other kernels and the stage then fails with the
// refusals the selection names (none when PM_KERNELS names only others):
// the whole project's command reports a broken kernel, a selection of
// others succeeds.
func withProjectCtx(f func(context.Context, *Project) error) func(context.Context, Config) error {
	return func(ctx context.Context, cfg Config) error {
		p, refused := Load(ctx, cfg)
		if p == nil {
			return refused
		}
		return withRefused(f(ctx, p), refused)
	}
}

// withRefused is a stage's error with the refused kernels the selection
// names: as failures beside the stage's failures (all's one-screen summary),
// else after its error.
func withRefused(err, refused error) error {
	var r spec.Refused
	if !errors.As(refused, &r) || len(r) == 0 {
		return err
	}
	var f diag.Failures
	if err == nil || errors.As(err, &f) {
		for _, x := range r {
			for _, e := range x.Errs {
				f.Add("load", "kernel "+x.Name+" refused", e.Error())
			}
		}
		return f.Err()
	}
	return fmt.Errorf("%w\n%d kernel descriptions refused:\n%s", err, len(r), r)
}

// argList splits comma-separated positional arguments (mage passes one string).
func argList(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, config.List(a)...)
	}
	return out
}

// checkArgs refuses positional arguments the stage does not take, which
// would otherwise be ignored silently.
func (s StageDef) checkArgs(args []string) error {
	names := append(slices.Clone(s.Args), s.CLIArgs...)
	if s.Variadic || len(args) <= len(names) {
		return nil
	}
	if len(names) == 0 {
		return fmt.Errorf("stage %s takes no arguments, got %q (portmatrix -h lists the stages and flags)", s.Name, strings.Join(args, " "))
	}
	return fmt.Errorf("stage %s takes at most %d argument(s) (%s), got %d: %q", s.Name, len(names), strings.Join(names, " "), len(args), strings.Join(args, " "))
}

// StageNames lists the stages in order.
func StageNames() []string {
	var out []string
	for _, s := range Stages {
		out = append(out, s.Name)
	}
	return out
}

// schedule runs the run stage (and all) under a scheduler: slurm (one job
// array) or gpus (a worker per GPU). Workers run cfg.Self, the running
// portmatrix CLI ("" from the magefile: one is built with Go).
func schedule(ctx context.Context, name string, cfg Config) error {
	cc, err := cluster.Load(cfg)
	if err != nil {
		return err
	}
	if cfg.Out == "" {
		if cfg.Out, err = cluster.NewDir(cfg.Root, cfg.Scheduler); err != nil {
			return err
		}
	}
	local := cfg
	local.Scheduler = ""
	if name == "all" {
		for _, s := range []string{"generate", "build"} {
			if err := Stage(ctx, s, local); err != nil {
				return err
			}
		}
	}
	sum, err := cluster.Schedule(ctx, cfg, cc)
	if err != nil || name != "all" || sum == nil {
		return err
	}
	return Stage(ctx, "report", local)
}

// Stage runs one named stage with cfg; args are its positional arguments.
func Stage(ctx context.Context, name string, cfg Config, args ...string) error {
	cfg.Defaults()
	if (name == "run" || name == "all") && cfg.Scheduler == "" {
		// Before anything is built: a bad PM_OUT is reported up front.
		if err := results.CheckOut(cfg.Out, cfg.Resume); err != nil {
			return err
		}
		if err := session.CheckResume(cfg); err != nil {
			return err
		}
	}
	if cfg.Scheduler != "" && (name == "run" || name == "all") {
		return schedule(ctx, name, cfg)
	}
	if cfg.Scheduler != "" && name == "tune" {
		cc, err := cluster.Load(cfg)
		if err != nil {
			return err
		}
		return cluster.ScheduleTune(ctx, cfg, cc)
	}
	for _, s := range Stages {
		if s.Name == name {
			if err := s.checkArgs(args); err != nil {
				return err
			}
			cfg.Args = args
			return s.run(ctx, cfg)
		}
	}
	return fmt.Errorf("unknown stage %q (known: %s)", name, strings.Join(StageNames(), ", "))
}

// All generates, builds, runs and reports. A build failure outside the
// known-failure list, nothing built for a selected toolchain, or a
// measurement not verified makes it fail, after everything is written.
func All(ctx context.Context, p *Project) error {
	t0 := time.Now()
	// A size that cannot fit is refused before anything is built.
	mach := session.Machine(p.Cfg)
	model, _ := run.Model(p.Cfg.BuildDir, p.Cfg.Root, mach.GPUName(), io.Discard)
	if err := session.CheckFit(p.fitItems(), p.footprints(), session.RoomHere(mach, model)); err != nil {
		return err
	}
	if err := generate(p, p.Cfg.Sample() == ""); err != nil {
		return err
	}
	res, err := Build(ctx, p)
	if err != nil {
		return err
	}
	buildErr := p.buildFailures(res)
	dir, runErr := session.Run(ctx, p.Cfg)
	if _, ok := runErr.(diag.Failures); runErr != nil && !ok {
		return runErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := Report(p.Cfg, dir); err != nil {
		return err
	}
	if err := report.Summarize(dir, p.measuredKernels(), p.Cfg.Log); err != nil {
		return err
	}
	fmt.Fprintf(p.Cfg.Log, "all: took %s; results in %s\n", time.Since(t0).Round(time.Millisecond), dir)
	return diag.Join(buildErr, runErr)
}

// footprints are the kernels' (spec.Footprint), by name.
func (p *Project) footprints() map[string]spec.Footprint {
	out := map[string]spec.Footprint{}
	for _, k := range p.Kernels {
		out[k.Name] = k.Footprint()
	}
	return out
}

// fitItems are the selected cells that would run here, at their sizes.
func (p *Project) fitItems() []session.FitItem {
	var out []session.FitItem
	for _, c := range p.Cells() {
		if !c.Runnable {
			continue
		}
		it := session.FitItem{Cell: c.ID, Kernel: c.Kernel.Name, Target: c.Toolchain.Target, Sizes: p.Sizes(c.Kernel), From: "PM_SIZES"}
		if len(p.Cfg.Sizes.For(c.Kernel.Name)) == 0 {
			it.From = "size set " + p.Cfg.SizeSet
		}
		out = append(out, it)
	}
	return out
}

// measuredKernels are the columns of the summary that ends all: the kernels
// of the family the quick suite measures whole (suite.Measured), the
// composites (CG-Solve) after the kernels they call.
func (p *Project) measuredKernels() []string {
	var simple, composite []string
	for _, k := range p.Kernels {
		switch {
		case k.Family != suite.Measured:
		case len(k.Uses) > 0:
			composite = append(composite, k.Name)
		default:
			simple = append(simple, k.Name)
		}
	}
	return append(simple, composite...)
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
	res, err := build.Run(ctx, cells, build.Options{Root: p.Cfg.Root, Dir: p.Cfg.BuildDir, Jobs: p.Cfg.Jobs, Log: p.Cfg.Log, DeviceOnly: p.Cfg.DeviceOnly, Cache: build.CacheDir(),
		Kernels: p.ByName})
	if err != nil {
		return res, err
	}
	if err := build.BundleAll(p.Cfg.BuildDir, p.Toolchains, res); err != nil {
		return res, err
	}
	if err := build.CopyMachines(p.Cfg.BuildDir, p.path(machine.Dir)); err != nil { // the run and tune stages' models
		return res, err
	}
	for i := range res { // what the tune stage and run -tuned read of a cell (tune.Recorded)
		if res[i].OK() && p.Spaces != nil {
			res[i].Space = p.Spaces.RecordCell(res[i].Cell, p.ByName)
		}
	}
	git := session.Machine(p.Cfg).Git
	if _, err := build.Update(p.Cfg.BuildDir, git.Commit, git.Dirty, p.Toolchains, res); err != nil {
		return res, err
	}
	if err := results.WriteJSON(p.Cfg.BuildDir, session.BuildInfoFile, session.BuildInfo{Vocabulary: vocabulary.WithReleases(vocabulary.Of(p.Kernels, p.Strategies), p.catalog()), Templates: p.templateHashes(),
		Footprints: p.footprints()}); err != nil {
		return res, err
	}
	if p.Cfg.Sample() != "" {
		build.SummarizeSample(p.Cfg.Log, res, time.Since(t0), p.leftOut)
	} else {
		build.Summarize(p.Cfg.Log, res, time.Since(t0))
	}
	return res, nil
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

// buildFailures is what a build did not do that was asked for (build.Failures).
func (p *Project) buildFailures(res []build.Result) error {
	known, err := build.LoadKnown(p.path(layout.KnownFailures))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		return err
	}
	return build.Failures(res, known, p.Cfg.Toolchains, p.Toolchains, p.Cfg.Log)
}

// Report turns a results folder (the newest under results/ when dir is "")
// into figures, claims and an HTML page (report.Folder).
func Report(cfg Config, dir string) error {
	cfg.Defaults()
	return report.Folder(cfg.Root, dir, cfg.Log)
}

// tuningFolders says whether dirs are tuning folders (a tuning.jsonl and no
// results.jsonl) rather than results folders; a mix is an error naming one
// of each.
func tuningFolders(dirs []string) (bool, error) {
	var tuning, res string
	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(d, results.JSONLFile))
		switch {
		case err == nil:
			res = d
		case tune.Has(d):
			tuning = d
		}
	}
	if tuning != "" && res != "" {
		return false, fmt.Errorf("merge takes results folders or tuning folders, not both: %s is a tuning folder, %s a results folder", tuning, res)
	}
	return tuning != "", nil
}

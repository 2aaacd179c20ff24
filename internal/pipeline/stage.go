package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/cluster"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
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
		run: func(ctx context.Context, cfg Config) error { _, err := session.Run(ctx, cfg); return err }},
	{Name: "report", Needs: NeedsResults, Doc: "Report draws figures, evaluates the papers' claims and writes report.html for a results folder (PM_OUT, default the newest).",
		run: func(_ context.Context, cfg Config) error {
			if len(cfg.Args) == 1 { // the CLI also takes the folder as an argument
				return Report(cfg, cfg.Args[0])
			}
			return Report(cfg, cfg.Out)
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
	{Name: "folder", Needs: NeedsNothing, Args: []string{"parts"}, Doc: "Folder makes a new, empty results folder under results/, named by the time and the comma-separated parts (unique within a second too), and prints its path.",
		run: func(_ context.Context, cfg Config) error {
			dir, err := results.NewFolder(layout.Path(cfg.Root, layout.Results), time.Now(), argList(cfg.Args)...)
			if err == nil {
				fmt.Fprintln(cfg.Log, dir)
			}
			return err
		}},
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
		out = append(out, config.List(a)...)
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
	}
	if cfg.Scheduler != "" && (name == "run" || name == "all") {
		return schedule(ctx, name, cfg)
	}
	for _, s := range Stages {
		if s.Name == name {
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
	if err := Generate(p); err != nil {
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
	fmt.Fprintf(p.Cfg.Log, "all: took %s; results in %s\n", time.Since(t0).Round(time.Millisecond), dir)
	return diag.Join(buildErr, runErr)
}

// buildFailures is what a build did not do that was asked for: a failure
// outside the known-failure list (variants/known-failures.yaml, matched by
// cell and message), nothing built for a toolchain the selection names, or
// nothing built at all.
func (p *Project) buildFailures(res []build.Result) error {
	known, err := build.LoadKnown(p.path(layout.KnownFailures))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "no such file") {
		return err
	}
	var f diag.Failures
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

// Build compiles every selected cell that is on and updates build/manifest.json.
func Build(ctx context.Context, p *Project) ([]build.Result, error) {
	t0 := time.Now()
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
	git := session.Machine(p.Cfg).Git
	if _, err := build.Update(p.Cfg.BuildDir, git.Commit, git.Dirty, p.Toolchains, res); err != nil {
		return res, err
	}
	if err := results.WriteJSON(p.Cfg.BuildDir, session.BuildInfoFile, session.BuildInfo{Vocabulary: layout.VocabularyOf(p.Kernels, p.Strategies), Templates: p.templateHashes()}); err != nil {
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

// Report turns a results folder (the newest under results/ when dir is "")
// into figures, claims and an HTML page. It needs only the folder; an old
// folder whose run.json names no vocabulary takes the project's.
func Report(cfg Config, dir string) error {
	cfg.Defaults()
	if dir == "" {
		latest, err := results.Latest(layout.Path(cfg.Root, layout.Results))
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
	opt := report.Options{SpecDir: layout.Path(cfg.Root, layout.ReportSpecs), Progress: cfg.Log,
		ResultsLog: layout.Path(cfg.Root, layout.ResultsLog)}
	// The specs are the source tree's: they may name what the folder's
	// vocabulary does not (a kernel added since), which the tree's covers.
	v, verr := layout.LoadVocabulary(cfg.Root)
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

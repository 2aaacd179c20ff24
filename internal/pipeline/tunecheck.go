package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// truthSeeds are the seeds each seeded search is replayed with.
const truthSeeds = 50

// TuneCheck replays every search against the ground truth in folder (a
// tuning that measured whole spaces, scripts/tune-truth.sh) and writes
// the curves into it (tune.CheckReport, tune.CheckFile); with no folder
// it is the dry run: the ground truth's cells (tune.TruthCells), their
// spaces and GPU seconds, and those of a matrix tuning (the targets of
// tune.MatrixFolder) under PM_TUNE (default pruned) within PM_TUNE_EVALS
// (default tune.DefaultEvals), from tune.TimingFolders' records, set
// beside the time tune.TruthFolder's run.json measured (docs/tuning.md).
func TuneCheck(_ context.Context, cfg Config, folder string) error {
	cfg.Defaults()
	tree, err := tune.LoadTree(cfg.Root)
	if err != nil {
		return err
	}
	models, err := machine.Load(filepath.Join(cfg.Root, machine.Dir))
	if err != nil {
		return err
	}
	src := tune.TruthSource{Tree: tree, Models: models}
	if folder == "" {
		return truthPlan(cfg, src)
	}
	truths, err := src.Truths(folder)
	if err != nil {
		return err
	}
	var curves [][]tune.Curve
	for _, tr := range truths {
		fmt.Fprintf(cfg.Log, "tunecheck: %s size %d: %d measured, %d feasible\n", tr.Target.Cell, tr.Target.Size, len(tr.Measured), tr.Feasible)
		c, err := tune.Replay(tr, tune.ReplayStrategies, tune.Budgets(tr.Feasible+1), truthSeeds)
		if err != nil {
			return err
		}
		curves = append(curves, c)
	}
	var md, csv bytes.Buffer
	fmt.Fprintf(&md, "# Searches against the ground truth\n\nThe fraction of the optimum (its median over the best found's) at each budget: the median over %d seeds [2.5th, 97.5th percentiles]; `tunecheck` replays each search from the measurements of this folder (docs/tuning.md).\n\n```\n", truthSeeds)
	if err := tune.WriteCheck(&md, truths, curves); err != nil {
		return err
	}
	md.WriteString("```\n")
	if err := tune.CheckCSV(&csv, truths, curves); err != nil {
		return err
	}
	if err := fsutil.WriteFile(filepath.Join(folder, tune.CheckReport), md.Bytes(), 0o644); err != nil {
		return err
	}
	if err := fsutil.WriteFile(filepath.Join(folder, tune.CheckFile), csv.Bytes(), 0o644); err != nil {
		return err
	}
	_, err = cfg.Log.Write(md.Bytes())
	return err
}

// truthPlan prints the dry run.
func truthPlan(cfg Config, src tune.TruthSource) error {
	model, _ := src.Models.ByReported("NVIDIA H200") // the device the timings were measured on
	var dirs []string
	for _, d := range tune.TimingFolders {
		dirs = append(dirs, layout.Path(cfg.Root, d))
	}
	costs, err := tune.ReadCostsIn(dirs)
	if err != nil {
		return fmt.Errorf("tunecheck: the timings: %w", err)
	}
	fmt.Fprintf(cfg.Log, "Ground truth (scripts/tune-truth.sh): every feasible configuration measured, 64 a process, on an %s (the records of %s; the occupancy model's admitted count with no kernel's registers known)\n", model.Name, strings.Join(tune.TimingFolders, " and "))
	truthS, err := tune.WritePlan(cfg.Log, src.PlanTruth(tune.TruthCells, model, costs, 64))
	if err != nil {
		return err
	}
	// The ground truth measured: its run.json times it, under the protocol
	// of its day (its log's process lines say whether that was the
	// current one).
	if run, err := results.ReadRun(layout.Path(cfg.Root, tune.TruthFolder)); err == nil {
		t0, err0 := time.Parse(time.RFC3339, run.Started)
		t1, err1 := time.Parse(time.RFC3339, run.Finished)
		if err0 == nil && err1 == nil && t1.After(t0) && truthS > 0 {
			fmt.Fprintf(cfg.Log, "%s measured it in %.0f s (run.json, started to finished) under the tuning protocol of %s\n", tune.TruthFolder, t1.Sub(t0).Seconds(), run.Started[:10])
		}
	}
	strategy := tune.Strategy(cfg.TuneStrategy)
	if strategy == "" {
		strategy = tune.Pruned // the tune stage's search on a modelled GPU
	}
	evals := cfg.TuneEvals
	if evals == 0 {
		evals = tune.DefaultEvals // tune-matrix.sh's
	}
	targets, err := tune.MatrixTargets(layout.Path(cfg.Root, tune.MatrixFolder))
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Log, "\nA matrix tuning (the %d targets of %s) under %s within %d configurations (beyond the budget: %s; guided %d a round, else 64 a process):\n",
		len(targets), tune.MatrixFolder, strategy, evals, tune.BeyondBudget, tune.GuidedRound)
	total, err := tune.WritePlan(cfg.Log, src.PlanMatrix(targets, model, costs, strategy, evals, 64))
	if err == nil {
		fmt.Fprintf(cfg.Log, "on 1 GPU: about %.1f minutes; on 2 GPUs: about %.1f\n", total/60, total/120)
	}
	return err
}

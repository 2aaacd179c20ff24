package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// TunePlan is a tuning campaign's cluster/tune.json: how many shards its
// targets are split into, fixed by its first submission so that a shard
// always gets the same targets (tune.Shard) and finds its own cache.
type TunePlan struct {
	Shards  int `json:"shards"`
	Targets int `json:"targets"` // (cell, size) targets of the selection when planned
}

// TuneShardDir is shard k's results folder in a Slurm tuning: <dir>/shards/task<k>.
func TuneShardDir(dir string, k int) string {
	return filepath.Join(dir, "shards", fmt.Sprintf("task%d", k))
}

func (c Campaign) tunePlanFile() string { return c.path("tune.json") }

// IsTuning reports whether dir is a tuning campaign (a Slurm tuning's folder).
func IsTuning(dir string) bool {
	_, err := os.Stat(Campaign{Dir: dir}.tunePlanFile())
	return err == nil
}

func (c Campaign) tunePlan() (TunePlan, error) {
	var p TunePlan
	b, err := os.ReadFile(c.tunePlanFile())
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Shards < 1 {
		return p, fmt.Errorf("%s: not a tuning plan (%v)", c.tunePlanFile(), err)
	}
	return p, nil
}

// MissingShards are the shards of a tuning not finished: no run.json, or
// one that is not "finished" (a task cancelled, killed, failed, or cut by
// PM_TUNE_SECONDS: session.Tune marks that interrupted).
func (c Campaign) MissingShards(p TunePlan) []int {
	var out []int
	for k := 0; k < p.Shards; k++ {
		r, err := results.ReadRun(TuneShardDir(c.Dir, k))
		if err != nil || r.Status() != results.StateFinished {
			out = append(out, k)
		}
	}
	return out
}

// SubmitTune hands the tune stage to Slurm as one job array: task k of n
// tunes shard k/n (PM_TUNE_SHARD from SLURM_ARRAY_TASK_ID, tune.Shard) into
// <out>/shards/task<k>, with its own cache. n is the cluster file's tasks,
// at most the targets, fixed by the first submission (cluster/tune.json).
// Run again, it submits the shards not finished, under their own indices:
// each finds its cache, so what a cut task measured on that GPU is not
// measured again. collect joins the shards (JoinTuning).
func SubmitTune(ctx context.Context, cfg config.Config, cc *Config, self string) (Submission, error) {
	cfg.Defaults()
	if cfg.Out == "" {
		var err error
		if cfg.Out, err = NewDir(cfg.Root, "slurm-tune"); err != nil {
			return Submission{}, err
		}
	}
	dir, err := filepath.Abs(cfg.Out)
	if err != nil {
		return Submission{}, err
	}
	c := Campaign{Dir: dir}
	cfg.Out = dir
	if cc.GPUsPerTask > 0 {
		cfg.GPU = "1" // the tasks' nodes have the GPUs, not this one
	}
	plan, err := c.tunePlan()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		n, err := session.TuneTargets(cfg)
		if err != nil {
			return Submission{}, err
		}
		if n == 0 {
			return Submission{}, errors.New("tune: no built cell of the selection to tune (GPU cells need gpus_per_task in the cluster file)")
		}
		plan = TunePlan{Shards: min(max(cc.Tasks, 1), n), Targets: n}
		b, _ := json.MarshalIndent(plan, "", "  ")
		if err := fsutil.WriteFile(c.tunePlanFile(), append(b, '\n'), 0o644); err != nil {
			return Submission{}, err
		}
	case err != nil:
		return Submission{}, err
	default:
		fmt.Fprintf(cfg.Log, "plan: %s (kept: %d shards)\n", c.tunePlanFile(), plan.Shards)
	}
	if err := c.refuseActive(ctx); err != nil {
		return Submission{}, err
	}
	missing := c.MissingShards(plan)
	if len(missing) == 0 {
		fmt.Fprintf(cfg.Log, "slurm: all %d shards of %s are tuned; nothing to submit (join: portmatrix -out %s collect)\n", plan.Shards, c.Dir, c.Dir)
		return Submission{}, nil
	}
	subs, err := c.Submissions()
	if err != nil {
		return Submission{}, err
	}
	n := len(subs) + 1
	bin, err := Binary(ctx, cfg, cc, self)
	if err != nil {
		return Submission{}, err
	}
	args, err := workerArgs(cfg, cfg.GPU == "1")
	if err != nil {
		return Submission{}, err
	}
	var ids []string
	for _, k := range missing {
		ids = append(ids, strconv.Itoa(k))
	}
	tail := []string{"-tune-shard", `"$SLURM_ARRAY_TASK_ID"/` + strconv.Itoa(plan.Shards),
		"-out", shellQuote(filepath.Join(dir, "shards")) + `/task"$SLURM_ARRAY_TASK_ID"`, "tune"}
	s, err := c.sbatch(ctx, jobScript(cc, c, n, strings.Join(ids, ","), bin, args, tail, Need{}),
		Submission{N: n, Scheduler: "slurm", Stage: "tune", Tasks: len(missing), TaskIDs: missing, Items: len(missing)})
	if err != nil {
		return s, err
	}
	fmt.Fprintf(cfg.Log, "slurm: submitted tuning job array %s: shards %s of %d (script %s)\n", s.JobID, strings.Join(ids, ","), plan.Shards, s.Script)
	c.printWatch(cfg.Log, s.JobID)
	return s, nil
}

// TuneSummary is what collect says of a tuning campaign.
type TuneSummary struct {
	Shards      int     `json:"shards"`
	Missing     []int   `json:"missing_shards"` // not finished: submit again
	Evaluations int     `json:"evaluations"`    // in the joined tuning.jsonl
	Slurm       *Status `json:"slurm,omitempty"`
}

// PrintTuneStatus writes a tuning campaign's progress: its submissions' tasks
// by state, each task that did not complete, and the shards not finished.
func (c Campaign) PrintTuneStatus(ctx context.Context, w io.Writer) (TuneSummary, error) {
	p, err := c.tunePlan()
	if err != nil {
		return TuneSummary{}, err
	}
	st, err := c.SlurmStatus(ctx)
	if err != nil {
		return TuneSummary{}, err
	}
	subs, _ := c.Submissions()
	for _, s := range subs {
		m := map[string]int{}
		for _, t := range st.Tasks {
			if t.JobID == s.JobID {
				m[t.State]++
			}
		}
		var parts []string
		for _, k := range []string{"PENDING", "RUNNING", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "UNKNOWN"} {
			if m[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
				delete(m, k)
			}
		}
		for k, v := range m {
			parts = append(parts, fmt.Sprintf("%d %s", v, k))
		}
		fmt.Fprintf(w, "submission %d: tuning job array %s, shards %v: %s\n", s.N, s.JobID, s.taskIDs(), strings.Join(parts, ", "))
	}
	for _, t := range st.Failed() {
		fmt.Fprintf(w, "  task %s_%d %s exit %s node %s: log %s\n", t.JobID, t.Task, t.State, t.ExitCode, t.Node, t.Log)
	}
	missing := c.MissingShards(p)
	fmt.Fprintf(w, "shards: %d planned (%d targets), %d tuned, %d not finished %v\n", p.Shards, p.Targets, p.Shards-len(missing), len(missing), missing)
	return TuneSummary{Shards: p.Shards, Missing: missing, Slurm: &st}, nil
}

// CollectTune joins a tuning campaign's shards into dir/tuning.jsonl and
// dir/tuning.md (JoinTuning) at any time, after printing its status; a
// later collect joins again. It writes dir/cluster.json.
func CollectTune(ctx context.Context, dir string, log io.Writer) (*TuneSummary, error) {
	c := Campaign{Dir: dir}
	sum, err := c.PrintTuneStatus(ctx, log)
	if err != nil {
		return nil, err
	}
	if sum.Evaluations, err = JoinTuning(dir); err != nil {
		return &sum, err
	}
	fmt.Fprintf(log, "collect: %d evaluations of %d shards in %s (run it: -tuned %s)\n", sum.Evaluations, sum.Shards,
		tune.CachePath(dir), dir)
	if len(sum.Missing) > 0 {
		fmt.Fprintf(log, "collect: shards %v not finished: submit the same tune again (-out %s)\n", sum.Missing, dir)
	}
	b, _ := json.MarshalIndent(sum, "", "  ")
	return &sum, fsutil.WriteFile(filepath.Join(dir, results.CampaignFile), append(b, '\n'), 0o644)
}

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/work"
)

// A campaign is a results folder measured by several workers. Its cluster/
// folder holds what the scheduler needs:
//
//	cluster/plan/            the plan: a results folder with build.csv, run.json and work.json (every item)
//	cluster/submissions.json the submissions (Slurm job ids, or GPU runs), in order
//	cluster/<n>/             submission n: job.sh and work/<task>.json (Slurm), or queue/ (GPUs)
//	cluster/shards/<id>/     one results folder per worker (<jobid>_<task>, or gpu<i>-<n>)
//	cluster/logs/            the workers' output (<jobid>_<task>.out, gpu<i>-<n>.log)
//
// collect merges the shards into the campaign folder itself (results.jsonl,
// run.json, ...) and writes cluster.json (states, missing items, GPU agreement).
type Campaign struct{ Dir string }

// Submission is one sbatch (or one GPU run) of a campaign.
type Submission struct {
	N         int    `json:"n"`
	Scheduler string `json:"scheduler"`        // slurm or gpus
	JobID     string `json:"job_id,omitempty"` // slurm: the array's job id
	Tasks     int    `json:"tasks"`            // array tasks, or GPU workers
	// TaskIDs are the array's indices where they are not 0..Tasks-1 (a
	// tuning's re-submission: the shards still missing).
	TaskIDs   []int  `json:"task_ids,omitempty"`
	Stage     string `json:"stage,omitempty"` // "tune" for a tuning; "" the run stage
	Items     int    `json:"items"`
	Submitted string `json:"submitted"`
	Script    string `json:"script,omitempty"`
}

// taskIDs are the submission's array indices.
func (s Submission) taskIDs() []int {
	if len(s.TaskIDs) > 0 {
		return s.TaskIDs
	}
	ids := make([]int, s.Tasks)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

func (c Campaign) path(p ...string) string {
	return filepath.Join(append([]string{c.Dir, "cluster"}, p...)...)
}

// PlanFile lists every work item of the campaign.
func (c Campaign) PlanFile() string { return c.path("plan", "work.json") }

// ShardDir is the results folder of one worker.
func (c Campaign) ShardDir(id string) string { return c.path("shards", id) }

// Plan runs the run stage in plan mode (the same selection as a local run)
// into cluster/plan once, and returns the campaign's items.
func (c Campaign) Plan(ctx context.Context, cfg config.Config) ([]work.Item, error) {
	if _, err := os.Stat(c.PlanFile()); err == nil {
		fmt.Fprintf(cfg.Log, "plan: %s (kept: a campaign keeps its first plan)\n", c.PlanFile())
		return work.ReadItems(c.PlanFile())
	}
	pc := cfg
	pc.Out, pc.Work = c.path("plan"), "plan:"+c.PlanFile()
	if _, err := session.Run(ctx, pc); err != nil {
		return nil, err
	}
	return work.ReadItems(c.PlanFile())
}

// Submissions reads cluster/submissions.json.
func (c Campaign) Submissions() ([]Submission, error) {
	var subs []Submission
	b, err := os.ReadFile(c.path("submissions.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return subs, json.Unmarshal(b, &subs)
}

func (c Campaign) addSubmission(s Submission) error {
	subs, err := c.Submissions()
	if err != nil {
		return err
	}
	subs = append(subs, s)
	b, _ := json.MarshalIndent(subs, "", "  ")
	return fsutil.WriteFile(c.path("submissions.json"), append(b, '\n'), 0o644)
}

// Shards lists the workers' folders in the order they were made: by
// submission (Slurm job id, or the GPU run's number), then task or GPU.
func (c Campaign) Shards() ([]string, error) {
	entries, err := os.ReadDir(c.path("shards"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := shardOrder(ids[i]), shardOrder(ids[j])
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return ids[i] < ids[j]
	})
	return ids, nil
}

// shardOrder reads <jobid>_<task> or gpu<i>-<n> as (submission, worker).
func shardOrder(id string) [2]int {
	if a, b, ok := strings.Cut(id, "_"); ok {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return [2]int{x, y}
	}
	if g, n, ok := strings.Cut(strings.TrimPrefix(id, "gpu"), "-"); ok {
		x, _ := strconv.Atoi(n)
		y, _ := strconv.Atoi(g)
		return [2]int{x, y}
	}
	return [2]int{}
}

// Done maps each finished item to the shard that finished it (the last one
// when two did).
func (c Campaign) Done() (map[string]string, error) {
	ids, err := c.Shards()
	if err != nil {
		return nil, err
	}
	done := map[string]string{}
	for _, id := range ids {
		items, err := work.Done(c.ShardDir(id))
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			done[it.Key()] = id
		}
	}
	return done, nil
}

// Missing is the plan less what some shard finished.
func Missing(plan []work.Item, done map[string]string) []work.Item {
	var out []work.Item
	for _, it := range plan {
		if _, ok := done[it.Key()]; !ok {
			out = append(out, it)
		}
	}
	return out
}

// Chunks splits items into at most n contiguous chunks of nearly equal size
// (a cell's sizes stay together as far as the split allows).
func Chunks(items []work.Item, n int) [][]work.Item {
	if n < 1 {
		n = 1
	}
	if n > len(items) {
		n = len(items)
	}
	var out [][]work.Item
	for i := 0; i < n; i++ {
		out = append(out, items[i*len(items)/n:(i+1)*len(items)/n])
	}
	return out
}

// NewDir makes a fresh campaign folder when -out is not given.
func NewDir(root, suffix string) (string, error) {
	host, _ := os.Hostname()
	return results.NewFolder(filepath.Join(root, results.RunsDir), time.Now(), host, suffix)
}

// Binary returns the portmatrix CLI that workers run: the cluster file's
// choice, else self (the running CLI), else one built now with Go into the
// build folder (the magefile has no CLI of its own).
func Binary(ctx context.Context, cfg config.Config, cc *Config, self string) (string, error) {
	if cc != nil && cc.Portmatrix != "" {
		return filepath.Abs(cc.Portmatrix)
	}
	if self != "" {
		return self, nil
	}
	out, err := filepath.Abs(filepath.Join(cfg.BuildDir, "portmatrix"))
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/portmatrix")
	cmd.Dir = cfg.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/portmatrix: %v\n%s", err, b)
	}
	return out, nil
}

// workerArgs are the CLI arguments of one worker, before -work and -out:
// every knob of cfg that is set and not the scheduler's (config.Knobs), with
// the root and build folder absolute.
func workerArgs(cfg config.Config, gpu bool) ([]string, error) {
	var err error
	if cfg.Root, err = filepath.Abs(cfg.Root); err != nil {
		return nil, err
	}
	if cfg.BuildDir, err = filepath.Abs(cfg.BuildDir); err != nil {
		return nil, err
	}
	// -scheduler= : a worker inherits PM_SCHEDULER from its submitter, and must not submit.
	args := append([]string{"-scheduler="}, cfg.WorkerArgs()...)
	if gpu {
		args = append(args, "-gpu")
	}
	return args, nil
}

func hasGPUItems(items []work.Item) bool {
	for _, it := range items {
		if it.Target != "" && it.Target != "host" {
			return true
		}
	}
	return false
}

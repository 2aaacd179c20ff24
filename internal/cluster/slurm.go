package cluster

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/work"
)

// Submit plans the campaign (once), and submits what is still missing as one
// Slurm job array: each task measures one chunk into its own shard. A
// campaign with tasks still pending or running is not submitted again.
func Submit(ctx context.Context, cfg config.Config, cc *Config, self string) (Submission, error) {
	cfg.Defaults()
	c := Campaign{Dir: cfg.Out}
	if c.Dir == "" {
		var err error
		if c.Dir, err = NewDir(cfg.Root, "slurm"); err != nil {
			return Submission{}, err
		}
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return Submission{}, err
	}
	c.Dir, cfg.Out = dir, dir
	pc := cfg
	if cc.GPUsPerTask > 0 {
		pc.GPU = "1" // the tasks' nodes have the GPUs, not this one
	}
	plan, err := c.Plan(ctx, pc)
	if err != nil {
		return Submission{}, err
	}
	if err := c.refuseActive(ctx); err != nil {
		return Submission{}, err
	}
	done, err := c.Done()
	if err != nil {
		return Submission{}, err
	}
	missing := Missing(plan, done)
	if len(missing) == 0 {
		fmt.Fprintf(cfg.Log, "slurm: all %d items of %s are measured; nothing to submit (collect: portmatrix -out %s collect)\n", len(plan), c.Dir, c.Dir)
		return Submission{}, nil
	}
	subs, err := c.Submissions()
	if err != nil {
		return Submission{}, err
	}
	n := len(subs) + 1
	sub := fmt.Sprint(n)
	chunks := Chunks(missing, cc.Tasks)
	for i, ch := range chunks {
		if err := work.WriteItems(c.path(sub, "work", fmt.Sprintf("%d.json", i)), ch); err != nil {
			return Submission{}, err
		}
	}
	bin, err := Binary(ctx, cfg, cc, self)
	if err != nil {
		return Submission{}, err
	}
	args, err := workerArgs(cfg, pc.GPU == "1" && hasGPUItems(missing))
	if err != nil {
		return Submission{}, err
	}
	need, err := needOf(cfg, cc, c, missing)
	if err != nil {
		return Submission{}, err
	}
	s, err := c.sbatch(ctx, JobScript(cc, c, n, len(chunks), bin, args, need),
		Submission{N: n, Scheduler: "slurm", Tasks: len(chunks), Items: len(missing)})
	if err != nil {
		return s, err
	}
	fmt.Fprintf(cfg.Log, "slurm: submitted job array %s: %d tasks, %d of %d items (script %s)\n", s.JobID, len(chunks), len(missing), len(plan), s.Script)
	c.printWatch(cfg.Log, s.JobID)
	return s, nil
}

// refuseActive refuses a submission while tasks of the campaign are still
// pending or running.
func (c Campaign) refuseActive(ctx context.Context) error {
	st, err := c.SlurmStatus(ctx)
	if err != nil {
		return err
	}
	if active := st.Active(); len(active) > 0 {
		return fmt.Errorf("%s: %d tasks are still pending or running (%s): wait (portmatrix -out %s status), or scancel them",
			c.Dir, len(active), strings.Join(active, " "), c.Dir)
	}
	return nil
}

// sbatch writes submission s's job script into cluster/<n>/job.sh, submits
// it and records the submission with its job id, time and script.
func (c Campaign) sbatch(ctx context.Context, script string, s Submission) (Submission, error) {
	file := c.path(fmt.Sprint(s.N), "job.sh")
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return Submission{}, err
	}
	if err := fsutil.WriteFile(file, []byte(script), 0o755); err != nil {
		return Submission{}, err
	}
	out, err := exec.CommandContext(ctx, "sbatch", "--parsable", file).Output()
	if err != nil {
		return Submission{}, fmt.Errorf("sbatch %s: %s", file, cmdErr(err))
	}
	s.JobID, _, _ = strings.Cut(strings.TrimSpace(string(out)), ";") // "123" or "123;cluster"
	s.Submitted, s.Script = time.Now().UTC().Format(time.RFC3339), file
	return s, c.addSubmission(s)
}

// printWatch tells how to follow a submitted array and collect it.
func (c Campaign) printWatch(w io.Writer, jid string) {
	fmt.Fprintf(w, "  watch: squeue -r -j %s; portmatrix -out %s status\n  then:  portmatrix -out %s collect\n", jid, c.Dir, c.Dir)
}

// JobScript is the sbatch script of submission n: one array task per chunk,
// each running `portmatrix run` over cluster/<n>/work/<task>.json into
// cluster/shards/<jobid>_<task>. The job is named after the campaign; the
// host programs' threads come from the allocation (or need's knob), and
// memory from need where the cluster file asks none.
func JobScript(cc *Config, c Campaign, n, tasks int, bin string, args []string, need Need) string {
	tail := []string{"-work", shellQuote(c.path(fmt.Sprint(n), "work")) + `/"$SLURM_ARRAY_TASK_ID".json`,
		"-out", shellQuote(c.path("shards")) + `/"$SLURM_ARRAY_JOB_ID"_"$SLURM_ARRAY_TASK_ID"`, "run"}
	return jobScript(cc, c, n, fmt.Sprintf("0-%d", tasks-1), bin, args, tail, need)
}

// jobScript is the sbatch script of submission n over the array indices
// (a Slurm --array list), each task running bin with args and tail (tail is
// shell text: it may read the task's variables).
func jobScript(cc *Config, c Campaign, n int, array, bin string, args, tail []string, need Need) string {
	var b strings.Builder
	opt := func(f string, a ...any) { fmt.Fprintf(&b, "#SBATCH "+f+"\n", a...) }
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "# portmatrix submission %d of %s: written by portmatrix, see docs/cluster.md.\n", n, c.Dir)
	opt("--job-name=%s", JobName(c, n))
	arr := array
	if cc.MaxRunning > 0 {
		arr += fmt.Sprintf("%%%d", cc.MaxRunning)
	}
	opt("--array=%s", arr)
	opt("--output=%s", c.path("logs", "%A_%a.out"))
	opt("--ntasks=1")
	opt("--cpus-per-task=%d", cc.CPUsPerTask)
	if cc.Partition != "" {
		opt("--partition=%s", cc.Partition)
	}
	if cc.Account != "" {
		opt("--account=%s", cc.Account)
	}
	if cc.QOS != "" {
		opt("--qos=%s", cc.QOS)
	}
	if cc.Time != "" {
		opt("--time=%s", cc.Time)
	}
	if cc.GPUsPerTask > 0 {
		opt("--gpus-per-task=%d", cc.GPUsPerTask)
	}
	switch {
	case cc.Mem != "":
		opt("--mem=%s", cc.Mem)
	case need.MemMiB > 0:
		opt("--mem=%dM", need.MemMiB) // estimated: docs/cluster.md
	}
	if cc.Exclusive {
		opt("--exclusive")
	}
	for _, s := range cc.Sbatch {
		opt("%s", s)
	}
	b.WriteString("set -euo pipefail\n")
	b.WriteString("# Host programs' OpenMP threads: the allocation's CPUs unless PM_THREADS; bound (docs/cpu.md).\n")
	b.WriteString(hostEnv(need) + "\n")
	for _, m := range cc.Modules {
		fmt.Fprintf(&b, "module load %s\n", m)
	}
	keys := make([]string, 0, len(cc.Env))
	for k := range cc.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(cc.Env[k]))
	}
	for _, s := range cc.Setup {
		b.WriteString(s + "\n")
	}
	var cmd []string
	cmd = append(cmd, shellQuote(bin))
	for _, a := range args {
		cmd = append(cmd, shellQuote(a))
	}
	cmd = append(cmd, tail...)
	b.WriteString("exec " + strings.Join(cmd, " ") + "\n")
	return b.String()
}

// JobName names submission n's jobs after the campaign folder, so that
// squeue tells campaigns apart: portmatrix-<campaign>-<n>.
func JobName(c Campaign, n int) string {
	name := []rune(filepath.Base(c.Dir))
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			name[i] = '-'
		}
	}
	return fmt.Sprintf("portmatrix-%s-%d", string(name), n)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Task is one array task as Slurm reports it.
type Task struct {
	JobID    string `json:"job_id"`
	Task     int    `json:"task"`
	State    string `json:"state"` // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... or UNKNOWN
	ExitCode string `json:"exit_code,omitempty"`
	Node     string `json:"node,omitempty"`
	Elapsed  string `json:"elapsed,omitempty"`
	Log      string `json:"log"`
}

// Status is what Slurm says about every task of every submission.
type Status struct {
	Tasks  []Task   `json:"tasks"`
	Source []string `json:"source"` // which commands answered (sacct, squeue)
}

var activeStates = map[string]bool{"PENDING": true, "RUNNING": true, "CONFIGURING": true, "COMPLETING": true,
	"REQUEUED": true, "RESIZING": true, "SUSPENDED": true, "REQUEUE_HOLD": true, "REQUEUE_FED": true}

// Active lists the tasks still pending or running, as <jobid>_<task>.
func (s Status) Active() []string {
	var out []string
	for _, t := range s.Tasks {
		if activeStates[t.State] {
			out = append(out, fmt.Sprintf("%s_%d", t.JobID, t.Task))
		}
	}
	return out
}

// Failed lists the tasks that ended in any state but COMPLETED.
func (s Status) Failed() []Task {
	var out []Task
	for _, t := range s.Tasks {
		if t.State != "COMPLETED" && !activeStates[t.State] {
			out = append(out, t)
		}
	}
	return out
}

// Counts counts the tasks by state.
func (s Status) Counts() map[string]int {
	m := map[string]int{}
	for _, t := range s.Tasks {
		m[t.State]++
	}
	return m
}

// SlurmStatus asks sacct (the accounting database: history) and squeue (the
// controller: the present, and finished tasks for MinJobAge) about every
// task of every Slurm submission; squeue's answer wins where both answer.
// A task neither knows (a pending task cancelled alone vanishes) is UNKNOWN.
func (c Campaign) SlurmStatus(ctx context.Context) (Status, error) {
	subs, err := c.Submissions()
	if err != nil {
		return Status{}, err
	}
	var st Status
	used := map[string]bool{}
	for _, s := range subs {
		if s.Scheduler != "slurm" {
			continue
		}
		states := map[int]Task{}
		// With -j, sacct looks back to the epoch: a job id reused by another
		// cluster instance (or after wrapping) must not answer for ours.
		since := "now-30days"
		if ts, err := time.Parse(time.RFC3339, s.Submitted); err == nil {
			since = ts.Add(-time.Minute).Local().Format("2006-01-02T15:04:05")
		}
		if out, err := exec.CommandContext(ctx, "sacct", "-j", s.JobID, "-S", since, "-X", "-n", "-P",
			"-o", "JobID,State,ExitCode,NodeList,Elapsed").Output(); err == nil {
			used["sacct"] = true
			parseTasks(string(out), states)
		}
		if out, err := exec.CommandContext(ctx, "squeue", "-h", "-r", "-t", "all", "-j", s.JobID,
			"-o", "%i|%T|%N|%M").Output(); err == nil {
			used["squeue"] = true
			parseTasks(string(out), states)
		}
		for _, i := range s.taskIDs() {
			t, ok := states[i]
			if !ok {
				t = Task{State: "UNKNOWN"}
			}
			t.JobID, t.Task = s.JobID, i
			t.Log = c.path("logs", fmt.Sprintf("%s_%d.out", s.JobID, i))
			st.Tasks = append(st.Tasks, t)
		}
	}
	for _, k := range []string{"sacct", "squeue"} {
		if used[k] {
			st.Source = append(st.Source, k)
		}
	}
	return st, nil
}

// parseTasks reads sacct -P (JobID|State|ExitCode|NodeList|Elapsed) or our
// squeue format (JobID|State|NodeList|Time) lines of array tasks: 12_3, or
// 12_[4-6,9%2] for tasks not started yet.
func parseTasks(out string, into map[int]Task) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) < 4 {
			continue
		}
		id := f[0]
		_, tasks, ok := strings.Cut(id, "_")
		if !ok {
			continue
		}
		t := Task{State: strings.Fields(f[1] + " ")[0]} // "CANCELLED by 0" -> CANCELLED
		if strings.HasSuffix(t.State, "+") {
			t.State = strings.TrimSuffix(t.State, "+")
		}
		if len(f) == 5 { // sacct
			t.ExitCode, t.Node, t.Elapsed = f[2], f[3], f[4]
		} else {
			t.Node, t.Elapsed = f[2], f[3]
		}
		if t.Node == "None assigned" || strings.HasPrefix(t.Node, "(") {
			t.Node = ""
		}
		for _, i := range taskRange(tasks) {
			old, had := into[i]
			if had && t.ExitCode == "" {
				t.ExitCode = old.ExitCode
			}
			into[i] = t
		}
	}
}

// taskRange expands "3", "[4-6,9]" or "[0-7%2]".
func taskRange(s string) []int {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	s, _, _ = strings.Cut(s, "%")
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			continue
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil {
				continue
			}
		}
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
	}
	return out
}

// PrintStatus writes the campaign's progress: tasks by state, each task that
// did not complete with its state and log, and the items measured.
func (c Campaign) PrintStatus(ctx context.Context, w io.Writer) (Status, error) {
	if IsTuning(c.Dir) {
		sum, err := c.PrintTuneStatus(ctx, w)
		if sum.Slurm == nil {
			return Status{}, err
		}
		return *sum.Slurm, err
	}
	st, err := c.SlurmStatus(ctx)
	if err != nil {
		return st, err
	}
	subs, _ := c.Submissions()
	for _, s := range subs {
		if s.Scheduler != "slurm" {
			fmt.Fprintf(w, "submission %d (%s): %d workers, %d items\n", s.N, s.Scheduler, s.Tasks, s.Items)
			continue
		}
		m := map[string]int{}
		for _, t := range st.Tasks {
			if t.JobID == s.JobID {
				m[t.State]++
			}
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
		}
		fmt.Fprintf(w, "submission %d: job array %s, %d tasks, %d items: %s\n", s.N, s.JobID, s.Tasks, s.Items, strings.Join(parts, ", "))
	}
	for _, t := range st.Failed() {
		fmt.Fprintf(w, "  task %s_%d %s exit %s node %s: log %s\n", t.JobID, t.Task, t.State, t.ExitCode, t.Node, t.Log)
	}
	if len(st.Source) == 0 && len(st.Tasks) > 0 {
		fmt.Fprintln(w, "  (neither sacct nor squeue answered: states unknown)")
	}
	plan, err := work.ReadItems(c.PlanFile())
	if err != nil {
		return st, err
	}
	done, err := c.Done()
	if err != nil {
		return st, err
	}
	missing := Missing(plan, done)
	fmt.Fprintf(w, "items: %d planned, %d measured, %d missing\n", len(plan), len(plan)-len(missing), len(missing))
	return st, nil
}

func cmdErr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return err.Error()
}

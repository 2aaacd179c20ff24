// Package work lets one run stage measure a chosen part of the matrix: the
// (cell, size) work items of a file (a Slurm array task's chunk), or items
// claimed one at a time from a queue folder that several workers share (one
// worker per GPU). It also plans: it lists the items a run would measure
// instead of measuring them. A worker writes shard.json (who measured: Slurm
// job and task, node, GPU UUID) and done.jsonl (each item finished, so a
// re-submission knows what is missing) into its results folder.
//
// The run stage calls Run with the -work argument (PM_WORK):
//
//	""            every job (no work selection)
//	plan:<file>   write the items to <file>, measure nothing
//	<file>.json   measure the items listed in <file>
//	<folder>      claim items from the queue <folder>/todo until it is empty
package work

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
)

// Item is one unit of work: a cell at one size in one trial.
type Item struct {
	Cell   string `json:"cell"`
	Size   int64  `json:"size"`
	Trial  int    `json:"trial,omitempty"`  // from 1; 0 (older plans) is trial 1
	Target string `json:"target,omitempty"` // host or a GPU target, from the manifest
	Tuned  bool   `json:"tuned,omitempty"`  // at the cell's tuned best (run -tuned), beside the as-published item
}

// Unit is the item's (cell, size, trial), as results.Finished names it.
func (i Item) Unit() results.Unit {
	return results.Unit{Cell: i.Cell, Size: i.Size, Trial: max(i.Trial, 1), Tuned: i.Tuned}
}

// Key identifies an item.
func (i Item) Key() string { return i.Unit().String() }

// ShardFile and DoneFile are what a worker adds to its results folder.
const (
	ShardFile = "shard.json"
	DoneFile  = "done.jsonl"
)

// Shard says who measured a results folder; collect copies it onto every record.
type Shard struct {
	Worker      string `json:"worker,omitempty"`        // PM_WORKER: gpu0, gpu1, ...
	SlurmJobID  string `json:"slurm_job_id,omitempty"`  // the array's job id
	SlurmTaskID string `json:"slurm_task_id,omitempty"` // the array task
	SlurmRawID  string `json:"slurm_raw_job_id,omitempty"`
	Node        string `json:"node"`
	GPUUUID     string `json:"gpu_uuid,omitempty"`
	GPUIndex    string `json:"gpu_index,omitempty"` // CUDA_VISIBLE_DEVICES as the worker saw it
	Work        string `json:"work"`
	Started     string `json:"started"`
}

// ReadItems reads a work file (a JSON list of items).
func ReadItems(file string) ([]Item, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var items []Item
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return items, nil
}

// WriteItems writes a work file.
func WriteItems(file string, items []Item) error {
	b, err := json.MarshalIndent(items, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(file, append(b, '\n'), 0o644)
}

// Items lists the work of jobs in the order a whole run measures it
// (run.Tasks: trial by trial).
func Items(jobs []run.Job, trials int) []Item {
	var items []Item
	for _, t := range run.Tasks(jobs, trials) {
		items = append(items, Item{Cell: t.Entry.ID, Size: t.Size, Trial: t.Trial, Target: t.Entry.Target, Tuned: t.Config != ""})
	}
	return items
}

// Run measures what spec selects of jobs into w (see the package comment).
func Run(ctx context.Context, spec string, jobs []run.Job, opt run.Options, w *results.Writer) error {
	if spec == "" {
		return run.Cells(ctx, jobs, opt, w)
	}
	if file, ok := strings.CutPrefix(spec, "plan:"); ok {
		items := Items(jobs, opt.Trials)
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "run: planned %d work items into %s\n", len(items), file)
		}
		return WriteItems(file, items)
	}
	var next func() (Item, bool, error)
	st, err := os.Stat(spec)
	if err != nil {
		return err
	}
	if st.IsDir() {
		q := Queue(spec)
		worker := os.Getenv(config.EnvWorker)
		if worker == "" {
			worker = filepath.Base(w.Dir)
		}
		next = func() (Item, bool, error) { return q.Claim(worker) }
	} else {
		items, err := ReadItems(spec)
		if err != nil {
			return err
		}
		next = func() (Item, bool, error) {
			if len(items) == 0 {
				return Item{}, false, nil
			}
			it := items[0]
			items = items[1:]
			return it, true, nil
		}
	}
	if err := results.WriteJSON(w.Dir, ShardFile, Here(spec)); err != nil {
		return err
	}
	byCell := map[string]run.Job{}
	for _, j := range jobs {
		byCell[j.Entry.ID] = j
	}
	// One copy-bandwidth measurement per toolchain and worker, as in a whole run.
	copied := map[string]bool{}
	var errs []string
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		it, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		j, found := byCell[it.Cell]
		if !found {
			errs = append(errs, fmt.Sprintf("%s: not runnable here (not built, or a GPU cell on a run without -gpu)", it.Key()))
			continue
		}
		o := opt
		if copied[j.Entry.Toolchain] {
			o.CopyBytes = nil
		}
		copied[j.Entry.Toolchain] = true
		task := run.Task{Entry: j.Entry, Size: it.Size, Trial: max(it.Trial, 1)}
		if it.Tuned {
			if task.Config = j.Tuned[it.Size]; task.Config == "" {
				errs = append(errs, fmt.Sprintf("%s: no tuned configuration here (run -tuned names the tuning folder)", it.Key()))
				continue
			}
		}
		if err := run.Run(ctx, []run.Task{task}, o, w); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err() // interrupted: the item is not done
		}
		if err := markDone(w.Dir, it); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func markDone(dir string, it Item) error {
	f, err := os.OpenFile(filepath.Join(dir, DoneFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(it)
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Done reads the items a results folder finished: those whose measurement
// results.jsonl holds (results.Finished, what PM_RESUME skips too), and
// those done.jsonl lists.
func Done(dir string) ([]Item, error) {
	listed, err := doneFile(dir)
	if err != nil {
		return nil, err
	}
	fin, err := results.Finished(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Item
	for _, it := range listed {
		seen[it.Key()] = true
		out = append(out, it)
	}
	var extra []results.Unit
	for u := range fin {
		if !seen[u.String()] {
			extra = append(extra, u)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].String() < extra[j].String() })
	for _, u := range extra {
		out = append(out, Item{Cell: u.Cell, Size: u.Size, Trial: u.Trial, Tuned: u.Tuned})
	}
	return out, nil
}

func doneFile(dir string) ([]Item, error) {
	f, err := os.Open(filepath.Join(dir, DoneFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Item
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var it Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			// The last line of a killed worker may be cut short: it did not finish.
			continue
		}
		out = append(out, it)
	}
	return out, sc.Err()
}

// ReadShard reads a results folder's shard.json.
func ReadShard(dir string) (Shard, error) {
	var s Shard
	b, err := os.ReadFile(filepath.Join(dir, ShardFile))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// Here describes this worker from its environment: Slurm's variables, the
// worker name and GPU given by the GPU scheduler (PM_WORKER, PM_GPU_UUID), or
// the GPU that CUDA_VISIBLE_DEVICES names, looked up with nvidia-smi.
func Here(spec string) Shard {
	node := os.Getenv("SLURMD_NODENAME")
	if node == "" {
		node, _ = os.Hostname()
	}
	s := Shard{Worker: os.Getenv(config.EnvWorker), SlurmJobID: os.Getenv("SLURM_ARRAY_JOB_ID"),
		SlurmTaskID: os.Getenv("SLURM_ARRAY_TASK_ID"), SlurmRawID: os.Getenv("SLURM_JOB_ID"), Node: node,
		GPUUUID: os.Getenv(config.EnvGPUUUID), GPUIndex: os.Getenv("CUDA_VISIBLE_DEVICES"), Work: spec,
		Started: time.Now().UTC().Format(time.RFC3339)}
	if s.GPUUUID == "" {
		s.GPUUUID = uuidOf(context.Background(), host.Exec, s.GPUIndex)
	}
	return s
}

// GPU is one GPU of this node as nvidia-smi lists it.
type GPU = host.SMI

// GPUs lists this node's GPUs with nvidia-smi (none when it is missing).
func GPUs() []GPU {
	list, _ := host.QuerySMI(context.Background(), host.Exec, "") // a line it cannot read is left out
	return list
}

// uuidOf maps CUDA_VISIBLE_DEVICES to a UUID when it names one GPU.
func uuidOf(ctx context.Context, run host.Runner, visible string) string {
	if visible == "" || strings.Contains(visible, ",") {
		return ""
	}
	if strings.HasPrefix(visible, "GPU-") {
		return visible
	}
	list, _ := host.QuerySMI(ctx, run, "")
	for _, g := range list {
		if g.Index == visible {
			return g.UUID
		}
	}
	return ""
}

// Queue is a folder of items that workers claim one at a time: todo/ holds
// one file per item; a worker claims an item by renaming its file into
// claimed/ (a rename succeeds for one worker only), so the work is handed out
// as workers become free.
type Queue string

// Fill writes items into the queue's todo/ in order.
func (q Queue) Fill(items []Item) error {
	for _, d := range []string{"todo", "claimed"} {
		if err := os.MkdirAll(filepath.Join(string(q), d), 0o755); err != nil {
			return err
		}
	}
	for i, it := range items {
		b, _ := json.Marshal(it)
		if err := fsutil.WriteFile(filepath.Join(string(q), "todo", fmt.Sprintf("%06d.json", i)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Claim takes the next item for worker; ok is false when none is left.
func (q Queue) Claim(worker string) (Item, bool, error) {
	for {
		entries, err := os.ReadDir(filepath.Join(string(q), "todo"))
		if err != nil {
			return Item{}, false, err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".json") {
				names = append(names, e.Name())
			}
		}
		if len(names) == 0 {
			return Item{}, false, nil
		}
		sort.Strings(names)
		for _, n := range names {
			dst := filepath.Join(string(q), "claimed", worker+"-"+n)
			if err := os.Rename(filepath.Join(string(q), "todo", n), dst); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // another worker was first
				}
				return Item{}, false, err
			}
			b, err := os.ReadFile(dst)
			if err != nil {
				return Item{}, false, err
			}
			var it Item
			if err := json.Unmarshal(b, &it); err != nil {
				return Item{}, false, fmt.Errorf("%s: %w", dst, err)
			}
			return it, true, nil
		}
	}
}

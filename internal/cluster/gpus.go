package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/work"
)

// RunGPUs measures the campaign's missing items on every GPU of this node:
// one worker process per GPU (CUDA_VISIBLE_DEVICES set to it, its UUID in
// PM_GPU_UUID), each claiming items from one shared queue as it becomes
// free. Before the queue, each worker measures the same agreement items (one
// per toolchain, the largest size of its first cell) so that collect can
// check that the GPUs agree. PM_GPUS=0,1 limits the GPUs used. It then
// collects the campaign.
func RunGPUs(ctx context.Context, cfg config.Config, cc *Config, self string) (*Summary, error) {
	cfg.Defaults()
	gpus := selectedGPUs(cfg)
	if len(gpus) == 0 {
		return nil, errors.New("gpus: nvidia-smi lists no GPU (or none of PM_GPUS)")
	}
	c := Campaign{Dir: cfg.Out}
	if c.Dir == "" {
		var err error
		if c.Dir, err = NewDir(cfg.Root, "gpus"); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, err
	}
	c.Dir, cfg.Out, cfg.GPU = dir, dir, "1"
	plan, err := c.Plan(ctx, cfg)
	if err != nil {
		return nil, err
	}
	done, err := c.Done()
	if err != nil {
		return nil, err
	}
	missing := Missing(plan, done)
	subs, err := c.Submissions()
	if err != nil {
		return nil, err
	}
	n := len(subs) + 1
	q := work.Queue(c.path(fmt.Sprint(n), "queue"))
	if err := q.Fill(missing); err != nil {
		return nil, err
	}
	agreeFile := ""
	if len(subs) == 0 && len(gpus) > 1 {
		agreeFile = c.path(fmt.Sprint(n), "agree.json")
		if err := work.WriteItems(agreeFile, AgreementItems(plan)); err != nil {
			return nil, err
		}
	}
	bin, err := Binary(ctx, cfg, cc, self)
	if err != nil {
		return nil, err
	}
	args, err := workerArgs(cfg, true)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return nil, err
	}
	if err := c.addSubmission(Submission{N: n, Scheduler: "gpus", Tasks: len(gpus), Items: len(missing),
		Submitted: time.Now().UTC().Format(time.RFC3339)}); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "gpus: %d workers (%s), %d of %d items, queue %s\n", len(gpus), gpuList(gpus), len(missing), len(plan), q)
	t0 := time.Now()
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for _, g := range gpus {
		wg.Add(1)
		go func(g work.GPU) {
			defer wg.Done()
			name := "gpu" + g.Index
			shard := c.ShardDir(fmt.Sprintf("%s-%d", name, n))
			env := append(os.Environ(), "CUDA_VISIBLE_DEVICES="+g.Index, config.EnvWorker+"="+name, config.EnvGPUUUID+"="+g.UUID)
			logFile := c.path("logs", fmt.Sprintf("%s-%d.log", name, n))
			var runs [][]string
			if agreeFile != "" {
				runs = append(runs, []string{"-work", agreeFile, "-out", filepath.Join(shard, "agree"), "run"})
			}
			runs = append(runs, []string{"-work", string(q), "-out", shard, "run"})
			for _, r := range runs {
				if err := worker(ctx, bin, append(slices.Clone(args), r...), env, logFile, name, cfg.Log, &mu); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %v (log %s)", name, err, logFile))
					mu.Unlock()
					return
				}
			}
		}(g)
	}
	wg.Wait()
	fmt.Fprintf(cfg.Log, "gpus: %d workers measured %d items in %s\n", len(gpus), len(missing), time.Since(t0).Round(time.Millisecond))
	sum, err := Collect(ctx, dir, cfg.Log)
	if len(errs) > 0 {
		return sum, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return sum, err
}

// worker runs one portmatrix process, its output into logFile and, each line
// prefixed with the worker's name, into log.
func worker(ctx context.Context, bin string, args, env []string, logFile, name string, log io.Writer, mu *sync.Mutex) error {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "$ %s\n", fsutil.Portable(bin+" "+strings.Join(args, " ")))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	// Stopped, a worker stops its program and keeps what it finished.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(f, sc.Text())
			mu.Lock()
			fmt.Fprintf(log, "[%s] %s\n", name, sc.Text())
			mu.Unlock()
		}
		close(done)
	}()
	err = cmd.Wait()
	pw.Close()
	<-done
	return err
}

// AgreementItems picks, per toolchain, the largest size of the first cell
// the plan lists: what every GPU measures so that they can be compared.
func AgreementItems(plan []work.Item) []work.Item {
	first := map[string]string{}
	var order []string
	best := map[string]work.Item{}
	for _, it := range plan {
		tc := it.Cell[strings.LastIndex(it.Cell, ".")+1:]
		if _, ok := first[tc]; !ok {
			first[tc] = it.Cell
			order = append(order, tc)
		}
		if it.Cell == first[tc] && it.Size >= best[tc].Size {
			best[tc] = it
		}
	}
	var out []work.Item
	for _, tc := range order {
		out = append(out, best[tc])
	}
	return out
}

func gpuList(gs []work.GPU) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.Index+" "+shortUUID(g.UUID))
	}
	return strings.Join(s, ", ")
}

// selectedGPUs are the node's GPUs, those PM_GPUS names (cfg.GPUs: an
// index or a UUID each) when set.
func selectedGPUs(cfg config.Config) []work.GPU {
	gpus := work.GPUs()
	if len(cfg.GPUs) == 0 {
		return gpus
	}
	var keep []work.GPU
	for _, g := range gpus {
		if slices.Contains(cfg.GPUs, g.Index) || slices.Contains(cfg.GPUs, g.UUID) {
			keep = append(keep, g)
		}
	}
	return keep
}

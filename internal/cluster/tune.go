package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
	"github.com/portmatrix/portmatrix/internal/work"
)

// TuneGPUs runs the tune stage on every GPU of this node (PM_GPUS limits
// them): worker k of n tunes its share of the (cell, size) targets
// (PM_TUNE_SHARD=k/n, tune.Shard) on its GPU into <out>/shards/gpu<k>, each
// with its own cache; PM_TUNE_SECONDS bounds each worker. It then joins the
// shards' evaluations into <out>/tuning.jsonl and their reports into
// <out>/tuning.md. The same command again resumes: each worker gets the same
// targets and finds its cache.
func TuneGPUs(ctx context.Context, cfg config.Config, cc *Config, self string) error {
	cfg.Defaults()
	gpus := selectedGPUs()
	if len(gpus) == 0 {
		return errors.New("gpus: nvidia-smi lists no GPU (or none of PM_GPUS)")
	}
	dir := cfg.Out
	if dir == "" {
		var err error
		if dir, err = results.NewFolder(filepath.Join(cfg.Root, results.RunsDir), time.Now(), "gpus-tune"); err != nil {
			return err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	cfg.Out, cfg.GPU = dir, "1"
	bin, err := Binary(ctx, cfg, cc, self)
	if err != nil {
		return err
	}
	args, err := workerArgs(cfg, true)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Log, "gpus: tuning on %d workers (%s) into %s\n", len(gpus), gpuList(gpus), dir)
	t0 := time.Now()
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for k, g := range gpus {
		wg.Add(1)
		go func(k int, g work.GPU) {
			defer wg.Done()
			name := "gpu" + g.Index
			env := append(os.Environ(), "CUDA_VISIBLE_DEVICES="+g.Index, config.EnvWorker+"="+name, config.EnvGPUUUID+"="+g.UUID)
			logFile := filepath.Join(dir, "logs", "tune-"+name+".log")
			wargs := append(slices.Clone(args), "-tune-shard", fmt.Sprintf("%d/%d", k, len(gpus)),
				"-out", filepath.Join(dir, "shards", name), "tune")
			if err := worker(ctx, bin, wargs, env, logFile, name, cfg.Log, &mu); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s: %v (log %s)", name, err, logFile))
				mu.Unlock()
			}
		}(k, g)
	}
	wg.Wait()
	fmt.Fprintf(cfg.Log, "gpus: %d tuning workers took %s\n", len(gpus), time.Since(t0).Round(time.Millisecond))
	n, jerr := JoinTuning(dir)
	fmt.Fprintf(cfg.Log, "gpus: %d evaluations in %s (run it: -tuned %s)\n", n, filepath.Join(dir, results.TuningFile), dir)
	if len(errs) > 0 {
		return errors.Join(errors.New(strings.Join(errs, "\n")), jerr)
	}
	return jerr
}

// selectedGPUs are the node's GPUs, those PM_GPUS names when set.
func selectedGPUs() []work.GPU {
	gpus := work.GPUs()
	want := os.Getenv(config.EnvGPUs)
	if want == "" {
		return gpus
	}
	var keep []work.GPU
	for _, g := range gpus {
		if slices.Contains(strings.Split(want, ","), g.Index) || slices.Contains(strings.Split(want, ","), g.UUID) {
			keep = append(keep, g)
		}
	}
	return keep
}

// JoinTuning writes dir/tuning.jsonl from the evaluations of its shards
// (dir/shards/*/tuning.jsonl, in name order; an evaluation in two shards
// once, the later shard's), dir/tuning.md from their reports and
// dir/run.json from the first shard's, dir/tuning-kernels.json from all
// of theirs, and returns
// the number of evaluations. Torn last lines (a worker killed while writing)
// are left out; the worker's next run measures them again.
func JoinTuning(dir string) (int, error) {
	shards, err := filepath.Glob(filepath.Join(dir, "shards", "*", results.TuningFile))
	if err != nil {
		return 0, err
	}
	slices.Sort(shards)
	type key struct {
		Cell     string `json:"cell"`
		Size     int64  `json:"size"`
		Config   string `json:"config"`
		BuildKey string `json:"build_key"`
		Device   string `json:"device"`
	}
	at := map[key]int{}
	var lines [][]byte
	var md bytes.Buffer
	for _, file := range shards {
		data, err := os.ReadFile(file)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<16), 16<<20)
		for sc.Scan() {
			var k key
			if json.Unmarshal(sc.Bytes(), &k) != nil {
				continue // a torn last line
			}
			line := slices.Clone(sc.Bytes())
			if i, ok := at[k]; ok {
				lines[i] = line
				continue
			}
			at[k] = len(lines)
			lines = append(lines, line)
		}
		report, err := os.ReadFile(filepath.Join(filepath.Dir(file), "tuning.md"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		if len(report) > 0 {
			fmt.Fprintf(&md, "# %s\n\n%s", filepath.Base(filepath.Dir(file)), report)
		}
		// The shard's tuned binaries' kernels join the folder's.
		kernels, err := tune.ReadKernels(filepath.Dir(file))
		if err == nil {
			err = tune.WriteKernels(dir, kernels)
		}
		if err != nil {
			return 0, err
		}
	}
	// The folder's provenance is the first shard's (its run.json names the
	// node, every GPU, the compilers and the commit).
	if len(shards) > 0 {
		err := results.CopyFile(filepath.Join(filepath.Dir(shards[0]), "run.json"), filepath.Join(dir, "run.json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	var out bytes.Buffer
	for _, l := range lines {
		out.Write(l)
		out.WriteByte('\n')
	}
	if err := fsutil.WriteFile(filepath.Join(dir, results.TuningFile), out.Bytes(), 0o644); err != nil {
		return 0, err
	}
	return len(lines), fsutil.WriteFile(filepath.Join(dir, "tuning.md"), md.Bytes(), 0o644)
}

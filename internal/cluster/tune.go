package cluster

import (
	"context"
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
	gpus := selectedGPUs(cfg)
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
	if err := seedShards(dir, gpus); err != nil {
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
				"-out", shardDir(dir, g), "tune")
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
	fmt.Fprintf(cfg.Log, "gpus: %d evaluations in %s (run it: -tuned %s)\n", n, tune.CachePath(dir), dir)
	if len(errs) > 0 {
		return errors.Join(errors.New(strings.Join(errs, "\n")), jerr)
	}
	return jerr
}

// shardDir is the folder of the worker on GPU g: <dir>/shards/gpu<index>.
func shardDir(dir string, g work.GPU) string { return filepath.Join(dir, "shards", "gpu"+g.Index) }

// seedShards gives each worker's shard, before it starts, every evaluation
// the folder holds (its tuning.jsonl and every shard's, tune.Seed): a
// worker reads only its own shard's cache, so without this a tuning
// resumed with other GPUs or another number of them, or of a folder tuned
// in one process, measures again what the folder has (its shard k of n is
// other targets than before), and the join then replaces the folder's
// evaluations with the shards'.
func seedShards(dir string, gpus []work.GPU) error {
	others, err := filepath.Glob(filepath.Join(dir, "shards", "*", tune.CacheFile))
	if err != nil {
		return err
	}
	from := append([]string{tune.CachePath(dir)}, others...)
	for _, g := range gpus {
		shard := shardDir(dir, g)
		if _, err := tune.Seed(shard, slices.DeleteFunc(slices.Clone(from), func(f string) bool { return f == tune.CachePath(shard) })); err != nil {
			return err
		}
	}
	return nil
}

// JoinTuning joins the tunings of dir's shards (dir/shards/*, in name
// order) into dir (tune.Join: the tuning files are internal/tune's), and
// makes dir/run.json the first shard's; it returns the number of
// evaluations.
func JoinTuning(dir string) (int, error) {
	all, err := filepath.Glob(filepath.Join(dir, "shards", "*"))
	if err != nil {
		return 0, err
	}
	slices.Sort(all)
	var shards []string
	for _, s := range all {
		if tune.Has(s) {
			shards = append(shards, s)
		}
	}
	n, err := tune.Join(dir, shards)
	if err != nil {
		return 0, err
	}
	// The folder's provenance is the first shard's (its run.json names the
	// node, every GPU, the compilers and the commit).
	if len(shards) > 0 {
		err := results.CopyFile(filepath.Join(shards[0], results.RunFile), filepath.Join(dir, results.RunFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return n, nil
}

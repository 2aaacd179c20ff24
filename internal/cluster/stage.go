package cluster

import (
	"context"
	"fmt"
	"os"

	"github.com/portmatrix/portmatrix/internal/config"
)

// Load checks PM_SCHEDULER and reads the cluster file (slurm needs one; gpus
// reads it when it exists), before anything is built.
func Load(cfg config.Config) (*Config, error) {
	if cfg.Scheduler != "slurm" && cfg.Scheduler != "gpus" {
		return nil, fmt.Errorf("PM_SCHEDULER: unknown scheduler %q (known: slurm, gpus)", cfg.Scheduler)
	}
	file := cfg.Cluster
	if file == "" {
		file = DefaultFile
	}
	if _, statErr := os.Stat(file); statErr == nil || cfg.Scheduler == "slurm" {
		return LoadConfig(file)
	}
	return nil, nil
}

// Schedule hands the run stage to the scheduler: one job array (slurm; it
// returns at submission, with no summary) or a worker per GPU (gpus; it
// returns the collected campaign). Workers run cfg.Self, the running
// portmatrix CLI ("" from the magefile: one is built with Go).
func Schedule(ctx context.Context, cfg config.Config, cc *Config) (*Summary, error) {
	if cfg.Scheduler == "slurm" {
		_, err := Submit(ctx, cfg, cc, cfg.Self)
		return nil, err
	}
	return RunGPUs(ctx, cfg, cc, cfg.Self)
}

// ScheduleTune hands the tune stage to the scheduler: one job array, a
// shard per task (slurm; it returns at submission: collect joins), or a
// worker per GPU (gpus; it returns the joined tuning).
func ScheduleTune(ctx context.Context, cfg config.Config, cc *Config) error {
	if cfg.Scheduler == "slurm" {
		_, err := SubmitTune(ctx, cfg, cc, cfg.Self)
		return err
	}
	return TuneGPUs(ctx, cfg, cc, cfg.Self)
}

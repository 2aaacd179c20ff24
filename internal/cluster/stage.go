package cluster

import (
	"context"
	"fmt"
	"os"

	"github.com/portmatrix/portmatrix/internal/pipeline"
)

// The pipeline's stage table holds collect and status, and hands the run and
// all stages to "schedule" under PM_SCHEDULER; their code is here.
func init() {
	pipeline.Extend("collect", func(ctx context.Context, _ string, cfg pipeline.Config) error {
		if cfg.Out == "" {
			return fmt.Errorf("collect needs the campaign folder: -out <folder> (PM_OUT)")
		}
		_, err := Collect(ctx, cfg.Out, cfg.Log)
		return err
	})
	pipeline.Extend("status", func(ctx context.Context, _ string, cfg pipeline.Config) error {
		if cfg.Out == "" {
			return fmt.Errorf("status needs the campaign folder: -out <folder> (PM_OUT)")
		}
		_, err := Campaign{Dir: cfg.Out}.PrintStatus(ctx, cfg.Log)
		return err
	})
	pipeline.Extend("schedule", schedule)
}

// schedule runs the run stage (and all) under a scheduler: slurm (one job
// array) or gpus (a worker per GPU). Workers run cfg.Self, the running
// portmatrix CLI ("" from the magefile: one is built with Go).
func schedule(ctx context.Context, name string, cfg pipeline.Config) error {
	if cfg.Scheduler != "slurm" && cfg.Scheduler != "gpus" {
		return fmt.Errorf("PM_SCHEDULER: unknown scheduler %q (known: slurm, gpus)", cfg.Scheduler)
	}
	file := cfg.Cluster
	if file == "" {
		file = DefaultFile
	}
	var cc *Config
	var err error
	if _, statErr := os.Stat(file); statErr == nil || cfg.Scheduler == "slurm" {
		if cc, err = LoadConfig(file); err != nil {
			return err
		}
	}
	if cfg.Out == "" {
		cfg.Out = newDir(cfg.Root, cfg.Scheduler)
	}
	local := cfg
	local.Scheduler = ""
	if name == "all" {
		for _, s := range []string{"generate", "build"} {
			if err := pipeline.Stage(ctx, s, local); err != nil {
				return err
			}
		}
	}
	if cfg.Scheduler == "slurm" {
		_, err := Submit(ctx, cfg, cc, cfg.Self)
		return err
	}
	sum, err := RunGPUs(ctx, cfg, cc, cfg.Self)
	if err != nil || name != "all" || sum == nil {
		return err
	}
	return pipeline.Stage(ctx, "report", local)
}

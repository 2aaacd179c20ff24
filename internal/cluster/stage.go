package cluster

import (
	"context"
	"fmt"
	"os"

	"github.com/portmatrix/portmatrix/internal/pipeline"
)

// Stages are the stage names this package adds to the pipeline's.
var Stages = []string{"collect", "status"}

// Stage runs a stage: collect and status of a campaign (-out), the run
// stage (and all) under a scheduler (cfg.Scheduler: slurm or gpus), and
// everything else as pipeline.Stage does. self is the running portmatrix
// CLI, which workers run too ("" from the magefile: it is built with Go).
func Stage(ctx context.Context, name string, cfg pipeline.Config, self string) error {
	cfg.Defaults()
	switch name {
	case "collect", "status":
		if cfg.Out == "" {
			return fmt.Errorf("%s needs the campaign folder: -out <folder> (PM_OUT)", name)
		}
		if name == "status" {
			_, err := Campaign{Dir: cfg.Out}.PrintStatus(ctx, cfg.Log)
			return err
		}
		_, err := Collect(ctx, cfg.Out, cfg.Log)
		return err
	case "run", "all":
	default:
		return pipeline.Stage(ctx, name, cfg)
	}
	if cfg.Scheduler == "" {
		return pipeline.Stage(ctx, name, cfg)
	}
	if cfg.Scheduler != "slurm" && cfg.Scheduler != "gpus" {
		return fmt.Errorf("unknown scheduler %q (known: slurm, gpus)", cfg.Scheduler)
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
	if name == "all" {
		for _, s := range []string{"generate", "build"} {
			if err := pipeline.Stage(ctx, s, cfg); err != nil {
				return err
			}
		}
	}
	if cfg.Scheduler == "slurm" {
		_, err := Submit(ctx, cfg, cc, self)
		return err
	}
	sum, err := RunGPUs(ctx, cfg, cc, self)
	if err != nil || name != "all" || sum == nil {
		return err
	}
	return pipeline.Stage(ctx, "report", cfg)
}

//go:build mage

// Portmatrix generates, builds, runs and verifies the variant matrix; `mage -h all` lists the knobs.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magefile/mage/mg"

	"github.com/portmatrix/portmatrix/internal/cluster"
	"github.com/portmatrix/portmatrix/internal/pipeline"
	"github.com/portmatrix/portmatrix/internal/report"
)

var Default = All

// Generate renders every (kernel, variant) into generated/, writing only changed files.
func Generate(ctx context.Context) error { return stage(ctx, "generate") }

// Check fails when generated/ is not what the templates render (CI runs it).
func Check(ctx context.Context) error { return stage(ctx, "check") }

// Doctor prints the toolchains found, their capabilities, and why each cell is on or off.
func Doctor(ctx context.Context) error { return stage(ctx, "doctor") }

// Build compiles every cell this machine can build, in parallel and incrementally.
func Build(ctx context.Context) error {
	mg.CtxDeps(ctx, Generate)
	return stage(ctx, "build")
}

// Run runs every built cell this machine can run into a new results folder.
func Run(ctx context.Context) error {
	mg.CtxDeps(ctx, Build)
	return stage(ctx, "run")
}

// Report draws figures, evaluates the papers' claims and writes report.html for a results folder (PM_OUT, default the newest).
func Report(ctx context.Context) error { return stage(ctx, "report") }

// All generates, builds, runs, verifies and reports: the whole pipeline.
//
// Knobs (environment variables), read by every target:
//
//	PM_KERNELS=axpby,dot      kernels (default: all)
//	PM_VARIANTS=kk-omp-b,omp-raw   variant IDs or strategy names (default: all)
//	PM_TOOLCHAINS=gcc-host    toolchain IDs (default: every one found)
//	PM_SIZE_SET=ci|default|gpu   size set (default: ci, minutes on 2 cores)
//	PM_SIZES=1000,100000      explicit sizes, overriding the set
//	PM_REPS=5 PM_WARMUP=1     timed repetitions and warm-up runs per size
//	PM_JOBS=2                 parallel builds
//	PM_OUT=results/my-run     results folder of the run target
//	PM_TIMEOUT=300            seconds one program may run
//	PM_GPU=1                  run GPU cells (default: when nvidia-smi lists a GPU)
//	PM_TOOLCHAINS_FILE=f.yaml toolchain file instead of toolchains.yaml
//	PM_SCHEDULER=slurm|gpus   run as one Slurm job array, or a worker per GPU (docs/cluster.md)
//	PM_CLUSTER=cluster.yaml   the cluster file (copy cluster.example.yaml)
//	PM_GPUS=0,1               gpus scheduler: the GPUs to use (default: all)
func All(ctx context.Context) error { return stage(ctx, "all") }

// Compare prints per-cell GB/s ratios of run b to run a and flags regressions beyond 10%.
func Compare(a, b string) error {
	n, err := report.Compare(a, b, 0.10, os.Stdout)
	if err == nil && n > 0 {
		err = fmt.Errorf("%d regressions", n)
	}
	return err
}

// Collect merges a campaign's shards (PM_OUT) into one results folder and reports Slurm states, missing items and GPU agreement.
func Collect(ctx context.Context) error { return stage(ctx, "collect") }

// Status prints a campaign's (PM_OUT) Slurm task states, failed tasks with their logs, and the items still missing.
func Status(ctx context.Context) error { return stage(ctx, "status") }

// Clean removes build outputs (build/); generated/ and results/ are kept.
func Clean() error { return os.RemoveAll("build") }

func stage(ctx context.Context, name string) error {
	cfg, err := pipeline.FromEnv()
	if err != nil {
		return err
	}
	return cluster.Stage(ctx, name, cfg, "")
}

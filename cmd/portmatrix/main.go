// Command portmatrix is the engine behind the magefile as a plain CLI, so a
// GPU node without Go can run a static build of it:
//
//	portmatrix [flags] generate|check|doctor|build|run|report|all|collect|status
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/portmatrix/portmatrix/internal/cluster"
	"github.com/portmatrix/portmatrix/internal/pipeline"
)

func main() {
	cfg := pipeline.Config{}
	fs := flag.NewFlagSet("portmatrix", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: portmatrix [flags] generate|check|doctor|build|run|report|all\n       portmatrix -out <folder> merge <results folder>...\n       portmatrix -scheduler slurm|gpus [flags] run; portmatrix -out <campaign> status|collect (docs/cluster.md)")
		fs.PrintDefaults()
	}
	var kernels, variants, toolchains, sizes string
	fs.StringVar(&cfg.Root, "root", ".", "repository root (templates/, variants/, toolchains.yaml)")
	fs.StringVar(&kernels, "kernels", "", "comma-separated kernels (default: all)")
	fs.StringVar(&variants, "variants", "", "comma-separated variant IDs or strategy names (default: all)")
	fs.StringVar(&toolchains, "toolchains", "", "comma-separated toolchain IDs (default: all found)")
	fs.StringVar(&cfg.SizeSet, "size-set", "ci", "size set: ci, default or gpu")
	fs.StringVar(&sizes, "sizes", "", "comma-separated sizes, overriding the size set")
	fs.IntVar(&cfg.Reps, "reps", 5, "timed repetitions per size")
	fs.IntVar(&cfg.Warmup, "warmup", 1, "warm-up runs per size")
	fs.IntVar(&cfg.Jobs, "jobs", 2, "parallel builds")
	fs.StringVar(&cfg.Out, "out", "", "results folder (default results/<run-id>)")
	fs.StringVar(&cfg.BuildDir, "build-dir", "", "build folder (default build)")
	fs.IntVar(&cfg.Timeout, "timeout", 300, "seconds one program may run")
	fs.BoolVar(&cfg.GPU, "gpu", false, "run GPU cells (default: when nvidia-smi lists a GPU)")
	fs.Int64Var(&cfg.CopyBytes, "copy-bytes", 0, "bytes of the device copy measured per program (default: by device)")
	// Cluster (issue 13): docs/cluster.md.
	fs.StringVar(&cfg.Scheduler, "scheduler", os.Getenv("PM_SCHEDULER"), "run stage: slurm (one job array) or gpus (a worker per GPU of this node)")
	fs.StringVar(&cfg.Cluster, "cluster", os.Getenv("PM_CLUSTER"), "cluster file (default cluster.yaml; see cluster.example.yaml)")
	fs.StringVar(&cfg.Work, "work", "", "run only these work items: a JSON file of {cell, size}, or a queue folder")
	fs.Parse(os.Args[1:])
	cfg.Kernels, cfg.Variants, cfg.Toolchains = split(kernels), split(variants), split(toolchains)
	for _, s := range split(sizes) {
		var n int64
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "portmatrix: bad size %q\n", s)
			os.Exit(2)
		}
		cfg.Sizes = append(cfg.Sizes, n)
	}
	if fs.NArg() > 1 && fs.Arg(0) == "merge" {
		cfg.Inputs = fs.Args()[1:]
	} else if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	// SIGTERM too: scancel, a Slurm time limit and timeout(1) stop a run cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, _ := os.Executable()
	if err := cluster.Stage(ctx, fs.Arg(0), cfg, self); err != nil {
		fmt.Fprintln(os.Stderr, "portmatrix:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

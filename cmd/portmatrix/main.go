// Command portmatrix is the engine behind the magefile as a plain CLI, so a
// GPU node without Go can run a static build of it. Its stages and flags are
// pipeline.Stages and config.Knobs, the same table the magefile is built from:
//
//	portmatrix [flags] <stage> [flags] [args]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/pipeline"
	"github.com/portmatrix/portmatrix/internal/signals"
)

func main() {
	// The environment (the magefile's knobs) gives defaults; flags override.
	cfg, err := config.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "portmatrix:", err)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("portmatrix", flag.ContinueOnError)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintln(out, "usage: portmatrix [flags] <stage> [flags] [args]\n\nstages:")
		for _, s := range pipeline.Stages {
			args := ""
			for _, a := range s.Args {
				args += " <" + a + ">"
			}
			if s.Variadic {
				args += "..."
			}
			for _, a := range s.CLIArgs {
				args += " [" + a + "]"
			}
			fmt.Fprintf(out, "  %-10s %s\n             (needs: %s)\n", s.Name+args, s.Doc, s.Needs)
		}
		fmt.Fprintln(out, "\nflags (each also read from its environment variable, which a flag overrides):")
		fs.PrintDefaults()
	}
	config.Flags(fs, &cfg)
	fs.SetOutput(io.Discard) // errors are printed once, below, with the closest flag's name
	parse := func(args []string) {
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(os.Stderr)
			if err == flag.ErrHelp {
				fs.Usage()
				os.Exit(0)
			}
			fmt.Fprintln(os.Stderr, "portmatrix:", config.FlagError(err))
			os.Exit(2)
		}
	}
	parse(os.Args[1:])
	if fs.NArg() < 1 {
		fs.SetOutput(os.Stderr)
		fs.Usage()
		os.Exit(2)
	}
	// Flags may also follow the stage (portmatrix run -kernels dot, run -h);
	// they end at the first positional argument.
	stage := fs.Arg(0)
	parse(fs.Args()[1:])
	fs.SetOutput(os.Stderr)
	cfg.Self, _ = os.Executable() // the workers a scheduler starts run this program
	// SIGTERM too: scancel, a Slurm time limit and timeout(1) stop a run cleanly.
	ctx, stop := signals.Context(context.Background())
	defer stop()
	if err := pipeline.Stage(ctx, stage, cfg, fs.Args()...); err != nil {
		fmt.Fprintln(os.Stderr, "portmatrix:", err)
		os.Exit(1)
	}
}

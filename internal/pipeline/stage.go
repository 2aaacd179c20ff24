package pipeline

import (
	"context"
	"fmt"
	"os"
)

// Stage runs one named stage (or all of them) with cfg.
func Stage(ctx context.Context, name string, cfg Config) error {
	p, err := Load(ctx, cfg)
	if err != nil {
		return err
	}
	switch name {
	case "generate":
		return Generate(p)
	case "check":
		return Check(p)
	case "doctor":
		Doctor(p, p.Cfg.Log)
		return nil
	}
	return fmt.Errorf("unknown stage %q (known: generate, check, doctor, build, run, report, all)", name)
}

var _ = os.Stdout

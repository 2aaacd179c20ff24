package verify

import (
	"fmt"
	"io"
	"os"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/session"
)

// Stage is the verify stage: every cell in on (the selection's cells that
// are on) compiled, or failed with a known failure (knownFile), and, when
// PM_OUT names a results folder, its run (finished; every cell it was to
// run measured; every measurement verified); it prints the counts by target.
func Stage(cfg config.Config, on []Cell, knownFile string) error {
	m, err := build.ReadManifest(cfg.BuildDir)
	if err != nil {
		return fmt.Errorf("no build manifest in %s (run the build stage first): %w", cfg.BuildDir, err)
	}
	var known []build.Known
	if _, err := os.Stat(knownFile); err == nil {
		if known, err = build.LoadKnown(knownFile); err != nil {
			return err
		}
	}
	var s Summary
	s.Build(on, m, known)
	if cfg.Out != "" {
		gpu := session.GPU(cfg)
		var expected []string
		for _, e := range session.SampleManifest(cfg, m, io.Discard).Cells {
			if e.Binary != "" && cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) && (e.Target == "host" || gpu) {
				expected = append(expected, e.ID)
			}
		}
		s.Run(cfg.Out, expected)
	}
	s.Print(cfg.Log)
	return s.Err()
}

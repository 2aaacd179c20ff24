package pipeline

import (
	"fmt"
	"io"
	"os"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/verify"
)

// Verify checks the selection's build (every cell that is on compiled, or
// failed with a known failure) and, when PM_OUT names a results folder, its
// run (finished; every cell it was to run measured; every measurement
// verified), and prints the counts by target.
func Verify(p *Project) error {
	m, err := build.ReadManifest(p.Cfg.BuildDir)
	if err != nil {
		return fmt.Errorf("no build manifest in %s (run the build stage first): %w", p.Cfg.BuildDir, err)
	}
	var known []build.Known
	if _, err := os.Stat(p.path(build.KnownFile)); err == nil {
		if known, err = build.LoadKnown(p.path(build.KnownFile)); err != nil {
			return err
		}
	}
	var s verify.Summary
	var on []verify.Cell
	for _, c := range p.Cells() {
		if c.On {
			on = append(on, verify.Cell{ID: c.ID, Target: c.Toolchain.Target})
		}
	}
	s.Build(on, m, known)
	if p.Cfg.Out != "" {
		gpu := session.GPU(p.Cfg)
		var expected []string
		for _, e := range session.SampleManifest(p.Cfg, m, io.Discard).Cells {
			if e.Binary != "" && p.Cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) && (e.Target == "host" || gpu) {
				expected = append(expected, e.ID)
			}
		}
		s.Run(p.Cfg.Out, expected)
	}
	s.Print(p.Cfg.Log)
	return s.Err()
}

package session

import (
	"fmt"
	"io"
	"slices"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// SampleManifest is the run stage's side of a sampling suite, which sees only
// the manifest: the same sample taken from the cells it holds that are on
// (suite.Sample of a sample is itself, so after a sampled build these are the
// cells built), each at the sizes suite.Sizes gives it. Skipped cells and
// failed builds stay for build.csv.
func SampleManifest(cfg config.Config, m *build.Manifest, log io.Writer) *build.Manifest {
	name := cfg.Sample()
	if name == "" {
		return m
	}
	var on []suite.Cell
	byID := map[string]suite.Cell{}
	for _, e := range m.Cells {
		if e.Status == build.Skipped || !cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			continue
		}
		fam := e.Family
		if fam == "" { // a manifest written before families: each kernel its own
			fam = e.Kernel
		}
		c := suite.Cell{ID: e.ID, Kernel: e.Kernel, Family: fam, Strategy: e.Strategy, Variant: e.Variant, Toolchain: e.Toolchain,
			Host: e.Target == "host" || GPU(cfg), CPU: e.Target == "host", Form: e.Form, Fails: e.Status == build.Failed}
		on = append(on, c)
		byID[e.ID] = c
	}
	keep := suite.Sample(on, name)
	out := *m
	out.Cells = nil
	for _, e := range m.Cells {
		if e.Status == build.Skipped || e.Status == build.Failed && cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			out.Cells = append(out.Cells, e)
			continue
		}
		if !slices.Contains(keep, e.ID) {
			continue
		}
		e.Sizes = suite.Sizes(byID[e.ID], name, e.Sizes)
		out.Cells = append(out.Cells, e)
	}
	fmt.Fprintf(log, "run: suite %s: %d cells of the %d the build folder holds; %s\n", name, len(keep), len(on), suite.FullHint)
	return &out
}

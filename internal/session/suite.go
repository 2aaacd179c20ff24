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
// cells built), each at the smallest size of its size set. Skipped cells stay
// for build.csv.
func SampleManifest(cfg config.Config, m *build.Manifest, log io.Writer) *build.Manifest {
	name := cfg.Sample()
	if name == "" {
		return m
	}
	families := map[string]string{}
	var on []suite.Cell
	for _, e := range m.Cells {
		if e.Status == build.Skipped || !cfg.Picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			continue
		}
		fam := e.Family
		if fam == "" { // a manifest written before families: each kernel its own
			fam = e.Kernel
		}
		families[e.Kernel] = fam
		on = append(on, suite.Cell{ID: e.ID, Kernel: e.Kernel, Family: fam, Strategy: e.Strategy, Variant: e.Variant, Toolchain: e.Toolchain,
			Host: e.Target == "host" || GPU(cfg), Fails: e.Status == build.Failed})
	}
	keep := suite.Sample(on, name)
	out := *m
	out.Cells = nil
	for _, e := range m.Cells {
		if e.Status == build.Skipped {
			out.Cells = append(out.Cells, e)
			continue
		}
		if !slices.Contains(keep, e.ID) {
			continue
		}
		sizes := map[string][]int64{}
		for set, s := range e.Sizes {
			if len(s) > 0 {
				sizes[set] = []int64{slices.Min(s)}
			}
		}
		e.Sizes = sizes
		out.Cells = append(out.Cells, e)
	}
	fmt.Fprintf(log, "run: suite %s: %d cells of the %d the build folder holds, each at the smallest %s size; %s\n", name, len(keep), len(on), cfg.SizeSet, suite.FullHint)
	return &out
}

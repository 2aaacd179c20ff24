package pipeline

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// sample names the suite that samples the selection, or "" when every
// selected cell runs. PM_SUITE=quick or wide samples whatever the filters
// select; unset, the suite is quick unless the selection is named
// (PM_KERNELS, PM_VARIANTS, PM_SIZES, a size set other than the default ci):
// then every selected cell runs, as asked. PM_TOOLCHAINS says what this
// machine builds and narrows the sample only. A scheduler's worker runs the
// work items it is given.
func (c *Config) sample() string {
	if c.Work != "" && !strings.HasPrefix(c.Work, "plan:") {
		return ""
	}
	switch c.Suite {
	case suite.Quick, suite.Wide:
		return c.Suite
	case suite.Full:
		return ""
	}
	if len(c.Kernels) == 0 && len(c.Variants) == 0 && len(c.Sizes) == 0 && (c.SizeSet == "" || c.SizeSet == "ci") {
		return suite.Quick
	}
	return ""
}

const fullHint = "PM_SUITE=full (-suite full) builds and runs every cell"

// sampleCells keeps, under a sampling suite, the cells that are off (with
// their reasons) and the sample of those that are on.
func (p *Project) sampleCells(cells []*matrix.Cell) []*matrix.Cell {
	name := p.Cfg.sample()
	if name == "" {
		return cells
	}
	// A known failure's cell pattern (its message is known only once built)
	// marks the cells the sample avoids; the build stage reports a bad list.
	known, _ := build.LoadKnown(p.path(build.KnownFile))
	fails := func(id string) bool {
		return slices.ContainsFunc(known, func(k build.Known) bool { ok, _ := path.Match(k.Cell, id); return ok })
	}
	var on []suite.Cell
	for _, c := range cells {
		if c.On {
			on = append(on, suite.Cell{ID: c.ID, Kernel: c.Kernel.Name, Family: c.Kernel.Family, Strategy: c.Variant.Strategy.Name,
				Variant: c.Variant.ID, Toolchain: c.Toolchain.ID, Host: c.Runnable, Fails: fails(c.ID)})
		}
	}
	keep := suite.Sample(on, name)
	var out []*matrix.Cell
	for _, c := range cells {
		if !c.On || slices.Contains(keep, c.ID) {
			out = append(out, c)
		}
	}
	p.suiteNote.Do(func() {
		fmt.Fprintf(p.Cfg.Log, "suite %s: %d cells of %d that are on (%s; the smallest %s size); %s\n",
			name, len(keep), len(on), covered(name), p.Cfg.SizeSet, fullHint)
	})
	return out
}

// covered says what a sample covers.
func covered(name string) string {
	if name == suite.Wide {
		return "every variant, and every strategy with each kernel family, with each toolchain; every kernel once"
	}
	return "every strategy and kernel family with each toolchain, every kernel once"
}

// sampleManifest is the run stage's side of a sampling suite, which sees only
// the manifest: the same sample taken from the cells it holds that are on
// (suite.Sample of a sample is itself, so after a sampled build these are the
// cells built), each at the smallest size of its size set. Skipped cells stay
// for build.csv.
func sampleManifest(cfg Config, m *build.Manifest, log io.Writer) *build.Manifest {
	name := cfg.sample()
	if name == "" {
		return m
	}
	families := map[string]string{}
	var on []suite.Cell
	for _, e := range m.Cells {
		if e.Status == build.Skipped || !cfg.picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain) {
			continue
		}
		fam := e.Family
		if fam == "" { // a manifest written before families: each kernel its own
			fam = e.Kernel
		}
		families[e.Kernel] = fam
		on = append(on, suite.Cell{ID: e.ID, Kernel: e.Kernel, Family: fam, Strategy: e.Strategy, Variant: e.Variant, Toolchain: e.Toolchain,
			Host: e.Target == "host" || cfg.gpu(), Fails: e.Status == build.Failed})
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
	fmt.Fprintf(log, "run: suite %s: %d cells of the %d the build folder holds, each at the smallest %s size; %s\n", name, len(keep), len(on), cfg.SizeSet, fullHint)
	return &out
}

package pipeline

import (
	"fmt"
	"path"
	"slices"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// sampleCells keeps, under a sampling suite, the cells that are off (with
// their reasons) and the sample of those that are on.
func (p *Project) sampleCells(cells []*matrix.Cell) []*matrix.Cell {
	name := p.Cfg.Sample()
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
			name, len(keep), len(on), covered(name), p.Cfg.SizeSet, suite.FullHint)
	})
	return out
}

// covered says what a sample covers.
func covered(name string) string {
	if name == suite.Wide {
		return "every variant, and every strategy with each kernel family, with each toolchain; every kernel once"
	}
	return "every strategy and kernel family with each toolchain"
}

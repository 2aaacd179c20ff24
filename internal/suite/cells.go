package suite

import (
	"fmt"
	"path"
	"slices"

	"github.com/portmatrix/portmatrix/internal/build"
	mx "github.com/portmatrix/portmatrix/internal/matrix"
)

// Cells keeps, under the sampling suite name ("" keeps every cell), the
// cells that are off (with their reasons) and the sample of those that are
// on; known lists the known failures, whose cells the sample avoids. note,
// when not nil, is called once with the line that says what was sampled.
func Cells(cells []*mx.Cell, name string, known []build.Known, sizeSet string, note func(string)) []*mx.Cell {
	if name == "" {
		return cells
	}
	// A known failure's cell pattern (its message is known only once built)
	// marks the cells the sample avoids; the build stage reports a bad list.
	fails := func(id string) bool {
		return slices.ContainsFunc(known, func(k build.Known) bool { ok, _ := path.Match(k.Cell, id); return ok })
	}
	var on []Cell
	for _, c := range cells {
		if c.On {
			on = append(on, Cell{ID: c.ID, Kernel: c.Kernel.Name, Family: c.Kernel.Family, Strategy: c.Variant.Strategy.Name,
				Variant: c.Variant.ID, Toolchain: c.Toolchain.ID, Host: c.Runnable, Fails: fails(c.ID)})
		}
	}
	keep := Sample(on, name)
	var out []*mx.Cell
	for _, c := range cells {
		if !c.On || slices.Contains(keep, c.ID) {
			out = append(out, c)
		}
	}
	if note != nil {
		note(fmt.Sprintf("suite %s: %d cells of %d that are on (%s; the smallest %s size); %s",
			name, len(keep), len(on), covered(name), sizeSet, FullHint))
	}
	return out
}

// covered says what a sample covers.
func covered(name string) string {
	if name == Wide {
		return "every variant, and every strategy with each kernel family, with each toolchain; every kernel once"
	}
	return "every strategy and kernel family with each toolchain"
}

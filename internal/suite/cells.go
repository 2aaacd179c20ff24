package suite

import (
	"fmt"
	"path"
	"slices"
	"strings"

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
	on := sampled(cells, known)
	keep := Sample(on, name)
	var out []*mx.Cell
	for _, c := range cells {
		if !c.On || slices.Contains(keep, c.ID) {
			out = append(out, c)
		}
	}
	if note != nil {
		note(fmt.Sprintf("suite %s: %d cells of %d that are on (%s); %s",
			name, len(keep), len(on), covered(name, on, keep, sizeSet), FullHint))
	}
	return out
}

// sampled are the cells that are on, as the sample sees them. A known
// failure's cell pattern (its message is known only once built) marks the
// cells the sample avoids; the build stage reports a bad list. Cells built
// against an installed library (a strategy's library:, the kokkos-*
// strategies) are not sampled yet: the full suite and a selection that
// names them build them.
func sampled(cells []*mx.Cell, known []build.Known) []Cell {
	fails := func(id string) bool {
		return slices.ContainsFunc(known, func(k build.Known) bool { ok, _ := path.Match(k.Cell, id); return ok })
	}
	var on []Cell
	for _, c := range cells {
		if c.On && c.Variant.Strategy.Library == nil {
			on = append(on, Cell{ID: c.ID, Kernel: c.Kernel.Name, Family: c.Kernel.Family, Strategy: c.Variant.Strategy.Name,
				Variant: c.Variant.ID, Toolchain: c.Toolchain.ID, Host: c.Runnable, CPU: c.Toolchain.Target == "host", Form: c.Variant.Form(), Fails: fails(c.ID)})
		}
	}
	return on
}

// LeftOutOf is LeftOut of the matrix's cells: the (strategy, toolchain)
// pairs the sample leaves out because their every cell is a known failure.
func LeftOutOf(cells []*mx.Cell, name string, known []build.Known) []string {
	return LeftOut(sampled(cells, known), name)
}

// covered says what a sample covers, and at which sizes.
func covered(name string, on []Cell, keep []string, sizeSet string) string {
	if name == Wide {
		return "every variant, and every strategy with each kernel family, with each toolchain; every kernel once; the smallest " + sizeSet + " size"
	}
	var kernels []string
	n := 0
	for _, c := range on {
		if measured(c) && slices.Contains(keep, c.ID) {
			n++
			if !slices.Contains(kernels, c.Kernel) {
				kernels = append(kernels, c.Kernel)
			}
		}
	}
	rest := "every strategy and kernel family with each toolchain, at the smallest " + sizeSet + " size"
	if n == 0 {
		return rest
	}
	set := sizeSet
	if set == "ci" {
		set = BenchSet
	}
	slices.Sort(kernels)
	return fmt.Sprintf("%d of family %s, %s, under every strategy the host toolchains build, in each of its forms, at the smallest and the median %s size; "+
		"one cell of every other strategy and kernel family with each toolchain, at the smallest %s size",
		n, Measured, strings.Join(kernels, ", "), set, sizeSet)
}

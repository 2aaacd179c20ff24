// Package suite chooses which cells of the matrix a run covers: quick, a
// small sample that still covers every strategy and every kernel family with
// each toolchain; wide, also every kernel once and every variant; or full,
// every cell. The sample is
// computed from the cells it is given (the vocabulary loaded from templates/
// and variants/), never listed by hand, so a new kernel or strategy is
// covered as soon as its file exists.
package suite

import (
	"fmt"
	"slices"
	"strings"
)

// The suites.
const (
	Quick = "quick" // the default: a covering sample at the smallest size
	Wide  = "wide"  // a wider sample: also every variant, and every strategy with each family
	Full  = "full"  // every cell at every size of the size set
)

// Names lists the suites.
var Names = []string{Quick, Wide, Full}

// FullHint says how to run everything instead of a sample.
const FullHint = "PM_SUITE=full (-suite full) builds and runs every cell"

// Check rejects an unknown suite name.
func Check(name string) error {
	if !slices.Contains(Names, name) {
		return fmt.Errorf("%q: want %s", name, strings.Join(Names, " or "))
	}
	return nil
}

// Cell is what the sample needs to know of a cell that is on.
type Cell struct {
	ID        string // kernel.variant.toolchain
	Kernel    string
	Family    string // the kernel's family (spec.Kernel.Family)
	Strategy  string
	Variant   string
	Toolchain string
	Host      bool // runs on the CPU: measured and verified here, not only compiled
	// Fails: a known failure (variants/known-failures.yaml) or a failed
	// build; taken only for what no other cell covers.
	Fails bool
}

// keys are what a cell covers: its strategy and its kernel's family with its
// toolchain, and its kernel. A kernel that some host cell has is covered by
// host cells only, so that every kernel is measured and verified, not only
// compiled, where a host toolchain builds it.
// The wide suite adds the variant with its toolchain, and the strategy with
// the family and toolchain.
func keys(c Cell, wide bool, hostKernel map[string]bool) []string {
	k := []string{"strategy " + c.Strategy + " with " + c.Toolchain, "family " + c.Family + " with " + c.Toolchain}
	if wide {
		if c.Host || !hostKernel[c.Kernel] {
			k = append(k, "kernel "+c.Kernel)
		}
		k = append(k, "variant "+c.Variant+" with "+c.Toolchain, "strategy "+c.Strategy+" for "+c.Family+" with "+c.Toolchain)
	}
	return k
}

// Sample returns the IDs, sorted, of a small set of cells that covers what
// the given cells cover: every (toolchain, strategy) and every (toolchain,
// kernel family); with the Wide suite also every kernel (on a host
// toolchain where one builds it), every (toolchain, variant) and
// (toolchain, family, strategy). Greedy (the cell
// covering most of what is left, a cell that fails only where no other
// covers anything; ties to host cells, then the smaller ID), then pruned of
// cells whose keys others cover. The result depends on the set of cells only, not on
// their order, and the sample of a sample is itself: the run stage, which
// sees only the build manifest, recomputes the same selection the build made.
func Sample(cells []Cell, suite string) []string {
	cells = slices.Clone(cells)
	slices.SortFunc(cells, func(a, b Cell) int {
		if a.Host != b.Host {
			if a.Host {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	cells = slices.CompactFunc(cells, func(a, b Cell) bool { return a.ID == b.ID })
	hostKernel := map[string]bool{}
	for _, c := range cells {
		if c.Host {
			hostKernel[c.Kernel] = true
		}
	}
	offers := make([][]string, len(cells))
	uncovered := map[string]bool{}
	for i, c := range cells {
		offers[i] = keys(c, suite == Wide, hostKernel)
		for _, k := range offers[i] {
			uncovered[k] = true
		}
	}
	gain := func(i int) int {
		n := 0
		for _, k := range offers[i] {
			if uncovered[k] {
				n++
			}
		}
		return n
	}
	// best is the cell covering most of what is left among those that fail
	// or not, or -1.
	best := func(fails bool) int {
		b, most := -1, 0
		for i := range cells {
			if n := gain(i); cells[i].Fails == fails && n > most {
				b, most = i, n
			}
		}
		return b
	}
	var picked []int
	for len(uncovered) > 0 {
		i := best(false)
		if i < 0 {
			i = best(true)
		}
		picked = append(picked, i)
		for _, k := range offers[i] {
			delete(uncovered, k)
		}
	}
	// Prune, latest pick first: a cell whose every key another picked cell
	// also covers goes. What is left is irredundant: each cell alone covers
	// one of its keys, so sampling the sample keeps every cell.
	count := map[string]int{}
	for _, i := range picked {
		for _, k := range offers[i] {
			count[k]++
		}
	}
	keep := map[int]bool{}
	for j := len(picked) - 1; j >= 0; j-- {
		i := picked[j]
		redundant := true
		for _, k := range offers[i] {
			if count[k] < 2 {
				redundant = false
			}
		}
		if redundant {
			for _, k := range offers[i] {
				count[k]--
			}
			continue
		}
		keep[i] = true
	}
	var ids []string
	for i := range keep {
		ids = append(ids, cells[i].ID)
	}
	slices.Sort(ids)
	return ids
}

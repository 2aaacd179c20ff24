// Package suite chooses which cells of the matrix a run covers, and at which
// sizes: quick, paper 002's kernels under every variant each host toolchain
// builds at sizes that load the memory, and a small sample that still covers
// every other strategy and every kernel family with each toolchain; wide,
// also every kernel once and every variant; or full, every cell. The sample is
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
	Quick = "quick" // the default: the measured family whole on the CPU, a covering sample of the rest at the smallest size
	Wide  = "wide"  // a wider sample: also every variant, and every strategy with each family
	Full  = "full"  // every cell at every size of the size set
)

// Names lists the suites.
var Names = []string{Quick, Wide, Full}

// Measured is the kernel family the quick suite measures whole on the CPU:
// paper 002's AXPBY, DOT, SPMV and CG-Solve, under every variant each host
// toolchain builds (but known failures), at up to two sizes of the
// benchmark set (Sizes), so that the report draws their CPU figures and the run ends with
// their bandwidths.
const Measured = "002"

// BenchSet is the size set the measured family's cells take their sizes
// from when the ci set, the default, is asked for: ci's sizes fit in cache
// and say nothing of a CPU's memory bandwidth.
const BenchSet = "default"

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
	Host      bool // runs here: measured and verified, not only compiled
	CPU       bool // its toolchain targets the host CPU
	// Form: its variant varies the strategy's first knob only (the paper's
	// forms, KK-OMP-A and -B); the quick suite measures the forms, the
	// other knob values are the wide suite's.
	Form bool
	// Fails: a known failure (variants/known-failures.yaml) or a failed
	// build; the quick suite never takes it, the wide one only for what no
	// other cell covers.
	Fails bool
}

// measured reports whether the quick suite takes the cell for itself: a
// cell of the measured family that runs on the CPU here and does not fail.
func measured(c Cell) bool {
	return c.Family == Measured && c.CPU && c.Host && c.Form && !c.Fails
}

// keys are what a cell covers: its strategy and its kernel's family with its
// toolchain, and its kernel. A kernel that some host cell has is covered by
// host cells only, so that every kernel is measured and verified, not only
// compiled, where a host toolchain builds it.
// The quick suite adds each measured cell itself; the wide suite the variant
// with its toolchain, and the strategy with the family and toolchain.
func keys(c Cell, suite string, hostKernel map[string]bool) []string {
	k := []string{"strategy " + c.Strategy + " with " + c.Toolchain, "family " + c.Family + " with " + c.Toolchain}
	if suite == Quick && measured(c) {
		k = append(k, "cell "+c.ID)
	}
	if suite == Wide {
		if c.Host || !hostKernel[c.Kernel] {
			k = append(k, "kernel "+c.Kernel)
		}
		k = append(k, "variant "+c.Variant+" with "+c.Toolchain, "strategy "+c.Strategy+" for "+c.Family+" with "+c.Toolchain)
	}
	return k
}

// Sample returns the IDs, sorted, of a small set of cells that covers what
// the given cells cover: every (toolchain, strategy) and every (toolchain,
// kernel family); with the Quick suite also every cell of the Measured
// family that runs on the CPU here, and never a cell that fails (LeftOut
// names what only such cells cover); with the Wide suite also every kernel
// (on a host toolchain where one builds it), every (toolchain, variant) and
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
	if suite == Quick {
		cells = slices.DeleteFunc(cells, func(c Cell) bool { return c.Fails })
	}
	hostKernel := map[string]bool{}
	for _, c := range cells {
		if c.Host {
			hostKernel[c.Kernel] = true
		}
	}
	offers := make([][]string, len(cells))
	uncovered := map[string]bool{}
	for i, c := range cells {
		offers[i] = keys(c, suite, hostKernel)
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

// LeftOut names the (strategy, toolchain) pairs, "omp-lambda with
// gcc-host", sorted, whose every cell fails: the quick suite takes none of
// them, so they are absent from its sample.
func LeftOut(cells []Cell, suite string) []string {
	if suite != Quick {
		return nil
	}
	ok := map[string]bool{}
	for _, c := range cells {
		k := c.Strategy + " with " + c.Toolchain
		ok[k] = ok[k] || !c.Fails
	}
	var out []string
	for k, fine := range ok {
		if !fine {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Sizes are the sizes a cell that the suite sampled runs at, by size set
// (sets are the kernel's): the smallest of each set. A cell of the Measured
// family on the CPU under the quick suite runs at the smallest and the
// (lower) median size of each set instead, and of BenchSet in place of the
// ci set, where memory, not cache, bounds the kernels: AXPBY and DOT at 10^5
// and 10^6, SPMV at N = 30 and 60, CG-Solve at N = 30 (its 60 takes minutes
// in GCC's OpenMP target forms).
func Sizes(c Cell, suite string, sets map[string][]int64) map[string][]int64 {
	out := map[string][]int64{}
	for set, s := range sets {
		if len(s) > 0 {
			out[set] = []int64{slices.Min(s)}
		}
	}
	if suite != Quick || !measured(c) {
		return out
	}
	two := func(s []int64) []int64 {
		s = slices.Sorted(slices.Values(s))
		return slices.Compact([]int64{s[0], s[(len(s)-1)/2]})
	}
	for set, s := range sets {
		if len(s) > 0 {
			out[set] = two(s)
		}
	}
	if s := sets[BenchSet]; len(s) > 0 {
		out["ci"] = two(s)
	}
	return out
}

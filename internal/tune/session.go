package tune

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Built is what a tuning reads of a build: the manifest's cells, with the
// kernels and variants their spaces are made of (no compilers are probed: a
// GPU host tunes the binaries built elsewhere).
type Built struct {
	BuildDir string
	Manifest *build.Manifest
	Kernels  map[string]*spec.Kernel
	Variants map[string]*matrix.Variant
	Spaces   *Spaces
}

// LoadTree reads, from the source tree at root, what tuning spaces are made
// of (no build, no compiler probe): the kernel descriptions with their loop
// nests lowered (mapping.LoadKernels: the mapper's launch tunables), the
// strategies' variants and variants/tuning.yaml.
func LoadTree(root string) (Built, error) {
	kernels, kerr := mapping.LoadKernels(root)
	caps, cerr := toolchain.LoadTable(layout.Path(root, layout.Capabilities))
	if err := errors.Join(kerr, cerr); err != nil {
		return Built{}, err
	}
	strategies, err := matrix.Load(layout.Path(root, layout.Strategies), caps)
	if err != nil {
		return Built{}, err
	}
	spaces, err := Load(layout.Path(root, File))
	if err != nil {
		return Built{}, err
	}
	variants := map[string]*matrix.Variant{}
	for _, v := range matrix.Variants(strategies) {
		variants[v.ID] = v
	}
	return Built{Kernels: spec.ByName(kernels), Variants: variants, Spaces: spaces}, nil
}

// Targets are the tuning targets of the built cells that pick selects and
// that can run here (GPU cells only where gpu), one per size; entries maps a
// target's cell to its manifest entry. A cell whose binary is missing, or
// whose kernel or variant the tree no longer has, is an error naming it.
func (b Built) Targets(pick func(build.Entry) bool, sizes func(build.Entry) []int64, gpu bool) ([]Target, map[string]build.Entry, error) {
	entries := map[string]build.Entry{}
	var targets []Target
	var errs []string
	for _, e := range b.Manifest.Cells {
		if e.Binary == "" || !pick(e) || (e.Target != "host" && !gpu) {
			continue
		}
		k, v := b.Kernels[e.Kernel], b.Variants[e.Variant]
		if k == nil || v == nil {
			errs = append(errs, fmt.Sprintf("%s: kernel %q or variant %q is not in the tree (rebuild)", e.ID, e.Kernel, e.Variant))
			continue
		}
		key, err := os.ReadFile(filepath.Join(b.BuildDir, e.Binary+".key"))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: no build key (%v): rebuild it", e.ID, err))
			continue
		}
		cell := &matrix.Cell{ID: e.ID, Kernel: k, Variant: v}
		for _, size := range sizes(e) {
			t, err := b.Spaces.Target(cell, b.Kernels, size, strings.TrimSpace(string(key)))
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", e.ID, err))
				break
			}
			if e.Target != "host" {
				t.DeviceHash = e.DeviceHash
			}
			targets = append(targets, t)
		}
		entries[e.ID] = e
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, nil, fmt.Errorf("tune: %s", strings.Join(errs, "\n  "))
	}
	return targets, entries, nil
}

// Machine of a device: the properties constraints read, from its model's
// numbers (nil where the device has no model).
func MachineOf(maxThreadsPerBlock, warp, sharedPerBlock int64) Machine {
	return Machine{"max_threads_per_block": float64(maxThreadsPerBlock), "warp_size": float64(warp),
		"shared_mem_per_block": float64(sharedPerBlock)}
}

// Shard is worker k's share of targets when n workers tune them (one per
// GPU, or a Slurm array task each): every n-th target from the k-th, in
// order of kernel, size and cell, so that each worker gets its share of
// every kernel's targets (their costs differ by kernel and size), and the
// same selection gives a worker the same targets again: a cut tuning
// resumes from the worker's own cache.
func Shard(targets []Target, k, n int) []Target {
	sorted := slices.Clone(targets)
	slices.SortStableFunc(sorted, func(a, b Target) int {
		return cmp.Or(strings.Compare(kernelOf(a), kernelOf(b)), cmp.Compare(a.Size, b.Size), strings.Compare(a.Cell, b.Cell))
	})
	var out []Target
	for i, t := range sorted {
		if i%n == k {
			out = append(out, t)
		}
	}
	return out
}

func kernelOf(t Target) string {
	if t.Kernel != nil {
		return t.Kernel.Name
	}
	k, _, _ := strings.Cut(t.Cell, ".")
	return k
}

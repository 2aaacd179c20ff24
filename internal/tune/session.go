package tune

import (
	"cmp"
	"encoding/json"
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

// Tree is what tuning spaces are made of in a source tree: the kernels,
// the strategies' variants and variants/tuning.yaml. The build records
// each cell's space from it (Record); the book reads it to explain a
// tuning of a folder.
type Tree struct {
	Kernels  map[string]*spec.Kernel
	Variants map[string]*matrix.Variant
	Spaces   *Spaces
}

// LoadTree reads, from the source tree at root, what tuning spaces are made
// of (no build, no compiler probe): the kernel descriptions with their loop
// nests lowered (mapping.LoadKernels: the mapper's launch tunables), the
// strategies' variants and variants/tuning.yaml.
func LoadTree(root string) (Tree, error) {
	kernels, kerr := mapping.LoadKernels(root)
	caps, cerr := toolchain.LoadTable(layout.Path(root, layout.Capabilities))
	if err := errors.Join(kerr, cerr); err != nil {
		return Tree{}, err
	}
	strategies, err := matrix.Load(layout.Path(root, layout.Strategies), caps)
	if err != nil {
		return Tree{}, err
	}
	spaces, err := Load(layout.Path(root, File))
	if err != nil {
		return Tree{}, err
	}
	variants := map[string]*matrix.Variant{}
	for _, v := range matrix.Variants(strategies) {
		variants[v.ID] = v
	}
	return Tree{Kernels: spec.ByName(kernels), Variants: variants, Spaces: spaces}, nil
}

// RecordCell is cell c's space as the build records it in the manifest
// (build.Result.Space, build.Entry.Space); kernels resolves the kernels a
// composite uses. A space that cannot be made is recorded with its error,
// which the tune stage reports for that cell.
func (s *Spaces) RecordCell(c *matrix.Cell, kernels map[string]*spec.Kernel) json.RawMessage {
	r, err := s.RecordOn(c.Kernel, c.Kernel.Used(kernels), c.Variant, onHost(c))
	if err != nil {
		r = &Recorded{Error: err.Error()}
	}
	b, err := json.Marshal(r)
	if err != nil { // plain data: cannot happen
		panic(err)
	}
	return b
}

// SpaceOf reads a manifest entry's recorded space: an error names the cell
// when the build recorded none (a build of a tree without
// variants/tuning.yaml, or of an older portmatrix) or the space's error.
func SpaceOf(e build.Entry) (*Recorded, error) {
	if len(e.Space) == 0 {
		return nil, fmt.Errorf("%s: the build recorded no tuning space (build it again where %s is)", e.ID, File)
	}
	r := &Recorded{}
	if err := json.Unmarshal(e.Space, r); err != nil {
		return nil, fmt.Errorf("%s: tuning space in the build manifest: %v (build it again)", e.ID, err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("%s: %s", e.ID, r.Error)
	}
	return r, nil
}

// Built is what a tuning reads of a build: the manifest's cells, each with
// the space its build recorded, and the build keys beside the binaries.
// Nothing of the source tree is read and no compiler probed: a GPU host
// tunes the binaries built elsewhere from the build folder alone.
type Built struct {
	BuildDir string
	Manifest *build.Manifest
}

// Targets are the tuning targets of the built cells that pick selects and
// that can run here (GPU cells only where gpu), one per size; entries maps a
// target's cell to its manifest entry. A cell whose binary, build key or
// recorded space is missing is an error naming it.
func (b Built) Targets(pick func(build.Entry) bool, sizes func(build.Entry) []int64, gpu bool) ([]Target, map[string]build.Entry, error) {
	entries := map[string]build.Entry{}
	var targets []Target
	var errs []string
	for _, e := range b.Manifest.Cells {
		if e.Binary == "" || !pick(e) || (e.Target != "host" && !gpu) {
			continue
		}
		rec, err := SpaceOf(e)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		key, err := os.ReadFile(filepath.Join(b.BuildDir, e.Binary+".key"))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: no build key (%v): rebuild it", e.ID, err))
			continue
		}
		for _, size := range sizes(e) {
			t := Target{Cell: e.ID, Size: size, BuildKey: strings.TrimSpace(string(key)), Space: rec.At(size)}
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
	k, _, _ := strings.Cut(t.Cell, ".")
	return k
}

// onHost says whether cell c's program runs on the host CPU (its
// toolchain's target is the host).
func onHost(c *matrix.Cell) bool { return c.Toolchain != nil && !c.Toolchain.GPU() }

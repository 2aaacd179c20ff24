// Package vocabulary makes the names of a project (its kernels, strategies
// and their variants, devices and compiler families) that a results folder
// records (results.Vocabulary) and the report and the book name things by:
// from a loaded project (Of), or read from a source tree (Load).
package vocabulary

import (
	"errors"
	"slices"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// Of lists the names of a loaded project: its kernels, strategies and
// their variants, the devices the strategies run on and the compiler
// families (toolchain.Families).
func Of(kernels []*spec.Kernel, strategies []*matrix.Strategy) *results.Vocabulary {
	v := &results.Vocabulary{Families: toolchain.Families}
	for _, k := range kernels {
		v.Kernels = append(v.Kernels, results.KernelName{Name: k.Name, SizeLabel: SizeLabel(k)})
	}
	variants := matrix.Variants(strategies)
	for _, s := range strategies {
		sn := results.StrategyName{Name: s.Name}
		if s.Library != nil {
			sn.Library = &results.LibraryName{Name: s.Library.Name, Backend: s.Library.Backend}
		} else {
			sn.Layer = s.Layer
		}
		for _, x := range variants {
			if x.Strategy == s {
				sn.Variants = append(sn.Variants, x.ID)
				if len(x.Twins) > 0 {
					if sn.Twins == nil {
						sn.Twins = map[string][]string{}
					}
					sn.Twins[x.ID] = slices.Clone(x.Twins)
				}
			}
		}
		v.Strategies = append(v.Strategies, sn)
		v.Devices = results.AppendNew(v.Devices, s.Device)
	}
	slices.Sort(v.Devices)
	return v
}

// WithReleases names, in v, the release of each library a strategy builds
// against from the catalog (variants/libraries.yaml): "Kokkos 4.6.01".
// A library the catalog lacks keeps no release.
func WithReleases(v *results.Vocabulary, cat *library.Catalog) *results.Vocabulary {
	if v == nil || cat == nil {
		return v
	}
	for i, s := range v.Strategies {
		if s.Library == nil {
			continue
		}
		if l := cat.Library(s.Library.Name); l != nil {
			named := *s.Library
			named.Release, named.Title = l.Release(), l.Title
			v.Strategies[i].Library = &named
		}
	}
	return v
}

// SizeLabel is a kernel's size axis label: its size doc and name ("vector length n").
func SizeLabel(k *spec.Kernel) string {
	if k.Size.Doc == "" {
		return k.Size.Name
	}
	return k.Size.Doc + " " + k.Size.Name
}

// Load reads, from the source tree at root, only what names need (kernel
// descriptions, the capability table and the strategies): no templates,
// no compiler probes. A refused kernel description (spec.Load) leaves its
// kernel out: the others still name theirs.
func Load(root string) (*results.Vocabulary, error) {
	kernels, _, kerr := spec.Load(layout.Path(root, layout.Kernels))
	caps, cerr := toolchain.LoadTable(layout.Path(root, layout.Capabilities))
	if err := errors.Join(kerr, cerr); err != nil {
		return nil, err
	}
	strategies, err := matrix.Load(layout.Path(root, layout.Strategies), caps)
	if err != nil {
		return nil, err
	}
	v := Of(kernels, strategies)
	if tcs, err := toolchain.Load(layout.Path(root, layout.Toolchains), root); err == nil {
		for _, tc := range tcs {
			v.Toolchains = append(v.Toolchains, tc.ID)
		}
	}
	if cat, err := library.Load(layout.Path(root, layout.Libraries), v.Toolchains); err == nil {
		WithReleases(v, cat) // without the catalog, libraries are named by name and backend
	}
	v.Sizes = map[string][]int64{}
	for _, k := range kernels {
		for _, set := range spec.SizeSets {
			v.Sizes[k.Name] = results.AppendNew(v.Sizes[k.Name], k.Size.Sets[set]...)
		}
		slices.Sort(v.Sizes[k.Name])
	}
	if spaces, err := tune.Load(layout.Path(root, tune.File)); err == nil {
		v.Tunables = cellTunables(spaces, kernels, matrix.Variants(strategies))
	}
	return v, nil
}

// cellTunables is every cell's tunables with its generated value, as the
// tuner's space of the cell names them (tune.Spaces.Record): kernel ->
// variant -> tunable -> value. A cell whose space cannot be made is left out.
func cellTunables(s *tune.Spaces, kernels []*spec.Kernel, variants []*matrix.Variant) map[string]map[string]map[string]int64 {
	byName := map[string]*spec.Kernel{}
	for _, k := range kernels {
		byName[k.Name] = k
	}
	out := map[string]map[string]map[string]int64{}
	for _, k := range kernels {
		out[k.Name] = map[string]map[string]int64{}
		for _, v := range variants {
			if r, err := s.Record(k, k.Used(byName), v); err == nil {
				out[k.Name][v.ID] = r.Default
			}
		}
	}
	return out
}

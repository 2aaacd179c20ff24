// Package layout owns the repository's layout: where the kernels, variants,
// toolchains, templates, report specs, the GPU results log and the results
// folders are, and loading the names (the vocabulary) from them.
package layout

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Paths relative to the repository root.
const (
	Templates     = "templates"                  // backends and program templates (internal/render)
	Kernels       = "templates/kernels"          // kernel descriptions (internal/spec)
	Capabilities  = "variants/capabilities.yaml" // toolchain capabilities (internal/toolchain)
	Strategies    = "variants/strategies.yaml"   // strategies and their knobs (internal/matrix)
	KnownFailures = build.KnownFile              // known build failures (internal/build)
	Toolchains    = "toolchains.yaml"            // compilers (internal/toolchain)
	ReportSpecs   = "templates/report"           // figures, claims, tables (internal/report)
	Results       = results.RunsDir              // results folders (internal/results)
	BuildDir      = "build"                      // the default build folder (internal/build)
)

// Path is rel (a constant of this package) under root.
func Path(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

// VocabularyOf lists the names of a loaded project for the report: its
// kernels, strategies and their variants, the devices the strategies run on
// and the compiler families (toolchain.Families).
func VocabularyOf(kernels []*spec.Kernel, strategies []*matrix.Strategy) *results.Vocabulary {
	v := &results.Vocabulary{Families: toolchain.Families}
	for _, k := range kernels {
		v.Kernels = append(v.Kernels, results.KernelName{Name: k.Name, SizeLabel: SizeLabel(k)})
	}
	variants := matrix.Variants(strategies)
	for _, s := range strategies {
		sn := results.StrategyName{Name: s.Name}
		for _, x := range variants {
			if x.Strategy == s {
				sn.Variants = append(sn.Variants, x.ID)
			}
		}
		v.Strategies = append(v.Strategies, sn)
		v.Devices = results.AppendNew(v.Devices, s.Device)
	}
	slices.Sort(v.Devices)
	return v
}

// SizeLabel is a kernel's size axis label: its size doc and name ("vector length n").
func SizeLabel(k *spec.Kernel) string {
	if k.Size.Doc == "" {
		return k.Size.Name
	}
	return k.Size.Doc + " " + k.Size.Name
}

// LoadVocabulary reads, from the source tree at root, only what names need (kernel descriptions, the
// capability table and the strategies): no templates, no compiler probes. A refused kernel
// description (spec.Load) leaves its kernel out: the others still name theirs.
func LoadVocabulary(root string) (*results.Vocabulary, error) {
	kernels, _, kerr := spec.Load(Path(root, Kernels))
	caps, cerr := toolchain.LoadTable(Path(root, Capabilities))
	if err := errors.Join(kerr, cerr); err != nil {
		return nil, err
	}
	strategies, err := matrix.Load(Path(root, Strategies), caps)
	if err != nil {
		return nil, err
	}
	return VocabularyOf(kernels, strategies), nil
}

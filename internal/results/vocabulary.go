package results

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// VocabularyOf lists the names of a loaded project for the report: its
// kernels, strategies and their variants, the devices the strategies run on
// and the compiler families (toolchain.Families).
func VocabularyOf(kernels []*spec.Kernel, strategies []*matrix.Strategy) *Vocabulary {
	v := &Vocabulary{Families: toolchain.Families}
	for _, k := range kernels {
		v.Kernels = append(v.Kernels, KernelName{Name: k.Name, SizeLabel: SizeLabel(k)})
	}
	variants := matrix.Variants(strategies)
	for _, s := range strategies {
		sn := StrategyName{Name: s.Name}
		for _, x := range variants {
			if x.Strategy == s {
				sn.Variants = append(sn.Variants, x.ID)
			}
		}
		v.Strategies = append(v.Strategies, sn)
		v.Devices = AppendNew(v.Devices, s.Device)
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
// capability table and the strategies): no templates, no compiler probes.
func LoadVocabulary(root string) (*Vocabulary, error) {
	kernels, kerr := spec.LoadDir(filepath.Join(root, "templates", "kernels"))
	caps, cerr := toolchain.LoadTable(filepath.Join(root, "variants", "capabilities.yaml"))
	if err := errors.Join(kerr, cerr); err != nil {
		return nil, err
	}
	strategies, err := matrix.Load(filepath.Join(root, "variants", "strategies.yaml"), caps)
	if err != nil {
		return nil, err
	}
	return VocabularyOf(kernels, strategies), nil
}

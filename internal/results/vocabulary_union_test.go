package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A folder's vocabulary widened by the source tree's: the folder's names
// first (its size labels win), then what only the tree has.
func TestVocabularyUnion(t *testing.T) {
	folder := &Vocabulary{
		Kernels:    []KernelName{{Name: "spmv", SizeLabel: "N then"}},
		Strategies: []StrategyName{{Name: "kk-omp", Variants: []string{"kk-omp-a"}}},
		Families:   []string{"llvm"}, Devices: []string{"omptarget"},
	}
	tree := &Vocabulary{
		Kernels:    []KernelName{{Name: "spmv", SizeLabel: "N now"}, {Name: "snap_step", SizeLabel: "cells"}},
		Strategies: []StrategyName{{Name: "kk-omp", Variants: []string{"kk-omp-a", "kk-omp-b"}}, {Name: "serial", Variants: []string{"serial"}}},
		Families:   []string{"gcc", "llvm"}, Devices: []string{"host", "omptarget"},
	}
	u := Union(folder, tree)
	assert.Equal(t, []string{"spmv", "snap_step"}, u.KernelNames())
	assert.Equal(t, "N then", u.SizeLabel("spmv"))
	assert.Equal(t, []string{"kk-omp-a", "kk-omp-b", "serial"}, u.VariantNames())
	assert.Equal(t, []string{"llvm", "gcc"}, u.Families)
	assert.Equal(t, []string{"omptarget", "host"}, u.Devices)
	assert.Equal(t, []string{"kk-omp-a"}, folder.Strategies[0].Variants, "the inputs are not changed")
	assert.Same(t, tree, Union(nil, tree))
	assert.Nil(t, Union(nil, nil))
}

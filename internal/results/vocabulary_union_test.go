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

// A folder recorded before strategies named their library and twins takes
// the tree's; the tree's release names a library the folder names without.
func TestVocabularyUnionLibraries(t *testing.T) {
	folder := &Vocabulary{Strategies: []StrategyName{
		{Name: "kk-omp", Variants: []string{"kk-omp-a", "kk-omp-b"}},
		{Name: "kokkos-omptarget", Variants: []string{"kokkos-omptarget"}, Library: &LibraryName{Name: "kokkos", Backend: "omptarget"}},
	}}
	tree := &Vocabulary{Strategies: []StrategyName{
		{Name: "kk-omp", Variants: []string{"kk-omp-a", "kk-omp-b"}, Layer: "kk/omptarget.hpp"},
		{Name: "kokkos-omptarget", Variants: []string{"kokkos-omptarget"},
			Library: &LibraryName{Name: "kokkos", Backend: "omptarget", Title: "Kokkos", Release: "Kokkos 4.6.01"},
			Twins:   map[string][]string{"kokkos-omptarget": {"kk-omp-a", "kk-omp-b"}}},
	}}
	u := Union(folder, tree)
	assert.Equal(t, "kk/omptarget.hpp", u.Strategy("kk-omp-b").Layer)
	assert.Equal(t, "Kokkos 4.6.01", u.Strategy("kokkos-omptarget").Library.Named())
	assert.Equal(t, "Kokkos", u.Strategy("kokkos-omptarget").Library.Titled())
	assert.Nil(t, u.Strategy("kk-omp-a").Library)
	assert.Equal(t, []string{"kokkos-omptarget"}, u.TwinsOf("kk-omp-b"))
	assert.Equal(t, []string{"kk-omp-a", "kk-omp-b"}, u.Strategy("kokkos-omptarget").Twins["kokkos-omptarget"])
	assert.Empty(t, folder.Strategies[1].Library.Release, "the inputs are not changed")
	assert.Empty(t, u.TwinsOf("serial"))
}

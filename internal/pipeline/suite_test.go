package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/suite"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// The quick default, over the shipped kernels and strategies and whatever
// toolchains this machine has: paper 002's four kernels (family
// suite.Measured) under every variant each host toolchain builds, no cell
// that variants/known-failures.yaml names, and every other strategy and
// kernel family with each toolchain (the wide suite adds every kernel), a
// cell or so each. Computed from the loaded vocabulary, so a kernel added
// keeps this test true.
func TestQuickSuiteCoversTheShippedMatrix(t *testing.T) {
	ctx := context.Background()
	full, err := Load(ctx, Config{Root: "../..", Suite: suite.Full, GPU: "0", Log: io.Discard})
	require.NoError(t, err)
	var log bytes.Buffer
	quick, err := Load(ctx, Config{Root: "../..", GPU: "0", Log: &log})
	require.NoError(t, err)
	known, err := build.LoadKnown("../../" + layout.KnownFailures)
	require.NoError(t, err)
	isKnown := func(id string) bool {
		return slices.ContainsFunc(known, func(k build.Known) bool { ok, _ := path.Match(k.Cell, id); return ok })
	}
	keys := func(c *matrix.Cell) []string {
		return []string{"strategy " + c.Variant.Strategy.Name + " with " + c.Toolchain.ID, "family " + c.Kernel.Family + " with " + c.Toolchain.ID}
	}
	inQuick := map[string]bool{}
	have := map[string]bool{}
	n, rest := 0, 0
	for _, c := range quick.Cells() {
		if c.On {
			n++
			inQuick[c.ID] = true
			assert.False(t, isKnown(c.ID), "quick takes %s, a known failure", c.ID)
			if c.Kernel.Family != suite.Measured || c.Toolchain.Target != "host" {
				rest++
			}
			for _, k := range keys(c) {
				have[k] = true
			}
		}
	}
	on, measured := 0, 0
	want, families := map[string]bool{}, map[string]bool{}
	for _, c := range full.Cells() {
		if !c.On || c.Variant.Strategy.Library != nil { // library cells are not sampled yet (suite.Cells)
			continue
		}
		on++
		if c.Kernel.Family == suite.Measured && c.Toolchain.Target == "host" && c.Runnable && c.Variant.Form() && !isKnown(c.ID) {
			measured++
			assert.True(t, inQuick[c.ID], "quick leaves out %s, a host cell of paper 002's kernels", c.ID)
		}
		if !isKnown(c.ID) {
			for _, k := range keys(c) {
				want[k] = true
			}
			families[c.Kernel.Family+" with "+c.Toolchain.ID] = true
		}
	}
	require.NotZero(t, on, "no cell is on: no toolchain found?")
	for k := range want {
		assert.True(t, have[k], "quick leaves %s uncovered", k)
	}
	if hasGCC := slices.ContainsFunc(full.Toolchains, func(tc *toolchain.Toolchain) bool { return tc.ID == "gcc-host" && tc.Found() }); hasGCC {
		for _, k := range []string{"axpby", "dot", "spmv", "cgsolve"} {
			for _, v := range []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw"} {
				assert.True(t, inQuick[k+"."+v+".gcc-host"], "quick leaves out %s.%s.gcc-host", k, v)
			}
			assert.False(t, inQuick[k+".kk-omp-b-wo-num-teams.gcc-host"], "quick takes %s.kk-omp-b-wo-num-teams.gcc-host, a variation of a form", k)
		}
	}
	// One cell or so of each other family and strategy: at most a cell per key.
	assert.LessOrEqual(t, rest, len(want), "%d cells beside paper 002's host cells", rest)
	assert.Less(t, n, on)
	assert.Equal(t, n-rest, measured)
	assert.Contains(t, log.String(), fmt.Sprintf("suite quick: %d cells of %d that are on (%d of family 002", n, on, measured))
	assert.Contains(t, log.String(), "PM_SUITE=full")

	// Naming the selection runs all of it; PM_SUITE=quick samples within it.
	named, err := Load(ctx, Config{Root: "../..", Kernels: []string{"axpby"}, GPU: "0", Log: io.Discard})
	require.NoError(t, err)
	sampled, err := Load(ctx, Config{Root: "../..", Kernels: []string{"axpby"}, Suite: suite.Quick, GPU: "0", Log: io.Discard})
	require.NoError(t, err)
	count := func(p *Project) (n int) {
		for _, c := range p.Cells() {
			if c.On {
				n++
			}
		}
		return n
	}
	assert.Greater(t, count(named), count(sampled))
}

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/suite"
)

// The quick default, over the shipped kernels and strategies and whatever
// toolchains this machine has, covers what the full matrix has on: every
// strategy and kernel family with each toolchain (the wide suite adds every
// kernel). Computed from the loaded vocabulary, so a kernel added keeps this
// test true.
func TestQuickSuiteCoversTheShippedMatrix(t *testing.T) {
	ctx := context.Background()
	full, err := Load(ctx, Config{Root: "../..", Suite: suite.Full, GPU: "0", Log: io.Discard})
	require.NoError(t, err)
	var log bytes.Buffer
	quick, err := Load(ctx, Config{Root: "../..", GPU: "0", Log: &log})
	require.NoError(t, err)
	have, want := map[string]bool{}, map[string]bool{}
	keys := func(strategy, family, toolchain, kernel string) []string {
		return []string{"strategy " + strategy + " with " + toolchain, "family " + family + " with " + toolchain}
	}
	on := 0
	for _, c := range full.Cells() {
		if c.On {
			on++
			for _, k := range keys(c.Variant.Strategy.Name, c.Kernel.Family, c.Toolchain.ID, c.Kernel.Name) {
				want[k] = true
			}
		}
	}
	n := 0
	for _, c := range quick.Cells() {
		if c.On {
			n++
			for _, k := range keys(c.Variant.Strategy.Name, c.Kernel.Family, c.Toolchain.ID, c.Kernel.Name) {
				have[k] = true
			}
		}
	}
	require.NotZero(t, on, "no cell is on: no toolchain found?")
	for k := range want {
		assert.True(t, have[k], "quick leaves %s uncovered", k)
	}
	assert.Less(t, n, on)
	assert.Contains(t, log.String(), fmt.Sprintf("suite quick: %d cells of %d that are on", n, on))
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

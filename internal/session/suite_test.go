package session

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// The run stage's quick sample of a manifest: paper 002's host cells at two
// sizes of the default set, every other cell at its smallest ci size; a
// failed build is never run, but stays for build.csv.
func TestSampleManifestSizes(t *testing.T) {
	sizes := func(ci, def []int64) map[string][]int64 { return map[string][]int64{"ci": ci, "default": def} }
	vec := sizes([]int64{1003, 100003}, []int64{100000, 1000000, 3162277, 10000000})
	entry := func(id, kernel, family, strategy, tc, target, status string, s map[string][]int64) build.Entry {
		e := build.Entry{ID: id, Kernel: kernel, Family: family, Variant: strategy, Form: true, Strategy: strategy, Toolchain: tc, Target: target, Status: status, Sizes: s}
		if status == build.Built {
			e.Binary = tc + "/" + id
		}
		return e
	}
	m := &build.Manifest{Cells: []build.Entry{
		entry("axpby.serial.gcc-host", "axpby", suite.Measured, "serial", "gcc-host", "host", build.Built, vec),
		entry("axpby.omp-host.gcc-host", "axpby", suite.Measured, "omp-host", "gcc-host", "host", build.Built, vec),
		entry("axpby.omp-lambda.gcc-host", "axpby", suite.Measured, "omp-lambda", "gcc-host", "host", build.Failed, vec),
		entry("axpby.kk-cuda.nvcc-sm90", "axpby", suite.Measured, "kk-cuda", "nvcc-sm90", "sm_90", build.Built, vec),
		entry("fir.serial.gcc-host", "fir", "lcals", "serial", "gcc-host", "host", build.Built, sizes([]int64{100, 1000}, []int64{10000})),
	}}
	cfg := config.Config{GPU: "0"}
	cfg.Defaults()
	var log bytes.Buffer
	got := map[string]build.Entry{}
	for _, e := range SampleManifest(cfg, m, &log).Cells {
		got[e.ID] = e
	}
	require.Contains(t, got, "axpby.serial.gcc-host")
	assert.Equal(t, []int64{100000, 1000000}, got["axpby.serial.gcc-host"].Sizes["ci"])
	assert.Equal(t, []int64{100000, 1000000}, got["axpby.omp-host.gcc-host"].Sizes["ci"])
	assert.Equal(t, []int64{1003}, got["axpby.kk-cuda.nvcc-sm90"].Sizes["ci"], "a GPU cell is sampled at its smallest size")
	assert.Equal(t, []int64{100}, got["fir.serial.gcc-host"].Sizes["ci"])
	require.Contains(t, got, "axpby.omp-lambda.gcc-host", "a failed build stays for build.csv")
	assert.Empty(t, got["axpby.omp-lambda.gcc-host"].Binary)
	assert.Contains(t, log.String(), "run: suite quick: 4 cells of the 5 the build folder holds")

	// Named kernels run every cell at the size set's sizes, as before.
	cfg.Kernels = []string{"axpby"}
	for _, e := range SampleManifest(cfg, m, &log).Cells {
		if e.Kernel == "axpby" {
			assert.Equal(t, vec, e.Sizes, e.ID)
		}
	}
}

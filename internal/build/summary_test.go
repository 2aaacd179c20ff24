package build

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	mx "github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A sampled build prints its counts without the cells that are off, and the
// off cells in one line: how many for toolchains not found, how many ruled
// out otherwise (those that cannot be rendered among them), the strategies
// the sample left out, and where each reason is.
func TestSummarizeSample(t *testing.T) {
	gcc := &toolchain.Toolchain{ID: "gcc-host", Target: "host"}
	nvcc := &toolchain.Toolchain{ID: "nvcc-sm90", Target: "sm_90", Missing: "nvcc not found"}
	res := []Result{
		{Cell: &mx.Cell{ID: "axpby.serial.gcc-host", Toolchain: gcc}, Status: Built},
		{Cell: &mx.Cell{ID: "dot.serial.gcc-host", Toolchain: gcc}, Status: Cached},
		{Cell: &mx.Cell{ID: "axpby.kk-cuda.nvcc-sm90", Toolchain: nvcc}, Status: Skipped, Reason: "toolchain nvcc-sm90: nvcc not found"},
		{Cell: &mx.Cell{ID: "k.omp-class.gcc-host", Toolchain: gcc}, Status: Skipped, Reason: "cannot render: k.yaml:2:3: omp-class keeps the trip count in a data member"},
		{Cell: &mx.Cell{ID: "k.kk-ompx.gcc-host", Toolchain: gcc}, Status: Skipped, Reason: "missing ompx_bare"},
	}
	var log bytes.Buffer
	SummarizeSample(&log, res, 2*time.Second, []string{"omp-lambda with gcc-host"})
	assert.Equal(t, "build: 2 cells: 1 built, 1 cached, 0 failed; took 2s\n"+
		"  off: 3 cells (1 for the 1 toolchains not found here; 2 that a compiler's version, a backend or the kernel rules out (1 cannot be rendered)); "+
		"left out, every cell a known failure (variants/known-failures.yaml): omp-lambda with gcc-host; why each: go run mage.go doctor\n", log.String())
	assert.NotContains(t, log.String(), "OFF")

	log.Reset()
	Summarize(&log, res, 2*time.Second)
	assert.Equal(t, 1, strings.Count(log.String(), "  OFF k.omp-class.gcc-host: cannot render"), "a named selection lists each cell that cannot be rendered")
}

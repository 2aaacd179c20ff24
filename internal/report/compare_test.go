package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/results"
)

// compareRuns writes two small runs: b is slower on one cell, faster on
// another, fails to verify a third, and each has a cell the other lacks.
func compareRuns(t *testing.T) (a, b string) {
	base := reporttest.RunSpec{
		ID: "20260101-100000-a", Host: "a", Toolchains: reporttest.CPUToolchains,
		Eff: map[string]map[string]float64{
			"serial":   {"axpby": 0.45, "dot": 0.5},
			"omp-host": {"axpby": 0.85, "dot": 0.9},
			"omp-raw":  {"dot": 0.8},
		},
		CopyGBps: map[string]float64{"gcc-host": 21, "clang19-host": 20.5},
		Drop:     []string{"dot.omp-raw.clang19-host"},
	}
	root := t.TempDir()
	a = filepath.Join(root, "a")
	reporttest.WriteRun(t, a, base)

	next := base
	next.ID, next.Host = "20260102-100000-b", "b"
	next.Scale = map[string]float64{"axpby.omp-host.gcc-host": 0.8, "dot.serial.clang19-host": 1.3, "axpby.serial.gcc-host": 0.9}
	next.Unverified = map[string]int64{"dot.omp-host.gcc-host": 1 << 20}
	next.Drop = []string{"dot.omp-raw.gcc-host"}
	b = filepath.Join(root, "b")
	reporttest.WriteRun(t, b, next)
	return a, b
}

func TestCompare(t *testing.T) {
	a, b := compareRuns(t)
	var out bytes.Buffer
	n, err := results.Compare(a, b, 0.10, &out)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "3 sizes of axpby.omp-host.gcc-host and one failed verification")
	reporttest.Golden(t, "compare.txt", out.Bytes())
	assert.True(t, strings.Contains(out.String(), "cell only in a: dot.omp-raw.gcc-host"))
	assert.Regexp(t, `axpby\.serial\.gcc-host +65536 .* 0\.8\d\d +\[0\.8\d\d, 0\.9\d\d\] +inconclusive`, out.String(),
		"10% slower with 1% noise straddles the 0.90 threshold: not flagged")
}

func TestCompareBadThreshold(t *testing.T) {
	_, err := results.Compare("a", "b", 1.5, &bytes.Buffer{})
	assert.EqualError(t, err, "compare: threshold 1.5 is not in [0, 1)")
}

package verify

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

func TestBuildCountsByTargetAndFindsWhatIsMissing(t *testing.T) {
	m := &build.Manifest{Cells: []build.Entry{
		{ID: "a.serial.gcc-host", Status: build.Built},
		{ID: "a.omp-raw.clang19-sm90", Status: build.Cached},
		{ID: "a.omp-lambda.gcc12-nvptx", Status: build.Failed, Reason: "internal compiler error: in gimplify"},
		{ID: "b.omp-lambda.gcc12-nvptx", Status: build.Failed, Reason: "error: something new"},
		{ID: "b.omp-raw.clang19-sm90", Status: build.Skipped, Reason: "off"},
		{ID: "a.omp-raw.clang19-gfx90a", Status: build.Built, DeviceOnly: true},
	}}
	known := []build.Known{{Cell: "*.omp-lambda.gcc12-nvptx", Message: regexp.MustCompile("internal compiler error")}}
	var s Summary
	s.Build([]Cell{{"a.serial.gcc-host", "host"}, {"a.omp-raw.clang19-sm90", "sm_90"}, {"a.omp-lambda.gcc12-nvptx", "sm_80"},
		{"b.omp-lambda.gcc12-nvptx", "sm_80"}, {"b.omp-raw.clang19-sm90", "sm_90"}, {"c.serial.gcc-host", "host"},
		{"a.omp-raw.clang19-gfx90a", "gfx90a"}}, m, known)
	assert.Equal(t, &Count{On: 2, Compiled: 1}, s.Targets["host"])
	assert.Equal(t, &Count{On: 2, Compiled: 1}, s.Targets["sm_90"])
	assert.Equal(t, &Count{On: 2, Known: []string{"a.omp-lambda.gcc12-nvptx"}}, s.Targets["sm_80"])
	require.Len(t, s.Problems, 3)
	assert.Contains(t, s.Problems[0], "b.omp-lambda.gcc12-nvptx: on, failed: error: something new")
	assert.Contains(t, s.Problems[1], "b.omp-raw.clang19-sm90: on, skipped")
	assert.Contains(t, s.Problems[2], "c.serial.gcc-host: on, not in the build manifest")
	var out bytes.Buffer
	s.Print(&out)
	lines := strings.Split(out.String(), "\n")
	assert.Equal(t, "verify: host cells: 2 on, 1 compiled, 0 known failures", lines[0])
	assert.Contains(t, out.String(), "verify: gfx90a cells: 1 on, 1 compiled (1 of them device code only), 0 known failures\n")
	assert.Contains(t, out.String(), "verify: GPU cells: 5 on, 2 compiled (1 of them device code only), 1 known failures\n")
	assert.Error(t, s.Err())
}

func TestRunNeedsEveryCellMeasuredAndVerified(t *testing.T) {
	dir := t.TempDir() + "/r"
	w, err := results.Create(dir)
	require.NoError(t, err)
	for _, r := range []results.Record{
		{Kind: results.KindKernel, Cell: "a.serial.gcc-host", Size: 10, Verified: true},
		{Kind: results.KindKernel, Cell: "b.serial.gcc-host", Size: 10, Verified: false, Error: "z holds NaN"},
	} {
		require.NoError(t, w.Add(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, results.WriteRun(dir, results.Run{ID: "r", State: results.StateFinished}))
	var s Summary
	s.Run(dir, []string{"a.serial.gcc-host", "b.serial.gcc-host", "c.serial.gcc-host"})
	assert.Equal(t, 3, s.Expected)
	assert.Equal(t, 2, s.Measured)
	assert.Equal(t, 2, s.Records)
	assert.Equal(t, 1, s.Verified)
	require.Len(t, s.Problems, 2)
	assert.Contains(t, s.Problems[0], "b.serial.gcc-host size 10: not verified: z holds NaN")
	assert.Contains(t, s.Problems[1], "c.serial.gcc-host: built, not measured")

	require.NoError(t, results.WriteRun(dir, results.Run{ID: "r", State: results.StateInterrupted}))
	s = Summary{}
	s.Run(dir, []string{"a.serial.gcc-host"})
	assert.Contains(t, strings.Join(s.Problems, "\n"), "run interrupted, not finished")
}

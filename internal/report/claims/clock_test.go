package claims

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// A folder of an older harness timed CUDA with events and OpenMP with the
// host clock: a claim that pairs them is not measurable, named so, its pairs
// listed; pairs of one clock are still ranked.
func TestClaimsPairLikeClocksOnly(t *testing.T) {
	older := reporttest.MemResults()
	for i := range older.Kernel {
		older.Kernel[i].Clock = "" // as an older harness wrote them
	}
	dir := t.TempDir()
	require.NoError(t, results.WriteRun(dir, older.Run))
	require.NoError(t, results.WriteRecords(dir, older.Kernel))
	res, err := results.Load(dir) // the loader infers the clocks from run.json
	require.NoError(t, err)
	specs, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(specs, res)

	omp := got[0] // omp-raw over KK-CUDA
	assert.Equal(t, NotMeasurable, omp.Outcome)
	assert.Empty(t, omp.Ratios)
	assert.Equal(t, "not measurable (clocks differ: host against cuda-event (1 pair not compared))", omp.Verdict())
	assert.Equal(t, []string{"omp-raw@clang19-sm90 / kk-cuda-3lvl@nvcc-sm90 at 64: clocks differ: host against cuda-event"}, omp.Unlike)
	assert.Contains(t, omp.Verdict(), "clocks differ")

	geo := got[1] // kk-omp-b over KK-CUDA at every common size
	assert.Len(t, geo.Unlike, 2, "sizes 32 and 64")

	same := got[4] // omp-raw over kk-omp-b, one toolchain: one clock
	assert.NotEqual(t, NotMeasurable, same.Outcome)
	assert.Len(t, same.Ratios, 2)
	assert.Empty(t, same.Unlike)

	md := string(Markdown("older", got))
	assert.Contains(t, md, "Not compared, omp-raw@clang19-sm90 / kk-cuda-3lvl@nvcc-sm90 at 64: clocks differ: host against cuda-event.")

	// The same folder measured by the harness that names its clock: ranked.
	now := EvaluateFolder(specs, reporttest.MemResults())
	assert.Len(t, now[0].Ratios, 1)
	assert.Empty(t, now[0].Unlike)
}

// The largest common size decides, whatever its clocks: a pair of unlike
// clocks there never gives way to a smaller size of like clocks.
func TestUnlikeClocksAtTheLargestSizeAreNotReplaced(t *testing.T) {
	res := reporttest.MemResults()
	for i, r := range res.Kernel {
		if r.Toolchain == "nvcc-sm90" && r.Size == 64 {
			res.Kernel[i].Clock = results.ClockCUDAEvent
		}
	}
	specs, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := Evaluate(specs, dataset.New(res))
	assert.Empty(t, got[0].Ratios, "size 32 is like-clocked, but the claim asks the largest")
	assert.True(t, strings.HasPrefix(got[0].Reason, "clocks differ: host against cuda-event"), got[0].Reason)
	assert.Len(t, got[1].Ratios, 1, "every common size: 32 compares, 64 does not")
	assert.Len(t, got[1].Unlike, 1)
}

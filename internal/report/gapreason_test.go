package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// gapGPU is an sm_90-like model: 64 warps, 32 blocks and 65536 registers
// (4 sub-partitions, 256-register units) per SM, 132 SMs.
func gapGPU() *machine.Model {
	return &machine.Model{Name: "gpu", Vendor: "nvidia", Kind: machine.KindGPU, GPU: machine.GPU{
		SMCount: 132, WarpSize: 32, MaxThreadsPerBlock: 1024, MaxThreadsPerSM: 2048, MaxWarpsPerSM: 64, MaxBlocksPerSM: 32,
		SMSubPartitions: 4, RegistersPerSM: 65536, RegistersPerBlock: 65536, MaxRegistersPerThread: 255, RegisterAllocUnit: 256,
		SharedMemoryPerSMBytes: 233472, SharedMemoryPerBlockBytes: 49152, SharedMemoryPerBlockOptin: 232448,
		SharedMemoryReservedPerBlock: 1024, SharedMemoryAllocUnit: 128}}
}

// Three cells whose default is 25% slower than the best:
//   - a (registers 40): 8 x 1 against 16 x 8. A warp of 40 registers takes
//     1280; a sub-partition's 16384 hold 12 such warps, 48 per SM. One-warp
//     blocks stop at the 32 blocks an SM holds (32 warps: 50%); four-warp
//     blocks at 48 / 4 = 12 (48 warps: 75%).
//   - b (registers 40): 16 x 8 against 32 x 8, rows 101376: 12 and 6 blocks,
//     both 75%; 1584 and 792 teams resident, leagues 101376 / 16 = 6336 and
//     101376 / 32 = 3168: four full waves each. Nothing separates them.
//   - c: no registers recorded for its binary.
//
// Rows have 27 non-zeros.
const gapFixture = `{"cell":"spmv.a.tc","size":1,"config":"rows_per_team=8,team_size=8,vector_size=1","build_key":"ka","device":"GPU-0","median_s":0.00125,"lo_s":0.00124,"hi_s":0.00126,"gbps":1,"verified":true,"default":true}
{"cell":"spmv.a.tc","size":1,"config":"rows_per_team=16,team_size=16,vector_size=8","build_key":"ka","device":"GPU-0","median_s":0.001,"lo_s":0.00099,"hi_s":0.00101,"gbps":1,"verified":true}
{"cell":"spmv.b.tc","size":1,"config":"rows_per_team=16,team_size=16,vector_size=8","build_key":"kb","device":"GPU-0","median_s":0.00125,"lo_s":0.00124,"hi_s":0.00126,"gbps":1,"verified":true,"default":true}
{"cell":"spmv.b.tc","size":1,"config":"rows_per_team=32,team_size=32,vector_size=8","build_key":"kb","device":"GPU-0","median_s":0.001,"lo_s":0.00099,"hi_s":0.00101,"gbps":1,"verified":true}
{"cell":"spmv.c.tc","size":1,"config":"rows_per_team=16,team_size=16,vector_size=8","build_key":"kc","device":"GPU-0","median_s":0.00125,"lo_s":0.00124,"hi_s":0.00126,"gbps":1,"verified":true,"default":true}
{"cell":"spmv.c.tc","size":1,"config":"rows_per_team=32,team_size=32,vector_size=8","build_key":"kc","device":"GPU-0","median_s":0.001,"lo_s":0.00099,"hi_s":0.00101,"gbps":1,"verified":true}
`

func gapInputs() GapInputs {
	gpu := gapGPU()
	regs40 := []machine.Resources{{Kernel: "spmv_kernel", Registers: 40}}
	return GapInputs{
		Model:     func(string) *machine.Model { return gpu },
		Resources: map[string][]machine.Resources{"ka": regs40, "kb": regs40},
		RowLength: func(string, int64) (float64, bool) { return 27, true },
		League: func(cell string, size int64, c tune.Config) (int64, bool) {
			const rows = 101376
			return (rows + c["rows_per_team"] - 1) / c["rows_per_team"], true
		},
	}
}

func TestGapReasonsFromTheOccupancyModel(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tuning.jsonl"), []byte(gapFixture), 0o644))
	v, err := LoadTuning(dir)
	require.NoError(t, err)
	require.Len(t, v.Rows, 3)
	in := gapInputs()

	a := v.Rows[0].Reason(in)
	assert.Contains(t, a, "default vs best: rows_per_team 8 vs 16, team_size 8 vs 16, vector_size 1 vs 8")
	assert.Contains(t, a, "registers 40")
	assert.Contains(t, a, "occupancy 50% (32 blocks of 8 threads per SM, blocks per SM-bound) vs 75% (12 blocks of 128 threads per SM, registers-bound)")
	assert.Contains(t, a, "registers-bound) (the model favours the best)")
	assert.Contains(t, a, "league 12672 vs 6336 teams, 3.00 vs 4.00 waves of 4224 vs 1584 resident")
	// 27 non-zeros: 27 passes of 1 lane against 4 passes of 8 (27 of 32).
	assert.Contains(t, a, "rows of 27.0 non-zeros keep 100% vs 84% of the vector lanes busy (the model favours the default)")
	assert.NotContains(t, a, "does not separate")

	b := v.Rows[1].Reason(in)
	assert.Contains(t, b, "default vs best: rows_per_team 16 vs 32, team_size 16 vs 32")
	assert.Contains(t, b, "occupancy 75% (12 blocks of 128 threads per SM, registers-bound) vs 75% (6 blocks of 256 threads per SM, registers-bound)")
	assert.Contains(t, b, "league 6336 vs 3168 teams, 4.00 vs 4.00 waves of 1584 vs 792 resident (last wave 0% vs 0% idle)")
	assert.Contains(t, b, "the occupancy model does not separate them")

	// Without the binary's registers: 128 and 256 threads part only where a
	// sub-partition's warps, x 4, do not divide by 8 warps; at 40 registers
	// (12 warps) they do, at 56 (16384 / 1792 = 9 warps: 36 per SM, 9
	// blocks of 4 warps against 4 of 8) they do not.
	c := v.Rows[2].Reason(in)
	assert.Contains(t, c, "registers not recorded for the tuned binary")
	assert.NotContains(t, c, "does not separate", "the occupancy depends on registers nobody recorded")
	ranges := regexp.MustCompile(`only at (.*) registers per thread`).FindStringSubmatch(c)
	require.NotNil(t, ranges, c)
	in56, in40 := false, false
	for _, r := range strings.Split(ranges[1], ", ") {
		lo, hi, _ := strings.Cut(r, "-")
		l, _ := strconv.Atoi(lo)
		h := l
		if hi != "" {
			h, _ = strconv.Atoi(hi)
		}
		in56 = in56 || l <= 56 && 56 <= h
		in40 = in40 || l <= 40 && 40 <= h
	}
	assert.True(t, in56, c)
	assert.False(t, in40, c)

	v.Explain = in
	md := string(v.Markdown())
	assert.Contains(t, md, "- spmv.b.tc at 1: default vs best")
	assert.Equal(t, 3, strings.Count(md, "\n- spmv."), "a reason per cell not within the bar")
}

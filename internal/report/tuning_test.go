package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// A hand-written tuning.jsonl of three cells on one GPU. spmv.a: the
// default (16 x 1, 1.2 ms) is 20% slower than the best (32 x 4, 1.0 ms);
// spmv.b: the default is the best; spmv.c: the default (1.05 ms) overlaps
// the best's interval (indistinguishable); an unverified faster
// configuration never wins.
const tuningFixture = `{"cell":"spmv.a.tc","size":100,"config":"team_size=16,vector_size=1","build_key":"k","device":"GPU-0123456789ab","median_s":0.0012,"lo_s":0.00119,"hi_s":0.00121,"gbps":1000,"verified":true,"default":true}
{"cell":"spmv.a.tc","size":100,"config":"team_size=32,vector_size=4","build_key":"k","device":"GPU-0123456789ab","median_s":0.0010,"lo_s":0.00099,"hi_s":0.00101,"gbps":1200,"verified":true}
{"cell":"spmv.a.tc","size":100,"config":"team_size=32,vector_size=1","build_key":"k","device":"GPU-0123456789ab","median_s":0.0011,"lo_s":0.00109,"hi_s":0.00111,"gbps":1090.9,"verified":true}
{"cell":"spmv.a.tc","size":100,"config":"team_size=16,vector_size=4","build_key":"k","device":"GPU-0123456789ab","median_s":0.0005,"lo_s":0.00049,"hi_s":0.00051,"gbps":2400,"verified":false}
{"cell":"spmv.b.tc","size":100,"config":"team_size=8","build_key":"k","device":"GPU-0123456789ab","median_s":0.002,"lo_s":0.00199,"hi_s":0.00201,"gbps":600,"verified":true,"default":true}
{"cell":"spmv.b.tc","size":100,"config":"team_size=64","build_key":"k","device":"GPU-0123456789ab","median_s":0.003,"lo_s":0.00299,"hi_s":0.00301,"gbps":400,"verified":true}
{"cell":"spmv.c.tc","size":100,"config":"team_size=4","build_key":"k","device":"GPU-0123456789ab","median_s":0.00105,"lo_s":0.0010,"hi_s":0.0011,"gbps":1142,"verified":true,"default":true}
{"cell":"spmv.c.tc","size":100,"config":"team_size=8","build_key":"k","device":"GPU-0123456789ab","median_s":0.0010,"lo_s":0.00098,"hi_s":0.00102,"gbps":1200,"verified":true}
`

func TestTuningGapTableAndCurves(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tuning.jsonl"), []byte(tuningFixture), 0o644))
	v, err := LoadTuning(dir)
	require.NoError(t, err)
	require.Len(t, v.Rows, 3)

	a := v.Rows[0]
	assert.Equal(t, []string{"spmv", "a", "tc"}, []string{a.Kernel, a.Variant, a.Toolchain})
	gap, tied, ok := a.Gap()
	require.True(t, ok)
	assert.InDelta(t, 0.2, gap, 1e-12, "1.2 ms over 1.0 ms")
	assert.False(t, tied)
	assert.False(t, a.Close())
	assert.Equal(t, "team_size=32,vector_size=4", a.Best.Config.String(), "the unverified 0.5 ms never wins")
	assert.Equal(t, 1, a.Unverified)

	assert.True(t, v.Rows[1].Close(), "the default is the best")
	gap, tied, _ = v.Rows[2].Gap()
	assert.InDelta(t, 0.05, gap, 1e-12)
	assert.True(t, tied, "[1.0, 1.1] ms overlaps [0.98, 1.02] ms")

	md := string(v.Markdown())
	assert.Contains(t, md, "in 2 of 3 (cell, size) pairs. Not within: spmv.a.tc at 100 (20% slower).")
	assert.NotContains(t, md, "does not mark the default")
	for _, row := range []string{
		"| spmv.a.tc | 100 | GPU-01234567 | 4 | team_size=16, vector_size=1 | 1.200ms | team_size=32, vector_size=4 | 1.000ms [990.0µs, 1.010ms] | 0 | 1.200 |",
		"| spmv.b.tc | 100 | GPU-01234567 | 2 | team_size=8 | 2.000ms | team_size=8 | 2.000ms [1.990ms, 2.010ms] | 0 | the default is the best |",
		"| spmv.c.tc | 100 | GPU-01234567 | 2 | team_size=4 | 1.050ms | team_size=8 | 1.000ms [980.0µs, 1.020ms] | 1 | 1.050 (indistinguishable) |",
	} {
		assert.Contains(t, md, row)
	}

	require.Len(t, v.Curves, 1, "one (kernel, size) with team sizes varied")
	c := v.Curves[0]
	assert.Equal(t, "spmv", c.Kernel)
	svg := string(c.SVG)
	for _, s := range []string{"a.tc", "b.tc", "c.tc", "vector 1", "vector 4", "team size"} {
		assert.Contains(t, svg, s)
	}
	assert.Equal(t, 1, strings.Count(svg, "<svg"))

	// a tuning.jsonl without the default's mark takes each cell's first evaluation
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tuning.jsonl"), []byte(strings.ReplaceAll(tuningFixture, `,"default":true`, "")), 0o644))
	v, err = LoadTuning(dir)
	require.NoError(t, err)
	assert.Equal(t, "team_size=16,vector_size=1", v.Rows[0].Default.Config.String())
	assert.Contains(t, string(v.Markdown()), "does not mark the default")
}

// A claim judged on a tuning alone: kk-ompx-opt's best 1.0 ms [0.99, 1.01]
// against kk-ompx's best 1.2 ms [1.18, 1.22] (both moving 2.4 MB): 1.2,
// bounded by 1.18/1.01 = 1.1683 and 1.22/0.99 = 1.2323, inside [1.05, 1.25].
func TestTuningClaimsBestAgainstBest(t *testing.T) {
	dir := t.TempDir()
	entry := func(variant, cfg string, s, lo, hi float64) string {
		return fmt.Sprintf(`{"cell":"spmv.%s.clang19-sm90","size":200,"config":%q,"build_key":"k","device":"GPU-x","median_s":%g,"lo_s":%g,"hi_s":%g,"gbps":%g,"verified":true}`,
			variant, cfg, s, lo, hi, 2.4e6/s/1e9)
	}
	lines := []string{
		entry("kk-ompx-opt", "team_size=16", 0.0011, 0.00109, 0.00111),
		entry("kk-ompx-opt", "team_size=32", 0.0010, 0.00099, 0.00101),
		entry("kk-ompx", "team_size=16", 0.0013, 0.00129, 0.00131),
		entry("kk-ompx", "team_size=64", 0.0012, 0.00118, 0.00122),
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tuning.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"),
		[]byte(`{"id":"tune","toolchains":[{"id":"clang19-sm90","family":"llvm","target":"sm_90"}]}`), 0o644))
	specs, err := reportspec.ParseClaims("c.yaml", []byte(`claims:
  - id: opt-gain
    paper: 000 Fig. 19
    quote: Q
    statement: opt about 15% faster.
    kernels: [spmv]
    numerator: {variants: [kk-ompx-opt], families: [llvm]}
    denominator: {variants: [kk-ompx], families: [llvm]}
    range: [1.05, 1.25]
  - id: needs-kk-omp
    paper: 000 Fig. 18
    quote: Q
    statement: KK-OMPX against KK-OMP.
    kernels: [spmv]
    numerator: {variants: [kk-ompx], families: [llvm]}
    denominator: {variants: [kk-omp-b], families: [llvm]}
    range: [1.15, .inf]
`), reporttest.Vocab(t))
	require.NoError(t, err)
	got, err := claims.EvaluateTuning(dir, specs)
	require.NoError(t, err)
	require.Len(t, got[0].Ratios, 1)
	x := got[0].Ratios[0]
	assert.InDelta(t, 1.2, x.Value, 1e-9)
	assert.InDelta(t, 1.18/1.01, x.Lo, 1e-9)
	assert.InDelta(t, 1.22/0.99, x.Hi, 1e-9)
	assert.Equal(t, claims.Reproduced, got[0].Outcome)
	assert.InDelta(t, 1.18/1.01, got[0].Lo, 1e-9, "the median of one ratio: its bounds")
	assert.Equal(t, claims.NotMeasurable, got[1].Outcome, "kk-omp-b was not tuned")
}

// A cell whose configurations all failed, or that has no team_size, draws
// no curve: the H100 tuning of the kernel-mode HOMMEXX cells (every
// evaluation refused) once panicked the book on an empty log axis.
func TestTuningCurvesSkipCellsWithoutVerifiedTeams(t *testing.T) {
	failed := &tune.CellResult{Cell: "k.direct-ompx.clang22-sm90", Size: 7}
	for _, ts := range []int64{8, 16, 32} {
		failed.Measured = append(failed.Measured, tune.Measurement{Config: tune.Config{"team_size": ts}, Error: "exit status 2"})
	}
	mapped := &tune.CellResult{Cell: "k.kk-cuda-3lvl.nvcc-sm90", Size: 7}
	for _, ts := range []int64{8, 16} {
		mapped.Measured = append(mapped.Measured, tune.Measurement{Config: tune.Config{"map_team_size": ts}, MedianS: 1, LoS: 1, HiS: 1, GBps: 1, Verified: true})
	}
	curves, err := tuningCurves([]*tune.CellResult{failed, mapped})
	require.NoError(t, err)
	assert.Empty(t, curves)
}

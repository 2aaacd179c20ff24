package claims

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Tuning records beside memResults' as-published ones: kk-omp-b and
// KK-CUDA at size 64 at searched configurations, one of them unverified.
func tunedResults() *results.Folder {
	res := reporttest.MemResults()
	rec := func(variant, tc string, gbps float64, cfg map[string]int64, verified bool) results.Record {
		t := 1 / gbps
		return results.Record{Kind: "kernel", Cell: "spmv." + variant + "." + tc, Kernel: "spmv", Variant: variant,
			Toolchain: tc, Size: 64, GBps: gbps, MedianS: t, Bytes: 1e9, Verified: verified, Config: cfg, Clock: results.ClockHost,
			TimesS: []float64{t * 0.99, t, t * 1.01, t * 0.995, t * 1.005}}
	}
	res.Kernel = append(res.Kernel,
		rec("kk-omp-b", "clang19-sm90", 1300, map[string]int64{"team_size": 32}, true),
		rec("kk-omp-b", "clang19-sm90", 1500, map[string]int64{"team_size": 64, "vector_size": 4}, true),
		rec("kk-omp-b", "clang19-sm90", 9000, map[string]int64{"team_size": 128}, false), // never the best
		rec("kk-cuda-3lvl", "nvcc-sm90", 1900, map[string]int64{"team_size": 8}, true),
	)
	// a tuned flag without a config: a run at tuned configurations
	flagged := rec("kk-cuda-3lvl", "nvcc-sm90", 2100, nil, true)
	flagged.TunedBest = true
	res.Kernel = append(res.Kernel, flagged)
	return res
}

func TestClaimsJudgedAsPublishedAndTuned(t *testing.T) {
	res := tunedResults()
	published, tuned := dataset.SplitViews(res.Kernel)
	assert.Len(t, published, len(reporttest.MemResults().Kernel), "tuning records leave the as-published view")
	require.Len(t, tuned, 2, "one best configuration per tuned (cell, size)")
	assert.Equal(t, "team_size=64,vector_size=4", dataset.ConfigKey(tuned[1]), "kk-omp-b's fastest verified configuration")
	assert.InDelta(t, 2100, tuned[0].GBps, 1e-9, "KK-CUDA's tuned-flag record beats its searched configuration and its default (2000)")

	claims, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, dataset.View(res, published))
	EvaluateTuned(claims, got, dataset.New(dataset.View(res, tuned)))

	b := got[1] // kk-omp-b-70: geomean over the sizes common to both sides
	assert.Equal(t, NotReproduced, b.Outcome, "as published: 900/1800 and 1000/2000")
	require.NotNil(t, b.Tuned)
	require.Len(t, b.Tuned.Ratios, 1, "only size 64 is tuned")
	assert.InDelta(t, 1500.0/2100, b.Tuned.Ratios[0].Value, 1e-12)
	assert.Equal(t, Reproduced, b.Tuned.Outcome, "0.714 lies in [0.65, 0.85]")
	assert.Regexp(t, `^reproduced \(measured 0\.71 \[0\.7\d, 0\.7\d\]`, b.TunedVerdict())

	assert.Equal(t, "not tuned (no tuned configuration of the numerator: omp-raw on llvm)", got[0].TunedVerdict())
	assert.Equal(t, "not tuned (no nvhpc device toolchain in this run)", got[2].TunedVerdict(),
		"a claim not measurable as published says why, not that it is untuned")

	md := string(Markdown("mem", got))
	assert.Contains(t, md, "| as published | tuned |")
	assert.Contains(t, md, "Tuned (best configuration against best): 1 claims decided")
	assert.Contains(t, md, "Tuned (each side at its best configuration):\n\n| kernel")
}

// A folder without tuning records: every tuned verdict is "not tuned",
// never a copy of the published one.
func TestUntunedFolderSaysNotTuned(t *testing.T) {
	res := reporttest.MemResults()
	published, tuned := dataset.SplitViews(res.Kernel)
	assert.Empty(t, tuned)
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, dataset.View(res, published))
	EvaluateTuned(claims, got, dataset.New(dataset.View(res, tuned)))
	for _, r := range got {
		assert.Regexp(t, `^not tuned \(`, r.TunedVerdict(), r.Claim.ID)
	}
}

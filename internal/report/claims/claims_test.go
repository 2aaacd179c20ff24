package claims

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

const memClaims = `claims:
  - id: omp-raw-70
    paper: 002 Fig. 3
    quote: Q
    statement: OMP reaches about 70% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.55, 0.85]
  - id: kk-omp-b-70
    paper: 002 Fig. 3
    quote: Q
    statement: KK-OMP-b reaches about 70% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [kk-omp-b], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: all
    aggregate: geomean
    range: [0.65, 0.85]
  - id: nvhpc
    paper: 002 Fig. 3
    quote: Q
    statement: NVHPC OMP reaches 50% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [nvhpc]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.4, 0.6]
  - id: omp-a-unverified
    paper: 002 Fig. 3
    quote: Q
    statement: KK-OMP-a counts only when verified.
    kernels: [spmv]
    numerator: {variants: [kk-omp-a], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl]}
    range: [0, 10]
  - id: raw-beats-b
    paper: 002 Fig. 3
    quote: Q
    statement: OMP is faster than KK-OMP-b at every size.
    type: order
    kernels: [spmv]
    numerator: {variants: [omp-raw]}
    denominator: {variants: [kk-omp-b]}
    same_toolchain: true
    sizes: all
    margin: 0.2
  - id: host-vs-device
    paper: none
    quote: Q
    statement: Host OMP against device OMP, both LLVM.
    target: any
    kernels: [spmv]
    numerator: {variants: [omp-raw], toolchains: [clang19-host]}
    denominator: {variants: [omp-raw], toolchains: [clang19-sm90]}
    keep: [library, size]
    aggregate: all
    range: [0, 0.1]
  - id: on-the-bound
    paper: 002 Fig. 3
    quote: Q
    statement: The ratio 0.70 against a band starting at 0.70.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.70, 0.85]
  - id: every-size
    paper: 002 Fig. 3
    quote: Q
    statement: Every size's ratio; 0.67 at size 32 lies below the band.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: all
    aggregate: all
    range: [0.68, 0.80]
`

func TestEvaluateClaims(t *testing.T) {
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, reporttest.MemResults())
	require.Len(t, got, 8)

	verdicts := map[string]string{}
	for _, r := range got {
		verdicts[r.Claim.ID] = string(r.Outcome)
	}
	assert.Equal(t, map[string]string{
		"omp-raw-70":       "reproduced",
		"kk-omp-b-70":      "not reproduced",
		"nvhpc":            "not measurable",
		"omp-a-unverified": "not measurable",
		"raw-beats-b":      "reproduced",
		"host-vs-device":   "reproduced",
		"on-the-bound":     "inconclusive",
		"every-size":       "not reproduced",
	}, verdicts)

	r := got[0]
	assert.InDelta(t, 0.7, r.Value, 1e-12)
	require.Len(t, r.Ratios, 1)
	x := r.Ratios[0]
	assert.Equal(t, []string{"spmv", "omp-raw@clang19-sm90", "kk-cuda-3lvl@nvcc-sm90"}, []string{x.Kernel, x.Numerator, x.Denominator})
	assert.EqualValues(t, 64, x.Size)
	assert.True(t, x.Lo < 0.7 && x.Hi > 0.7 && x.Lo > 0.68 && x.Hi < 0.72, "interval %s around 0.70, 1%% noise", x.Interval())
	assert.Equal(t, r.Lo, x.Lo, "the median of one ratio has the ratio's interval")
	assert.Equal(t, "the median's 95% interval in [0.55, 0.85] at the largest common size", r.Expected())
	assert.Regexp(t, `^0\.70 \[0\.6\d, 0\.7\d\] \(1 ratio\)$`, r.Measured())
	assert.Len(t, got[1].Ratios, 2, "sizes: all")
	assert.Regexp(t, `^not reproduced \(geomean interval \[0\.[45]\d, 0\.5\d\]\)$`, got[1].Verdict())
	assert.Equal(t, "not measurable (no nvhpc device toolchain in this run)", got[2].Verdict())
	assert.Equal(t, "not measurable (no verified spmv results of kk-omp-a on llvm device toolchains)", got[3].Verdict(),
		"the newer failure of kk-omp-a at size 64 replaces its older success")
	assert.InDelta(t, 1200.0/900, got[4].Min, 1e-12, "omp-raw/kk-omp-b: min ratio")
	assert.Equal(t, "the min's 95% interval above 1.20 over all sizes", got[4].Expected())
	assert.Regexp(t, `^0\.01 \[`, got[5].Measured(), "the host record pairs only with the device one")
	assert.Len(t, got[5].Ratios, 1)
	assert.Equal(t, "inconclusive (median interval [0.69, 0.71])", got[6].Verdict())
	assert.Equal(t, "not reproduced (of 2 ratios 1 in the band, 1 outside, 0 across a bound)", got[7].Verdict())
}

// Two cells of one toolchain whose device code hashes alike are never ranked.
func TestClaimsSkipIdenticalCode(t *testing.T) {
	res := reporttest.MemResults()
	res.Builds = []results.BuildRow{
		{Cell: "spmv.omp-raw.clang19-sm90", DeviceHash: "abc"},
		{Cell: "spmv.kk-omp-b.clang19-sm90", DeviceHash: "abc"},
	}
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, res)
	assert.Equal(t, NotMeasurable, got[4].Outcome)
	assert.Equal(t, []string{"omp-raw@clang19-sm90 = kk-omp-b@clang19-sm90"}, got[4].Identical)
	assert.Equal(t, "not measurable (numerator and denominator run the same device code)", got[4].Verdict())
	assert.Equal(t, Reproduced, got[0].Outcome, "other toolchains' cells are not grouped")
}

// A claim on AMD toolchains only is not measurable because they never run
// (toolchain.NotRun); one that also selects a toolchain that runs says what
// it lacks as before.
func TestClaimOnAMDToolchain(t *testing.T) {
	res := reporttest.MemResults()
	res.Run.Toolchains = append(res.Run.Toolchains, results.Toolchain{ID: "clang19-gfx90a", Family: "llvm", Target: "gfx90a"})
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(`claims:
  - id: amd
    paper: 000 Fig. 19
    quote: Q
    statement: OMP on the MI250X reaches 70% of KK-CUDA on the H100.
    kernels: [spmv]
    numerator: {variants: [omp-raw], toolchains: [clang19-gfx90a]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.55, 0.85]
  - id: amd-or-nvidia
    paper: none
    quote: Q
    statement: either
    kernels: [spmv]
    numerator: {variants: [kk-omp-a], toolchains: [clang19-gfx90a, clang19-sm90]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.55, 0.85]
`), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, res)
	assert.Equal(t, "not measurable (compiles; not run (no AMD GPU))", got[0].Verdict())
	assert.Equal(t, "not measurable (no verified spmv results of kk-omp-a on clang19-gfx90a/clang19-sm90 device toolchains)", got[1].Verdict())
}

func TestClaimsMarkdown(t *testing.T) {
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	reporttest.Golden(t, "claims_mem.md", Markdown("mem", EvaluateFolder(claims, reporttest.MemResults())))
}

// sizes: smallest judges the smallest size common to each pair (a small data
// set), where the largest would pass another band.
func TestClaimAtSmallestSize(t *testing.T) {
	const src = `claims:
  - id: small
    paper: 002 Fig. 3
    quote: Q
    statement: At the small size OMP reaches two thirds of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: smallest
    aggregate: all
    range: [0.60, 0.68]
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, reporttest.MemResults())
	require.Len(t, got, 1)
	require.Len(t, got[0].Ratios, 1)
	assert.EqualValues(t, 32, got[0].Ratios[0].Size)
	assert.InDelta(t, 1200.0/1800, got[0].Ratios[0].Value, 1e-12)
	assert.Equal(t, Reproduced, got[0].Outcome)
	assert.Equal(t, "every ratio's 95% interval in [0.60, 0.68] at the smallest common size", got[0].Expected())
}

// A kernel that moves no bytes (LCALS trap_int) is compared by its times:
// it is neither left out nor counted as unverified.
func TestClaimOfKernelWithoutBytes(t *testing.T) {
	rec := func(variant string, sec float64) results.Record {
		return results.Record{Kind: "kernel", Cell: "spmv." + variant + ".clang19-sm90", Kernel: "spmv", Variant: variant,
			Toolchain: "clang19-sm90", Size: 64, MedianS: sec, Verified: true,
			TimesS: []float64{sec * 0.99, sec, sec * 1.01, sec * 0.995, sec * 1.005}}
	}
	res := &results.Folder{Run: results.Run{ID: "mem", Toolchains: []results.Toolchain{{ID: "clang19-sm90", Family: "llvm", Target: "sm_90"}}},
		Kernel: []results.Record{rec("omp-raw", 1e-3), rec("kk-omp-b", 2e-3)}}
	const src = `claims:
  - id: raw-twice
    paper: 002 Fig. 3
    quote: Q
    statement: OMP-raw runs twice as fast as KK-OMP-b.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-omp-b], families: [llvm]}
    range: [1.9, 2.1]
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, res)
	require.Len(t, got, 1)
	require.Len(t, got[0].Ratios, 1)
	assert.InDelta(t, 2.0, got[0].Ratios[0].Value, 1e-12, "the rate ratio: the inverse ratio of times")
	assert.Equal(t, Reproduced, got[0].Outcome)
}

// A claim may pair two kernels, one operator in two forms (004: the mapped
// laplace_simple against the hand-written one): each side names its
// kernels, and the ratios pair them at the same size and toolchain.
func TestClaimAcrossKernels(t *testing.T) {
	rec := func(kernel, variant string, size int64, gbps float64) results.Record {
		s := 1 / gbps
		return results.Record{Kind: "kernel", Cell: kernel + "." + variant + ".nvcc-sm90", Kernel: kernel, Variant: variant,
			Toolchain: "nvcc-sm90", Size: size, GBps: gbps, MedianS: s, Bytes: 1e9, Verified: true,
			TimesS: []float64{s * 0.99, s, s * 1.01, s * 0.995, s * 1.005}}
	}
	res := &results.Folder{Run: results.Run{ID: "mem", Toolchains: []results.Toolchain{{ID: "nvcc-sm90", Family: "nvcc", Target: "sm_90"}}},
		Kernel: []results.Record{
			rec("hommexx_laplace_simple_mapped", "kk-cuda-3lvl", 1001, 1000), rec("hommexx_laplace_simple", "kk-cuda-3lvl", 1001, 100),
			rec("hommexx_laplace_simple_mapped", "kk-cuda-3lvl", 101, 500), rec("hommexx_laplace_simple", "kk-cuda-3lvl", 101, 100),
		}}
	const src = `claims:
  - id: mapped-10x
    paper: 004 Fig. 2
    quote: Q
    statement: The mapped form is 10x faster than the hand-written one.
    numerator: {kernels: [hommexx_laplace_simple_mapped], variants: [kk-cuda-3lvl]}
    denominator: {kernels: [hommexx_laplace_simple], variants: [kk-cuda-3lvl]}
    same_toolchain: true
    range: [9, 11]
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, res)
	require.Len(t, got, 1)
	require.Len(t, got[0].Ratios, 1, "the largest size only")
	assert.Equal(t, "hommexx_laplace_simple_mapped/hommexx_laplace_simple", got[0].Ratios[0].Kernel)
	assert.InDelta(t, 10.0, got[0].Ratios[0].Value, 1e-12)
	assert.Equal(t, Reproduced, got[0].Outcome)

	_, err = reportspec.ParseClaims("mem.yaml", []byte(`claims:
  - id: half
    paper: p
    quote: Q
    statement: S
    numerator: {kernels: [hommexx_laplace_simple_mapped], variants: [kk-cuda-3lvl]}
    denominator: {variants: [kk-cuda-3lvl]}
    range: [9, 11]
`), reporttest.Vocab(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `claim "half": kernels is empty`)
}

// sizes: growth divides each pair's ratio at the largest common size by its
// ratio at the smallest ("the difference increases with the data"), replicate
// by replicate.
func TestClaimGrowth(t *testing.T) {
	const src = `claims:
  - id: lead-grows
    paper: 002 Fig. 3
    quote: Q
    statement: OMP's share of KK-CUDA grows with the size.
    type: order
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: growth
    aggregate: all
  - id: lead-flat
    paper: 002 Fig. 3
    quote: Q
    statement: KK-OMP-b's share of KK-CUDA grows with the size.
    type: order
    kernels: [spmv]
    numerator: {variants: [kk-omp-b], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: growth
    aggregate: all
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, reporttest.MemResults())
	require.Len(t, got[0].Ratios, 1)
	g := got[0].Ratios[0]
	assert.InDelta(t, (1400.0/2000)/(1200.0/1800), g.Value, 1e-12)
	assert.Equal(t, "32→64", g.Sizes())
	assert.Less(t, g.Lo, g.Value)
	assert.Greater(t, g.Hi, g.Value)
	assert.Equal(t, Reproduced, got[0].Outcome)
	assert.NotEqual(t, Reproduced, got[1].Outcome, "900/1800 and 1000/2000: the share does not grow")
	assert.Contains(t, got[0].Expected(), "of the ratio at the largest common size over that at the smallest")

	one := &results.Folder{Run: reporttest.MemResults().Run, Kernel: reporttest.MemResults().Kernel[:1]}
	one.Kernel = append(one.Kernel, reporttest.MemResults().Kernel[2])
	assert.Equal(t, "not measurable (numerator and denominator have fewer than two sizes in common)",
		EvaluateFolder(claims[:1], one)[0].Verdict())
}

// except: N lets N ratios of each numerator toolchain lie outside the band
// ("comparable in all but three cases"); one more fails the claim.
func TestClaimAllButN(t *testing.T) {
	const src = `claims:
  - id: all-but-one
    paper: 002 Fig. 3
    quote: Q
    statement: OMP reaches 68-75% of KK-CUDA at all sizes but one.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: all
    aggregate: all
    except: 1
    range: [0.68, 0.75]
  - id: all
    paper: 002 Fig. 3
    quote: Q
    statement: OMP reaches 68-75% of KK-CUDA at all sizes.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: all
    aggregate: all
    range: [0.68, 0.75]
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, reporttest.MemResults())
	assert.Equal(t, Reproduced, got[0].Outcome, got[0].Verdict())
	assert.Equal(t, NotReproduced, got[1].Outcome, got[1].Verdict())
	assert.Equal(t, "every ratio's 95% interval but at most 1 of each toolchain in [0.68, 0.75] over all sizes", got[0].Expected())

	_, err = reportspec.ParseClaims("bad.yaml", []byte(`claims:
  - id: bad
    paper: P
    quote: Q
    statement: S
    kernels: [spmv]
    numerator: {variants: [omp-raw]}
    denominator: {variants: [kk-cuda-3lvl]}
    aggregate: median
    except: 2
    range: [0, 1]
`), reporttest.Vocab(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml:10:13: claim \"bad\": except is a count of ratios (>= 0) for aggregate all")
}

// A time claim judges the numerator's median time per call in µs, each
// size its own value with its bootstrap interval, against the band.
func TestTimeClaim(t *testing.T) {
	const src = `claims:
  - id: fast
    paper: 002 Sec. 2
    quote: Q
    statement: KK-CUDA takes 400-600 µs a call.
    type: time
    kernels: [spmv]
    numerator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    keep: [size]
    sizes: all
    aggregate: all
    range: [400, 600]
  - id: faster
    paper: 002 Sec. 2
    quote: Q
    statement: KK-CUDA takes under 540 µs a call at the smallest size.
    type: time
    kernels: [spmv]
    numerator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    keep: [size]
    sizes: smallest
    aggregate: all
    range: [0, 540]
`
	claims, err := reportspec.ParseClaims("mem.yaml", []byte(src), reporttest.Vocab(t))
	require.NoError(t, err)
	got := EvaluateFolder(claims, reporttest.MemResults())
	require.Len(t, got, 2)
	require.Len(t, got[0].Ratios, 2)
	r := got[0].Ratios[0]
	assert.EqualValues(t, 32, r.Size)
	assert.Equal(t, "kk-cuda-3lvl@nvcc-sm90", r.Numerator)
	assert.Empty(t, r.Denominator)
	assert.InDelta(t, 1e6/1800, r.Value, 1e-9, "µs per call")
	assert.Less(t, r.Lo, r.Value)
	assert.Greater(t, r.Hi, r.Value)
	assert.Equal(t, Reproduced, got[0].Outcome)
	assert.Equal(t, "every median time's 95% interval in [400.00, 600.00] µs per call over all sizes", got[0].Expected())
	assert.Equal(t, NotReproduced, got[1].Outcome, "555.6 µs at size 32")
}

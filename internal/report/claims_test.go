package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memResults is an in-memory run: spmv on one LLVM toolchain and nvcc.
func memResults() *Results {
	rec := func(variant, tc string, size int64, gbps float64) Record {
		return Record{Kind: "kernel", Cell: "spmv." + variant + "." + tc, Kernel: "spmv", Variant: variant,
			Toolchain: tc, Size: size, GBps: gbps, MedianS: 1 / gbps, Verified: true}
	}
	return &Results{
		Run: Run{ID: "mem", Toolchains: []Toolchain{
			{ID: "clang19-sm90", Family: "llvm", Target: "sm_90"},
			{ID: "clang19-host", Family: "llvm", Target: "host"},
			{ID: "nvcc-sm90", Family: "nvcc", Target: "sm_90"},
		}},
		Kernel: []Record{
			rec("kk-cuda-3lvl", "nvcc-sm90", 32, 1800), rec("kk-cuda-3lvl", "nvcc-sm90", 64, 2000),
			rec("omp-raw", "clang19-sm90", 32, 1200), rec("omp-raw", "clang19-sm90", 64, 1400),
			rec("kk-omp-b", "clang19-sm90", 32, 900), rec("kk-omp-b", "clang19-sm90", 64, 1000),
			rec("omp-raw", "clang19-host", 64, 20),
			{Kind: "kernel", Cell: "spmv.kk-omp-a.clang19-sm90", Kernel: "spmv", Variant: "kk-omp-a",
				Toolchain: "clang19-sm90", Size: 64, GBps: 5000, Verified: false},
		},
	}
}

const memClaims = `claims:
  - id: omp-raw-70
    paper: 002 Fig. 3
    statement: OMP reaches about 70% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.55, 0.85]
  - id: kk-omp-b-70
    paper: 002 Fig. 3
    statement: KK-OMP-b reaches about 70% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [kk-omp-b], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    sizes: all
    aggregate: geomean
    range: [0.65, 0.85]
  - id: nvhpc
    paper: 002 Fig. 3
    statement: NVHPC OMP reaches 50% of KK-CUDA.
    kernels: [spmv]
    numerator: {variants: [omp-raw], families: [nvhpc]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc]}
    range: [0.4, 0.6]
  - id: omp-a-unverified
    paper: 002 Fig. 3
    statement: KK-OMP-a counts only when verified.
    kernels: [spmv]
    numerator: {variants: [kk-omp-a], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl]}
    range: [0, 10]
  - id: raw-beats-b
    paper: 002 Fig. 3
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
    statement: Host OMP against device OMP, both LLVM.
    target: any
    kernels: [spmv]
    numerator: {variants: [omp-raw], toolchains: [clang19-host]}
    denominator: {variants: [omp-raw], toolchains: [clang19-sm90]}
    aggregate: all
    range: [0, 0.1]
`

func TestEvaluateClaims(t *testing.T) {
	claims, err := ParseClaims("mem.yaml", []byte(memClaims), testVocab(t))
	require.NoError(t, err)
	got := EvaluateClaims(claims, memResults())
	require.Len(t, got, 6)

	verdicts := map[string]string{}
	for _, r := range got {
		verdicts[r.Claim.ID] = r.Verdict()
	}
	assert.Equal(t, map[string]string{
		"omp-raw-70":       "reproduced",
		"kk-omp-b-70":      "not reproduced (measured ratio 0.50)",
		"nvhpc":            "not measurable (no nvhpc device toolchain in this run)",
		"omp-a-unverified": "not measurable (no verified spmv results of kk-omp-a on llvm device toolchains)",
		"raw-beats-b":      "reproduced",
		"host-vs-device":   "reproduced",
	}, verdicts)

	assert.InDelta(t, 0.7, got[0].Value, 1e-12)
	assert.Equal(t, []Ratio{{Kernel: "spmv", Size: 64, Numerator: "omp-raw@clang19-sm90", Denominator: "kk-cuda-3lvl@nvcc-sm90", Value: 0.7}}, got[0].Ratios)
	assert.Equal(t, "median in [0.55, 0.85] at the largest common size", got[0].Expected())
	assert.Equal(t, "0.70 (1 ratio)", got[0].Measured())
	assert.Len(t, got[1].Ratios, 2, "sizes: all")
	assert.InDelta(t, 1200.0/900, got[4].Min, 1e-12, "omp-raw/kk-omp-b: min ratio")
	assert.Equal(t, "min > 1.20 over all sizes", got[4].Expected())
	assert.Equal(t, "0.01 (1 ratio)", got[5].Measured(), "the host record pairs only with the device one")
}

func TestClaimsMarkdown(t *testing.T) {
	claims, err := ParseClaims("mem.yaml", []byte(memClaims), testVocab(t))
	require.NoError(t, err)
	golden(t, "claims_mem.md", ClaimsMarkdown("mem", EvaluateClaims(claims, memResults())))
}

package book

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
)

// benchTestSpec is the benchmark set of the synthetic folders below.
var benchTestSpec = &benchSpec{Mapped: "kk-cuda-3lvl", Hand: "kk-cuda-3lvl", Vendor: "cublas", Nests: []benchNest{
	{Stem: "gemm", Title: "matrix multiply", Rate: "gflops", VendorName: "cuBLAS DGEMM"},
	{Stem: "transpose", Title: "transpose", Rate: "gbps", VendorName: "cuBLAS DGEAM", Copy: true},
	{Stem: "trmv", Title: "triangular matrix-vector", Rate: "gbps", VendorName: "cuBLAS DTRMV"},
}}

// benchRecord is a verified measurement of three trials of five
// repetitions, all at time s (so every interval is the point itself).
func benchRecord(kernel, variant string, size int64, trial int, s, bytes, flops float64) results.Record {
	return results.Record{Kind: results.KindKernel, Cell: kernel + "." + variant + ".nvcc-sm90", Kernel: kernel, Variant: variant,
		Toolchain: "nvcc-sm90", Device: "NVIDIA H200", Size: size, Trial: trial, Reps: 5, TimesS: []float64{s, s, s, s, s},
		MedianS: s, MinS: s, Bytes: bytes, BytesMin: bytes, Flops: flops, GBps: bytes / s / 1e9, Verified: true, Clock: "host"}
}

// writeBenchFolder writes a results folder of one H200 run: GEMM in its
// three forms at two sizes, the transpose mapped and hand-written at one,
// BabelStream's copy at 4000 GB/s; no trmv.
func writeBenchFolder(t *testing.T, dir string) {
	t.Helper()
	var lines []string
	add := func(r results.Record) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	for trial := 1; trial <= 3; trial++ {
		for _, m := range []int64{1001, 2001} {
			flops, bytes := 2.0*float64(m*m*m), 32.0*float64(m*m)
			base := flops / 40e12 // the vendor at 40 TFLOP/s
			add(benchRecord("gemm_mapped", "kk-cuda-3lvl", m, trial, 4*base, bytes, flops))
			add(benchRecord("gemm_team", "kk-cuda-3lvl", m, trial, 2*base, bytes, flops))
			add(benchRecord("gemm_team", "cublas", m, trial, base, bytes, flops))
		}
		bytes := 16.0 * 4001 * 4003
		add(benchRecord("transpose_mapped", "kk-cuda-3lvl", 4001, trial, bytes/2000e9, bytes, 0))
		add(benchRecord("transpose_team", "kk-cuda-3lvl", 4001, trial, bytes/3000e9, bytes, 0))
	}
	add(results.Record{Kind: results.KindStream, Op: "copy", Cell: "gemm_team.kk-cuda-3lvl.nvcc-sm90", Toolchain: "nvcc-sm90",
		Device: "NVIDIA H200", Method: results.MethodBabelStream, Reps: 100, ArrayBytes: 1 << 28, Bytes: 1 << 29,
		MedianS: float64(1<<29) / 3900e9, GBps: 3900, GBpsBest: 4000, Verified: true, Clock: "host"})
	run := results.Run{ID: "bench", Toolchains: []results.Toolchain{{ID: "nvcc-sm90", Family: "nvcc", Version: "13.0", Target: "sm_90"}},
		GPUs: []results.GPU{{Name: "NVIDIA H200"}}, Trials: 3, Reps: 5}
	b, err := json.MarshalIndent(run, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.RunFile), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.JSONLFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// The section holds a table per measured nest: each form's time and rate,
// the mapped form's fraction of the vendor's and of the hand-written
// form's, the transpose's fractions of the run's copy bandwidth; a form not
// measured is a dash, and a nest no folder measured is named as not
// measured yet.
func TestBenchsetTableFromAFolder(t *testing.T) {
	dir := t.TempDir()
	writeBenchFolder(t, dir)
	data, err := results.Load(dir)
	require.NoError(t, err)
	f := &folder{Name: "nvidia-h200-bench", Data: data, Entries: []Entry{{Suite: "loopnests", Platform: "nvidia-h200", Folder: "nvidia-h200-bench"}}}
	md := benchsetSection(benchTestSpec, []*folder{f}).Markdown

	assert.Contains(t, md, "### gemm: matrix multiply")
	assert.Contains(t, md, "From [nvidia-h200-bench](#folder-nvidia-h200-bench) (loopnests, nvidia-h200), nvcc-sm90 (nvcc 13.0)")
	assert.Contains(t, md, "vendor: cuBLAS DGEMM (gemm_team under cublas)")
	assert.Contains(t, md, "| size | mapped ms | mapped GFLOP/s | hand-written ms | hand-written GFLOP/s | vendor ms | vendor GFLOP/s | mapped / vendor | mapped / hand-written |")
	// m = 1001: the vendor at 40 TFLOP/s, hand-written 20, mapped 10: a
	// quarter of the vendor's speed and half the hand-written form's
	vendorMS := 2.0 * 1001 * 1001 * 1001 / 40e12 * 1e3
	assert.Contains(t, md, "| 1001 | "+num(4*vendorMS)+" ["+num(4*vendorMS)+", "+num(4*vendorMS)+"] | 10000 [10000, 10000] | "+
		num(2*vendorMS)+" ["+num(2*vendorMS)+", "+num(2*vendorMS)+"] | 20000 [20000, 20000] | "+
		num(vendorMS)+" ["+num(vendorMS)+", "+num(vendorMS)+"] | 40000 [40000, 40000] | 0.250 [0.250, 0.250] | 0.500 [0.500, 0.500] |")
	assert.Contains(t, md, "| 2001 |")

	// the transpose: no vendor cell, copy at 4000 GB/s (BabelStream's best)
	assert.Contains(t, md, "### transpose: transpose")
	assert.Contains(t, md, "vendor: not measured (transpose_team or transpose_mapped under cublas)")
	assert.Contains(t, md, "copy bandwidth: BabelStream copy 4000 GB/s (best of 100 runs, arrays of 256 MiB, nvcc-sm90)")
	assert.Contains(t, md, "| 4001 | ")
	assert.Contains(t, md, "| 2000 [2000, 2000] | ")
	assert.Contains(t, md, " | – | – | – | 0.667 [0.667, 0.667] | 0.500 [0.500, 0.500] | 0.750 [0.750, 0.750] | – |\n")

	assert.NotContains(t, md, "### trmv")
	assert.Contains(t, md, "Not measured yet: trmv (triangular matrix-vector); no current folder holds a form of them on a GPU.")
}

// Without a folder that measured the set, the section says so and names
// every nest.
func TestBenchsetNotMeasuredYet(t *testing.T) {
	md := benchsetSection(benchTestSpec, nil).Markdown
	assert.Contains(t, md, "Not measured yet: no current folder holds a form of any nest on a GPU (gemm (matrix multiply); transpose (transpose); trmv (triangular matrix-vector)).")
	assert.NotContains(t, md, "###")
}

// The committed benchmark set names nests and variants of the tree; a
// stem without kernels, an unknown variant and a rate not known are each
// an error at its line.
func TestBenchSpecNames(t *testing.T) {
	voc := &results.Vocabulary{
		Kernels:    []results.KernelName{{Name: "gemm_team"}, {Name: "gemm_mapped"}, {Name: "jacobi2d_mapped"}},
		Strategies: []results.StrategyName{{Name: "kk-cuda", Variants: []string{"kk-cuda-3lvl"}}, {Name: "cublas", Variants: []string{"cublas"}}},
	}
	file := filepath.Join(t.TempDir(), "benchset.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`mapped_variant: kk-cuda-3lvl
hand_variant: kk-cuda-3lvl
vendor_variant: cublass
nests:
  - {stem: gemm, title: multiply, rate: gflops, vendor: cuBLAS DGEMM}
  - {stem: jacobi2, title: sweep, rate: gbps}
  - {stem: gemm, title: again, rate: flops}
`), 0o644))
	_, err := loadBenchSpec(file, voc)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, file+`:3:17: vendor_variant "cublass" is no variant; did you mean "cublas"?`)
	assert.Contains(t, msg, file+`:6:12: nest "jacobi2" has no kernel jacobi2_mapped or jacobi2_team; did you mean "jacobi2d"?`)
	assert.Contains(t, msg, file+`:7:12: nest "gemm" listed twice`)
	assert.Contains(t, msg, file+`:7:38: rate is gflops or gbps, not "flops"`)
}

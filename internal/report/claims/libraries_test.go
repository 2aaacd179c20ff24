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

// libraryResults is memResults with the library variants that stand for
// kk-cuda-3lvl and kk-omp-b (variants/strategies.yaml's twins) measured
// beside them, and a pair at size 128 timed with different clocks.
func libraryResults() *results.Folder {
	res := reporttest.MemResults()
	rec := func(variant, tc string, size int64, gbps float64, clock string) results.Record {
		t := 1 / gbps
		return results.Record{Kind: "kernel", Cell: "spmv." + variant + "." + tc, Kernel: "spmv", Variant: variant,
			Toolchain: tc, Size: size, GBps: gbps, MedianS: t, Bytes: 1e9, Verified: true, Clock: clock,
			TimesS: []float64{t * 0.99, t, t * 1.01, t * 0.995, t * 1.005}}
	}
	res.Kernel = append(res.Kernel,
		rec("kokkos-cuda-3lvl", "nvcc-sm90", 32, 2000, results.ClockHost), rec("kokkos-cuda-3lvl", "nvcc-sm90", 64, 2400, results.ClockHost),
		rec("kokkos-omptarget", "clang19-sm90", 32, 900, results.ClockHost), rec("kokkos-omptarget", "clang19-sm90", 64, 1500, results.ClockHost),
		rec("kk-cuda-3lvl", "nvcc-sm90", 128, 2100, results.ClockHost), rec("kokkos-cuda-3lvl", "nvcc-sm90", 128, 2500, results.ClockCUDAEvent),
	)
	return res
}

// The layer-against-library tables pair each library variant with its
// twins, same kernel, size and toolchain: the layer's time over the
// library's, its interval from the bootstrap, the verdict words; an
// interval holding 1 is inconclusive; unlike clocks are named, not compared.
func TestLayerTables(t *testing.T) {
	ds := dataset.New(libraryResults())
	voc := reporttest.Vocab(t)
	tables := LayerTables(ds, voc)
	require.Len(t, tables, 1, "no RAJA variant measured: no RAJA table")
	tb := tables[0]
	assert.Equal(t, "portmatrix's Kokkos layer against Kokkos 4.6.01", tb.Title(), "the release from variants/libraries.yaml")
	type row struct {
		layer, lib string
		size       int64
		ratio      float64
		verdict    string
	}
	var got []row
	for _, r := range tb.Rows {
		got = append(got, row{r.Layer, r.Library, r.Size, r.Ratio.Value, r.Verdict})
		assert.InDelta(t, r.LayerS/r.LibraryS, r.Ratio.Value, 1e-9, "the layer's time over the library's")
		assert.Less(t, r.Ratio.Lo, r.Ratio.Value)
		assert.Greater(t, r.Ratio.Hi, r.Ratio.Value)
		assert.Equal(t, r.Layer+"@"+r.Toolchain, r.Ratio.Numerator)
	}
	// kk-omp-a's only record is unverified: no row.
	want := []row{
		{"kk-omp-b", "kokkos-omptarget", 32, 1, Undecided},
		{"kk-omp-b", "kokkos-omptarget", 64, 1.5, LibraryFaster},
		{"kk-cuda-3lvl", "kokkos-cuda-3lvl", 32, 2000.0 / 1800, LibraryFaster},
		{"kk-cuda-3lvl", "kokkos-cuda-3lvl", 64, 1.2, LibraryFaster},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].layer, got[i].layer)
		assert.Equal(t, want[i].lib, got[i].lib)
		assert.Equal(t, want[i].size, got[i].size)
		assert.InDelta(t, want[i].ratio, got[i].ratio, 1e-9)
		assert.Equal(t, want[i].verdict, got[i].verdict, "%v", got[i])
	}
	assert.Equal(t, []string{"spmv kk-cuda-3lvl@nvcc-sm90 / kokkos-cuda-3lvl at 128: clocks differ: host against cuda-event"}, tb.Unlike)
	assert.Equal(t, LayerFaster, LayerVerdict(0.8, 0.99))

	md := string(LayerMarkdown(tables, "##"))
	assert.Contains(t, md, "## portmatrix's Kokkos layer against Kokkos 4.6.01\n")
	assert.Contains(t, md, "| spmv | 64 | clang19-sm90 | kk-omp-b | kokkos-omptarget | 1000.0 µs | 666.7 µs | 1.500 |")
	assert.Contains(t, md, "Not compared, spmv kk-cuda-3lvl@nvcc-sm90 / kokkos-cuda-3lvl at 128: clocks differ")

	assert.Empty(t, LayerTables(dataset.New(reporttest.MemResults()), voc), "no library measured: no table")
}

// A claim over layer variants is judged again with each replaced by the
// library variants that stand for it, on both sides where both have twins;
// a claim over no layer variant with a twin has no library verdict, and a
// folder without library cells says so and shows none.
func TestClaimsOnTheLibraries(t *testing.T) {
	voc := reporttest.Vocab(t)
	cs, err := reportspec.ParseClaims("mem.yaml", []byte(memClaims), voc)
	require.NoError(t, err)
	byID := map[string]int{}
	for i, c := range cs {
		byID[c.ID] = i
	}
	lc, ok := LibraryClaim(cs[byID["kk-omp-b-70"]], voc)
	require.True(t, ok)
	assert.Equal(t, []string{"kokkos-omptarget", "kokkos-openmp"}, lc.Numerator.Variants, "kk-omp-b's twins: the OpenMPTarget and the host backend")
	assert.Equal(t, []string{"kokkos-cuda-3lvl"}, lc.Denominator.Variants)
	assert.Equal(t, []string{"llvm"}, lc.Numerator.Families, "the side keeps its toolchains")
	lc, ok = LibraryClaim(cs[byID["omp-raw-70"]], voc)
	require.True(t, ok)
	assert.Equal(t, []string{"omp-raw"}, lc.Numerator.Variants, "omp-raw is no layer: kept")
	assert.Equal(t, []string{"kokkos-cuda-3lvl"}, lc.Denominator.Variants)

	res := libraryResults()
	ds := dataset.New(res)
	got := EvaluateFolder(cs, res)
	EvaluateLibraries(cs, got, ds, voc)

	b := got[byID["kk-omp-b-70"]]
	assert.Equal(t, NotReproduced, b.Outcome, "the layers: 900/1800 and 1000/2000")
	require.NotNil(t, b.Library)
	require.Len(t, b.Library.Ratios, 2)
	assert.Equal(t, "kokkos-omptarget@clang19-sm90", b.Library.Ratios[0].Numerator)
	assert.Equal(t, "kokkos-cuda-3lvl@nvcc-sm90", b.Library.Ratios[0].Denominator)
	assert.InDelta(t, 900.0/2000, b.Library.Ratios[0].Value, 1e-9)
	assert.InDelta(t, 1500.0/2400, b.Library.Ratios[1].Value, 1e-9)
	assert.Equal(t, NotReproduced, b.Library.Outcome, "geomean 0.53 below [0.65, 0.85]")
	assert.Regexp(t, `^not reproduced \(geomean interval \[0\.5\d, 0\.5\d\]\)$`, b.LibraryVerdict())

	raw := got[byID["omp-raw-70"]]
	require.NotNil(t, raw.Library)
	require.Len(t, raw.Library.Ratios, 1, "the largest common size")
	assert.InDelta(t, 1400.0/2400, raw.Library.Ratios[0].Value, 1e-9)
	assert.Equal(t, Reproduced, raw.Library.Outcome, "0.58 in [0.55, 0.85]")
	assert.Regexp(t, `^reproduced \(measured 0\.58 `, raw.LibraryVerdict())

	hv := got[byID["host-vs-device"]]
	assert.Nil(t, hv.Library, "omp-raw against omp-raw: no layer variant, no library verdict")
	assert.Equal(t, "", hv.LibraryVerdict())

	md := string(Markdown("mem", got))
	assert.Contains(t, md, "| as published | tuned | on the libraries |")
	assert.Contains(t, md, "On the libraries (kokkos-omptarget, kokkos-openmp, kokkos-cuda-3lvl): not reproduced")

	// The same claims on a folder without library cells: none measured,
	// every library verdict saying so, and claims.md showing none.
	plain := reporttest.MemResults()
	got = EvaluateFolder(cs, plain)
	EvaluateLibraries(cs, got, dataset.New(plain), voc)
	b = got[byID["kk-omp-b-70"]]
	require.NotNil(t, b.Library)
	assert.Equal(t, "not measurable (no library cells: kokkos-omptarget, kokkos-openmp, kokkos-cuda-3lvl not measured in this folder)", b.LibraryVerdict())
	assert.False(t, b.LibraryMeasured())
	md = string(Markdown("mem", got))
	assert.NotContains(t, md, "On the libraries (kokkos")
	assert.Contains(t, md, "0 of 7 claims over a layer with a library twin measured")
}

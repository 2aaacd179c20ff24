package tables

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/figures"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

const memTables = "tables:\n  - {kernel: spmv, reference: {variants: [kk-cuda-3lvl], families: [nvcc]}}\n"

func TestTablesMarkdown(t *testing.T) {
	specs, err := reportspec.ParseTables("t.yaml", []byte(memTables), reporttest.Vocab(t))
	require.NoError(t, err)
	reporttest.Golden(t, "tables_mem.md", tablesMarkdown(buildTables(specs.Tables, dataset.New(reporttest.MemResults()))))
}

// Cells of one toolchain with one device code share a row, their trials
// pooled; the host toolchain's cells are not in device tables.
func TestTablesGroupIdenticalCode(t *testing.T) {
	res := reporttest.MemResults()
	res.Builds = []results.BuildRow{
		{Cell: "spmv.omp-raw.clang19-sm90", DeviceHash: "abc"},
		{Cell: "spmv.kk-omp-b.clang19-sm90", DeviceHash: "abc"},
		{Cell: "spmv.omp-raw.clang19-host", DeviceHash: "abc"},
	}
	specs, err := reportspec.ParseTables("t.yaml", []byte(memTables), reporttest.Vocab(t))
	require.NoError(t, err)
	tab := buildTables(specs.Tables, dataset.New(res))[0]
	require.Len(t, tab.Rows, 2)
	assert.EqualValues(t, 64, tab.Size)
	assert.Equal(t, []string{"kk-cuda-3lvl"}, tab.Rows[0].Variants)
	g := tab.Rows[1]
	assert.Equal(t, []string{"kk-omp-b", "omp-raw"}, g.Variants)
	assert.Len(t, g.P.M.Trials, 2, "one trial of each cell")
	assert.True(t, g.P.Lo < 1000 && g.P.Hi > 1400, "the group's interval spans both cells: [%g, %g]", g.P.Lo, g.P.Hi)
	assert.Contains(t, string(tablesMarkdown([]table{tab})), "| kk-omp-b = omp-raw | clang19-sm90 |")
}

// The roofline is the best stream op of the device in the run; copy records
// count only in folders without stream records.
func TestRooflineIsTheBestStreamOp(t *testing.T) {
	res := reporttest.MemResults()
	res.Copy = []results.Record{{Kind: "copy", Toolchain: "nvcc-sm90", Device: "H", GBps: 3000}}
	res.Stream = []results.Record{
		{Kind: "stream", Op: "copy", Toolchain: "nvcc-sm90", Device: "H", GBps: 3900},
		{Kind: "stream", Op: "triad", Toolchain: "nvcc-sm90", Device: "H", GBps: 4100},
		{Kind: "stream", Op: "triad", Toolchain: "nvcc-sm90", Device: "H", GBps: 4140},
		{Kind: "stream", Op: "dot", Toolchain: "clang19-sm90", Device: "H", GBps: 4200},
		{Kind: "stream", Op: "dot", Toolchain: "clang19-sm90", Device: "H", GBps: 3000},
		{Kind: "stream", Op: "dot", Toolchain: "clang19-sm90", Device: "H", GBps: 2000},
	}
	ds := dataset.New(res)
	assert.Equal(t, 4120.0, ds.Roof["nvcc-sm90"], "median of the triads beats copy and dot's median 3000")
	assert.Equal(t, 4120.0, ds.Roof["clang19-sm90"], "same device, same roofline")
	assert.Equal(t, "stream triad", ds.RoofOp["clang19-sm90"])
	figs, err := reportspec.ParseFigures("f.yaml", []byte("figures:\n  - {id: f, title: T, kernel: spmv, target: device, variants: [{variant: omp-raw}]}\n"), reporttest.Vocab(t))
	require.NoError(t, err)
	svg, _, err := figures.Render(figures.Build(figs[0], ds))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "measured: STREAM triad 4120 GB/s")

	// BabelStream's method: the best run of each op, over every toolchain;
	// the older records of the device no longer count.
	babel := func(op, tc string, best float64) results.Record {
		return results.Record{Kind: "stream", Op: op, Toolchain: tc, Device: "H", GBps: best * 0.98, GBpsBest: best,
			Method: results.MethodBabelStream, Reps: 100, ArrayBytes: 1 << 29, Verified: true, Clock: results.ClockHost}
	}
	failed := babel("dot", "clang19-sm90", 9000)
	failed.Verified, failed.Error = false, "dot = 1, want 2"
	res.Stream = append(res.Stream, babel("copy", "nvcc-sm90", 3980), babel("triad", "nvcc-sm90", 4263),
		babel("dot", "nvcc-sm90", 4290), failed)
	ds = dataset.New(res)
	bw := ds.Bandwidth["clang19-sm90"]
	assert.Equal(t, 4290.0, bw.GBps, "the best run of the best op; an unverified op does not count")
	assert.Equal(t, "BabelStream dot 4290 GB/s", bw.Label())
	assert.Equal(t, "best of 100 runs, arrays of 512 MiB, nvcc-sm90", bw.How())

	res.Stream = nil
	ds = dataset.New(res)
	assert.Equal(t, 3000.0, ds.Roof["nvcc-sm90"])
	assert.Equal(t, "copy", ds.RoofOp["nvcc-sm90"])
}

// The minimum-traffic bandwidth is bytes_min over the median time.
func TestTablesShowMinimumTraffic(t *testing.T) {
	res := reporttest.MemResults()
	for i := range res.Kernel {
		res.Kernel[i].BytesMin = res.Kernel[i].Bytes / 2
	}
	specs, err := reportspec.ParseTables("t.yaml", []byte(memTables), reporttest.Vocab(t))
	require.NoError(t, err)
	tab := buildTables(specs.Tables, dataset.New(res))[0]
	assert.InDelta(t, tab.Rows[0].P.GBps/2, tab.Rows[0].P.GBpsMin(), 1e-9)
	assert.Contains(t, string(tablesMarkdown([]table{tab})), "| kk-cuda-3lvl | nvcc-sm90 | 2000 | [1980, 2020] | 1000 |")
}

// A figure draws cells of one device code as one series.
func TestFiguresGroupIdenticalCode(t *testing.T) {
	res := reporttest.MemResults()
	res.Builds = []results.BuildRow{
		{Cell: "spmv.omp-raw.clang19-sm90", DeviceHash: "abc"},
		{Cell: "spmv.kk-omp-b.clang19-sm90", DeviceHash: "abc"},
	}
	figs, err := reportspec.ParseFigures("f.yaml", []byte("figures:\n  - {id: f, title: T, kernel: spmv, variants: [{variant: omp-raw, label: OMP}, {variant: kk-omp-b, label: KK-OMP}]}\n"), reporttest.Vocab(t))
	require.NoError(t, err)
	f := figures.Build(figs[0], dataset.New(res))
	var labels []string
	for _, p := range f.Panels {
		for _, s := range p.Series {
			labels = append(labels, p.Title+": "+s.Label)
			if s.Label == "OMP = KK-OMP (pm layer)" {
				assert.Len(t, s.Points, 2, s.Label)
				assert.Len(t, s.Points[0].M.Trials, 2, "pooled trials")
			}
		}
	}
	assert.Equal(t, []string{"clang19-sm90 (llvm): OMP = KK-OMP (pm layer)", "clang19-host (llvm): OMP"}, labels)
}

// A record's own device hash wins over build.csv's: a merged folder's build
// rows are its last batch's.
func TestRecordDeviceHashBeatsBuildRow(t *testing.T) {
	res := reporttest.MemResults()
	res.Builds = []results.BuildRow{
		{Cell: "spmv.omp-raw.clang19-sm90", DeviceHash: "abc"},
		{Cell: "spmv.kk-omp-b.clang19-sm90", DeviceHash: "abc"},
	}
	for i, r := range res.Kernel {
		if r.Cell == "spmv.kk-omp-b.clang19-sm90" {
			res.Kernel[i].DeviceHash = "older"
		}
	}
	ds := dataset.New(res)
	assert.False(t, ds.Identical(dataset.Key{Kernel: "spmv", Variant: "omp-raw", Toolchain: "clang19-sm90"}, dataset.Key{Kernel: "spmv", Variant: "kk-omp-b", Toolchain: "clang19-sm90"}))
}

func TestTimingSumsElapsedAndTakesMedians(t *testing.T) {
	recs := []results.Record{
		{ElapsedS: 2, SetupS: 0.5, MeasureS: 1, CheckS: 0.25},
		{ElapsedS: 4, SetupS: 1.5, MeasureS: 2, CheckS: 0.75},
		{ElapsedS: 3, SetupS: 1, MeasureS: 1.5, CheckS: 0.5, ReferenceS: 6, ReferenceCached: true},
		{Error: "timed out"}, // no timing: not counted
	}
	got := timingMarkdown(recs)
	assert.Contains(t, got, "3 measurements (one program each) took 0.1 minutes")
	assert.Contains(t, got, "median 3.00 s (longest 4.0 s): runtime start-up 0.50 s, data and reference 1.00 s")
	assert.Contains(t, got, "runs with their checks 1.50 s, of which checks 0.50 s")
	assert.Contains(t, got, "references took 0.1 minutes in all; 1 of 3 were loaded")
	assert.Empty(t, timingMarkdown(recs[3:]))
	recs[2].ReferenceS = 0
	assert.NotContains(t, timingMarkdown(recs), "references", "older folders say nothing of them")
}

// A kernel the folder holds no record of gets no table (an LCALS folder has
// no AXPBY); one without a verified device record in a folder of device
// results keeps its note, under a heading that names no size; a folder of
// host toolchains alone has no device table.
func TestTablesOnlyForKernelsHeld(t *testing.T) {
	specs, err := reportspec.ParseTables("t.yaml", []byte(memTables+"  - {kernel: dot, reference: {variants: [kk-cuda-3lvl], families: [nvcc]}}\n"), reporttest.Vocab(t))
	require.NoError(t, err)
	tabs := buildTables(specs.Tables, dataset.New(reporttest.MemResults()))
	require.Len(t, tabs, 1)
	assert.Equal(t, "spmv", tabs[0].Spec.Kernel)
	assert.Nil(t, tablesMarkdown(nil))

	res := reporttest.MemResults()
	res.Kernel = res.Kernel[6:7] // the host record only
	assert.Empty(t, buildTables(specs.Tables, dataset.New(res)), "a host folder")

	tabs = []table{{Spec: reportspec.Table{Kernel: "axpby"}, Note: "no verified axpby results on device toolchains"}}
	md := string(tablesMarkdown(tabs))
	assert.Contains(t, md, "### AXPBY\n\nNo table: no verified axpby results on device toolchains.")
	assert.NotContains(t, md, "size 0")
}

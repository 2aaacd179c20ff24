package tables

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

const launchSpec = `launch:
  empty: launch_empty
  flat: launch_tiny
  reduce: launch_reduce
  composites: [cgsolve]
  reducing: [dot]
`

// launchResults: one cell (kk-ompx-warp) with its launch kernels, its parts
// measured alone and a CG-Solve whose sections name the calls; a second cell
// (kk-cuda-3lvl) with a CG-Solve only.
func launchResults(sections map[string]results.Section, flat, reduce float64, parts map[string]float64) *results.Folder {
	const tc = "clang19-sm90"
	rec := func(kernel, variant string, size int64, t, bytes float64) results.Record {
		return results.Record{Kind: "kernel", Cell: kernel + "." + variant + "." + tc, Kernel: kernel, Variant: variant, Toolchain: tc,
			Size: size, Trial: 1, MedianS: t, Bytes: bytes, GBps: bytes / t / 1e9, Verified: true, TimesS: []float64{t, t, t}}
	}
	cg := func(variant string, t float64) results.Record {
		r := rec("cgsolve", variant, 150, t, 1e9)
		r.Sections = sections
		return r
	}
	recs := []results.Record{
		rec("launch_empty", "kk-ompx-warp", 1, flat/2, 0),
		rec("launch_tiny", "kk-ompx-warp", 37, flat, 37*24),
		rec("launch_tiny", "kk-ompx-warp", 1003, 10*flat, 1003*24),
		rec("launch_reduce", "kk-ompx-warp", 37, reduce, 37*16),
		cg("kk-ompx-warp", 3e-3), cg("kk-cuda-3lvl", 2e-3),
	}
	for name, gbps := range parts {
		// Alone: a call of the composite's bytes per call takes its bytes
		// over gbps plus its latency; a smaller size at another rate does not
		// count.
		lat := flat
		if name == "dot" {
			lat = reduce
		}
		perCall := sections[name].Bytes / float64(sections[name].Calls)
		recs = append(recs, rec(name, "kk-ompx-warp", 1000, 1e-3, 1e5), rec(name, "kk-ompx-warp", 100000000, perCall/(gbps*1e9)+lat, perCall))
	}
	return &results.Folder{Run: results.Run{ID: "launch", Toolchains: []results.Toolchain{{ID: tc, Family: "llvm", Target: "sm_90"}}}, Kernel: recs}
}

// The model is the sections' bytes at each part's rate alone less its
// latency, at the size nearest its calls, plus the calls times the launch
// latencies, reducing calls at the reduce kernel's.
func TestLaunchSplit(t *testing.T) {
	tf, err := reportspec.ParseTables("t.yaml", []byte(launchSpec), reporttest.Vocab(t))
	require.NoError(t, err)
	require.NotNil(t, tf.Launch)
	sections := map[string]results.Section{
		"axpby": {Calls: 10, Seconds: 1e-3, Bytes: 1e9},
		"dot":   {Calls: 5, Seconds: 2e-3, Bytes: 1e9},
		"spmv":  {Calls: 2, Seconds: 1e-3, Bytes: 2e9},
	}
	gbps := map[string]float64{"axpby": 2000, "dot": 1000, "spmv": 4000}
	flat, reduce := 10e-6, 20e-6
	lt := buildLaunch(tf.Launch, dataset.New(launchResults(sections, flat, reduce, gbps)))
	require.NotNil(t, lt)

	require.Len(t, lt.Latencies, 1)
	l := lt.Latencies[0]
	assert.Equal(t, "kk-ompx-warp", l.Variant)
	require.NotNil(t, l.Flat)
	assert.EqualValues(t, 37, l.Flat.Size, "the smallest size")
	assert.InDelta(t, flat, l.Flat.Median, 1e-15)
	assert.InDelta(t, reduce, l.Reduce.Median, 1e-15)
	assert.InDelta(t, flat/2, l.Empty.Median, 1e-15)

	require.Len(t, lt.Splits, 1)
	rows := lt.Splits[0].Rows
	require.Len(t, rows, 2)
	var bw float64
	calls, reducing := 0, 0
	for name, s := range sections {
		bw += s.Bytes / (gbps[name] * 1e9)
		calls += s.Calls
		if name == "dot" {
			reducing += s.Calls
		}
	}
	byVariant := map[string]splitRow{}
	for _, r := range rows {
		byVariant[r.Variant] = r
	}
	w := byVariant["kk-ompx-warp"]
	assert.Equal(t, calls, w.Launches)
	assert.Equal(t, reducing, w.Reducing)
	assert.InDelta(t, bw, w.Bandwidth, 1e-12)
	assert.InDelta(t, float64(calls-reducing)*flat+float64(reducing)*reduce, w.Launch, 1e-12)
	assert.InDelta(t, 3e-3-(bw+w.Launch), w.Measured-w.Model(), 1e-12)
	assert.InDelta(t, 4e-3, w.Parts, 1e-12, "each section's seconds per call times its calls")
	assert.Empty(t, w.Missing)

	c := byVariant["kk-cuda-3lvl"]
	assert.True(t, math.IsNaN(c.Model()), "no parts or launch kernels measured: no model")
	assert.ElementsMatch(t, []string{"axpby", "dot", "spmv", "launch kernels"}, c.Missing)

	md := string(launchMarkdown(lt))
	assert.Contains(t, md, "### Launch latency per call (µs)")
	assert.Contains(t, md, "| kk-ompx-warp | clang19-sm90 | 5 [5, 5] | 10 [10, 10] | 20 [20, 20] | 1 × 3 |")
	assert.Contains(t, md, "### CGSOLVE at size 150: bandwidth and launch cost")
	assert.Contains(t, md, "Not modelled, not measured in this folder: kk-cuda-3lvl@clang19-sm90 (axpby, dot, spmv, launch kernels).")
	assert.Nil(t, buildLaunch(tf.Launch, dataset.New(reporttest.MemResults())), "no launch kernels or composites: no text")
	var cgOnly []results.Record
	for _, r := range launchResults(sections, flat, reduce, gbps).Kernel {
		if r.Kernel == "cgsolve" {
			cgOnly = append(cgOnly, r)
		}
	}
	assert.Nil(t, buildLaunch(tf.Launch, dataset.New(&results.Folder{Run: results.Run{ID: "cg"}, Kernel: cgOnly})), "a CG-Solve without launch kernels: no split")
}

func TestLaunchBadSpec(t *testing.T) {
	_, err := reportspec.ParseTables("t.yaml", []byte(`launch:
  empty: launch_nothing
  flat: launch_tiny
  reduce: launch_reduce
  composites: [cgsolvee]
`), reporttest.Vocab(t))
	require.Error(t, err)
	for _, want := range []string{
		`t.yaml:2:10: launch: unknown empty "launch_nothing"`,
		`t.yaml:5:16: launch composites: unknown kernel "cgsolvee"`,
		`t.yaml:2:3: launch: reducing is missing`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// The shipped tables.yaml splits CG-Solve and its fused variant.
func TestShippedLaunch(t *testing.T) {
	tf, err := reportspec.LoadTables(filepath.Join(reporttest.SpecDir(t), "tables.yaml"), reporttest.Vocab(t))
	require.NoError(t, err)
	require.NotNil(t, tf.Launch)
	assert.Contains(t, tf.Launch.Composites, "cgsolve")
	assert.Contains(t, tf.Launch.Reducing, "dot")
}

package portability

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
)

func kernelRecord(cell, strategy, variant, tc, device, target string, trial int, times ...float64) results.Record {
	return results.Record{Kind: results.KindKernel, Cell: cell, Kernel: "k", Strategy: strategy, Variant: variant,
		Toolchain: tc, Device: device, Target: target, Size: 100, Trial: trial, TimesS: times, MedianS: times[0],
		Bytes: 8e9, BytesMin: 4e9, GBps: 8, Verified: true}
}

// Records become pooled measurements on named platforms: trials pooled, a
// newer failed trial spoils the measurement, host code runs on the host's
// CPU, rooflines from the best stream op, and a toolchain that only built
// is a platform that compiles, not run.
func TestFromRecords(t *testing.T) {
	failed := kernelRecord("k.v.gpu", "s", "v", "gpu", "GPU 1", "sm_90", 2, 1)
	failed.Verified = false
	recs := []results.Record{
		kernelRecord("k.v.gpu", "s", "v", "gpu", "GPU 1", "sm_90", 1, 1, 1.1, 0.9),
		kernelRecord("k.v.gpu", "s", "v", "gpu", "GPU 1", "sm_90", 2, 2, 2.1, 1.9),
		kernelRecord("k.w.gpu", "s", "w", "gpu", "GPU 1", "sm_90", 1, 1),
		failed, // trial 2 of k.w.gpu measured again, and failed
		kernelRecord("k.v.host", "s", "v", "host", "host", "host", 1, 3),
		{Kind: results.KindStream, Op: results.OpCopy, Toolchain: "gpu", Device: "GPU 1", GBps: 100},
		{Kind: results.KindStream, Op: results.OpTriad, Toolchain: "gpu", Device: "GPU 1", GBps: 120},
		{Kind: results.KindStream, Op: results.OpTriad, Toolchain: "host", Device: "host", GBps: 20},
	}
	recs[3].Cell, recs[3].Variant = "k.w.gpu", "w"
	run := results.Run{Host: results.Host{CPU: "CPU Model"}, Toolchains: []results.Toolchain{{ID: "amd", Target: "gfx90a"}, {ID: "nv", Target: "sm_80"}},
		Vocabulary: &results.Vocabulary{Strategies: []results.StrategyName{{Name: "s", Variants: []string{"v", "w"}}}}}
	builds := []results.BuildRow{
		{Cell: "k.v.amd", Kernel: "k", Variant: "v", Toolchain: "amd", Status: "built"},
		{Cell: "k.w.amd", Kernel: "k", Variant: "w", Toolchain: "amd", Status: "failed"},
		{Cell: "k.v.gpu", Toolchain: "gpu", Status: "built"},
		{Cell: "k.v.nv", Kernel: "k", Variant: "v", Toolchain: "nv", Status: "built"},
	}
	in := FromRecords(recs, run, builds)
	assert.Equal(t, Build{Kernel: "k", Strategy: "s", Variant: "w", Toolchain: "amd", Status: "failed"}, in.Builds[1])
	assert.Equal(t, []Platform{
		{Device: "gfx90a", Toolchain: "amd", Status: CompilesNotRun, Reason: "compiles; not run (no AMD GPU)"},
		{Device: "GPU 1", Toolchain: "gpu", Status: Measured},
		{Device: "CPU Model", Toolchain: "host", Status: Measured},
		{Device: "sm_80", Toolchain: "nv", Status: CompilesNotRun, Reason: "its cells were built; none ran in this folder"},
	}, in.Platforms)
	assert.Equal(t, map[string]float64{"GPU 1": 120, "CPU Model": 20}, in.Rooflines)
	require.Len(t, in.Measurements, 3)
	v, w, host := in.Measurements[0], in.Measurements[1], in.Measurements[2]
	assert.True(t, v.OK)
	assert.Equal(t, PlatformName("GPU 1", "gpu"), v.Platform)
	assert.InDelta(t, 1.5, v.Seconds, eps, "median of both trials' six times")
	assert.LessOrEqual(t, v.Lo, v.Seconds)
	assert.GreaterOrEqual(t, v.Hi, v.Seconds)
	assert.Len(t, v.Boot, 2000)
	assert.False(t, w.OK, "a failed trial spoils the measurement")
	assert.Equal(t, PlatformName("CPU Model", "host"), host.Platform)

	e := Efficiencies(in, Options{})
	assert.InDelta(t, 4e9/1.5/1e9/120, e[0].Arch.V, eps)
	assert.False(t, math.IsNaN(e[0].App.Lo))
}

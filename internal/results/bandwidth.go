package results

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/stats"
)

// MethodBabelStream is the method of stream records measured as
// BabelStream does (harness/pm/harness.hpp, stream): arrays of four times
// the device's caches or more (on a GPU at least 2^25 doubles), no cache
// flush, the best of up to 100 runs.
const MethodBabelStream = "babelstream"

// Bandwidth is the measured memory bandwidth of one device: the best of the
// STREAM ops measured on it (stream records), or in the oldest folders the
// runtime's copy (copy records). It is the one answer to "the measured
// bandwidth of this device" that figures, tables, the run summary and
// portability read.
type Bandwidth struct {
	Device    string
	GBps      float64
	Op        string // copy, triad, dot; "runtime copy" for copy records
	Toolchain string // whose program measured it
	// Method is MethodBabelStream, or "" for older stream records (the
	// median of a few runs after an L2 flush) and copy records.
	Method     string
	Reps       int   // runs measured
	ArrayBytes int64 // bytes of each array
	Flushed    bool  // the L2 was flushed before each run (older stream records)
	Clock      string
}

// Label names the measurement: "BabelStream triad 4263 GB/s" or "STREAM dot
// 4121 GB/s".
func (b Bandwidth) Label() string {
	what := "STREAM " + b.Op
	switch {
	case b.Method == MethodBabelStream:
		what = "BabelStream " + b.Op
	case b.Op == "runtime copy":
		what = "runtime copy"
	}
	return fmt.Sprintf("%s %.0f GB/s", what, b.GBps)
}

// How says how it was measured: "best of 100 runs, arrays of 512 MiB, nvcc-sm90"
// or, for older records, "older method: median of 5 runs after an L2 flush,
// arrays of 512 MiB, nvcc-sm90".
func (b Bandwidth) How() string {
	var parts []string
	switch {
	case b.Method == MethodBabelStream:
		parts = append(parts, fmt.Sprintf("best of %d runs", b.Reps))
	case b.Op == "runtime copy":
		parts = append(parts, "older method: the median of the runtime's device-to-device copies")
	default:
		m := "older method: median"
		if b.Reps > 0 {
			m += fmt.Sprintf(" of %d runs", b.Reps)
		}
		if b.Flushed {
			m += " after an L2 flush"
		}
		parts = append(parts, m)
	}
	if b.ArrayBytes > 0 {
		parts = append(parts, "arrays of "+byteSize(b.ArrayBytes))
	}
	if b.Toolchain != "" {
		parts = append(parts, b.Toolchain)
	}
	return strings.Join(parts, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// DeviceOf names the device a record ran on: its device, or "toolchain X"
// for records without one.
func DeviceOf(r Record) string {
	if r.Device != "" {
		return r.Device
	}
	return "toolchain " + r.Toolchain
}

// Bandwidths is the measured bandwidth of each device the folder's records
// name (DeviceBandwidths over its stream and copy records).
func (f *Folder) Bandwidths() map[string]Bandwidth {
	family := map[string]string{}
	for _, t := range f.Run.Toolchains {
		family[t.ID] = t.Family
	}
	recs := append([]Record(nil), f.Stream...)
	for _, r := range f.Copy { // f.Copy holds the stream copies too (IsRoofline)
		if r.Kind == KindCopy {
			recs = append(recs, r)
		}
	}
	return DeviceBandwidths(recs, func(tc string) string { return family[tc] })
}

// DeviceBandwidths is the measured bandwidth of each device of recs:
//   - BabelStream's method (stream records with method "babelstream",
//     verified): the largest gbps_best of any op by any toolchain;
//   - else older stream records: per (toolchain, op) the median of their
//     gbps, the largest of those;
//   - else copy records (the oldest folders): the median of the device's
//     copy records, CUDA's alone where CUDA measured the device (the OpenMP
//     runtimes' omp_target_memcpy adds their own overheads).
//
// family gives a toolchain's compiler family.
func DeviceBandwidths(recs []Record, family func(string) string) map[string]Bandwidth {
	out := map[string]Bandwidth{}
	better := func(b Bandwidth) {
		o, ok := out[b.Device]
		if !ok || b.GBps > o.GBps || b.GBps == o.GBps && b.Op+b.Toolchain < o.Op+o.Toolchain {
			out[b.Device] = b
		}
	}
	babel := map[string]bool{}
	for _, r := range recs {
		if r.Kind == KindStream && r.Method == MethodBabelStream && r.Verified && r.Error == "" && r.GBpsBest > 0 && !math.IsInf(r.GBpsBest, 0) {
			babel[DeviceOf(r)] = true
			better(Bandwidth{Device: DeviceOf(r), GBps: r.GBpsBest, Op: r.Op, Toolchain: r.Toolchain, Method: r.Method,
				Reps: r.Reps, ArrayBytes: r.ArrayBytes, Clock: r.TimedBy()})
		}
	}
	type devOp struct{ dev, tc, op string }
	older := map[devOp][]Record{}
	var keys []devOp
	for _, r := range recs {
		if r.Kind != KindStream || babel[DeviceOf(r)] || r.GBps <= 0 || math.IsInf(r.GBps, 0) {
			continue
		}
		k := devOp{DeviceOf(r), r.Toolchain, r.Op}
		if older[k] == nil {
			keys = append(keys, k)
		}
		older[k] = append(older[k], r)
	}
	for _, k := range keys {
		rs := older[k]
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = r.GBps
		}
		r := rs[0]
		b := Bandwidth{Device: k.dev, GBps: stats.Median(v), Op: k.op, Toolchain: k.tc, Reps: len(r.TimesS),
			Flushed: r.flag("flush_l2"), Clock: ClockOf(rs)}
		if words := map[string]float64{OpCopy: 2, OpTriad: 3, OpDot: 2}[k.op]; words > 0 && r.Bytes > 0 {
			b.ArrayBytes = int64(r.Bytes / words)
		}
		better(b)
	}
	// Copy records, where a device has no stream record at all.
	streamed := map[string]bool{}
	cuda := map[string]bool{}
	for _, r := range recs {
		if r.Kind == KindStream {
			streamed[DeviceOf(r)] = true
		}
		if r.Kind == KindCopy && r.GBps > 0 && family(r.Toolchain) == "nvcc" {
			cuda[r.Device] = true
		}
	}
	copies := map[string][]Record{}
	var devs []string
	for _, r := range recs {
		dev := DeviceOf(r)
		if r.Kind != KindCopy || streamed[dev] || r.GBps <= 0 || r.Device != "" && cuda[r.Device] && family(r.Toolchain) != "nvcc" {
			continue
		}
		if copies[dev] == nil {
			devs = append(devs, dev)
		}
		copies[dev] = append(copies[dev], r)
	}
	sort.Strings(devs)
	for _, dev := range devs {
		rs := copies[dev]
		v := make([]float64, len(rs))
		var tcs []string
		for i, r := range rs {
			v[i] = r.GBps
			if !slices.Contains(tcs, r.Toolchain) {
				tcs = append(tcs, r.Toolchain)
			}
		}
		better(Bandwidth{Device: dev, GBps: stats.Median(v), Op: "runtime copy", Toolchain: strings.Join(tcs, ", "), Clock: ClockOf(rs)})
	}
	return out
}

// flag reads a boolean field the record type does not name (kept in Extra).
// Flush is how the L2 was flushed before each of the record's runs: ""
// when it was not (flush_l2 false or absent), else FlushBy, "write" in
// records older than it.
func (r Record) Flush() string {
	if !r.flag("flush_l2") {
		return ""
	}
	if r.FlushBy == "" {
		return "write"
	}
	return r.FlushBy
}

func (r Record) flag(name string) bool {
	var v bool
	if raw, ok := r.Extra[name]; ok {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// number reads a numeric field the record type does not name (kept in
// Extra); ok is false where it is absent.
func (r Record) number(name string) (float64, bool) {
	var v float64
	raw, ok := r.Extra[name]
	if !ok || json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	return v, true
}

// WarmCache reports whether a kernel record was measured with warm caches on
// a working set that fits them: no flush between calls (flush_l2 false) and
// a working set no larger than half the flush (the flush is twice the
// caches). Such a measurement may pass the device's DRAM bandwidth.
func (r Record) WarmCache() bool {
	if _, ok := r.Extra["flush_l2"]; !ok || r.flag("flush_l2") {
		return false
	}
	ws, ok1 := r.number("working_set_bytes")
	fb, ok2 := r.number("flush_bytes")
	return ok1 && ok2 && ws > 0 && ws <= fb/2
}

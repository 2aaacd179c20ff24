// Package dataset indexes the usable measurements of a results folder by
// series (kernel, variant, toolchain): one point per size with its
// statistics, the rooflines of the devices, and which cells run the same
// device code. Figures, claims and tables read a folder through it.
package dataset

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// Key names one line of measurements: a cell without its size.
type Key struct{ Kernel, Variant, Toolchain string }

// Point is one usable measurement of a series: every trial's repetitions of
// one (cell, size), with the statistics of internal/stats.
type Point struct {
	Size     int64
	GBps     float64 // bytes / median time
	Lo, Hi   float64 // GB/s interval (from the time interval)
	MedianS  float64
	Bytes    float64 // the papers' byte count
	BytesMin float64 // minimum memory traffic; 0 in older folders
	M        *stats.Measurement
	// kind normalized: the median time over the reference's, its interval
	Norm, NormLo, NormHi float64
	// A composite's sections: each called kernel's seconds per call, one
	// value per trial (its sections run), and the steps per call of a
	// composite that repeats a step (results.Record.Steps).
	PerCall map[string][]float64
	Steps   int
	// The first trial's sections: calls and bytes of each called kernel.
	Sections map[string]results.Section
	// Config is the tuning configuration measured (tunable -> value); nil
	// for the program as published (its generated values).
	Config map[string]int64
}

// GBpsMin is the minimum-traffic bandwidth (0 when the record has no bytes_min).
func (p Point) GBpsMin() float64 {
	if p.BytesMin <= 0 || p.MedianS <= 0 {
		return 0
	}
	return p.BytesMin / p.MedianS / 1e9
}

// rate is how fast the measurement ran (results.Rate: GB/s, or calls per
// second where the kernel moves no bytes).
func (p Point) Rate() float64 { return results.Rate(p.Bytes, p.MedianS) }

// rateBoot is the bootstrap replicates of the rate.
func (p Point) RateBoot() []float64 { return results.Rates(p.Bytes, p.M.Boot) }

// comparable says whether p and q have rates in one unit.
func Comparable(p, q Point) bool {
	return (p.Bytes > 0) == (q.Bytes > 0) && p.Rate() > 0 && q.Rate() > 0
}

// Set indexes the usable (verified, error-free) measurements of a run
// for figures, claims and tables.
type Set struct {
	Series     map[Key][]Point              // sorted by size, one Point per size
	Toolchains map[string]results.Toolchain // by id
	Order      []string                     // toolchain ids: run.json order, then the rest sorted
	Roof       map[string]float64           // toolchain id -> roofline of its device (best stream op, or copy)
	RoofOp     map[string]string            // toolchain id -> what the roofline is ("stream triad", "copy")
	Hash       map[string]string            // cell -> device code hash (build.csv)
	Stream     bool                         // rooflines from stream records (not copy records)
	Unusable   int                          // measurements with a failed, unverified or erroring trial
}

// Empty is a set without measurements, of the toolchains given.
func Empty(toolchains []results.Toolchain) *Set {
	ds := &Set{
		Series:     map[Key][]Point{},
		Toolchains: map[string]results.Toolchain{},
		Roof:       map[string]float64{},
		RoofOp:     map[string]string{},
		Hash:       map[string]string{},
	}
	for _, tc := range toolchains {
		ds.AddToolchain(tc)
	}
	return ds
}

// New indexes the usable measurements of a results folder: its kernel
// records, its rooflines (stream records, else copy records) and the device
// code hashes of build.csv and the records.
func New(res *results.Folder) *Set {
	ds := Empty(res.Run.Toolchains)
	for _, b := range res.Builds {
		if b.DeviceHash != "" {
			ds.Hash[b.Cell] = b.DeviceHash
		}
	}
	ds.addRecords(res.Kernel)
	if len(res.Stream) > 0 {
		ds.Stream = true
		ds.addStreams(res.Stream)
	} else {
		ds.addCopies(res.Copy)
	}
	return ds
}

// AddToolchain adds a toolchain the set knows, after those it knows.
func (ds *Set) AddToolchain(tc results.Toolchain) {
	if _, ok := ds.Toolchains[tc.ID]; ok || tc.ID == "" {
		return
	}
	ds.Toolchains[tc.ID] = tc
	ds.Order = append(ds.Order, tc.ID)
}

// trialKey names one trial of one (cell, size).
type trialKey struct {
	cell  string
	size  int64
	trial int
}

// addRecords makes one measurement of each (cell, size) from the last record
// of each of its trials (a newer failure replaces an older success). A
// measurement any of whose trials failed is left out.
func (ds *Set) addRecords(recs []results.Record) {
	last := map[trialKey]results.Record{}
	var order []trialKey
	for _, r := range recs {
		k := trialKey{r.Cell, r.Size, r.Trial}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = r
	}
	byCellSize := map[results.CellSize][]results.Record{}
	var keys []results.CellSize
	for _, k := range order {
		cs := results.CellSize{Cell: k.cell, Size: k.size}
		if byCellSize[cs] == nil {
			keys = append(keys, cs)
		}
		byCellSize[cs] = append(byCellSize[cs], last[k])
	}
	latest := map[Key]map[int64]Point{}
	var extra []string
	for _, cs := range keys {
		trials := byCellSize[cs]
		sort.SliceStable(trials, func(i, j int) bool { return trials[i].Trial < trials[j].Trial })
		p, ok := measurement(trials)
		if !ok {
			ds.Unusable++
			continue
		}
		r := trials[0]
		if h := trials[len(trials)-1].DeviceHash; h != "" {
			ds.Hash[r.Cell] = h // the record's own hash beats build.csv's (a merged folder's rows are the last batch's)
		}
		k := Key{r.Kernel, r.Variant, r.Toolchain}
		if latest[k] == nil {
			latest[k] = map[int64]Point{}
		}
		latest[k][r.Size] = p
		if _, ok := ds.Toolchains[r.Toolchain]; !ok && !slices.Contains(extra, r.Toolchain) {
			extra = append(extra, r.Toolchain)
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		ds.AddToolchain(results.Toolchain{ID: id})
	}
	for k, bySize := range latest {
		pts := make([]Point, 0, len(bySize))
		for _, p := range bySize {
			pts = append(pts, p)
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].Size < pts[j].Size })
		ds.Series[k] = pts
	}
}

// measurement pools the trials of one (cell, size): every repetition time
// (a record without times_s counts its median once).
func measurement(trials []results.Record) (Point, bool) {
	var times [][]float64
	for _, r := range trials {
		if !r.Usable() {
			return Point{}, false
		}
		t := r.TimesS
		if len(t) == 0 {
			t = []float64{r.MedianS}
		}
		times = append(times, t)
	}
	r := trials[0]
	m := stats.Measure(fmt.Sprintf("%s@%d", r.Cell, r.Size), times)
	if m == nil {
		return Point{}, false
	}
	bytes := r.Bytes
	if bytes <= 0 { // a record without its byte count: the harness's GB/s stands
		bytes = max(r.GBps*r.MedianS*1e9, 0)
	}
	// No bytes (a kernel of flops only): a Point without GB/s, compared by time.
	p := Point{Size: r.Size, MedianS: m.Median, Bytes: bytes, BytesMin: r.BytesMin, M: m,
		GBps: bytes / m.Median / 1e9, Lo: bytes / m.Hi / 1e9, Hi: bytes / m.Lo / 1e9, Steps: r.Steps()}
	p.Sections = r.Sections
	if len(r.Config) > 0 {
		p.Config = r.Config
	}
	for _, t := range trials {
		for name, s := range t.Sections {
			if p.PerCall == nil {
				p.PerCall = map[string][]float64{}
			}
			p.PerCall[name] = append(p.PerCall[name], s.PerCall())
		}
	}
	return p, true
}

// addStreams sets each toolchain's roofline: the best median GB/s of any
// stream op (copy, triad, dot) measured on its device in this run, by any
// toolchain.
func (ds *Set) addStreams(recs []results.Record) {
	type devOp struct{ dev, tc, op string }
	vals := map[devOp][]float64{}
	devices := map[string][]string{}
	for _, r := range recs {
		if r.GBps <= 0 || math.IsInf(r.GBps, 0) {
			continue
		}
		dev := r.Device
		if dev == "" {
			dev = "toolchain " + r.Toolchain
		}
		vals[devOp{dev, r.Toolchain, r.Op}] = append(vals[devOp{dev, r.Toolchain, r.Op}], r.GBps)
		if !slices.Contains(devices[r.Toolchain], dev) {
			devices[r.Toolchain] = append(devices[r.Toolchain], dev)
		}
	}
	best := map[string]float64{}
	bestOp := map[string]string{}
	for k, v := range vals {
		m := stats.Median(v)
		if m > best[k.dev] || m == best[k.dev] && "stream "+k.op < bestOp[k.dev] {
			best[k.dev], bestOp[k.dev] = m, "stream "+k.op
		}
	}
	for tc, devs := range devices {
		for _, d := range devs {
			if best[d] > ds.Roof[tc] {
				ds.Roof[tc], ds.RoofOp[tc] = best[d], bestOp[d]
			}
		}
	}
}

// addCopies sets each toolchain's copy bandwidth: the median of all copy
// records of the device(s) its binaries ran on, the largest device if many.
// Where CUDA measured a device (cudaMemcpy), only CUDA's records count: the
// OpenMP runtimes' omp_target_memcpy adds their own overheads.
func (ds *Set) addCopies(recs []results.Record) {
	byDevice := map[string][]float64{}
	devices := map[string][]string{}
	cudaMeasured := map[string]bool{}
	for _, r := range recs {
		if r.GBps > 0 && ds.Family(r.Toolchain) == "nvcc" {
			cudaMeasured[r.Device] = true
		}
	}
	for _, r := range recs {
		if r.GBps <= 0 {
			continue
		}
		if r.Device != "" && cudaMeasured[r.Device] && ds.Family(r.Toolchain) != "nvcc" {
			if !slices.Contains(devices[r.Toolchain], r.Device) {
				devices[r.Toolchain] = append(devices[r.Toolchain], r.Device)
			}
			continue
		}
		dev := r.Device
		if dev == "" {
			dev = "toolchain " + r.Toolchain
		}
		byDevice[dev] = append(byDevice[dev], r.GBps)
		if !slices.Contains(devices[r.Toolchain], dev) {
			devices[r.Toolchain] = append(devices[r.Toolchain], dev)
		}
	}
	for tc, devs := range devices {
		for _, d := range devs {
			if m := stats.Median(byDevice[d]); m > ds.Roof[tc] {
				ds.Roof[tc], ds.RoofOp[tc] = m, "copy"
			}
		}
	}
}

// family is toolchain tc's compiler family as run.json lists it ("" for a
// toolchain it does not list: no family selector takes it).
func (ds *Set) Family(tc string) string {
	return ds.Toolchains[tc].Family
}

// isHost reports whether a toolchain's binaries run on the host CPU.
func (ds *Set) IsHost(tc string) bool {
	return ds.Toolchains[tc].Target == "host"
}

// onTarget reports whether toolchain tc builds for target: any, host or
// device.
func (ds *Set) OnTarget(target, tc string) bool {
	switch target {
	case "host":
		return ds.IsHost(tc)
	case "device":
		return !ds.IsHost(tc)
	}
	return true
}

// keys returns the series of kernel and variant, in toolchain order.
func (ds *Set) Keys(kernel, variant string) []Key {
	var out []Key
	for _, tc := range ds.Order {
		k := Key{kernel, variant, tc}
		if len(ds.Series[k]) > 0 {
			out = append(out, k)
		}
	}
	return out
}

// CellOf names a series' cell.
func CellOf(k Key) string { return k.Kernel + "." + k.Variant + "." + k.Toolchain }

// identical reports whether two series of one kernel and toolchain run the
// same device code (build.csv's device_hash; never for older folders).
func (ds *Set) Identical(a, b Key) bool {
	if a.Kernel != b.Kernel || a.Toolchain != b.Toolchain {
		return false
	}
	ha, hb := ds.Hash[CellOf(a)], ds.Hash[CellOf(b)]
	return ha != "" && ha == hb
}

// Holds says whether any record of the kernel, on any toolchain, verified.
func (ds *Set) Holds(kernel string) bool {
	for k := range ds.Series {
		if k.Kernel == kernel {
			return true
		}
	}
	return false
}

// Select returns the series of kernels matching sel on the target's
// toolchains, in the order of kernels, sel's variants and the toolchains.
func (ds *Set) Select(kernels []string, target string, sel reportspec.Selector) []Key {
	var out []Key
	for _, k := range kernels {
		for _, v := range sel.Variants {
			for _, key := range ds.Keys(k, v) {
				if ds.OnTarget(target, key.Toolchain) && sel.Matches(key.Toolchain, ds.Family(key.Toolchain)) {
					out = append(out, key)
				}
			}
		}
	}
	return out
}

// PointAt is the point of pts at size.
func PointAt(pts []Point, size int64) (Point, bool) {
	for _, p := range pts {
		if p.Size == size {
			return p, true
		}
	}
	return Point{}, false
}

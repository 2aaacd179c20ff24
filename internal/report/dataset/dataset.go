// Package dataset indexes the usable measurements of a results folder by
// series (kernel, variant, toolchain): one point per size with its
// statistics, the rooflines of the devices, and which cells run the same
// device code. Figures, claims and tables read a folder through it.
package dataset

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
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
	// Clock is the clock of its times (results.ClockOf of its trials); two
	// points compare only where Unlike says nothing.
	Clock string
	// Warm: a trial ran with warm caches on a working set that fits them
	// (results.Record.WarmCache): it may pass the DRAM bandwidth.
	Warm bool
}

// Unlike says why p and q are not compared, or "" where they are: the
// report's ratios (claims, tables, normalized figures) pair like clocks only
// (results.ClocksDiffer, the one rule).
func Unlike(p, q Point) string { return results.ClocksDiffer(p.Clock, q.Clock) }

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
	Roof       map[string]float64           // toolchain id -> measured bandwidth of its device (Bandwidth[tc].GBps)
	RoofOp     map[string]string            // toolchain id -> what the roofline is ("stream triad", "copy")
	// Bandwidth is the measured bandwidth of each toolchain's device
	// (results.Folder.Bandwidths: the largest where it ran on several);
	// Spec its machine model's datasheet bandwidth (AddSpecs).
	Bandwidth map[string]results.Bandwidth
	Spec      map[string]Spec
	devices   map[string][]string // toolchain id -> the devices its records name
	Hash      map[string]string   // cell -> device code hash (build.csv)
	Stream    bool                // rooflines from stream records (not copy records)
	Unusable  int                 // measurements with a failed, unverified or erroring trial
}

// Empty is a set without measurements, of the toolchains given.
func Empty(toolchains []results.Toolchain) *Set {
	ds := &Set{
		Series:     map[Key][]Point{},
		Toolchains: map[string]results.Toolchain{},
		Roof:       map[string]float64{},
		RoofOp:     map[string]string{},
		Bandwidth:  map[string]results.Bandwidth{},
		Spec:       map[string]Spec{},
		Hash:       map[string]string{},
		devices:    map[string][]string{},
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
	ds.Stream = len(res.Stream) > 0
	ds.addBandwidths(res)
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
	p.Clock = results.ClockOf(trials)
	for _, t := range trials {
		p.Warm = p.Warm || t.WarmCache()
	}
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

// addBandwidths gives each toolchain the measured bandwidth of the device
// its records ran on (the largest, where several).
func (ds *Set) addBandwidths(res *results.Folder) {
	for _, set := range [][]results.Record{res.Kernel, res.Stream, res.Copy} {
		for _, r := range set {
			if dev := results.DeviceOf(r); !slices.Contains(ds.devices[r.Toolchain], dev) {
				ds.devices[r.Toolchain] = append(ds.devices[r.Toolchain], dev)
			}
		}
	}
	bw := res.Bandwidths()
	for tc, devs := range ds.devices {
		for _, d := range devs {
			if b, ok := bw[d]; ok && b.GBps > ds.Roof[tc] {
				ds.Bandwidth[tc], ds.Roof[tc] = b, b.GBps
				ds.RoofOp[tc] = "stream " + b.Op
				if b.Op == "runtime copy" {
					ds.RoofOp[tc] = "copy"
				}
			}
		}
	}
}

// Spec is a device's datasheet memory bandwidth, from its machine model.
type Spec struct {
	GBps  float64
	Model string // machines/<Model>.yaml
}

// AddSpecs gives each toolchain the datasheet bandwidth of its device's
// machine model (models reporting the device's name; for the host, the
// CPU run.json names), where the model has one.
func (ds *Set) AddSpecs(models *machine.Set, run results.Run) {
	if models == nil {
		return
	}
	for tc, devs := range ds.devices {
		for _, d := range devs {
			name := d
			if ds.IsHost(tc) || strings.HasPrefix(d, "host") {
				name = run.Host.CPU
			}
			m, ok := models.ByReported(name)
			if !ok {
				continue
			}
			gbs := m.GPU.MemoryBandwidthGBs
			if m.Kind == machine.KindCPU {
				gbs = m.CPU.MemoryBandwidthGBs
			}
			if gbs > 0 && float64(gbs) > ds.Spec[tc].GBps {
				ds.Spec[tc] = Spec{GBps: float64(gbs), Model: m.Name}
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

package report

import (
	"slices"
	"sort"
	"strings"
)

// seriesKey names one line of measurements: a cell without its size.
type seriesKey struct{ Kernel, Variant, Toolchain string }

// point is one usable measurement of a series.
type point struct {
	Size    int64
	GBps    float64
	MedianS float64
}

// dataset indexes the usable (verified, error-free) kernel records of a run
// for figures and claims.
type dataset struct {
	series     map[seriesKey][]point // sorted by size, one point per size
	toolchains map[string]Toolchain
	order      []string           // toolchain ids: run.json order, then the rest sorted
	copyGBps   map[string]float64 // toolchain id -> copy bandwidth of its device
	unusable   int                // kernel records not verified or with an error
}

func newDataset(res *Results) *dataset {
	ds := &dataset{
		series:     map[seriesKey][]point{},
		toolchains: map[string]Toolchain{},
		copyGBps:   map[string]float64{},
	}
	for _, tc := range res.Run.Toolchains {
		ds.addToolchain(tc)
	}
	ds.addRecords(res.Kernel)
	ds.addCopies(res.Copy)
	return ds
}

func (ds *dataset) addToolchain(tc Toolchain) {
	if _, ok := ds.toolchains[tc.ID]; ok || tc.ID == "" {
		return
	}
	if tc.Family == "" {
		tc.Family = inferFamily(tc.ID)
	}
	if tc.Target == "" && strings.HasSuffix(tc.ID, "-host") {
		tc.Target = "host"
	}
	ds.toolchains[tc.ID] = tc
	ds.order = append(ds.order, tc.ID)
}

// addRecords keeps the last usable record of each (cell, size).
func (ds *dataset) addRecords(recs []Record) {
	latest := map[seriesKey]map[int64]point{}
	var extra []string
	for _, r := range recs {
		if !r.Usable() {
			ds.unusable++
			continue
		}
		k := seriesKey{r.Kernel, r.Variant, r.Toolchain}
		if latest[k] == nil {
			latest[k] = map[int64]point{}
		}
		latest[k][r.Size] = point{Size: r.Size, GBps: r.GBps, MedianS: r.MedianS}
		if _, ok := ds.toolchains[r.Toolchain]; !ok && !slices.Contains(extra, r.Toolchain) {
			extra = append(extra, r.Toolchain)
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		ds.addToolchain(Toolchain{ID: id})
	}
	for k, bySize := range latest {
		pts := make([]point, 0, len(bySize))
		for _, p := range bySize {
			pts = append(pts, p)
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].Size < pts[j].Size })
		ds.series[k] = pts
	}
}

// addCopies sets each toolchain's copy bandwidth: the median of all copy
// records of the device(s) its binaries ran on, the largest device if many.
// Where CUDA measured a device (cudaMemcpy), only CUDA's records count: the
// OpenMP runtimes' omp_target_memcpy adds their own overheads.
func (ds *dataset) addCopies(recs []Record) {
	byDevice := map[string][]float64{}
	devices := map[string][]string{}
	cudaMeasured := map[string]bool{}
	for _, r := range recs {
		if r.GBps > 0 && ds.family(r.Toolchain) == "nvcc" {
			cudaMeasured[r.Device] = true
		}
	}
	for _, r := range recs {
		if r.GBps <= 0 {
			continue
		}
		if r.Device != "" && cudaMeasured[r.Device] && ds.family(r.Toolchain) != "nvcc" {
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
			if m := median(byDevice[d]); m > ds.copyGBps[tc] {
				ds.copyGBps[tc] = m
			}
		}
	}
}

func (ds *dataset) family(tc string) string {
	if t, ok := ds.toolchains[tc]; ok {
		return t.Family
	}
	return inferFamily(tc)
}

// isHost reports whether a toolchain's binaries run on the host CPU.
func (ds *dataset) isHost(tc string) bool {
	return ds.toolchains[tc].Target == "host"
}

// onTarget reports whether toolchain tc builds for target: any, host or
// device.
func (ds *dataset) onTarget(target, tc string) bool {
	switch target {
	case "host":
		return ds.isHost(tc)
	case "device":
		return !ds.isHost(tc)
	}
	return true
}

// inferFamily guesses a toolchain's family from its id when run.json does not
// list it.
func inferFamily(id string) string {
	switch {
	case strings.HasPrefix(id, "clang"), strings.HasPrefix(id, "llvm"):
		return "llvm"
	case strings.HasPrefix(id, "gcc"):
		return "gcc"
	case strings.HasPrefix(id, "nvcc"):
		return "nvcc"
	case strings.HasPrefix(id, "nvhpc"), strings.HasPrefix(id, "nvc"):
		return "nvhpc"
	case strings.HasPrefix(id, "rocm"), strings.HasPrefix(id, "hip"), strings.HasPrefix(id, "amdclang"):
		return "rocm"
	}
	return ""
}

// keys returns the series of kernel and variant, in toolchain order.
func (ds *dataset) keys(kernel, variant string) []seriesKey {
	var out []seriesKey
	for _, tc := range ds.order {
		k := seriesKey{kernel, variant, tc}
		if len(ds.series[k]) > 0 {
			out = append(out, k)
		}
	}
	return out
}

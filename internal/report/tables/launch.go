package tables

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// latency is a launch kernel's time per call at its smallest size.
type latency struct {
	Size             int64
	Median, Lo, Hi   float64 // seconds
	Trials, RepsEach int
}

// launchRow is one cell's launch latencies; nil where not measured.
type launchRow struct {
	Variant, Toolchain  string
	Empty, Flat, Reduce *latency
}

// splitRow is one cell of a composite at one size.
type splitRow struct {
	Variant, Toolchain string
	Measured           float64 // median seconds per call
	Parts              float64 // the sections run: every call synchronised and timed
	Bandwidth          float64 // the parts' time alone less their latency, scaled to the bytes; NaN when a part was not measured alone
	Launch             float64 // sum of calls * latency; NaN without the launch kernels
	Launches, Reducing int     // calls per composite call, of them returning a scalar
	Missing            []string
}

// Model is the bandwidth time plus the launch time.
func (r splitRow) Model() float64 { return r.Bandwidth + r.Launch }

type splitTable struct {
	Kernel string
	Size   int64
	Rows   []splitRow
}

type launchTables struct {
	Spec      reportspec.Launch
	Latencies []launchRow
	Splits    []splitTable
}

// buildLaunch measures the launch kernels per cell and splits each
// composite's time; nil when the folder holds no launch kernel.
func buildLaunch(spec *reportspec.Launch, ds *dataset.Set) *launchTables {
	if spec == nil {
		return nil
	}
	lt := &launchTables{Spec: *spec}
	type cell struct{ v, tc string }
	lat := map[cell]*launchRow{}
	get := func(kernel string, c cell) *latency {
		pts := ds.Series[dataset.Key{Kernel: kernel, Variant: c.v, Toolchain: c.tc}]
		if len(pts) == 0 {
			return nil
		}
		p := pts[0]
		return &latency{Size: p.Size, Median: p.M.Median, Lo: p.M.Lo, Hi: p.M.Hi, Trials: len(p.M.Trials), RepsEach: len(p.M.Trials[0])}
	}
	for k := range ds.Series {
		if k.Kernel != spec.Empty && k.Kernel != spec.Flat && k.Kernel != spec.Reduce {
			continue
		}
		c := cell{k.Variant, k.Toolchain}
		if lat[c] == nil {
			lat[c] = &launchRow{Variant: c.v, Toolchain: c.tc, Empty: get(spec.Empty, c), Flat: get(spec.Flat, c), Reduce: get(spec.Reduce, c)}
		}
	}
	if len(lat) == 0 {
		// A folder without the launch kernels (every one before them) has
		// nothing to split with.
		return nil
	}
	for _, r := range lat {
		lt.Latencies = append(lt.Latencies, *r)
	}
	sort.Slice(lt.Latencies, func(i, j int) bool {
		a, b := lt.Latencies[i], lt.Latencies[j]
		if a.Toolchain != b.Toolchain {
			return a.Toolchain < b.Toolchain
		}
		return a.Variant < b.Variant
	})
	for _, composite := range spec.Composites {
		bySize := map[int64][]splitRow{}
		for k, pts := range ds.Series {
			if k.Kernel != composite {
				continue
			}
			l := lat[cell{k.Variant, k.Toolchain}]
			for _, p := range pts {
				if len(p.Sections) == 0 {
					continue
				}
				bySize[p.Size] = append(bySize[p.Size], modelSplit(spec, ds, k, p, l))
			}
		}
		var sizes []int64
		for s := range bySize {
			sizes = append(sizes, s)
		}
		sort.Slice(sizes, func(i, j int) bool { return sizes[i] > sizes[j] })
		for _, size := range sizes {
			rows := bySize[size]
			sort.Slice(rows, func(i, j int) bool {
				if rows[i].Measured != rows[j].Measured {
					return rows[i].Measured < rows[j].Measured
				}
				return rows[i].Variant+"@"+rows[i].Toolchain < rows[j].Variant+"@"+rows[j].Toolchain
			})
			lt.Splits = append(lt.Splits, splitTable{Kernel: composite, Size: size, Rows: rows})
		}
	}
	return lt
}

// modelSplit models one composite measurement from its sections, the parts
// measured alone and the cell's launch latencies (l may be nil).
func modelSplit(spec *reportspec.Launch, ds *dataset.Set, k dataset.Key, p dataset.Point, l *launchRow) splitRow {
	r := splitRow{Variant: k.Variant, Toolchain: k.Toolchain, Measured: p.M.Median}
	flat, reduce := l.flat(), l.reduce()
	names := make([]string, 0, len(p.Sections))
	for name := range p.Sections {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := p.Sections[name]
		r.Launches += s.Calls
		reducing := slices.Contains(spec.Reducing, name)
		if reducing {
			r.Reducing += s.Calls
		}
		if c := p.PerCall[name]; len(c) > 0 {
			r.Parts += stats.Median(c) * float64(s.Calls)
		}
		lat := flat
		if reducing {
			lat = reduce
		}
		alone, ok := nearestCall(ds.Series[dataset.Key{Kernel: name, Variant: k.Variant, Toolchain: k.Toolchain}], s.Bytes/float64(s.Calls))
		if !ok {
			r.Missing = append(r.Missing, name)
			continue
		}
		r.Bandwidth += s.Bytes * max(alone.MedianS-lat, 0) / alone.Bytes
	}
	if len(r.Missing) > 0 {
		r.Bandwidth = math.NaN()
	}
	r.Launch = float64(r.Launches-r.Reducing)*flat + float64(r.Reducing)*reduce
	if math.IsNaN(r.Launch) {
		r.Missing = append(r.Missing, "launch kernels")
	}
	return r
}

// nearestCall is the dataset.Point whose bytes per call are nearest perCall (by
// ratio); false when no dataset.Point moves bytes.
func nearestCall(pts []dataset.Point, perCall float64) (dataset.Point, bool) {
	var best dataset.Point
	found := false
	for _, p := range pts {
		if p.Bytes <= 0 || perCall <= 0 {
			continue
		}
		if !found || math.Abs(math.Log(p.Bytes/perCall)) < math.Abs(math.Log(best.Bytes/perCall)) {
			best, found = p, true
		}
	}
	return best, found
}

func (l *launchRow) flat() float64 {
	if l == nil || l.Flat == nil {
		return math.NaN()
	}
	return l.Flat.Median
}

func (l *launchRow) reduce() float64 {
	if l == nil || l.Reduce == nil {
		return math.NaN()
	}
	return l.Reduce.Median
}

// launchMarkdown renders the latencies and the splits; nothing without them.
func launchMarkdown(lt *launchTables) []byte {
	if lt == nil {
		return nil
	}
	var b bytes.Buffer
	s := lt.Spec
	if len(lt.Latencies) > 0 {
		fmt.Fprintf(&b, "\n### Launch latency per call (µs)\n\n")
		fmt.Fprintf(&b, "Median time of one call at the kernel's smallest size, with the 95%% interval: %s (a launch that does\n", s.Empty)
		fmt.Fprintf(&b, "nothing), %s (a few elements written), %s (a few elements summed, the scalar returned to the host).\n\n", s.Flat, s.Reduce)
		fmt.Fprintf(&b, "| variant | toolchain | %s | %s | %s | trials × reps |\n|---|---|---:|---:|---:|---|\n", s.Empty, s.Flat, s.Reduce)
		for _, r := range lt.Latencies {
			reps := "–"
			for _, l := range []*latency{r.Empty, r.Flat, r.Reduce} {
				if l != nil {
					reps = fmt.Sprintf("%d × %d", l.Trials, l.RepsEach)
					break
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Variant, r.Toolchain, micro(r.Empty), micro(r.Flat), micro(r.Reduce), reps)
		}
	}
	for _, t := range lt.Splits {
		fmt.Fprintf(&b, "\n### %s at size %d: bandwidth and launch cost\n\n", strings.ToUpper(t.Kernel), t.Size)
		fmt.Fprintf(&b, "Measured: median time of a solve. Parts: its sections run, each call synchronised and timed. Bandwidth:\n")
		fmt.Fprintf(&b, "each called kernel's time measured alone, less its launch latency, per byte (at the size nearest its calls\n")
		fmt.Fprintf(&b, "here), times its bytes here. Launch: calls times %s's\n", s.Flat)
		fmt.Fprintf(&b, "latency, those returning a scalar (%s) times %s's. Model = bandwidth + launch;\n", strings.Join(s.Reducing, ", "), s.Reduce)
		b.WriteString("rest = measured - model (docs/analysis/launch.md).\n\n")
		b.WriteString("| variant | toolchain | measured ms | parts ms | bandwidth ms | launches (reducing) | launch ms | model ms | measured / model | rest ms |\n")
		b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "| %s | %s | %.4g | %s | %s | %d (%d) | %s | %s | %s | %s |\n", r.Variant, r.Toolchain, 1e3*r.Measured,
				ms(r.Parts), ms(r.Bandwidth), r.Launches, r.Reducing, ms(r.Launch), ms(r.Model()), ratio(r.Measured, r.Model()), ms(r.Measured-r.Model()))
		}
		var missing []string
		for _, r := range t.Rows {
			if len(r.Missing) > 0 {
				missing = append(missing, fmt.Sprintf("%s@%s (%s)", r.Variant, r.Toolchain, strings.Join(r.Missing, ", ")))
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(&b, "\nNot modelled, not measured in this folder: %s.\n", strings.Join(missing, "; "))
		}
	}
	return b.Bytes()
}

func micro(l *latency) string {
	if l == nil {
		return "–"
	}
	return fmt.Sprintf("%.3g [%.3g, %.3g]", 1e6*l.Median, 1e6*l.Lo, 1e6*l.Hi)
}

func ms(s float64) string {
	if math.IsNaN(s) || s == 0 {
		return "–"
	}
	return fmt.Sprintf("%.4g", 1e3*s)
}

func ratio(a, b float64) string {
	if math.IsNaN(b) || b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

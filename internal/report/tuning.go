package report

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// GapBar is the distance from the best within which a default counts as
// close (the tuning bar: the model's default within 10% of the tuned best).
const GapBar = 0.10

// TuningRow is one (cell, size, device) of a folder's tuning.jsonl: the
// configuration the program is generated with (the machine model's default
// launch) against the best configuration measured.
type TuningRow struct {
	Cell, Kernel, Variant, Toolchain, Device string
	DeviceName, BuildKey                     string
	Size                                     int64
	Measured, Unverified, Ties               int
	Default, Best                            *tune.Measurement
	DefaultGuessed                           bool // the file does not mark the default: its first evaluation
}

// Gap is the default's median over the best's, less 1 (0.05: 5% slower),
// whether their intervals overlap (indistinguishable), and ok when both
// were measured.
func (r TuningRow) Gap() (gap float64, tied, ok bool) {
	cr := tune.CellResult{Default: r.Default, Best: r.Best}
	return cr.DefaultGap()
}

// Close says whether the default is within GapBar of the best or
// indistinguishable from it.
func (r TuningRow) Close() bool {
	gap, tied, ok := r.Gap()
	return ok && (tied || gap <= GapBar)
}

// TuningView is what a folder's tuning shows: the gap table and the tuning
// curves.
type TuningView struct {
	Rows   []TuningRow
	Curves []TuningCurve
	// Explain is what the reasons of the cells not within GapBar are
	// computed from (Reason); its zero value says only which tunables differ.
	Explain GapInputs
}

// TuningCurve is one figure: GB/s against team size, a line per vector
// length, a panel per cell, of one kernel at one size.
type TuningCurve struct {
	Kernel string
	Size   int64
	SVG    []byte
}

// LoadTuning reads dir/tuning.jsonl (tune.Tuned) into the gap table and
// draws a tuning curve of every (kernel, size) whose configurations vary
// team_size.
func LoadTuning(dir string) (*TuningView, error) {
	cells, err := tune.Tuned(dir)
	if err != nil {
		return nil, err
	}
	v := &TuningView{}
	for _, c := range cells {
		parts := strings.SplitN(c.Cell, ".", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		v.Rows = append(v.Rows, TuningRow{Cell: c.Cell, Kernel: parts[0], Variant: parts[1], Toolchain: parts[2],
			Device: c.Device, DeviceName: c.DeviceName, BuildKey: c.BuildKey, Size: c.Size, Measured: len(c.Measured), Unverified: c.Unverified, Ties: len(c.Ties),
			Default: c.Default, Best: c.Best, DefaultGuessed: c.DefaultGuessed})
	}
	v.Curves, err = tuningCurves(cells)
	return v, err
}

// Markdown is the gap table: one row per (cell, size, device), then the
// cells whose default is not within GapBar of the best.
func (v *TuningView) Markdown() []byte {
	var b bytes.Buffer
	close, both := 0, 0
	var far, why []string
	guessed := false
	for _, r := range v.Rows {
		guessed = guessed || r.DefaultGuessed
		if _, _, ok := r.Gap(); !ok {
			continue
		}
		both++
		if r.Close() {
			close++
		} else {
			gap, _, _ := r.Gap()
			far = append(far, fmt.Sprintf("%s at %d (%.0f%% slower)", r.Cell, r.Size, 100*gap))
			why = append(why, fmt.Sprintf("- %s at %d: %s\n", r.Cell, r.Size, r.Reason(v.Explain)))
		}
	}
	fmt.Fprintf(&b, "The default (the launch parameters the program is generated with, the machine model's where it gives them) "+
		"is within %.0f%% of the tuned best, or indistinguishable from it, in %d of %d (cell, size) pairs.", 100*GapBar, close, both)
	if len(far) > 0 {
		fmt.Fprintf(&b, " Not within: %s.", strings.Join(far, "; "))
	}
	if guessed {
		b.WriteString(" This tuning.jsonl does not mark the default: it is taken to be each cell's first evaluation, which the tuner measures first.")
	}
	b.WriteString("\n\n| cell | size | device | measured | default | default median | best | best median [95% interval] | ties | default / best |\n")
	b.WriteString("|---|---:|---|---:|---|---:|---|---:|---:|---|\n")
	for _, r := range v.Rows {
		def, defT, best, bestT := "–", "–", "–", "–"
		if r.Default != nil {
			def, defT = orGenerated(r.Default.Config.String()), seconds(r.Default.MedianS)
		}
		if r.Best != nil {
			best = orGenerated(r.Best.Config.String())
			bestT = fmt.Sprintf("%s [%s, %s]", seconds(r.Best.MedianS), seconds(r.Best.LoS), seconds(r.Best.HiS))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %s | %s | %d | %s |\n", r.Cell, r.Size, shortDevice(r.Device),
			r.Measured, def, defT, best, bestT, r.Ties, gapText(r))
	}
	if len(why) > 0 {
		b.WriteString("\nWhy the default is not within, by the machine model's occupancy rule (blocks per SM of team_size x vector_size threads, " +
			"and the league's waves of the teams the GPU holds at once):\n\n")
		b.WriteString(strings.Join(why, ""))
	}
	return b.Bytes()
}

func gapText(r TuningRow) string {
	gap, tied, ok := r.Gap()
	switch {
	case !ok:
		return "default not measured"
	case r.Default.Config.String() == r.Best.Config.String():
		return "the default is the best"
	case tied:
		return fmt.Sprintf("%.3f (indistinguishable)", 1+gap)
	}
	return fmt.Sprintf("%.3f", 1+gap)
}

func orGenerated(cfg string) string {
	if cfg == "" {
		return "(no tunables)"
	}
	return strings.ReplaceAll(cfg, ",", ", ")
}

// shortDevice names a GPU by the start of its UUID, a CPU by its model.
func shortDevice(d string) string {
	if strings.HasPrefix(d, "GPU-") {
		return d[:min(len(d), 12)]
	}
	return d
}

func seconds(s float64) string {
	switch {
	case s <= 0:
		return "–"
	case s < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}

// curvePoint is the best verified measurement at one (team size, vector
// length) of a cell: the other tunables (rows per team) at their best.
type curvePoint struct {
	team, vector int64
	m            tune.Measurement
}

// tuningCurves draws, for each (kernel, size) whose configurations vary
// team_size, GB/s against team size with a line per vector length (1 where
// the cell has none) and a panel per cell.
func tuningCurves(cells []*tune.CellResult) ([]TuningCurve, error) {
	type ks struct {
		kernel string
		size   int64
	}
	panels := map[ks][]*tune.CellResult{}
	for _, c := range cells {
		// Only verified measurements draw a point: a cell whose
		// configurations all failed has no curve (and no log axis to span).
		teams := map[int64]bool{}
		for _, pts := range curvePoints(c) {
			for _, q := range pts {
				teams[q.team] = true
			}
		}
		if len(teams) < 2 {
			continue
		}
		k := ks{strings.SplitN(c.Cell, ".", 2)[0], c.Size}
		panels[k] = append(panels[k], c)
	}
	var out []TuningCurve
	for _, k := range slices.SortedFunc(maps.Keys(panels), func(a, b ks) int {
		return cmp.Or(strings.Compare(a.kernel, b.kernel), cmp.Compare(a.size, b.size))
	}) {
		svg, err := drawCurves(fmt.Sprintf("%s at size %d: GB/s against team size, best over the other tunables", k.kernel, k.size), panels[k])
		if err != nil {
			return nil, err
		}
		out = append(out, TuningCurve{Kernel: k.kernel, Size: k.size, SVG: svg})
	}
	return out, nil
}

// best keeps the fastest verified measurement per (team size, vector length).
func curvePoints(c *tune.CellResult) map[int64][]curvePoint {
	best := map[[2]int64]tune.Measurement{}
	for _, m := range c.Measured {
		if !m.Verified || m.Error != "" || m.MedianS <= 0 || m.GBps <= 0 {
			continue
		}
		team, ok := m.Config["team_size"]
		if !ok {
			continue
		}
		vec, ok := m.Config["vector_size"]
		if !ok {
			vec = 1
		}
		k := [2]int64{team, vec}
		if b, ok := best[k]; !ok || m.MedianS < b.MedianS {
			best[k] = m
		}
	}
	lines := map[int64][]curvePoint{}
	for k, m := range best {
		lines[k[1]] = append(lines[k[1]], curvePoint{k[0], k[1], m})
	}
	for _, pts := range lines {
		slices.SortFunc(pts, func(a, b curvePoint) int { return cmp.Compare(a.team, b.team) })
	}
	return lines
}

func drawCurves(title string, cells []*tune.CellResult) ([]byte, error) {
	rows, cols := grid(len(cells))
	w, h := vg.Length(cols)*panelW, titleH+vg.Length(rows)*panelH
	sc := vgsvg.New(w, h)
	dc := draw.New(sc)
	drawTitle(dc, title)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, c := range cells {
		p := plot.New()
		p.Title.Text = strings.TrimPrefix(c.Cell, strings.SplitN(c.Cell, ".", 2)[0]+".")
		p.X.Label.Text = "team size (threads or rows)"
		p.Y.Label.Text = "GB/s"
		p.X.Scale = plot.LogScale{}
		p.Y.Min = 0
		p.Legend.Top, p.Legend.Left = false, false
		lines := curvePoints(c)
		var teams []float64
		for n, vec := range slices.Sorted(maps.Keys(lines)) {
			pts := lines[vec]
			xy := make(plotter.XYs, len(pts))
			errs := make(plotter.YErrors, len(pts))
			for j, q := range pts {
				xy[j] = plotter.XY{X: float64(q.team), Y: q.m.GBps}
				// GB/s bounds from the time interval: bytes / hi .. bytes / lo
				bytes := q.m.GBps * q.m.MedianS
				errs[j].Low, errs[j].High = q.m.GBps-bytes/q.m.HiS, bytes/q.m.LoS-q.m.GBps
				teams = append(teams, float64(q.team))
			}
			l, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			l.Color, sc.Color = styleColor(n), styleColor(n)
			eb, err := plotter.NewYErrorBars(errorXYs{xy, errs})
			if err != nil {
				return nil, err
			}
			eb.Color = styleColor(n)
			p.Add(l, sc, eb)
			p.Legend.Add(fmt.Sprintf("vector %d", vec), l, sc)
		}
		if len(teams) > 0 {
			p.X.Min, p.X.Max = slices.Min(teams)/1.3, slices.Max(teams)*1.3
			p.X.Tick.Marker = pow2Ticks(slices.Min(teams), slices.Max(teams))
		}
		plots[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, draw.Crop(dc, 0, 0, 0, -titleH))
	for r := range plots {
		for c, pl := range plots[r] {
			if pl != nil {
				pl.Draw(canvases[r][c])
			}
		}
	}
	var b bytes.Buffer
	if _, err := sc.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pow2Ticks labels the powers of two from lo to hi.
func pow2Ticks(lo, hi float64) plot.ConstantTicks {
	var t plot.ConstantTicks
	for x := math.Exp2(math.Floor(math.Log2(lo))); x <= hi*1.0001; x *= 2 {
		t = append(t, plot.Tick{Value: x, Label: fmt.Sprint(x)})
	}
	return t
}

// TuningClaims judges claims on a tuning folder alone, best against best:
// each (cell, size) at its best verified configuration of tuning.jsonl
// (over devices and binaries, the fastest), the toolchains from its
// run.json. A tuning stores each configuration's median and interval, not
// its replicates, so a ratio's interval is bounded by the two intervals
// (the numerator's low over the denominator's high, and the reverse):
// wider than the report's bootstrap, never narrower.
func TuningClaims(dir string, claims []ClaimSpec) ([]ClaimResult, error) {
	cells, err := tune.Tuned(dir)
	if err != nil {
		return nil, err
	}
	run, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	ds := &dataset{series: map[seriesKey][]point{}, toolchains: map[string]Toolchain{}, copyGBps: map[string]float64{},
		roofOp: map[string]string{}, hash: map[string]string{}}
	for _, tc := range run.Toolchains {
		ds.addToolchain(tc)
	}
	best := map[seriesKey]map[int64]point{}
	for _, c := range cells {
		b := c.Best
		if b == nil {
			continue
		}
		parts := strings.SplitN(c.Cell, ".", 3)
		if len(parts) < 3 {
			continue
		}
		k := seriesKey{parts[0], parts[1], parts[2]}
		bytes := b.GBps * b.MedianS * 1e9
		p := point{Size: c.Size, MedianS: b.MedianS, Bytes: bytes, GBps: b.GBps,
			M: &stats.Measurement{Median: b.MedianS, Lo: b.LoS, Hi: b.HiS}}
		if bytes > 0 {
			p.Lo, p.Hi = bytes/b.HiS/1e9, bytes/b.LoS/1e9
		}
		if best[k] == nil {
			best[k] = map[int64]point{}
		}
		if q, ok := best[k][c.Size]; !ok || p.MedianS < q.MedianS {
			best[k][c.Size] = p
		}
		if _, ok := ds.toolchains[k.Toolchain]; !ok {
			ds.addToolchain(Toolchain{ID: k.Toolchain})
		}
	}
	for k, bySize := range best {
		for _, size := range slices.Sorted(maps.Keys(bySize)) {
			ds.series[k] = append(ds.series[k], bySize[size])
		}
	}
	return evaluateAll(claims, ds), nil
}

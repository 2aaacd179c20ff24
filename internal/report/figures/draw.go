package figures

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
)

// Figure geometry.
const (
	panelW  = 4.2 * vg.Inch
	panelH  = 3.2 * vg.Inch
	titleH  = 0.4 * vg.Inch
	maxCols = 3
	pngDPI  = 110
)

// palette holds one color per variant position of a figure (Tableau 10).
var palette = []color.Color{
	rgb(0x1f, 0x77, 0xb4), rgb(0xff, 0x7f, 0x0e), rgb(0x2c, 0xa0, 0x2c),
	rgb(0xd6, 0x27, 0x28), rgb(0x94, 0x67, 0xbd), rgb(0x8c, 0x56, 0x4b),
	rgb(0xe3, 0x77, 0xc2), rgb(0x7f, 0x7f, 0x7f), rgb(0xbc, 0xbd, 0x22),
	rgb(0x17, 0xbe, 0xcf),
}

var (
	copyColor  = rgb(0x40, 0x40, 0x40)
	specColor  = rgb(0x3a, 0x5f, 0x8a)
	looseColor = rgb(0x9a, 0x9a, 0x9a)
)

// The legend's names of the bandwidth lines (RefLine), by how they are drawn.
const (
	measuredLegend = "measured bandwidth (best STREAM op)"
	specLegend     = "datasheet bandwidth (machine model)"
	looseLegend    = "bandwidth line that is no bound here (notes below)"
)

// lineStyle is how a bandwidth line is drawn: dashed for the measured
// bound, dash-dot for the datasheet's, dotted grey for a line that bounds
// nothing in its panel.
func lineStyle(l RefLine) (color.Color, []vg.Length, string) {
	switch {
	case !l.Bound:
		return looseColor, []vg.Length{vg.Points(1.5), vg.Points(2.5)}, looseLegend
	case l.Kind == LineSpec:
		return specColor, []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}, specLegend
	}
	return copyColor, []vg.Length{vg.Points(6), vg.Points(3)}, measuredLegend
}

// Notes geometry: a line of 8-point text, wrapped at the figure's width.
const noteLineH = 0.16 * vg.Inch

// noteLines wraps the figure's notes to the width w.
func noteLines(notes []string, w vg.Length) []string {
	chars := max(int(w/vg.Points(4.3)), 40)
	var out []string
	for _, n := range notes {
		line := ""
		for _, word := range strings.Fields(n) {
			if line != "" && len(line)+1+len(word) > chars {
				out = append(out, line)
				line = "  "
			}
			if line != "" && line != "  " {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return out
}

func rgb(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

func styleColor(i int) color.Color { return palette[i%len(palette)] }

// Render draws f as SVG and PNG.
func Render(f Figure) (svg, png []byte, err error) {
	leg, err := newLegend(f)
	if err != nil {
		return nil, nil, err
	}
	w, h := figureSize(len(f.Panels), legendWidth(leg, f))
	h += vg.Length(len(noteLines(f.Notes, w))) * noteLineH
	sc := vgsvg.New(w, h)
	if err := drawFigure(f, leg, draw.New(sc)); err != nil {
		return nil, nil, err
	}
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	if err := drawFigure(f, leg, draw.New(ic)); err != nil {
		return nil, nil, err
	}
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	return sb.Bytes(), pb.Bytes(), nil
}

func grid(n int) (rows, cols int) {
	cols = min(n, maxCols)
	return (n + cols - 1) / cols, cols
}

func figureSize(panels int, legendW vg.Length) (w, h vg.Length) {
	rows, cols := grid(panels)
	return vg.Length(cols)*panelW + legendW, titleH + vg.Length(rows)*panelH
}

func drawFigure(f Figure, leg plot.Legend, dc draw.Canvas) error {
	legendW := legendWidth(leg, f)
	notes := noteLines(f.Notes, dc.Max.X-dc.Min.X)
	notesH := vg.Length(len(notes)) * noteLineH
	sty := plot.New().Title.TextStyle
	sty.Font.Size = vg.Points(8)
	sty.Color = copyColor
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, n := range notes {
		dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Millimeter*3, Y: dc.Min.Y + notesH - (vg.Length(i)+0.5)*noteLineH}, n)
	}
	dc = draw.Crop(dc, 0, 0, notesH, 0)
	title := f.Spec.Title
	if f.Spec.Paper != "" {
		title += "  [" + f.Spec.Paper + "]"
	}
	drawTitle(dc, title)
	rows, cols := grid(len(f.Panels))
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := panelPlot(f, p)
		if err != nil {
			return err
		}
		plots[i/cols][i%cols] = pl
	}
	area := draw.Crop(dc, 0, -legendW, 0, -titleH)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, area)
	for r := range plots {
		for c, pl := range plots[r] {
			if pl != nil {
				pl.Draw(canvases[r][c])
			}
		}
	}
	leg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legendW, 0, 0, -titleH))
	return nil
}

func drawTitle(dc draw.Canvas, title string) {
	sty := plot.New().Title.TextStyle
	sty.Font.Size = vg.Points(14)
	sty.XAlign = draw.XCenter
	sty.YAlign = draw.YCenter
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - titleH/2}, title)
}

// panelPlot makes the plot of one panel.
func panelPlot(f Figure, p panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = f.Spec.XLabel
	pl.Y.Label.Text = yLabel(f.Spec.Y)
	if f.Spec.Kind == "normalized" { // which time is over which
		pl.Y.Label.Text = "time / " + f.Spec.NormalizeTo + "'s time"
	}
	if f.Spec.YLabel != "" {
		pl.Y.Label.Text = f.Spec.YLabel
	}
	pl.Y.Min = 0
	pl.Add(plotter.NewGrid())
	var err error
	if f.Spec.Kind == "bars" || f.Spec.Kind == "normalized" {
		err = addBars(pl, f, p)
	} else {
		err = addLines(pl, f, p)
	}
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Spec.ID, err)
	}
	top := 0.0
	for _, l := range p.Lines {
		if err := addRefLine(pl, l); err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Spec.ID, err)
		}
		top = math.Max(top, l.GBps)
	}
	pl.Y.Max = math.Max(pl.Y.Max, top) * 1.08
	if f.Spec.LogY { // a log axis starts at the lowest interval, not 0
		low := math.Inf(1)
		for _, s := range p.Series {
			for _, pt := range s.Points {
				below, _ := yInterval(f.Spec.Y, pt)
				if v := yValue(f.Spec.Y, pt) - below; v > 0 {
					low = math.Min(low, v)
				}
			}
		}
		if !math.IsInf(low, 1) {
			pl.Y.Min = low / 1.3
		}
	}
	return pl, nil
}

func yLabel(y string) string {
	if y == "normalized" {
		return "time / reference time, lower is better"
	}
	if y == "median_s" {
		return "median time (s), lower is better"
	}
	return "GB/s, higher is better"
}

func yValue(y string, p dataset.Point) float64 {
	if y == "normalized" {
		return p.Norm
	}
	if y == "median_s" {
		return p.MedianS
	}
	return p.GBps
}

// yInterval is the 95% interval of a point's y value, as distances below
// and above it.
func yInterval(y string, p dataset.Point) (below, above float64) {
	v := yValue(y, p)
	if y == "normalized" {
		return v - p.NormLo, p.NormHi - v
	}
	if p.M == nil {
		return 0, 0
	}
	if y == "median_s" {
		return v - p.M.Lo, p.M.Hi - v
	}
	return v - p.Lo, p.Hi - v
}

// errorXYs is a series' points with their intervals, for plotter.YErrorBars.
type errorXYs struct {
	plotter.XYs
	plotter.YErrors
}

func addLines(pl *plot.Plot, f Figure, p panel) error {
	var sizes []int64
	for _, s := range p.Series {
		xys := make(plotter.XYs, len(s.Points))
		errs := make(plotter.YErrors, len(s.Points))
		for i, pt := range s.Points {
			xys[i] = plotter.XY{X: float64(pt.Size), Y: yValue(f.Spec.Y, pt)}
			errs[i].Low, errs[i].High = yInterval(f.Spec.Y, pt)
			sizes = append(sizes, pt.Size)
		}
		if len(xys) > 0 {
			bars, err := plotter.NewYErrorBars(errorXYs{xys, errs})
			if err != nil {
				return err
			}
			bars.Color = styleColor(s.Style)
			bars.Width = vg.Points(1)
			bars.CapWidth = vg.Points(4)
			pl.Add(bars)
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.Color = styleColor(s.Style)
		line.Width = vg.Points(1.5)
		pts.Color = line.Color
		pts.Shape = plotutil.Shape(s.Style)
		pts.Radius = vg.Points(2.5)
		pl.Add(line, pts)
	}
	pl.X.Tick.Marker = sizeTicks(sizes)
	if f.Spec.LogX {
		pl.X.Scale = plot.LogScale{}
	}
	if f.Spec.LogY {
		pl.Y.Scale = logLabelScale{}
		pl.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
	}
	return nil
}

func addBars(pl *plot.Plot, f Figure, p panel) error {
	n := len(p.Series)
	group := (panelW - vg.Inch) * 0.8 / vg.Length(max(len(f.Sizes), 1))
	width := min(vg.Points(18), group/vg.Length(max(n, 1)))
	for i, s := range p.Series {
		vals := make(plotter.Values, len(f.Sizes))
		var iv barIntervals
		for j, size := range f.Sizes {
			for _, pt := range s.Points {
				if pt.Size == size {
					vals[j] = yValue(f.Spec.Y, pt)
					below, above := yInterval(f.Spec.Y, pt)
					iv.x = append(iv.x, float64(j))
					iv.lo = append(iv.lo, vals[j]-below)
					iv.hi = append(iv.hi, vals[j]+above)
				}
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = styleColor(s.Style)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		iv.offset = bars.Offset
		pl.Add(bars, iv)
	}
	names := make([]string, len(f.Sizes))
	for i, s := range f.Sizes {
		names[i] = formatSize(s)
		if i < len(f.Names) {
			names[i] = f.Names[i]
		}
	}
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.5, float64(len(f.Sizes))-0.5
	if f.Spec.Kind == "normalized" { // kernel names, upright would overlap
		pl.X.Tick.Label.Rotation = math.Pi / 2
		pl.X.Tick.Label.XAlign = draw.XRight
		pl.X.Tick.Label.YAlign = draw.YCenter
	}
	return nil
}

// addRefLine draws a bandwidth line across the data range (lineStyle),
// labelled with what it is and its value ("not a bound" where it is none).
func addRefLine(pl *plot.Plot, l RefLine) error {
	gbps := l.GBps
	label := l.Label
	if !l.Bound {
		label += ", not a bound"
	}
	col, dashes, _ := lineStyle(l)
	line := plotter.NewFunction(func(float64) float64 { return gbps })
	line.Samples = 2
	line.Color = col
	line.Dashes = dashes
	line.Width = vg.Points(1.2)
	pl.Add(line)
	xmin := pl.X.Min
	if _, ok := pl.X.Scale.(plot.LogScale); ok && xmin <= 0 {
		return nil
	}
	lbl, err := plotter.NewLabels(plotter.XYLabels{
		XYs:    plotter.XYs{{X: xmin, Y: gbps}},
		Labels: []string{label},
	})
	if err != nil {
		return err
	}
	lbl.Offset = vg.Point{X: vg.Points(3), Y: vg.Points(2)}
	lbl.TextStyle[0].Font.Size = vg.Points(8)
	lbl.TextStyle[0].Color = col
	pl.Add(lbl)
	return nil
}

// newLegend makes one legend for the whole figure, in spec order.
func newLegend(f Figure) (plot.Legend, error) {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.YOffs = -vg.Millimeter * 8
	leg.XOffs = vg.Millimeter * 2
	seen := map[string]bool{}
	var lines []RefLine // one of each legend entry, in the order met
	for _, p := range f.Panels {
		for _, l := range p.Lines {
			_, _, name := lineStyle(l)
			if !slices.ContainsFunc(lines, func(o RefLine) bool { _, _, n := lineStyle(o); return n == name }) {
				lines = append(lines, l)
			}
		}
		for _, s := range p.Series {
			if seen[s.Label] {
				continue
			}
			seen[s.Label] = true
			th, err := thumbnail(f.Spec.Kind, s.Style)
			if err != nil {
				return leg, err
			}
			leg.Add(s.Label, th...)
		}
	}
	for _, l := range lines {
		col, dashes, name := lineStyle(l)
		ln := plotter.NewFunction(func(float64) float64 { return 0 })
		ln.Color, ln.Dashes = col, dashes
		leg.Add(name, ln)
	}
	return leg, nil
}

// legendWidth is the width of the legend column: the longest label, its
// thumbnail and margins.
func legendWidth(leg plot.Legend, f Figure) vg.Length {
	var w vg.Length
	for _, p := range f.Panels {
		for _, l := range p.Lines {
			_, _, name := lineStyle(l)
			w = max(w, leg.TextStyle.Width(name))
		}
		for _, s := range p.Series {
			w = max(w, leg.TextStyle.Width(s.Label))
		}
	}
	return w + leg.ThumbnailWidth + 10*vg.Millimeter
}

func thumbnail(kind string, style int) ([]plot.Thumbnailer, error) {
	if kind == "bars" || kind == "normalized" {
		b, err := plotter.NewBarChart(plotter.Values{1}, vg.Points(8))
		if err != nil {
			return nil, err
		}
		b.Color = styleColor(style)
		b.LineStyle.Width = 0
		return []plot.Thumbnailer{b}, nil
	}
	line, pts, err := plotter.NewLinePoints(plotter.XYs{{X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	line.Color, pts.Color = styleColor(style), styleColor(style)
	line.Width = vg.Points(1.5)
	pts.Shape = plotutil.Shape(style)
	pts.Radius = vg.Points(2.5)
	return []plot.Thumbnailer{line, pts}, nil
}

// sizeTicks labels the measured sizes, at most eight of them.
func sizeTicks(sizes []int64) plot.ConstantTicks {
	set := map[int64]bool{}
	var uniq []int64
	for _, s := range sizes {
		if !set[s] {
			set[s] = true
			uniq = append(uniq, s)
		}
	}
	slices.Sort(uniq)
	step := (len(uniq) + 7) / 8
	ticks := make(plot.ConstantTicks, len(uniq))
	for i, s := range uniq {
		ticks[i] = plot.Tick{Value: float64(s)}
		if i%max(step, 1) == 0 || i == len(uniq)-1 && step == 1 {
			ticks[i].Label = formatSize(s)
		}
	}
	return ticks
}

// formatSize writes powers of two from 1024 on as 2^k.
func formatSize(s int64) string {
	if s >= 1024 && bits.OnesCount64(uint64(s)) == 1 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros64(uint64(s)))
	}
	return strconv.FormatInt(s, 10)
}

// barIntervals draws the 95% interval of each bar as a dark whisker at the
// bar's centre (nominal x plus the bar's offset).
type barIntervals struct {
	x, lo, hi []float64
	offset    vg.Length
}

// Plot implements plot.Plotter.
func (b barIntervals) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := draw.LineStyle{Color: copyColor, Width: vg.Points(1)}
	capW := vg.Points(3)
	for i := range b.x {
		if b.hi[i] <= b.lo[i] {
			continue
		}
		x := trX(b.x[i]) + b.offset
		lo, hi := trY(b.lo[i]), trY(b.hi[i])
		c.StrokeLine2(ls, x, lo, x, hi)
		c.StrokeLine2(ls, x-capW, lo, x+capW, lo)
		c.StrokeLine2(ls, x-capW, hi, x+capW, hi)
	}
}

// DataRange implements plot.DataRanger: the whiskers' tops count.
func (b barIntervals) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), 0, 0
	for i := range b.x {
		xmin, xmax = math.Min(xmin, b.x[i]), math.Max(xmax, b.x[i])
		ymax = math.Max(ymax, b.hi[i])
	}
	if len(b.x) == 0 {
		xmin, xmax = 0, 0
	}
	return
}

// inRange keeps the ticks of a marker that lie on the axis: gonum's log
// ticks run to the next power of ten, whose labels outside the axis would
// pad the plot.
type inRange struct{ plot.Ticker }

func (r inRange) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range r.Ticker.Ticks(min, max) {
		if t.Value >= min && t.Value <= max {
			out = append(out, t)
		}
	}
	return out
}

// logLabelScale is gonum's log scale, but for the arithmetic midpoint of the
// axis, where gonum places the y label's box when it pads the plot (it draws
// the label at the axis' centre): on a log axis that midpoint lies near the
// top, and the padding shrank the panel.
type logLabelScale struct{}

func (logLabelScale) Normalize(min, max, x float64) float64 {
	if x == 0.5*(min+max) {
		return 0.5
	}
	return plot.LogScale{}.Normalize(min, max, x)
}

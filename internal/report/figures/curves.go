package figures

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// CurvePanel is one panel of a curve figure: a line per label, on a
// logarithmic x axis ticked at the powers of two.
type CurvePanel struct {
	Title  string
	XLabel string
	YLabel string
	Lines  []CurveLine
	// YMin and YMax span the y axis where YMax is set (else from 0 up
	// to the data).
	YMin, YMax float64
	// Bar is a horizontal dashed reference line at that y, labelled
	// BarLabel in the legend (0: none).
	Bar      float64
	BarLabel string
}

// CurveLine is one line of a panel, its colour by its position.
type CurveLine struct {
	Label  string
	Points []CurvePoint
}

// CurvePoint is a point and its interval, as distances below and above Y.
type CurvePoint struct {
	X, Y      float64
	Low, High float64
}

// Curves draws a titled figure of curve panels as SVG (the tuning curves:
// GB/s against team size, a line per vector length, a panel per cell).
func Curves(title string, panels []CurvePanel) ([]byte, error) {
	rows, cols := grid(len(panels))
	w, h := vg.Length(cols)*panelW, titleH+vg.Length(rows)*panelH
	sc := vgsvg.New(w, h)
	dc := draw.New(sc)
	drawTitle(dc, title)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, c := range panels {
		p := plot.New()
		p.Title.Text = c.Title
		p.X.Label.Text = c.XLabel
		p.Y.Label.Text = c.YLabel
		p.X.Scale = plot.LogScale{}
		p.Y.Min = 0
		if c.YMax > c.YMin {
			p.Y.Min, p.Y.Max = c.YMin, c.YMax
		}
		p.Legend.Top, p.Legend.Left = false, false
		var xs []float64
		for n, line := range c.Lines {
			xy := make(plotter.XYs, len(line.Points))
			errs := make(plotter.YErrors, len(line.Points))
			for j, q := range line.Points {
				xy[j] = plotter.XY{X: q.X, Y: q.Y}
				errs[j].Low, errs[j].High = q.Low, q.High
				xs = append(xs, q.X)
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
			p.Legend.Add(line.Label, l, sc)
		}
		if len(xs) > 0 && c.Bar != 0 {
			bar, err := plotter.NewLine(plotter.XYs{{X: slices.Min(xs), Y: c.Bar}, {X: slices.Max(xs), Y: c.Bar}})
			if err != nil {
				return nil, err
			}
			bar.Color = rgb(0x80, 0x80, 0x80)
			bar.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(bar)
			p.Legend.Add(c.BarLabel, bar)
		}
		if len(xs) > 0 {
			p.X.Min, p.X.Max = slices.Min(xs)/1.3, slices.Max(xs)*1.3
			p.X.Tick.Marker = pow2Ticks(slices.Min(xs), slices.Max(xs))
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

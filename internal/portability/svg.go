package portability

import (
	"bytes"
	"fmt"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure size of a cascade plot and a navigation chart.
const (
	figW = 7 * vg.Inch
	figH = 4.5 * vg.Inch
)

// CascadeSVG draws a cascade plot: for each application, its efficiencies
// on the platforms of the set, highest first (points), and the PP of the
// first k of them (line).
func CascadeSVG(c Cascade) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s cascade over %s", c.Problem, c.Level, c.Set)
	p.X.Label.Text = "platforms, in decreasing efficiency"
	p.Y.Label.Text = "application efficiency; line: PP of the first k"
	p.Y.Min, p.Y.Max = 0, 1.05
	p.Legend.Top = true
	n := 0
	for i, l := range c.Lines {
		effs, pps := make(plotter.XYs, len(l.Steps)), make(plotter.XYs, len(l.Steps))
		for k, s := range l.Steps {
			effs[k] = plotter.XY{X: float64(k + 1), Y: s.Eff.V}
			pps[k] = plotter.XY{X: float64(k + 1), Y: s.PP}
		}
		n = max(n, len(l.Steps))
		line, err := plotter.NewLine(pps)
		if err != nil {
			return nil, err
		}
		pts, err := plotter.NewScatter(effs)
		if err != nil {
			return nil, err
		}
		line.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(1.5)
		pts.Shape = plotutil.Shape(i)
		p.Add(line, pts)
		p.Legend.Add(fmt.Sprintf("%s (PP %.2f)", l.Application, l.PP.V), line, pts)
	}
	var ticks []plot.Tick
	for k := 1; k <= n; k++ {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	return svgOf(p)
}

// NavChartSVG draws a navigation chart: each strategy's PP against its code
// convergence (1 - divergence); the top right is most portable at least
// divergence.
func NavChartSVG(title string, points []NavPoint) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "code convergence (1 - code divergence)"
	p.Y.Label.Text = "PP (application efficiency)"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1.05, 0, 1.05
	// One mark per strategy, over every problem it scores.
	var strategies []string
	byStrategy := map[string]plotter.XYs{}
	for _, pt := range points {
		if byStrategy[pt.Strategy] == nil {
			strategies = append(strategies, pt.Strategy)
		}
		byStrategy[pt.Strategy] = append(byStrategy[pt.Strategy], plotter.XY{X: 1 - pt.Divergence, Y: pt.PP.V})
	}
	p.Legend.Top, p.Legend.Left = true, true
	for i, st := range strategies {
		sc, err := plotter.NewScatter(byStrategy[st])
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(st, sc)
	}
	return svgOf(p)
}

func svgOf(p *plot.Plot) ([]byte, error) {
	c := vgsvg.New(figW, figH)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

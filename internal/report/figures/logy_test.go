package figures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// A log y axis with a label keeps its panel's height: gonum pads for the
// label at the axis' arithmetic midpoint, near the top of a log axis
// (logLabelScale), and its log ticks run to the next power of ten, whose
// labels would pad too (inRange).
func TestLogYAxisKeepsThePanel(t *testing.T) {
	top := func(scale plot.Normalizer) vg.Length {
		pl := plot.New()
		pl.Y.Label.Text = "median time per call (s)"
		l, p, err := plotter.NewLinePoints(plotter.XYs{{X: 1001, Y: 3.6e-5}, {X: 10001, Y: 2e-4}, {X: 100001, Y: 0.13}})
		assert.NoError(t, err)
		pl.Add(l, p)
		pl.Y.Scale = scale
		pl.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
		pl.Y.Min, pl.Y.Max = 2.7e-5, 0.14
		dc := draw.New(vgimg.New(4*vg.Inch, 3*vg.Inch))
		return pl.DataCanvas(dc).Max.Y
	}
	assert.Greater(t, float64(top(logLabelScale{})), 0.95*float64(3*vg.Inch))
	assert.Less(t, float64(top(plot.LogScale{})), 0.85*float64(3*vg.Inch), "gonum's own log scale shrinks it (the case the wrapper is for)")
	for _, tk := range (inRange{plot.LogTicks{Prec: -1}}).Ticks(2.7e-5, 0.14) {
		assert.True(t, tk.Value >= 2.7e-5 && tk.Value <= 0.14, "tick %g outside the axis", tk.Value)
	}
}

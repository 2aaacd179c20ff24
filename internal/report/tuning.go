package report

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/figures"
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
		svg, err := figures.Curves(fmt.Sprintf("%s at size %d: GB/s against team size, best over the other tunables", k.kernel, k.size), curvePanels(panels[k]))
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

// curvePanels is a panel per cell: GB/s against team size, a line per
// vector length, each point's interval from its time interval.
func curvePanels(cells []*tune.CellResult) []figures.CurvePanel {
	out := make([]figures.CurvePanel, len(cells))
	for i, c := range cells {
		p := figures.CurvePanel{Title: strings.TrimPrefix(c.Cell, strings.SplitN(c.Cell, ".", 2)[0]+"."),
			XLabel: "team size (threads or rows)", YLabel: "GB/s"}
		lines := curvePoints(c)
		for _, vec := range slices.Sorted(maps.Keys(lines)) {
			line := figures.CurveLine{Label: fmt.Sprintf("vector %d", vec)}
			for _, q := range lines[vec] {
				// GB/s bounds from the time interval: bytes / hi .. bytes / lo
				bytes := q.m.GBps * q.m.MedianS
				line.Points = append(line.Points, figures.CurvePoint{X: float64(q.team), Y: q.m.GBps,
					Low: q.m.GBps - bytes/q.m.HiS, High: bytes/q.m.LoS - q.m.GBps})
			}
			p.Lines = append(p.Lines, line)
		}
		out[i] = p
	}
	return out
}

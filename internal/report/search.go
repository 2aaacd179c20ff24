package report

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/figures"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// SearchBar is the fraction of the true optimum the default search must
// reach within its budget on every ground-truth cell (docs/tuning.md).
const SearchBar = 0.97

// SearchView is a ground truth's search-quality curves (tunecheck's
// tuning-check.csv, tune.ReadCheck): for each cell, each search's best as
// a fraction of the true optimum against the configurations it measured.
type SearchView struct {
	Rows []tune.CheckRow
}

// searchBudgets are the budgets the table shows (those a cell has).
var searchBudgets = []int{8, 16, 32, 64}

// LoadSearch reads dir's tuning-check.csv; nil where the folder has none.
func LoadSearch(dir string) (*SearchView, error) {
	rows, err := tune.ReadCheck(dir)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &SearchView{Rows: rows}, nil
}

// searchCell is one (cell, size) of the view, its rows by strategy in
// file order.
type searchCell struct {
	cell               string
	size               int64
	feasible, admitted int
	optimumS           float64
	strategies         []tune.Strategy
	points             map[tune.Strategy][]tune.CheckRow
}

func (v *SearchView) cells() []*searchCell {
	var out []*searchCell
	by := map[string]*searchCell{}
	for _, r := range v.Rows {
		k := fmt.Sprintf("%s\x00%d", r.Cell, r.Size)
		c := by[k]
		if c == nil {
			c = &searchCell{cell: r.Cell, size: r.Size, feasible: r.Feasible, admitted: r.Admitted, optimumS: r.OptimumS, points: map[tune.Strategy][]tune.CheckRow{}}
			by[k] = c
			out = append(out, c)
		}
		if _, ok := c.points[r.Strategy]; !ok {
			c.strategies = append(c.strategies, r.Strategy)
		}
		c.points[r.Strategy] = append(c.points[r.Strategy], r)
	}
	slices.SortStableFunc(out, func(a, b *searchCell) int {
		return cmp.Or(strings.Compare(a.cell, b.cell), cmp.Compare(a.size, b.size))
	})
	return out
}

// Markdown is the table: a row per (cell, search), the median fraction of
// the optimum over the seeds with its central 95% at each budget of
// searchBudgets the cell has, and the processes at 32.
func (v *SearchView) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Each search replayed against the ground truth (`tunecheck`, docs/tuning.md): its best configuration as a fraction of the true optimum "+
		"(the optimum's median time over the best found's median time; 1 is the optimum) within a budget of configurations, "+
		"the median over the seeds [2.5th, 97.5th percentiles]; **bold** where the median is below %.2f. ", SearchBar)
	fmt.Fprintf(&b, "The default search is the tune stage's on a GPU with a machine model, %s: the whole space where it fits the budget, else %s (`tune.BeyondBudget`); "+
		"a matrix tuning's budget is %d (`tune.DefaultEvals`). Processes: the programs started, the mean over the seeds (a static search's 16 configurations a process in the replay).\n\n",
		tune.Pruned, tune.BeyondBudget, tune.DefaultEvals)
	b.WriteString("| cell | size | feasible (admitted) | optimum | search |")
	for _, n := range searchBudgets {
		fmt.Fprintf(&b, " %d |", n)
	}
	b.WriteString(" processes at 32 |\n|---|---:|---:|---:|---|")
	for range searchBudgets {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	for _, c := range v.cells() {
		for _, st := range c.strategies {
			fmt.Fprintf(&b, "| %s | %d | %d (%d) | %s | %s |", c.cell, c.size, c.feasible, c.admitted, seconds(c.optimumS), st)
			procs := "–"
			for _, n := range searchBudgets {
				p, ok := atBudget(c.points[st], n)
				if !ok {
					b.WriteString(" – |")
					continue
				}
				cell := fmt.Sprintf("%.3f [%.3f, %.3f]", p.Median, p.Lo, p.Hi)
				if p.Median < SearchBar {
					cell = "**" + cell + "**"
				}
				fmt.Fprintf(&b, " %s |", cell)
				if n == 32 {
					procs = fmt.Sprintf("%.1f", p.Rounds)
				}
			}
			fmt.Fprintf(&b, " %s |\n", procs)
		}
	}
	return b.Bytes()
}

// atBudget is the row at budget n, or, where the cell's space is smaller
// (its last budget is the whole space), that last row.
func atBudget(rows []tune.CheckRow, n int) (tune.CheckRow, bool) {
	for _, r := range rows {
		if r.Budget == n {
			return r, true
		}
	}
	if len(rows) > 0 && rows[len(rows)-1].Budget < n {
		return rows[len(rows)-1], true
	}
	return tune.CheckRow{}, false
}

// Figure draws the curves: a panel per (cell, size), a line per search,
// the fraction of the optimum (median over the seeds, the central 95% as
// its interval) against the configurations measured (the mean over the
// seeds), with the bar SearchBar as a dashed line.
func (v *SearchView) Figure() ([]byte, error) {
	var panels []figures.CurvePanel
	lo := 1.0
	for _, c := range v.cells() {
		p := figures.CurvePanel{Title: fmt.Sprintf("%s at %d (%d feasible; optimum %s)", c.cell, c.size, c.feasible, seconds(c.optimumS)),
			XLabel: "configurations measured (evaluations)", YLabel: "optimum time / best found time", Bar: SearchBar,
			BarLabel: fmt.Sprintf("%.2f of the optimum", SearchBar)}
		for _, st := range c.strategies {
			line := figures.CurveLine{Label: string(st)}
			for _, r := range c.points[st] {
				if r.Evaluations <= 0 {
					continue
				}
				line.Points = append(line.Points, figures.CurvePoint{X: r.Evaluations, Y: r.Median, Low: r.Median - r.Lo, High: r.Hi - r.Median})
				lo = min(lo, r.Lo)
			}
			p.Lines = append(p.Lines, line)
		}
		panels = append(panels, p)
	}
	ymin := math.Max(0, math.Floor(10*lo-0.5)/10)
	for i := range panels {
		panels[i].YMin, panels[i].YMax = ymin, 1.02
	}
	return figures.Curves("Search quality against the ground truth: each search's best over the true optimum against configurations measured (median and 95% of 50 seeds)", panels)
}

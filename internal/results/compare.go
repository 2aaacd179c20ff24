package results

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/portmatrix/portmatrix/internal/stats"
)

// Compare prints, for every (cell, size) measured in both runs a and b, the
// GB/s ratio b/a with its 95% bootstrap interval (each run's trials and
// repetitions resampled). It flags a regression where the whole interval
// lies below 1 - threshold (0.10: more than 10% slower), or where b fails to
// verify what a verified; "inconclusive" where the interval straddles
// 1 - threshold or 1 + threshold; "faster" where it lies above 1 + threshold.
// It lists the cells and sizes only one run has, and returns the number of
// regressions.
func Compare(a, b string, threshold float64, w io.Writer) (regressions int, err error) {
	if threshold < 0 || threshold >= 1 {
		return 0, fmt.Errorf("compare: threshold %g is not in [0, 1)", threshold)
	}
	ra, err := Load(a)
	if err != nil {
		return 0, err
	}
	rb, err := Load(b)
	if err != nil {
		return 0, err
	}
	ma, mb := Measurements(ra.Kernel, "a"), Measurements(rb.Kernel, "b")
	fmt.Fprintf(w, "a: %s (run %s)\nb: %s (run %s)\n", filepath.Base(a), ra.Run.ID, filepath.Base(b), rb.Run.ID)
	fmt.Fprintf(w, "regression: the 95%% interval of b/a GB/s below %.2f, or verified in a but not in b;\n", 1-threshold)
	fmt.Fprintf(w, "inconclusive: the interval straddles %.2f or %.2f\n\n", 1-threshold, 1+threshold)

	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tsize\ta GB/s\tb GB/s\tb/a\t95% interval\tnote")
	common, unsure := 0, 0
	for _, k := range sortedCellSizes(ma) {
		mb, ok := mb[k]
		if !ok {
			continue
		}
		common++
		ma := ma[k]
		c := judgePair(ma, mb, threshold)
		if c.bad {
			regressions++
		}
		if c.flag == "inconclusive" {
			unsure++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", k.Cell, k.Size, ma.gbpsText(), mb.gbpsText(), c.ratio, c.interval, c.flag)
	}
	if err := tw.Flush(); err != nil {
		return regressions, err
	}
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintln(w)
	printOnly(w, "a", ma, mb)
	printOnly(w, "b", mb, ma)
	fmt.Fprintf(w, "%d regressions, %d inconclusive in %d (cell, size) pairs measured in both runs\n", regressions, unsure, common)
	return regressions, nil
}

// Measurement is every trial of one (cell, size): the last record of each
// trial (a newer failure replaces an older success) and, when all of them
// are usable, the statistics of their repetition times.
type Measurement struct {
	Records []Record // by trial
	Stats   *stats.Measurement
	Bytes   float64
}

// Usable reports whether every trial verified with a bandwidth.
func (m Measurement) Usable() bool { return m.Stats != nil }

// GBps is bytes over the median time.
func (m Measurement) GBps() float64 { return m.Bytes / m.Stats.Median / 1e9 }

// Rate is how fast a call of seconds ran: GB/s where it moves bytes, else
// calls per second (LCALS trap_int reads and writes no array). A ratio of
// two measurements of one kernel and size reads the same in either unit, so
// ratios, figures and compare divide rates.
func Rate(bytes, seconds float64) float64 {
	if bytes > 0 {
		return bytes / seconds / 1e9
	}
	return 1 / seconds
}

// Rates is Rate of each of times (bootstrap replicates of a median).
func Rates(bytes float64, times []float64) []float64 {
	out := make([]float64, len(times))
	for i, t := range times {
		out[i] = Rate(bytes, t)
	}
	return out
}

func (m Measurement) gbpsText() string {
	if !m.Usable() || m.Bytes <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", m.GBps())
}

// Measurements groups kernel records by (cell, size), keeping the last
// record of each trial (field trial; absent is trial 0). salt seeds the
// resampling together with the cell and size (runs compared with each other
// must be resampled independently); without one it seeds as the report's
// tables do, so that results.csv shows their intervals.
func Measurements(recs []Record, salt string) map[CellSize]Measurement {
	type trialKey struct {
		k     CellSize
		trial int
	}
	last := map[trialKey]Record{}
	for _, r := range recs {
		last[trialKey{r.Key(), r.Trial}] = r
	}
	out := map[CellSize]Measurement{}
	for tk, r := range last {
		m := out[tk.k]
		m.Records = append(m.Records, r)
		out[tk.k] = m
	}
	for k, m := range out {
		sort.Slice(m.Records, func(i, j int) bool { return m.Records[i].Trial < m.Records[j].Trial })
		var times [][]float64
		ok := true
		for _, r := range m.Records {
			if !r.Usable() {
				ok = false
				break
			}
			t := r.TimesS
			if len(t) == 0 {
				t = []float64{r.MedianS}
			}
			times = append(times, t)
		}
		if ok {
			m.Bytes = m.Records[0].Bytes
			if m.Bytes <= 0 {
				m.Bytes = m.Records[0].GBps * m.Records[0].MedianS * 1e9
			}
			key := fmt.Sprintf("%s@%d", k.Cell, k.Size)
			if salt != "" {
				key = salt + ":" + key
			}
			m.Stats = stats.Measure(key, times)
		}
		out[k] = m
	}
	return out
}

func sortedCellSizes(m map[CellSize]Measurement) []CellSize {
	keys := make([]CellSize, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Cell != keys[j].Cell {
			return keys[i].Cell < keys[j].Cell
		}
		return keys[i].Size < keys[j].Size
	})
	return keys
}

type comparison struct {
	flag, ratio, interval string
	bad                   bool
}

// judgePair compares one (cell, size) of a and b.
func judgePair(a, b Measurement, threshold float64) comparison {
	c := comparison{ratio: "-", interval: "-"}
	switch {
	case a.Usable() && !b.Usable():
		c.flag, c.bad = "REGRESSION (b "+failure(b)+")", true
		return c
	case !a.Usable() && b.Usable():
		c.flag = "fixed"
		return c
	case !a.Usable():
		c.flag = "both " + failure(b)
		return c
	}
	if (a.Bytes > 0) != (b.Bytes > 0) {
		c.flag = "not comparable (one run counts no bytes)"
		return c
	}
	if why := ClocksDiffer(ClockOf(b.Records), ClockOf(a.Records)); why != "" {
		c.flag = "not compared (" + why + ")"
		return c
	}
	v := Rate(b.Bytes, b.Stats.Median) / Rate(a.Bytes, a.Stats.Median)
	lo, hi := stats.Interval(stats.Ratio(Rates(b.Bytes, b.Stats.Boot), Rates(a.Bytes, a.Stats.Boot)))
	c.ratio, c.interval = fmt.Sprintf("%.3f", v), fmt.Sprintf("[%.3f, %.3f]", lo, hi)
	slow, fast := 1-threshold, 1+threshold
	switch {
	case hi < slow:
		c.flag, c.bad = "REGRESSION", true
	case lo > fast:
		c.flag = "faster"
	case lo < slow || hi > fast:
		c.flag = "inconclusive"
	}
	return c
}

// failure says why the last failing trial of m failed.
func failure(m Measurement) string {
	for i := len(m.Records) - 1; i >= 0; i-- {
		r := m.Records[i]
		switch {
		case r.Error != "":
			return "failed: " + r.Error
		case !r.Verified:
			return "failed to verify"
		case !r.Usable():
			return "has no GB/s"
		}
	}
	return "has no GB/s"
}

// printOnly lists the cells of x that y lacks entirely, then the sizes of
// cells both have that only x measured.
func printOnly(w io.Writer, name string, x, y map[CellSize]Measurement) {
	inY := map[string]bool{}
	for k := range y {
		inY[k.Cell] = true
	}
	cells := map[string][]string{}
	var order []string
	for _, k := range sortedCellSizes(x) {
		if _, ok := y[k]; ok {
			continue
		}
		if cells[k.Cell] == nil {
			order = append(order, k.Cell)
		}
		cells[k.Cell] = append(cells[k.Cell], fmt.Sprint(k.Size))
	}
	for _, c := range order {
		what := "cell only in " + name
		if inY[c] {
			what = "sizes only in " + name
		}
		fmt.Fprintf(w, "%s: %s (sizes %s)\n", what, c, strings.Join(cells[c], ", "))
	}
}

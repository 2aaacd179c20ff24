package tune

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report writes the tuning's table: per (cell, size) the best configuration
// with its median and interval, how many others are indistinguishable from
// it, and the default's gap ("within 4.1% of best (indistinguishable)",
// "35.0% slower than best"); then what the
// constraints and the model ruled out.
func (r *Result) Report(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cell\tsize\tmeasured\tbest\tmedian [95%% interval]\tties\tdefault\n")
	for _, c := range r.Cells {
		measured := fmt.Sprintf("%d/%d", len(c.Measured), c.Planned)
		if c.Cached > 0 {
			measured += fmt.Sprintf(" (%d cached)", c.Cached)
		}
		best, interval := "none verified", "-"
		if c.Best != nil {
			best = orNone(c.Best.Config.String())
			interval = fmt.Sprintf("%s [%s, %s]", seconds(c.Best.MedianS), seconds(c.Best.LoS), seconds(c.Best.HiS))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\n", c.Cell, c.Size, measured, best, interval, len(c.Ties), c.defaultText())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Cells {
		var notes []string
		if n := c.Missing(); n > 0 {
			notes = append(notes, fmt.Sprintf("%d planned configurations not measured", n))
		}
		if c.Unverified > 0 {
			notes = append(notes, fmt.Sprintf("%d unverified or failed (never the best)", c.Unverified))
		}
		for _, why := range slices.Sorted(maps.Keys(c.Infeasible)) {
			notes = append(notes, fmt.Sprintf("%d ruled out by %s", c.Infeasible[why], why))
		}
		for _, why := range slices.Sorted(maps.Keys(c.Pruned)) {
			notes = append(notes, fmt.Sprintf("%d pruned by the model: %s", c.Pruned[why], why))
		}
		for _, u := range c.Unchecked {
			notes = append(notes, "not checked: "+u)
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "%s size %d: %s\n", c.Cell, c.Size, strings.Join(notes, "; "))
		}
	}
	if r.Stopped != "" {
		fmt.Fprintf(w, "stopped: %s (run again to resume)\n", r.Stopped)
	}
	return nil
}

func (c *CellResult) defaultText() string {
	switch {
	case c.DefaultOut != "":
		return "not measured: " + c.DefaultOut
	case c.Default == nil:
		return "not measured"
	case !c.Default.ok():
		return "unverified"
	}
	gap, tied, _ := c.DefaultGap()
	switch {
	case c.Default == c.Best:
		return "is the best"
	case tied:
		return fmt.Sprintf("within %.1f%% of best (indistinguishable)", 100*gap)
	}
	return fmt.Sprintf("%.1f%% slower than best", 100*gap)
}

func orNone(s string) string {
	if s == "" {
		return "(no tunables)"
	}
	return s
}

func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Nanosecond).String()
}

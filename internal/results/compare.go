package results

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// Compare prints, for every (cell, size) measured in both runs a and b, the
// GB/s ratio b/a, and flags a regression where b is slower than a by more
// than threshold (0.10: more than 10% slower) or where b fails to verify what
// a verified. It lists the cells and sizes only one run has, and returns the
// number of regressions.
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
	ma, mb := lastByCellSize(ra.Kernel), lastByCellSize(rb.Kernel)
	fmt.Fprintf(w, "a: %s (run %s)\nb: %s (run %s)\n", filepath.Base(a), ra.Run.ID, filepath.Base(b), rb.Run.ID)
	fmt.Fprintf(w, "regression: b/a GB/s below %.2f, or verified in a but not in b\n\n", 1-threshold)

	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tsize\ta GB/s\tb GB/s\tb/a\tnote")
	common := 0
	for _, k := range sortedCellSizes(ma) {
		rb, ok := mb[k]
		if !ok {
			continue
		}
		common++
		flag, bad := judgePair(ma[k], rb, threshold)
		if bad {
			regressions++
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", k.Cell, k.Size, gbpsText(ma[k]), gbpsText(rb), ratioText(ma[k], rb), flag)
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
	fmt.Fprintf(w, "%d regressions in %d (cell, size) pairs measured in both runs\n", regressions, common)
	return regressions, nil
}

func lastByCellSize(recs []Record) map[CellSize]Record {
	m := map[CellSize]Record{}
	for _, r := range recs {
		m[r.Key()] = r
	}
	return m
}

func sortedCellSizes(m map[CellSize]Record) []CellSize {
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

// judgePair returns the flag of one (cell, size) and whether it regressed.
func judgePair(a, b Record, threshold float64) (string, bool) {
	switch {
	case a.Usable() && !b.Usable():
		return "REGRESSION (b " + failure(b) + ")", true
	case !a.Usable() && b.Usable():
		return "fixed", false
	case !a.Usable():
		return "both " + failure(b), false
	case b.GBps/a.GBps < 1-threshold:
		return "REGRESSION", true
	case b.GBps/a.GBps > 1+threshold:
		return "faster", false
	}
	return "", false
}

func failure(r Record) string {
	switch {
	case r.Error != "":
		return "failed: " + r.Error
	case !r.Verified:
		return "failed to verify"
	}
	return "has no GB/s"
}

func gbpsText(r Record) string {
	if r.GBps <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r.GBps)
}

func ratioText(a, b Record) string {
	if a.GBps <= 0 || b.GBps <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", b.GBps/a.GBps)
}

// printOnly lists the cells of x that y lacks entirely, then the sizes of
// cells both have that only x measured.
func printOnly(w io.Writer, name string, x, y map[CellSize]Record) {
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

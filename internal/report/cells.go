package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
)

// Cell statuses, worst first in display order.
const (
	StatusBuildFailed  = "failed to build"
	StatusSkipped      = "skipped"
	StatusRunError     = "run error"
	StatusVerifyFailed = "failed to verify"
	StatusNotRun       = "built, not run"
	StatusVerified     = "verified"
)

// CellStatus is the build and run outcome of one cell.
type CellStatus struct {
	Cell, Kernel, Variant, Toolchain string
	Build                            string // build.csv status, empty without a row
	Status                           string // one of the Status constants
	Reason                           string
	Sizes, Verified                  int // sizes run, sizes verified
	BuildLog, RunLog                 string
}

// Class is a CSS class for the status: ok, fail, skip or warn.
func (c CellStatus) Class() string {
	switch c.Status {
	case StatusVerified:
		return "ok"
	case StatusSkipped:
		return "skip"
	case StatusNotRun:
		return "warn"
	}
	return "fail"
}

// CellStatuses merges build.csv and the kernel records into one status per
// cell, sorted by cell.
func CellStatuses(res *results.Folder) []CellStatus {
	cells := map[string]*CellStatus{}
	get := func(cell, kernel, variant, toolchain string) *CellStatus {
		c := cells[cell]
		if c == nil {
			c = &CellStatus{Cell: cell, Kernel: kernel, Variant: variant, Toolchain: toolchain}
			cells[cell] = c
		}
		return c
	}
	builds := map[string]results.BuildRow{}
	for _, b := range res.Builds {
		c := get(b.Cell, b.Kernel, b.Variant, b.Toolchain)
		c.Build, c.Reason, c.BuildLog = b.Status, b.Reason, logPath(res.Dir, b.Log)
		builds[b.Cell] = b
	}
	runs := map[string][]results.Record{}
	for _, r := range res.Kernel {
		get(r.Cell, r.Kernel, r.Variant, r.Toolchain)
		runs[r.Cell] = append(runs[r.Cell], r)
	}
	out := make([]CellStatus, 0, len(cells))
	for _, c := range cells {
		c.judge(builds[c.Cell], runs[c.Cell])
		c.findLogs(res.Dir)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cell < out[j].Cell })
	return out
}

// judge sets Status and Reason from the cell's build.csv row (zero without
// one) and its run records.
func (c *CellStatus) judge(b results.BuildRow, recs []results.Record) {
	switch {
	case b.Failed():
		c.Status = StatusBuildFailed
		return
	case b.Skipped():
		c.Status = StatusSkipped
		return
	}
	// The last record of each (size, trial) counts; a size is verified when
	// every trial of it is.
	type sizeTrial struct {
		size  int64
		trial int
	}
	last := map[sizeTrial]results.Record{}
	for _, r := range recs {
		last[sizeTrial{r.Size, r.Trial}] = r
	}
	sizes := map[int64][]results.Record{}
	for k, r := range last {
		sizes[k.size] = append(sizes[k.size], r)
	}
	var errs, unverified []string
	for _, size := range sortedSizes(sizes) {
		trials := sizes[size]
		sort.Slice(trials, func(i, j int) bool { return trials[i].Trial < trials[j].Trial })
		c.Sizes++
		ok := true
		for _, r := range trials {
			at := fmt.Sprintf("size %d", size)
			if len(trials) > 1 {
				at += fmt.Sprintf(" trial %d", r.Trial)
			}
			switch {
			case r.Error != "":
				errs = append(errs, fmt.Sprintf("%s: %s", at, r.Error))
				ok = false
			case !r.Verified:
				unverified = append(unverified, fmt.Sprintf("%s: max rel err %.2g > tolerance %.2g", at, r.RelErr(), r.Tolerance))
				ok = false
			}
		}
		if ok {
			c.Verified++
		}
	}
	switch {
	case len(errs) > 0:
		c.Status, c.Reason = StatusRunError, strings.Join(append(errs, unverified...), "; ")
	case len(unverified) > 0:
		c.Status, c.Reason = StatusVerifyFailed, strings.Join(unverified, "; ")
	case c.Sizes == 0:
		c.Status = StatusNotRun
	default:
		c.Status = StatusVerified
	}
}

func sortedSizes[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// findLogs fills in the conventional log paths that exist.
func (c *CellStatus) findLogs(dir string) {
	if c.BuildLog == "" {
		c.BuildLog = existing(dir, results.BuildLog(c.Cell))
	}
	c.RunLog = existing(dir, results.RunLog(c.Cell))
}

func existing(dir, rel string) string {
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		return ""
	}
	return rel
}

// logPath makes a build.csv log path relative to the results folder.
func logPath(dir, p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.ToSlash(p)
	}
	if rel, err := filepath.Rel(abs, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(p)
}

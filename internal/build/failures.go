package build

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Failures is what a build did not do that was asked for: a failure
// outside the known-failure list (variants/known-failures.yaml, matched by
// cell and message), nothing built for a toolchain the selection names, or
// nothing built at all.
func Failures(res []Result, known []Known, selected []string, toolchains []*toolchain.Toolchain, log io.Writer) error {
	var f diag.Failures
	ok := map[string]int{}
	skips := map[string][]string{}
	for _, r := range res {
		tc := r.Cell.Toolchain.ID
		switch {
		case r.OK():
			ok[tc]++
		case r.Status == Failed:
			if k := Match(known, r.Cell.ID, r.Reason); k != nil {
				fmt.Fprintf(log, "  known failure %s (%s)\n", r.Cell.ID, k.Pos)
				continue
			}
			f.Add("build", r.Cell.ID, r.Reason+" (log: "+r.Log+")")
		case r.Status == Skipped:
			if !slices.Contains(skips[tc], r.Reason) {
				skips[tc] = append(skips[tc], r.Reason)
			}
		}
	}
	for _, id := range selected {
		if ok[id] > 0 {
			continue
		}
		why := "no selected cell is on for it"
		for _, t := range toolchains {
			switch {
			case t.ID != id:
			case !t.Found():
				why = t.Missing
			case len(skips[id]) == 0:
				why = fmt.Sprintf("no selected variant is for it (family %s, devices %s)", t.Family, strings.Join(t.Devices, ", "))
			}
		}
		if len(skips[id]) > 0 && why == "no selected cell is on for it" {
			why += ": " + strings.Join(skips[id], "; ")
		}
		f.Add("build", "toolchain "+id, "nothing built: "+why)
	}
	if len(selected) == 0 && len(ok) == 0 {
		f.Add("build", "selection", "nothing built (doctor says why each cell is off)")
	}
	return f.Err()
}

// Summarize prints the counts of a build and every failure and cell that
// does not render.
func Summarize(log io.Writer, res []Result, took time.Duration) {
	counts := map[string]int{}
	for _, r := range res {
		counts[r.Status]++
	}
	fmt.Fprintf(log, "build: %d cells: %d built, %d cached, %d failed, %d skipped; took %s\n", len(res),
		counts[Built], counts[Cached], counts[Failed], counts[Skipped], took.Round(time.Millisecond))
	for _, r := range res {
		if r.Status == Failed {
			fmt.Fprintf(log, "  FAILED %s: %s (log: %s)\n", r.Cell.ID, r.Reason, r.Log)
		}
		if r.Status == Skipped && strings.HasPrefix(r.Reason, "cannot render") {
			fmt.Fprintf(log, "  OFF %s: %s\n", r.Cell.ID, r.Reason)
		}
	}
}

// BundleAll copies the runtime libraries of every GPU toolchain that built
// something into the build folder (Bundle).
func BundleAll(dir string, toolchains []*toolchain.Toolchain, res []Result) error {
	for _, t := range toolchains {
		if t.GPU() && builtWith(res, t.ID) {
			if err := Bundle(dir, t); err != nil {
				return err
			}
		}
	}
	return nil
}

func builtWith(res []Result, tc string) bool {
	for _, r := range res {
		if r.OK() && r.Cell.Toolchain.ID == tc {
			return true
		}
	}
	return false
}

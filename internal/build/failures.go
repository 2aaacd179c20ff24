package build

import (
	"fmt"
	"io"
	"maps"
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
	notRunLines(log, res)
	for _, r := range res {
		if r.Status == Failed {
			fmt.Fprintf(log, "  FAILED %s: %s (log: %s)\n", r.Cell.ID, r.Reason, r.Log)
		}
		if r.Status == Skipped && strings.HasPrefix(r.Reason, "cannot render") {
			fmt.Fprintf(log, "  OFF %s: %s\n", r.Cell.ID, r.Reason)
		}
	}
}

// SummarizeSample is Summarize for a sampled suite: the counts of the cells
// it built, each failure, and the cells that are off in one line, with the
// (strategy, toolchain) pairs the sample left out (leftOut: their every
// cell is a known failure) and where each reason is.
func SummarizeSample(log io.Writer, res []Result, took time.Duration, leftOut []string) {
	counts := map[string]int{}
	for _, r := range res {
		counts[r.Status]++
	}
	fmt.Fprintf(log, "build: %d cells: %d built, %d cached, %d failed; took %s\n", len(res)-counts[Skipped],
		counts[Built], counts[Cached], counts[Failed], took.Round(time.Millisecond))
	notRunLines(log, res)
	missing := map[string]bool{}
	absent, render := 0, 0
	for _, r := range res {
		switch {
		case r.Status == Failed:
			fmt.Fprintf(log, "  FAILED %s: %s (log: %s)\n", r.Cell.ID, r.Reason, r.Log)
		case r.Status != Skipped:
		case !r.Cell.Toolchain.Found():
			missing[r.Cell.Toolchain.ID] = true
			absent++
		case strings.HasPrefix(r.Reason, "cannot render"):
			render++
		}
	}
	var parts []string
	if absent > 0 {
		parts = append(parts, fmt.Sprintf("%d for the %d toolchains not found here", absent, len(missing)))
	}
	if rest := counts[Skipped] - absent; rest > 0 {
		s := fmt.Sprintf("%d that a compiler's version, a backend or the kernel rules out", rest)
		if render > 0 {
			s += fmt.Sprintf(" (%d cannot be rendered)", render)
		}
		parts = append(parts, s)
	}
	line := ""
	if len(parts) > 0 {
		line = fmt.Sprintf("%d cells (%s)", counts[Skipped], strings.Join(parts, "; "))
	}
	if len(leftOut) > 0 {
		if line != "" {
			line += "; "
		}
		line += "left out, every cell a known failure (variants/known-failures.yaml): " + strings.Join(leftOut, ", ")
	}
	if line != "" {
		fmt.Fprintf(log, "  off: %s; why each: go run mage.go doctor\n", line)
	}
}

// notRunLines counts the cells built for a target that never runs here.
func notRunLines(log io.Writer, res []Result) {
	notRun := map[string]int{} // "toolchain: why" of cells built for a target that never runs
	for _, r := range res {
		if why := toolchain.NotRun(r.Cell.Toolchain.Target); why != "" && r.OK() {
			notRun[r.Cell.Toolchain.ID+": "+why]++
		}
	}
	for _, k := range slices.Sorted(maps.Keys(notRun)) {
		fmt.Fprintf(log, "  %d cells of %s\n", notRun[k], k)
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

package tables

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// timingMarkdown says how long the run's programs took: the sum of every
// measurement's time from its program's start to its record (elapsed_s), and
// the median share of each part (runtime start-up, data and reference, runs,
// checks), what the float64 references took, shared or not, and the copies
// to the device. Folders
// written before the harness timed itself have none: "".
func timingMarkdown(recs []results.Record) string {
	var elapsed, setup, measure, check, startup []float64
	total, refTotal, uploadTotal, setupTotal, cached := 0.0, 0.0, 0.0, 0.0, 0
	for _, r := range recs {
		if r.ElapsedS <= 0 || r.MeasureS <= 0 {
			continue
		}
		total += r.ElapsedS
		elapsed = append(elapsed, r.ElapsedS)
		setup = append(setup, r.SetupS)
		measure = append(measure, r.MeasureS)
		check = append(check, r.CheckS)
		startup = append(startup, max(r.ElapsedS-r.SetupS-r.MeasureS, 0))
		refTotal += r.ReferenceS
		uploadTotal += r.UploadS
		setupTotal += r.SetupS
		if r.ReferenceCached {
			cached++
		}
	}
	if len(elapsed) == 0 {
		return ""
	}
	longest := slices.Max(elapsed)
	var b strings.Builder
	fmt.Fprintf(&b, "Time: %d measurements (one program each) took %.1f minutes from their programs' starts to their records; ",
		len(elapsed), total/60)
	fmt.Fprintf(&b, "per measurement median %.2f s (longest %.1f s): runtime start-up %.2f s, data and reference %.2f s, ",
		stats.Median(elapsed), longest, stats.Median(startup), stats.Median(setup))
	fmt.Fprintf(&b, "runs with their checks %.2f s, of which checks %.2f s.", stats.Median(measure), stats.Median(check))
	if refTotal > 0 {
		fmt.Fprintf(&b, " Float64 references took %.1f minutes in all; %d of %d were loaded from one computed earlier in the run from the same inputs.",
			refTotal/60, cached, len(elapsed))
	}
	if uploadTotal > 0 {
		fmt.Fprintf(&b, " Copies to the device took %.1f of the %.1f minutes of data and reference.", uploadTotal/60, setupTotal/60)
	}
	b.WriteString("\n")
	return b.String()
}

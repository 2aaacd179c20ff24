package claims

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
)

// NotTuned is the tuned verdict of a claim that no tuned measurement of the
// folder decides: no configuration was searched for one of its sides.
const NotTuned = "not tuned"

// EvaluateTuned evaluates every claim on the tuned view and attaches it to
// the as-published results: a claim with a side that has no tuned
// measurement gets NotTuned and says which.
func EvaluateTuned(claims []reportspec.Claim, published []Result, tunedDS *dataset.Set) {
	if len(tunedDS.Series) == 0 {
		return // no tuned measurement: every claim not tuned, for one reason
	}
	for i, c := range claims {
		t := evaluate(c, tunedDS)
		switch {
		case t.Outcome != NotMeasurable:
		case published[i].Outcome == NotMeasurable:
			t.Reason = published[i].Reason
		case len(tunedDS.Select(c.Kernels, c.Target, c.Numerator)) == 0:
			t.Reason = "no tuned configuration of the numerator: " + strings.Join(c.Numerator.Variants, ", ") + " on " + c.Numerator.Where()
		case len(tunedDS.Select(c.Kernels, c.Target, c.Denominator)) == 0:
			t.Reason = "no tuned configuration of the denominator: " + strings.Join(c.Denominator.Variants, ", ") + " on " + c.Denominator.Where()
		}
		published[i].Tuned = &t
	}
}

// TunedVerdict is the claim's verdict on the tuned view: NotTuned with the
// reason where no tuned measurement decides it.
func (r Result) TunedVerdict() string {
	if r.Tuned == nil || r.Tuned.Outcome == NotMeasurable {
		why := "no tuned measurement in this folder"
		if r.Tuned != nil && r.Tuned.Reason != "" {
			why = r.Tuned.Reason
		}
		return fmt.Sprintf("%s (%s)", NotTuned, why)
	}
	v := r.Tuned.Verdict()
	if r.Tuned.Outcome != Reproduced {
		return v
	}
	return fmt.Sprintf("%s (measured %s)", v, r.Tuned.Measured())
}

// TunedSummary counts the tuned verdicts.
func TunedSummary(results []Result) string {
	m := map[Outcome]int{}
	n := 0
	for _, r := range results {
		if r.Tuned != nil && r.Tuned.Outcome != NotMeasurable {
			m[r.Tuned.Outcome]++
			n++
		}
	}
	return fmt.Sprintf("tuned (best configuration against best): %d claims decided, %d reproduced, %d not reproduced, %d inconclusive, %d %s",
		n, m[Reproduced], m[NotReproduced], m[Inconclusive], len(results)-n, NotTuned)
}

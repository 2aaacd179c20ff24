package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// NotTuned is the tuned verdict of a claim that no tuned measurement of the
// folder decides: no configuration was searched for one of its sides.
const NotTuned = "not tuned"

// EvaluateTuned evaluates every claim on the tuned view and attaches it to
// the as-published results: a claim with a side that has no tuned
// measurement gets NotTuned and says which.
func EvaluateTuned(claims []reportspec.Claim, published []Result, tunedDS *dataset.Set) {
	evaluateTuned(claims, published, tunedDS, func(reportspec.Claim) *dataset.Set { return tunedDS })
}

// EvaluateTunedFolder is EvaluateTuned on a folder's records: a claim with
// premises takes, for each (cell, size), the fastest tuned configuration
// that holds them (or the as-published one), not the fastest of all.
func EvaluateTunedFolder(claims []reportspec.Claim, published []Result, res *results.Folder) {
	_, tuned := dataset.SplitViews(res.Kernel)
	all := dataset.New(dataset.View(res, tuned))
	evaluateTuned(claims, published, all, func(c reportspec.Claim) *dataset.Set {
		if !HasPremises(c) {
			return all
		}
		return dataset.New(dataset.View(res, dataset.TunedHolding(res.Kernel, func(r results.Record) bool {
			return len(r.Config) == 0 || Holds(c, all, dataset.Key{Kernel: r.Kernel, Variant: r.Variant, Toolchain: r.Toolchain}, r.Config)
		})))
	})
}

// HasPremises says whether a side of the claim has premises.
func HasPremises(c reportspec.Claim) bool {
	return len(c.Numerator.Premises) > 0 || len(c.Denominator.Premises) > 0
}

// Holds says whether config, measured for series k, holds the premises of
// every side of the claim that selects k.
func Holds(c reportspec.Claim, ds *dataset.Set, k dataset.Key, config map[string]int64) bool {
	for _, s := range []reportspec.Selector{c.Numerator, c.Denominator} {
		if Selects(c, ds, s, k) && !s.Holds(config) {
			return false
		}
	}
	return true
}

// Selects says whether side s of claim c selects the series k.
func Selects(c reportspec.Claim, ds *dataset.Set, s reportspec.Selector, k dataset.Key) bool {
	return slices.Contains(c.KernelsOf(s), k.Kernel) && slices.Contains(s.Variants, k.Variant) &&
		ds.OnTarget(c.Target, k.Toolchain) && s.Matches(k.Toolchain, ds.Family(k.Toolchain))
}

func evaluateTuned(claims []reportspec.Claim, published []Result, all *dataset.Set, forClaim func(reportspec.Claim) *dataset.Set) {
	if len(all.Series) == 0 {
		return // no tuned measurement: every claim not tuned, for one reason
	}
	for i, c := range claims {
		tunedDS := forClaim(c)
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

// Package stats holds the statistics of a measurement: the median and the
// minimum of its repetition times, a bootstrap confidence interval of the
// median, and the coefficient of variation. A measurement is one or more
// independent trials (separate processes) of several repetitions each; the
// bootstrap resamples trials, then repetitions inside each drawn trial
// (hierarchical), or repetitions alone when there is one trial.
//
// The resampling is deterministic: the seed comes from a key naming the
// measurement, so a report is the same every time it is written.
package stats

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
)

// Resamples is the number of bootstrap replicates of every measurement.
const Resamples = 2000

// Level is the confidence level of every interval.
const Level = 0.95

// HighCV is the coefficient of variation of the repetition times above
// which a measurement is flagged as noisy.
const HighCV = 0.10

// Measurement is the statistics of the repetition times of one (cell, size).
type Measurement struct {
	Trials [][]float64 // seconds, one slice per trial
	Median float64     // median of all repetitions, seconds
	Min    float64     // fastest repetition, seconds
	Lo, Hi float64     // confidence interval of the median, seconds
	CV     float64     // standard deviation / mean of all repetitions
	Boot   []float64   // bootstrap replicates of the median, seconds (replicate order, unsorted)
}

// Measure computes the statistics of trials; key seeds the resampling.
// Trials without times are left out; nil when none has a time.
func Measure(key string, trials [][]float64) *Measurement {
	var ts [][]float64
	var all []float64
	for _, t := range trials {
		var ok []float64
		for _, x := range t {
			if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
				ok = append(ok, x)
			}
		}
		if len(ok) > 0 {
			ts = append(ts, ok)
			all = append(all, ok...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	m := &Measurement{Trials: ts, Median: Median(all), Min: minOf(all), CV: CV(all)}
	m.Boot = bootMedians(seed(key), ts)
	m.Lo, m.Hi = Interval(m.Boot)
	return m
}

// Noisy reports whether the repetitions vary more than HighCV.
func (m *Measurement) Noisy() bool { return m.CV > HighCV }

// Reps is the number of repetitions over all trials.
func (m *Measurement) Reps() int {
	n := 0
	for _, t := range m.Trials {
		n += len(t)
	}
	return n
}

func seed(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()
}

// bootMedians draws Resamples replicates of the median: trials with
// replacement, then repetitions with replacement inside each drawn trial.
func bootMedians(s uint64, trials [][]float64) []float64 {
	rng := rand.New(rand.NewPCG(s, 0x9e3779b97f4a7c15))
	out := make([]float64, Resamples)
	var buf []float64
	for b := range out {
		buf = buf[:0]
		for range trials {
			t := trials[0]
			if len(trials) > 1 {
				t = trials[rng.IntN(len(trials))]
			}
			for range t {
				buf = append(buf, t[rng.IntN(len(t))])
			}
		}
		out[b] = medianInPlace(buf)
	}
	return out
}

// Interval is the central Level percentile interval of replicates.
func Interval(boot []float64) (lo, hi float64) {
	s := make([]float64, 0, len(boot))
	for _, x := range boot {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(s)
	a := (1 - Level) / 2
	return quantile(s, a), quantile(s, 1-a)
}

// quantile of sorted s, linear between order statistics.
func quantile(s []float64, p float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	x := p * float64(len(s)-1)
	i := int(math.Floor(x))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := x - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// Ratio returns the replicates of a/b, replicate by replicate.
func Ratio(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, n)
	for i := range out {
		out[i] = a[i] / b[i]
	}
	return out
}

// Median of v (0 for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return medianInPlace(append([]float64(nil), v...))
}

func medianInPlace(s []float64) float64 {
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// CV is the sample standard deviation over the mean (0 for fewer than two values).
func CV(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(v)-1)) / mean
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

// Geomean of v (0 for none).
func Geomean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v)))
}

// Verdict of an interval against a band [lo, hi].
type Verdict int

// Where an interval lies against a band.
const (
	Inside   Verdict = iota // the whole interval is in the band
	Outside                 // no point of the interval is in the band
	Straddle                // the interval crosses a bound
)

// Against places the interval [a, b] against the band [lo, hi].
func Against(a, b, lo, hi float64) Verdict {
	switch {
	case a >= lo && b <= hi:
		return Inside
	case b < lo || a > hi:
		return Outside
	}
	return Straddle
}

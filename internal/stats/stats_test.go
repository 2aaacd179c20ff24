package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasureOneTrial(t *testing.T) {
	m := Measure("k", [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}})
	require.NotNil(t, m)
	assert.Equal(t, 6.0, m.Median)
	assert.Equal(t, 1.0, m.Min)
	assert.Len(t, m.Boot, Resamples)
	assert.True(t, m.Lo < m.Median && m.Median < m.Hi, "interval %g-%g around 6", m.Lo, m.Hi)
	assert.True(t, m.Lo >= 3 && m.Hi <= 9, "interval %g-%g", m.Lo, m.Hi)
	assert.InDelta(t, 0.5, m.CV, 0.06) // sd 3.32 / mean 6
	assert.True(t, m.Noisy())
}

func TestMeasureIsDeterministic(t *testing.T) {
	tr := [][]float64{{1, 1.1, 0.9, 1.2}, {1.3, 1.25, 1.4}, {0.95, 1.0}}
	a, b := Measure("cell@10", tr), Measure("cell@10", tr)
	assert.Equal(t, a.Boot, b.Boot)
	c := Measure("other@10", tr)
	assert.NotEqual(t, a.Boot, c.Boot, "the key seeds the resampling")
}

// Trials that disagree widen the interval beyond what their repetitions alone say.
func TestHierarchicalIntervalSeesTrialSpread(t *testing.T) {
	var pooled []float64
	var trials [][]float64
	for i, level := range []float64{1.0, 1.15, 1.3} {
		var tr []float64
		for j := range 10 {
			x := level + 0.001*float64(j) + 0.0001*float64(i)
			tr = append(tr, x)
			pooled = append(pooled, x)
		}
		trials = append(trials, tr)
	}
	h := Measure("k", trials)
	flat := Measure("k", [][]float64{pooled})
	assert.Greater(t, h.Hi-h.Lo, flat.Hi-flat.Lo)
	assert.Equal(t, h.Median, flat.Median)
}

func TestConstantTimesHaveAPointInterval(t *testing.T) {
	m := Measure("k", [][]float64{{2, 2, 2}})
	assert.Equal(t, 2.0, m.Lo)
	assert.Equal(t, 2.0, m.Hi)
	assert.False(t, m.Noisy())
}

func TestMeasureDropsBadTimes(t *testing.T) {
	assert.Nil(t, Measure("k", [][]float64{{0, math.NaN()}, nil}))
	m := Measure("k", [][]float64{{math.Inf(1), 3}})
	assert.Equal(t, 3.0, m.Median)
}

func TestAgainst(t *testing.T) {
	assert.Equal(t, Inside, Against(0.5, 0.6, 0.4, 0.7))
	assert.Equal(t, Outside, Against(0.1, 0.3, 0.4, 0.7))
	assert.Equal(t, Outside, Against(0.8, 0.9, 0.4, 0.7))
	assert.Equal(t, Straddle, Against(0.3, 0.5, 0.4, 0.7))
	assert.Equal(t, Inside, Against(1.2, 1.3, 1.1, math.Inf(1)))
}

func TestInterval(t *testing.T) {
	var v []float64
	for i := range 1001 {
		v = append(v, float64(1000-i))
	}
	lo, hi := Interval(v)
	assert.InDelta(t, 25, lo, 1e-9)
	assert.InDelta(t, 975, hi, 1e-9)
}

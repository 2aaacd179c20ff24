package tune

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
)

// fakeProgram reads the configuration file as the harness does and prints a
// record per configuration, dying at those whose a equals die.
func fakeProgram(t *testing.T, die int64, processes *int) Program {
	return func(_ context.Context, tg Target, file string) ([]results.Record, error) {
		*processes++
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var recs []results.Record
		for _, line := range strings.Fields(string(data)) {
			c, err := ParseConfig(line)
			require.NoError(t, err)
			if c["a"] == die {
				return recs, errors.New("launch refused")
			}
			med, ok := cost(c)
			recs = append(recs, results.Record{Kind: results.KindKernel, Cell: tg.Cell, Size: tg.Size, Config: c,
				TimesS: []float64{med, med * 1.01, med * 0.99}, Verified: ok, Bytes: 8e9})
		}
		return recs, nil
	}
}

// A batch runs in one process; a configuration the process dies at is a
// failure, and the rest of the batch runs in a new process.
func TestHarnessEvaluator(t *testing.T) {
	tg := synthetic(t)
	processes := 0
	h := Harness{Run: fakeProgram(t, 4, &processes), Dir: t.TempDir()}
	batch := Batch{Target: tg, Configs: []Config{{"a": 1, "b": 2}, {"a": 4, "b": 2}, {"a": 8, "b": 4}, {"a": 16, "b": 8}}}
	var got []Measurement
	require.NoError(t, h.Evaluate(context.Background(), batch, func(m Measurement) error { got = append(got, m); return nil }))
	require.Len(t, got, 4)
	assert.Equal(t, 2, processes, "one process, then one for what followed the failure")
	for i, m := range got {
		assert.Equal(t, batch.Configs[i], m.Config)
	}
	assert.Contains(t, got[1].Error, "launch refused")
	assert.False(t, got[1].Verified)
	assert.True(t, got[2].Verified)
	assert.InDelta(t, 1.0, got[2].MedianS, 1e-9, "a=8, b=4 is the optimum of cost")
	assert.InDelta(t, 8.0, got[2].GBps, 1e-9)
	files, err := os.ReadDir(h.Dir)
	require.NoError(t, err)
	assert.Empty(t, files, "configuration files are removed")

	// The harness tunes through Run like any evaluator.
	res, err := Run(context.Background(), Options{Dir: t.TempDir(), Device: "d", Targets: []Target{tg}, Strategy: Exhaustive,
		Machine: device1024, Evaluator: Harness{Run: fakeProgram(t, 0, &processes), Dir: t.TempDir()}})
	require.NoError(t, err)
	require.NotNil(t, res.Cells[0].Best)
	assert.Equal(t, Config{"a": 8, "b": 4}, res.Cells[0].Best.Config)
}

package results

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/stats"
)

// results.csv has a row per kernel record with its trial and minimum-traffic
// GB/s, and the (cell, size) measurement over all trials with its interval,
// as the report's tables compute it; a failed trial leaves those empty.
func TestWriteCSVIntervals(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	require.NoError(t, err)
	rec := func(cell string, trial int, ok bool, times ...float64) Record {
		return Record{Kind: KindKernel, Cell: cell, Size: 10, Trial: trial, TimesS: times, MedianS: stats.Median(times),
			Bytes: 4e9, BytesMin: 2e9, GBps: 4e9 / stats.Median(times) / 1e9, GBpsMin: 2e9 / stats.Median(times) / 1e9, Verified: ok}
	}
	for _, r := range []Record{
		rec("a", 1, true, 1, 1.2, 0.9), rec("a", 2, true, 2, 1.8, 2.2),
		rec("b", 1, true, 1), rec("b", 2, false, 1),
		{Kind: KindStream, Op: OpCopy, Cell: "a", GBps: 9},
	} {
		require.NoError(t, w.Add(r))
	}
	require.NoError(t, w.Close())
	f, err := os.Open(filepath.Join(dir, CSVFile))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, CSVHeader, rows[0])
	require.Len(t, rows, 5, "header and four kernel records")
	col := map[string]int{}
	for i, c := range CSVHeader {
		col[c] = i
	}
	get := func(row int, c string) float64 {
		v, err := strconv.ParseFloat(rows[row][col[c]], 64)
		require.NoError(t, err, c)
		return v
	}
	m := stats.Measure("a@10", [][]float64{{1, 1.2, 0.9}, {2, 1.8, 2.2}})
	for _, row := range []int{1, 2} {
		assert.InDelta(t, 4/m.Median, get(row, "all_trials_gbps"), 1e-4)
		assert.InDelta(t, 4/m.Hi, get(row, "all_trials_gbps_lo"), 1e-4)
		assert.InDelta(t, 4/m.Lo, get(row, "all_trials_gbps_hi"), 1e-4)
		assert.InDelta(t, 2/m.Median, get(row, "all_trials_gbps_min"), 1e-4)
		assert.Equal(t, strconv.Itoa(row), rows[row][col["trial"]])
	}
	assert.InDelta(t, 2/1.0, get(1, "gbps_min"), 1e-9)
	assert.Empty(t, rows[3][col["all_trials_gbps"]], "b has a failed trial")
	assert.Empty(t, rows[4][col["all_trials_gbps_lo"]])
}

package tune

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
)

// tuningFolder makes a tuning folder in dir with an evaluation of each
// (config, median) under one binary and device, a log and a report line,
// the kernels of build key b and a run.json naming id.
func tuningFolder(t *testing.T, dir, b, id string, evals map[string]float64) {
	t.Helper()
	c, err := OpenCache(dir)
	require.NoError(t, err)
	for cfg, med := range evals {
		require.NoError(t, c.Put(Key{Cell: "dot.kk-cuda-3lvl.nvcc-sm90", Size: 100, Config: cfg, BuildKey: "k", Device: "GPU-1"}, "",
			Measurement{MedianS: med, Verified: true}))
	}
	require.NoError(t, c.Close())
	log, err := OpenLog(dir)
	require.NoError(t, err)
	LogProcess(log, len(evals), 1.5)
	require.NoError(t, log.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, ReportFile), []byte("table of "+id+"\n"), 0o644))
	require.NoError(t, WriteKernels(dir, Kernels{b: []machine.Resources{{Registers: 32}}}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.RunFile), []byte(`{"id":"`+id+`"}`), 0o644))
}

// Tuning folders merge whole: every evaluation, a later folder's winning
// for the same key; every log and report after the output's own, each
// under its folder's name; every binary's kernels; the last folder's
// run.json. A folder without a tuning.jsonl is an error naming it, and
// nothing is written.
func TestMergeTuningFolders(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	tuningFolder(t, a, "ka", "first", map[string]float64{"range_block=128": 2e-3, "range_block=256": 1e-3})
	tuningFolder(t, b, "kb", "second", map[string]float64{"range_block=256": 0.9e-3, "range_block=512": 1.1e-3})

	out := filepath.Join(t.TempDir(), "merged")
	n, err := Merge(out, []string{a, b})
	require.NoError(t, err)
	assert.Equal(t, 3, n, "256 measured twice is one evaluation")
	keys, ms, err := Evaluations(out)
	require.NoError(t, err)
	got := map[string]float64{}
	for i, k := range keys {
		got[k.Config] = ms[i].MedianS
	}
	assert.Equal(t, map[string]float64{"range_block=128": 2e-3, "range_block=256": 0.9e-3, "range_block=512": 1.1e-3}, got, "the later folder's 256 wins")
	logData, err := os.ReadFile(filepath.Join(out, LogFile))
	require.NoError(t, err)
	assert.Equal(t, "# merged from "+filepath.ToSlash(a)+"\n# process: 2 records in 1.500 s\n# merged from "+filepath.ToSlash(b)+"\n# process: 2 records in 1.500 s\n", string(logData))
	report, err := os.ReadFile(filepath.Join(out, ReportFile))
	require.NoError(t, err)
	assert.Equal(t, "# merged from "+filepath.ToSlash(a)+"\ntable of first\n# merged from "+filepath.ToSlash(b)+"\ntable of second\n", string(report))
	k, err := ReadKernels(out)
	require.NoError(t, err)
	assert.Len(t, k, 2)
	run, err := os.ReadFile(filepath.Join(out, results.RunFile))
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"second"}`, string(run))

	// Into one of them: its own first, the other's after.
	n, err = Merge(a, []string{a, b})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	logData, err = os.ReadFile(filepath.Join(a, LogFile))
	require.NoError(t, err)
	assert.Equal(t, "# process: 2 records in 1.500 s\n# merged from "+filepath.ToSlash(b)+"\n# process: 2 records in 1.500 s\n", string(logData))

	// Bad input: named, nothing written.
	empty := t.TempDir()
	before, err := os.ReadFile(CachePath(a))
	require.NoError(t, err)
	_, err = Merge(a, []string{a, empty})
	require.Error(t, err)
	assert.Contains(t, err.Error(), empty+": no tuning.jsonl: not a tuning folder")
	after, err := os.ReadFile(CachePath(a))
	require.NoError(t, err)
	assert.Equal(t, before, after)
	_, err = Merge(a, []string{a})
	assert.ErrorContains(t, err, "merge needs two tuning folders")
}

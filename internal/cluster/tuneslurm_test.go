package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

var (
	tuneFixtureOnce sync.Once
	tuneFixtureErr  error
	tuneFixtureLog  bytes.Buffer
)

// builtTuneMatrix adds to builtMatrix's scratch repository the gcc-host
// SPMV cells of serial and omp-host: host cells with a tunable
// (omp-host's rows_per_team).
func builtTuneMatrix(t *testing.T) (root, bin string) {
	t.Helper()
	root, bin = builtMatrix(t)
	tuneFixtureOnce.Do(func() {
		for _, s := range []string{"generate", "build"} {
			cmd := exec.Command(bin, "-root", root, "-build-dir", filepath.Join(root, "build"), "-kernels", "spmv",
				"-toolchains", "gcc-host", "-variants", "serial,omp-host", s)
			out, err := cmd.CombinedOutput()
			tuneFixtureLog.Write(out)
			if tuneFixtureErr = err; err != nil {
				return
			}
		}
	})
	require.NoError(t, tuneFixtureErr, tuneFixtureLog.String())
	return root, bin
}

// evalKey is an evaluation's cache key, read from a tuning.jsonl line.
type evalKey struct {
	Cell     string `json:"cell"`
	Size     int64  `json:"size"`
	Config   string `json:"config"`
	BuildKey string `json:"build_key"`
	Device   string `json:"device"`
	Verified bool   `json:"verified"`
}

func tuningLines(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, tune.CacheFile))
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func evalKeys(t *testing.T, lines []string) []evalKey {
	t.Helper()
	var out []evalKey
	for _, l := range lines {
		var k evalKey
		require.NoError(t, json.Unmarshal([]byte(l), &k), l)
		out = append(out, k)
	}
	return out
}

// The tune stage on a real Slurm (scripts/slurm-up.sh): one array task per
// shard, each tuning its share of the (cell, size) targets into its own
// folder; a shard cut midway (its run.json not finished, its last
// evaluations lost) is the only one submitted again, and measures only what
// its cache lacks; collect joins every evaluation once; a complete tuning
// submits nothing.
func TestSlurmTuneShardsAndResubmit(t *testing.T) {
	if os.Getenv("PM_SLURM_TEST") != "1" {
		t.Skip("set PM_SLURM_TEST=1 with a Slurm cluster up (scripts/slurm-up.sh; SLURM_CONF)")
	}
	root, bin := builtTuneMatrix(t)
	var log bytes.Buffer
	cfg := config.Config{Root: root, Kernels: []string{"spmv"}, Toolchains: []string{"gcc-host"},
		Variants: []string{"serial", "omp-host"}, Sizes: config.Sizes{"": {8, 16}}, Reps: 3, Warmup: 1,
		Timeout: 120, TuneEvals: 4, Log: &log}
	cfg.Out = filepath.Join(t.TempDir(), "tune")
	cc, err := ParseConfig("test", []byte("partition: debug\ntime: \"10:00\"\ntasks: 2\ncpus_per_task: 1\n"))
	require.NoError(t, err)
	ctx := context.Background()
	t0 := time.Now()

	sub1, err := SubmitTune(ctx, cfg, cc, bin)
	require.NoError(t, err, log.String())
	require.Equal(t, 2, sub1.Tasks)
	assert.Equal(t, []int{0, 1}, sub1.TaskIDs)
	drain(t, sub1.JobID)
	c := Campaign{Dir: cfg.Out}
	plan, err := c.tunePlan()
	require.NoError(t, err)
	assert.Equal(t, TunePlan{Shards: 2, Targets: 4}, plan) // 2 cells x 2 sizes
	require.Empty(t, c.MissingShards(plan), "%s\n%s", log.String(), readLogs(c))

	// Each shard tuned its own targets (tune.Shard): disjoint, all four together.
	targets := map[string]int{}
	var shard0, shard1 []string
	for k := range 2 {
		lines := tuningLines(t, TuneShardDir(cfg.Out, k))
		if k == 0 {
			shard0 = lines
		} else {
			shard1 = lines
		}
		seen := map[string]bool{}
		for _, e := range evalKeys(t, lines) {
			assert.True(t, e.Verified, "%+v", e)
			target := fmt.Sprintf("%s@%d", e.Cell, e.Size)
			if !seen[target] {
				seen[target] = true
				targets[target]++
			}
		}
	}
	assert.Len(t, targets, 4)
	for tg, n := range targets {
		assert.Equal(t, 1, n, "%s tuned by %d shards", tg, n)
	}
	require.Greater(t, len(shard1), 2, "omp-host searches rows_per_team")

	// Shard 1 as a task killed midway leaves it: run.json still "running"
	// (no live process), its last two evaluations never written.
	dir1 := TuneShardDir(cfg.Out, 1)
	kept := shard1[:len(shard1)-2]
	require.NoError(t, os.WriteFile(filepath.Join(dir1, tune.CacheFile), []byte(strings.Join(kept, "\n")+"\n"), 0o644))
	r, err := results.ReadRun(dir1)
	require.NoError(t, err)
	r.State, r.PID = results.StateRunning, 0
	require.NoError(t, results.WriteRun(dir1, r))
	assert.Equal(t, []int{1}, c.MissingShards(plan))

	log.Reset()
	sub2, err := SubmitTune(ctx, cfg, cc, bin)
	require.NoError(t, err, log.String())
	assert.Equal(t, []int{1}, sub2.TaskIDs, "only the cut shard")
	assert.Contains(t, log.String(), "(kept: 2 shards)")
	script, err := os.ReadFile(sub2.Script)
	require.NoError(t, err)
	assert.Contains(t, string(script), "#SBATCH --array=1\n")
	assert.Contains(t, string(script), ` -tune-shard "$SLURM_ARRAY_TASK_ID"/2 -out `+filepath.Join(cfg.Out, "shards")+`/task"$SLURM_ARRAY_TASK_ID" tune`+"\n")
	drain(t, sub2.JobID)
	require.Empty(t, c.MissingShards(plan), readLogs(c))
	again := tuningLines(t, dir1)
	assert.Equal(t, kept, again[:len(kept)], "what the cut task measured is kept")
	keyOf := func(e evalKey) evalKey { e.Verified = false; return e }
	var lost, remeasured []evalKey
	for _, e := range evalKeys(t, shard1[len(kept):]) {
		lost = append(lost, keyOf(e))
	}
	for _, e := range evalKeys(t, again[len(kept):]) {
		remeasured = append(remeasured, keyOf(e))
	}
	assert.ElementsMatch(t, lost, remeasured, "exactly the lost evaluations are measured again")
	assert.Equal(t, shard0, tuningLines(t, TuneShardDir(cfg.Out, 0)), "the finished shard is not run again")

	// collect joins: every evaluation once, the reports of both shards.
	log.Reset()
	sum, err := Collect(ctx, cfg.Out, &log)
	require.NoError(t, err, log.String())
	assert.Nil(t, sum)
	joined := evalKeys(t, tuningLines(t, cfg.Out))
	assert.Len(t, joined, len(shard0)+len(shard1))
	uniq := map[evalKey]bool{}
	for _, e := range joined {
		uniq[keyOf(e)] = true
		assert.True(t, e.Verified)
	}
	assert.Len(t, uniq, len(joined))
	md, err := os.ReadFile(filepath.Join(cfg.Out, "tuning.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "# task0")
	assert.Contains(t, string(md), "# task1")
	assert.Contains(t, log.String(), "shards: 2 planned (4 targets), 2 tuned, 0 not finished")
	assert.FileExists(t, filepath.Join(cfg.Out, "cluster.json"))

	// Nothing missing: nothing is submitted.
	log.Reset()
	sub3, err := SubmitTune(ctx, cfg, cc, bin)
	require.NoError(t, err)
	assert.Empty(t, sub3.JobID)
	assert.Contains(t, log.String(), "nothing to submit")
	subs, err := c.Submissions()
	require.NoError(t, err)
	require.Len(t, subs, 2)
	assert.True(t, slices.IndexFunc(subs, func(s Submission) bool { return s.Stage != "tune" }) < 0)
	t.Logf("Slurm tuning: 2 shards, a cut shard re-submitted, joined: %s", time.Since(t0).Round(time.Millisecond))
}

// readLogs is every task's log, for failure messages.
func readLogs(c Campaign) string {
	files, _ := filepath.Glob(c.path("logs", "*.out"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.WriteString("== " + f + "\n" + string(data))
	}
	return b.String()
}

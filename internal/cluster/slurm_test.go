package cluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/work"
)

// drain waits until squeue lists no task of job jid.
func drain(t *testing.T, jid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		out, err := exec.Command("squeue", "-h", "-j", jid).Output()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("job %s did not finish in 10 minutes", jid)
}

// The CPU matrix on a real Slurm (scripts/slurm-up.sh; .ci/run sets
// PM_SLURM_TEST=1): submitted as one job array, a running task cancelled,
// collected with that task's items missing and its CANCELLED state and log
// reported, re-submitted (only what is missing), collected complete: every
// item measured once, verified, with its array job and task.
func TestSlurmArrayCancelAndResubmit(t *testing.T) {
	if os.Getenv("PM_SLURM_TEST") != "1" {
		t.Skip("set PM_SLURM_TEST=1 with a Slurm cluster up (scripts/slurm-up.sh; SLURM_CONF)")
	}
	root, bin := builtMatrix(t)
	var log bytes.Buffer
	cfg := matrixConfig(root, &log)
	// Sizes and repetitions that keep a task busy for a few seconds, so that
	// one can be cancelled while it runs: the cache flush before each
	// repetition (on, the default) is most of it.
	cfg.Sizes, cfg.Reps = config.Sizes{"": {1000, 4000000}}, 6
	cfg.Out = filepath.Join(t.TempDir(), "slurm")
	cc, err := ParseConfig("test", []byte("partition: debug\ntime: \"10:00\"\ntasks: 4\ncpus_per_task: 1\n"))
	require.NoError(t, err)
	ctx := context.Background()
	t0 := time.Now()

	sub1, err := Submit(ctx, cfg, cc, bin)
	require.NoError(t, err, log.String())
	require.Equal(t, 4, sub1.Tasks)
	c := Campaign{Dir: cfg.Out}
	plan, err := work.ReadItems(c.PlanFile())
	require.NoError(t, err)
	require.Equal(t, sub1.Items, len(plan))

	// Cancel task 1 once it has finished an item and while it still runs.
	victim := sub1.JobID + "_1"
	doneFile := filepath.Join(c.ShardDir(victim), work.DoneFile)
	// squeue may not list a pending array task by its own ID, so an empty
	// answer means "ended" only once the task has been seen.
	deadline := time.Now().Add(5 * time.Minute)
	seen := false
	for {
		require.True(t, time.Now().Before(deadline), "task %s never ran", victim)
		b, _ := os.ReadFile(doneFile)
		out, _ := exec.Command("squeue", "-h", "-j", victim, "-o", "%t").Output()
		state := strings.TrimSpace(string(out))
		if bytes.Count(b, []byte("\n")) >= 1 && state == "R" {
			break
		}
		require.False(t, seen && state == "", "task %s ended before it could be cancelled", victim)
		seen = seen || state == "R"
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, exec.Command("scancel", victim).Run())
	drain(t, sub1.JobID)

	st, err := c.SlurmStatus(ctx)
	require.NoError(t, err)
	failed := st.Failed()
	require.Len(t, failed, 1, "%+v", st)
	assert.Equal(t, "CANCELLED", failed[0].State)
	assert.Equal(t, 1, failed[0].Task)
	slurmLog, err := os.ReadFile(failed[0].Log)
	require.NoError(t, err)
	assert.Contains(t, string(slurmLog), "CANCELLED")
	assert.Equal(t, 3, st.Counts()["COMPLETED"])

	log.Reset()
	sum, err := Collect(ctx, cfg.Out, &log)
	require.NoError(t, err, log.String())
	require.NotEmpty(t, sum.Missing, "the cancelled task left items")
	assert.Less(t, len(sum.Missing), len(Chunks(plan, 4)[1]), "the cancelled task had finished an item")
	assert.Contains(t, log.String(), "task "+victim+" CANCELLED")
	assert.Contains(t, log.String(), "log "+failed[0].Log)

	// Re-submission: only the missing items, then the folder is complete.
	log.Reset()
	sub2, err := Submit(ctx, cfg, cc, bin)
	require.NoError(t, err, log.String())
	assert.Equal(t, len(sum.Missing), sub2.Items)
	drain(t, sub2.JobID)
	log.Reset()
	sum2, err := Collect(ctx, cfg.Out, &log)
	require.NoError(t, err, log.String())
	assert.Empty(t, sum2.Missing)
	recs := checkCollected(t, cfg.Out, plan)
	jobs := map[string]int{}
	for _, r := range recs {
		jobs[r.SlurmJobID]++
		assert.NotEmpty(t, r.SlurmTaskID)
		assert.Equal(t, r.SlurmJobID+"_"+r.SlurmTaskID, r.Shard)
	}
	assert.Equal(t, map[string]int{sub1.JobID: len(plan) - len(sum.Missing), sub2.JobID: len(sum.Missing)}, jobs)
	assert.Equal(t, []string{"sacct", "squeue"}, sum2.Slurm.Source) // slurm-up.sh runs slurmdbd

	// Nothing missing: nothing is submitted.
	log.Reset()
	sub3, err := Submit(ctx, cfg, cc, bin)
	require.NoError(t, err)
	assert.Empty(t, sub3.JobID)
	assert.Contains(t, log.String(), "nothing to submit")
	t.Logf("Slurm: %d items, cancel, re-submit of %d, collect: %s", len(plan), len(sum.Missing), time.Since(t0).Round(time.Millisecond))
}

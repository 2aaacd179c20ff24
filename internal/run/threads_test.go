package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The knob wins, then Slurm's allocation (within the affinity mask), then
// an exported OMP_NUM_THREADS, then the affinity mask.
func TestHostThreadsChoice(t *testing.T) {
	affinity := func() int { return 6 }
	for _, c := range []struct {
		knob int
		bind string
		env  map[string]string
		want Threads
	}{
		{4, "", map[string]string{"OMP_NUM_THREADS": "3", "SLURM_CPUS_PER_TASK": "2"}, Threads{4, "close", "cores", "PM_THREADS"}},
		{0, "spread", map[string]string{"OMP_NUM_THREADS": "16", "SLURM_CPUS_PER_TASK": "2"}, Threads{2, "spread", "cores", "SLURM_CPUS_PER_TASK"}},
		{0, "", map[string]string{"SLURM_CPUS_PER_TASK": "8"}, Threads{6, "close", "cores", "SLURM_CPUS_PER_TASK"}},
		{0, "", map[string]string{"OMP_NUM_THREADS": "3,2"}, Threads{3, "close", "cores", "OMP_NUM_THREADS"}},
		{0, "", map[string]string{"OMP_NUM_THREADS": "", "SLURM_CPUS_PER_TASK": "x"}, Threads{6, "close", "cores", "affinity"}},
		{0, "false", nil, Threads{6, "false", "", "affinity"}},
	} {
		got := HostThreads(c.knob, c.bind, func(k string) string { return c.env[k] }, affinity)
		assert.Equal(t, c.want, got, "knob %d bind %q env %v", c.knob, c.bind, c.env)
	}
	assert.Equal(t, Threads{1, "close", "cores", "affinity"}, HostThreads(0, "", func(string) string { return "" }, func() int { return 0 }))
	assert.NoError(t, CheckBind(""))
	assert.EqualError(t, CheckBind("cores"), `PM_BIND="cores": want one of close, spread, primary, true, false`)
}

// Host programs get the threads and binding in their environment; GPU
// programs keep the inherited one.
func TestHostThreadsEnv(t *testing.T) {
	t.Setenv("OMP_NUM_THREADS", "7")
	dir := t.TempDir()
	bin := filepath.Join(dir, "tc", "env")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '{\"kind\":\"kernel\",\"size\":1,\"verified\":true,\"error\":\"'\"$OMP_NUM_THREADS $OMP_PROC_BIND $OMP_PLACES\"'\"}'\n"), 0o755))
	var jobs []Job
	for _, target := range []string{"host", "sm_90"} {
		jobs = append(jobs, Job{Entry: build.Entry{ID: "k.env." + target, Kernel: "k", Variant: "env", Toolchain: "tc",
			Target: target, Binary: filepath.Join("tc", "env")}, Sizes: []int64{1}})
	}
	w, err := results.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	opt := Options{BuildDir: dir, Reps: 1, Timeout: 5 * time.Second, Threads: Threads{N: 2, Bind: "close", Places: "cores"}}
	require.NoError(t, Cells(context.Background(), jobs, opt, w))
	require.NoError(t, w.Close())
	recs, err := results.ReadJSONL(w.Dir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "2 close cores", recs[0].Error)
	assert.Equal(t, "7  ", recs[1].Error)
}

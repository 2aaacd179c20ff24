package run

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

const good = `{"kind":"kernel","size":1,"median_s":1e-3,"verified":true,"error":""}`

// Fake programs stand for the failure modes of real ones.
var programs = map[string]string{
	"ok":         "echo '" + good + "'",
	"crash":      "kill -SEGV $$",
	"half":       "echo '" + good + "'; echo 'boom' >&2; kill -ABRT $$",
	"hang":       "exec sleep 30",
	"hangchild":  `sleep 30 & echo $! > "$0.child"; wait`, // a child holding the output open
	"garbage":    "echo 'hello'",
	"silent":     "true",
	"failexit":   "echo 'portmatrix harness: bad flag' >&2; exit 2",
	"unverified": `echo '{"kind":"kernel","size":1,"verified":false,"error":"verification failed: error above tolerance"}'`,
}

func TestFailuresBecomeRecords(t *testing.T) {
	dir := t.TempDir()
	var jobs []Job
	for _, name := range []string{"ok", "crash", "half", "hang", "hangchild", "garbage", "silent", "failexit", "unverified"} {
		bin := filepath.Join(dir, "tc", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
		require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"+programs[name]+"\n"), 0o755))
		jobs = append(jobs, Job{Entry: build.Entry{ID: "k." + name + ".tc", Kernel: "k", Variant: name, Strategy: name,
			Toolchain: "tc", Target: "host", Binary: filepath.Join("tc", name)}, Sizes: []int64{1}})
	}
	w, err := results.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	err = Cells(context.Background(), jobs, Options{BuildDir: dir, Reps: 1, Warmup: 0, Timeout: 2 * time.Second,
		Stamp: Stamp{RunID: "run-1", ToolchainVersions: map[string]string{"tc": "19.1"}}}, w)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	recs, err := results.ReadJSONL(w.Dir)
	require.NoError(t, err)
	got := map[string][]string{}
	for _, r := range recs {
		got[r.Variant] = append(got[r.Variant], r.Error)
	}
	assert.Equal(t, map[string][]string{
		"ok":         {""},
		"crash":      {"crashed: signal: segmentation fault"},
		"half":       {"", "crashed: signal: aborted: boom"},
		"hang":       {"timed out after 2s"},
		"hangchild":  {"timed out after 2s"},
		"garbage":    {`output is not a harness record: "hello"`},
		"silent":     {"the program printed no measurement"},
		"failexit":   {"exit status 2: portmatrix harness: bad flag"},
		"unverified": {"verification failed: error above tolerance"},
	}, got)
	// The time-out stopped the program's whole group: its child is gone.
	pid, err := os.ReadFile(filepath.Join(dir, "tc", "hangchild.child"))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat")
		return err != nil || strings.Contains(string(stat), ") Z ")
	}, 5*time.Second, 50*time.Millisecond, "the program's child outlived its time-out")
	for _, r := range recs {
		assert.Equal(t, "k."+r.Variant+".tc", r.Cell)
		assert.Equal(t, "run-1", r.RunID)
		assert.Equal(t, "19.1", r.ToolchainVersion)
	}
}

// The runner passes the STREAM size (first program of a toolchain only), the
// flush mode, the reps' time bound and the run's reference folder to the harness.
func TestHarnessFlags(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tc", "args")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '{\"kind\":\"kernel\",\"size\":1,\"verified\":true,\"error\":\"'\"$*\"'\"}'\n"), 0o755))
	var jobs []Job
	for _, k := range []string{"a", "b"} {
		jobs = append(jobs, Job{Entry: build.Entry{ID: k + ".args.tc", Kernel: k, Variant: "args", Toolchain: "tc",
			Target: "host", Binary: filepath.Join("tc", "args")}, Sizes: []int64{7}})
	}
	w, err := results.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	opt := Options{BuildDir: dir, Reps: 3, Warmup: 1, Timeout: 5 * time.Second, FlushL2: "off", RepSeconds: 2.5,
		CopyBytes: func(string) int64 { return 1 << 20 }}
	require.NoError(t, Cells(context.Background(), jobs, opt, w))
	require.NoError(t, w.Close())
	recs, err := results.ReadJSONL(w.Dir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	// Both programs get the run's one reference folder, gone when the run ends.
	refs := regexp.MustCompile(` --ref-cache (\S+)$`)
	m := refs.FindStringSubmatch(recs[0].Error)
	require.NotNil(t, m, recs[0].Error)
	assert.NoDirExists(t, m[1])
	assert.Equal(t, "--size 7 --reps 3 --warmup 1 --cell a.args.tc --toolchain tc --stream-bytes 1048576 --flush-l2 off --rep-seconds 2.5 --ref-cache "+m[1], recs[0].Error)
	assert.Equal(t, "--size 7 --reps 3 --warmup 1 --cell b.args.tc --toolchain tc --flush-l2 off --rep-seconds 2.5 --ref-cache "+m[1], recs[1].Error)
	// The logged command leaves the temporary folder out: no machine path
	// in a results folder.
	log, err := os.ReadFile(filepath.Join(w.Dir, "logs", "run", "a.args.tc.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "$ "+bin+" --size 7 --reps 3 --warmup 1 --cell a.args.tc --toolchain tc --stream-bytes 1048576 --flush-l2 off --rep-seconds 2.5\n")

	opt.FlushL2 = "sometimes"
	assert.EqualError(t, Cells(context.Background(), jobs, opt, w), `PM_FLUSH_L2="sometimes": want one of auto, on, off`)
}

package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
)

// folderBytes is every file of the results.jsonl, build.csv and run.json
// kind of a folder, and its logs, by path.
func folderBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(b)
		return err
	}))
	return out
}

// As a user meets it: `portmatrix all` of axpby/serial, finished; the same
// folder resumed with dot/omp-host, size 2000 and 5 reps is refused before
// anything is built, the folder byte for byte as it was; asked for as a
// batch (-resume=batch), the new selection is measured beside the first,
// every byte of results.jsonl and build.csv kept.
func TestResumeWithAnotherSelectionEndToEnd(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	bin := cliBinary(t)
	root := t.TempDir()
	copyInputs(t, root)
	out := filepath.Join(root, "results", "axpby")
	args := func(kernels, variants, sizes, reps string, extra ...string) []string {
		a := []string{"-root", root, "-kernels", kernels, "-variants", variants, "-toolchains", "gcc-host",
			"-sizes", sizes, "-reps", reps, "-rep-seconds", "0.5", "-gpu=false", "-out", out}
		return append(append(a, extra...), "all")
	}
	first, err := exec.Command(bin, args("axpby", "serial", "100000", "2")...).CombinedOutput()
	require.NoError(t, err, string(first))
	before := folderBytes(t, out)

	refused, err := exec.Command(bin, args("dot", "omp-host", "2000", "5", "-resume")...).CombinedOutput()
	require.Error(t, err, string(refused))
	for _, want := range []string{"PM_KERNELS: recorded axpby, asked dot", "PM_VARIANTS: recorded serial, asked omp-host",
		"PM_SIZES: recorded 100000, asked 2000", "PM_REPS: recorded 2, asked 5", "resume it as it was: PM_RESUME=1 PM_OUT=" + out} {
		assert.Contains(t, string(refused), want)
	}
	assert.NotContains(t, string(refused), "build [", "refused before anything is built")
	assert.Equal(t, before, folderBytes(t, out))

	batch, err := exec.Command(bin, args("dot", "omp-host", "2000", "5", "-resume=batch")...).CombinedOutput()
	require.NoError(t, err, string(batch))
	after := folderBytes(t, out)
	for _, f := range []string{"/" + results.JSONLFile, "/" + results.BuildFile} {
		assert.True(t, strings.HasPrefix(after[f], before[f]), "%s keeps every byte it had", f)
		assert.Greater(t, len(after[f]), len(before[f]), "%s grew", f)
	}
	r, err := results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Reps)
	require.Len(t, r.Batches, 2)
	assert.Equal(t, 5, r.Batches[1].Selection.Reps)
	assert.Equal(t, results.StateFinished, r.Status())
}

// SIGINT to the process group of `go run mage.go` (Ctrl-C at a terminal)
// stops the run as SIGTERM to `go run` alone does: the folder is left
// interrupted, and resuming it with its settings finishes it. (SIGINT to the
// go command alone is ignored by the go command, which expects the terminal
// to send it to the whole group, and never reaches the pipeline below it:
// docs/results-format.md.)
func TestSIGINTToGoRunGroupLeavesAResumableFolder(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	out := filepath.Join(root, "results", "mage")
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	env := append(os.Environ(), "PM_ROOT="+root, "PM_KERNELS=axpby", "PM_VARIANTS=serial,omp-host",
		"PM_TOOLCHAINS=gcc-host", "PM_SIZES=300000,400000", "PM_REPS=40", "PM_REP_SECONDS=0.5", "PM_TRIALS=3", "PM_GPU=0", "PM_FLUSH_L2=off", "PM_OUT="+out,
		"PM_BUILD_DIR="+filepath.Join(root, "build"))
	cmd := exec.Command("go", "run", "mage.go", "all")
	cmd.Dir, cmd.Env = repo, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	var log bytes.Buffer
	logDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		close(logDone)
	}()
	done := make(chan error, 1)
	go func() { <-logDone; done <- cmd.Wait() }()
	waitRecords(t, out, 1, done)
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)) // the whole group, as a terminal's Ctrl-C
	select {
	case err := <-done:
		require.Error(t, err, "non-zero exit")
	case <-time.After(2 * time.Minute):
		t.Fatal("go run did not end")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if r, err := results.ReadRun(out); err == nil && r.State == results.StateInterrupted {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r, err := results.ReadRun(out)
	require.NoError(t, err)
	require.Equal(t, results.StateInterrupted, r.State, log.String())
	assert.Contains(t, log.String(), "resume with PM_RESUME=1 PM_OUT="+out)

	resume := exec.Command("go", "run", "mage.go", "all")
	resume.Dir, resume.Env = repo, append(env, "PM_RESUME=1")
	msg, err := resume.CombinedOutput()
	require.NoError(t, err, string(msg))
	r, err = results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, results.StateFinished, r.Status())
	assert.Len(t, kernelUnits(t, out), 12)
}

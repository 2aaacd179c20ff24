package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// cliBinary builds cmd/portmatrix once into dir.
func cliBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "portmatrix")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/portmatrix")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// resumeArgs is a small selection: 2 cells x 2 sizes x 3 trials = 12
// measurements, each a process of a few tenths of a second (warm caches:
// the L2 flush before each repetition would cost more than the kernel).
// -rep-seconds 0.5 bounds STREAM's runs (1.5 s, not the default's 6 s),
// never the 40 reps of a call of about a millisecond.
func resumeArgs(root, out string, extra ...string) []string {
	args := []string{"-root", root, "-kernels", "axpby", "-variants", "serial,omp-host", "-toolchains", "gcc-host",
		"-sizes", "300000,400000", "-reps", "40", "-rep-seconds", "0.5", "-trials", "3", "-gpu=false", "-flush-l2", "off", "-out", out}
	return append(append(args, extra...), "all")
}

func kernelUnits(t *testing.T, dir string) map[results.Unit]int {
	t.Helper()
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	seen := map[results.Unit]int{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			seen[r.Unit()]++
			assert.True(t, r.Verified, "%s: %s", r.Unit(), r.Error)
		}
	}
	return seen
}

// waitNewRecord waits until dir/results.jsonl holds at least n kernel lines
// while the run goes on and returns when it saw them; a run that ends first
// has written them all, and its end is the time.
func waitNewRecord(t *testing.T, dir string, n int, done chan error) time.Time {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if completeKernelLines(filepath.Join(dir, results.JSONLFile)) >= n {
			return time.Now().UTC()
		}
		select {
		case err := <-done:
			done <- err // the caller reads the exit status
			return time.Now().UTC()
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no new measurement in time")
	return time.Time{}
}

// completeKernelLines counts the kernel lines of a results.jsonl that parse:
// a torn last line does not count.
func completeKernelLines(path string) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r results.Record
		if json.Unmarshal(line, &r) == nil && r.Kind == results.KindKernel {
			n++
		}
	}
	return n
}

// waitRecords waits until dir/results.jsonl holds at least n complete kernel lines.
func waitRecords(t *testing.T, dir string, n int, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the run ended before it was stopped: %v", err)
		default:
		}
		if completeKernelLines(filepath.Join(dir, results.JSONLFile)) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no measurements in time")
}

// A `portmatrix all` killed with SIGKILL part way leaves a valid folder that
// reads as interrupted; it is refused without -resume; resumed, it finishes
// with every (cell, size, trial) measured exactly once.
func TestKilledRunResumes(t *testing.T) {
	testenv.Long(t) // builds the CLI, two cells, and measures twelve times
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	bin := cliBinary(t)
	root := t.TempDir()
	copyInputs(t, root)
	out := filepath.Join(root, "results", "killed")
	var log1 bytes.Buffer
	cmd := exec.Command(bin, resumeArgs(root, out)...)
	cmd.Stdout, cmd.Stderr = &log1, &log1
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitRecords(t, out, 3, done)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-done

	run, err := results.ReadRun(out)
	require.NoError(t, err, log1.String())
	assert.Equal(t, results.StateRunning, run.State)
	assert.Equal(t, results.StateInterrupted, run.Status(), "a running folder whose process is gone")
	before := kernelUnits(t, out)
	require.NotEmpty(t, before)
	require.Less(t, len(before), 12, "killed before the end")

	// A torn last line, as a kill in the middle of a write leaves it.
	f, err := os.OpenFile(filepath.Join(out, results.JSONLFile), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"kernel","cell":"axpby.serial.gcc-host","si`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	refused := exec.Command(bin, resumeArgs(root, out)...)
	msg, err := refused.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(msg), "PM_OUT: "+out+" holds a interrupted run; results folders are never overwritten")

	// The first part ran on another machine's GPU: the folder keeps naming it.
	first, err := results.ReadRun(out)
	require.NoError(t, err)
	elsewhere := results.GPU{Name: "NVIDIA H200", Driver: "580.159.04", UUID: "GPU-elsewhere", Vendor: "nvidia"}
	first.GPUs = append(first.GPUs, elsewhere)
	require.NoError(t, results.WriteRun(out, first))

	var log2 bytes.Buffer
	resume := exec.Command(bin, resumeArgs(root, out, "-resume")...)
	resume.Stdout, resume.Stderr = &log2, &log2
	resumedAt := time.Now().UTC().Truncate(time.Second)
	require.NoError(t, resume.Start())
	resumeDone := make(chan error, 1)
	go func() { resumeDone <- resume.Wait() }()
	// When the resumed run's first new measurement is seen: the stamp must
	// not be later (a stamp taken at the end would be, unless the whole
	// resumption fits in the stamp's one-second resolution).
	firstNew := waitNewRecord(t, out, len(before)+1, resumeDone)
	require.NoError(t, <-resumeDone, log2.String())
	assert.Contains(t, log2.String(), "torn last line")
	assert.Contains(t, log2.String(), fmt.Sprintf("run: %d of 12 measurements finished before", len(before)))

	after := kernelUnits(t, out)
	assert.Len(t, after, 12)
	for u, n := range after {
		assert.Equal(t, 1, n, "%s measured %d times", u, n)
	}
	run, err = results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, results.StateFinished, run.Status())
	assert.Equal(t, 3, run.Trials)
	require.Len(t, run.Resumed, 1)
	at, err := time.Parse(time.RFC3339, run.Resumed[0])
	require.NoError(t, err)
	assert.False(t, at.Before(resumedAt), "resumed at %s, started %s", at, resumedAt)
	assert.False(t, at.After(firstNew.Truncate(time.Second)),
		"stamped when the resumption began (%s), not after its first measurement (%s)", at, firstNew)
	assert.Contains(t, run.GPUs, elsewhere)
	assert.Equal(t, 12, run.Cells.VerifiedMeasurements)
	csv, err := os.ReadFile(filepath.Join(out, results.CSVFile))
	require.NoError(t, err)
	assert.Equal(t, 13, strings.Count(string(csv), "\n"), "header and 12 rows")
	_, err = results.Load(out)
	require.NoError(t, err)
	for _, p := range []string{results.ReportFile, results.ClaimsFile} {
		assert.FileExists(t, filepath.Join(out, p))
	}
	// Trials are interleaved: trial 1 of every (cell, size) before any trial 2.
	recs, _ := results.ReadJSONL(out)
	last1, first2 := -1, len(recs)
	for i, r := range recs {
		if r.Kind != results.KindKernel {
			continue
		}
		if r.Trial == 1 {
			last1 = i
		} else if i < first2 {
			first2 = i
		}
	}
	assert.Less(t, last1, first2, "trial 1 of every cell before trial 2")
}

// SIGINT and SIGTERM to the CLI stop the program being measured, record
// nothing for it, mark the folder interrupted and exit non-zero.
func TestSignalLeavesInterruptedFolder(t *testing.T) {
	testenv.Long(t) // builds the CLI and two cells
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	bin := cliBinary(t)
	root := t.TempDir()
	copyInputs(t, root)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		out := filepath.Join(root, "results", sig.String())
		var log bytes.Buffer
		cmd := exec.Command(bin, resumeArgs(root, out)...)
		cmd.Stdout, cmd.Stderr = &log, &log
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitRecords(t, out, 1, done)
		require.NoError(t, cmd.Process.Signal(sig))
		err := <-done
		require.Error(t, err, "%s: non-zero exit", sig)
		run, rerr := results.ReadRun(out)
		require.NoError(t, rerr)
		assert.Equal(t, results.StateInterrupted, run.State, "%s\n%s", sig, log.String())
		assert.Contains(t, log.String(), "resume with PM_RESUME=1")
		for u := range kernelUnits(t, out) {
			_ = u // every record verified (kernelUnits): no error record for the stopped program
		}
		assert.FileExists(t, filepath.Join(out, results.CSVFile))
	}
}

// SIGTERM to `go run mage.go` alone (go dies without passing it on) stops
// the pipeline below it: mage.go gets SIGTERM as its parent dies and passes
// it to the compiled magefile, whose run marks the folder interrupted.
func TestSIGTERMToGoRunStopsThePipeline(t *testing.T) {
	testenv.Long(t) // compiles the magefile
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	out := filepath.Join(root, "results", "mage")
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := exec.Command("go", "run", "mage.go", "all")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PM_ROOT="+root, "PM_KERNELS=axpby", "PM_VARIANTS=serial,omp-host",
		"PM_TOOLCHAINS=gcc-host", "PM_SIZES=300000,400000", "PM_REPS=40", "PM_REP_SECONDS=0.5", "PM_TRIALS=3", "PM_GPU=0", "PM_FLUSH_L2=off", "PM_OUT="+out,
		"PM_BUILD_DIR="+filepath.Join(root, "build"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // no terminal group: only go gets the signal
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
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM)) // the go command only
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("go run did not end")
	}
	// The pipeline below ends on its own time; wait for run.json to say so.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if r, err := results.ReadRun(out); err == nil && r.State == results.StateInterrupted {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	r, _ := results.ReadRun(out)
	t.Fatalf("run.json state %q, want interrupted\n%s", r.State, log.String())
}

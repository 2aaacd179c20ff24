// Package run executes built programs, one process per (cell, size, trial),
// each under a timeout, and appends every JSON line they print to the
// results as soon as it arrives. A crash, a hang or garbage output becomes an
// error record of that cell, size and trial; the other measurements stay.
// Trials run interleaved (trial 1 of every cell, then trial 2, ...).
package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Options configure a run.
type Options struct {
	BuildDir string
	Reps     int
	Warmup   int
	// RepSeconds bounds a measurement's timed calls (--rep-seconds): the
	// harness keeps at least 3 reps; 0 means Reps always.
	RepSeconds float64
	Timeout    time.Duration // per process
	// CopyBytes sizes the STREAM measurement (copy, triad, dot and the
	// runtime's copy: --stream-bytes, two arrays' worth) of the first program
	// of each toolchain; 0 skips it.
	CopyBytes func(target string) int64
	// FlushL2 is the harness's --flush-l2: "auto" (or ""), "on" or "off"
	// (the PM_FLUSH_L2 knob). See FlushModes.
	FlushL2 string
	// HostFlushL2, when set, is the --flush-l2 of host programs instead of
	// FlushL2 (the quick sample runs them with warm caches: "off").
	HostFlushL2 string
	// DeviceName names the GPU for harnesses that cannot ask for it (OpenMP).
	DeviceName string
	// Threads sets the OpenMP threads and binding of host programs
	// (HostThreads); zero leaves the environment as inherited.
	Threads Threads
	// Model is the machine model of the GPU (Model): the cells' launch
	// defaults come from it (harness --defaults); nil: none.
	Model *machine.Model
	Log   io.Writer
	// Stamp is the provenance written into every record.
	Stamp Stamp
	// Trials is how many times each (cell, size) is measured (default 1).
	Trials int
	// Done holds the measurements a resumed folder has already.
	Done map[results.Unit]bool
	// HaveCopy names the toolchains whose copy bandwidth the folder has.
	HaveCopy map[string]bool
	// NoSections leaves out a composite kernel's last run, which times the
	// kernels it calls (--sections off): a tuning compares whole calls.
	NoSections bool
	// RefCache is the folder the programs share slow float64 references
	// and generated matrices in (--ref-cache), keyed by what they were
	// computed from; Run makes one for its run where it is empty.
	RefCache string

	trial int  // of the task running
	tuned bool // the task running measures the tuned best
}

// Stamp is what the run knows of where a record comes from.
type Stamp struct {
	RunID, BatchID, Commit string
	Dirty                  bool
	GPUUUID                string            // GPU cells only
	ToolchainVersions      map[string]string // by toolchain ID
}

// FlushModes are the values of Options.FlushL2: auto flushes the L2 between
// reps on a GPU always and on the host where the working set fits in the
// cache.
var FlushModes = []string{"auto", "on", "off"}

// CheckFlush validates a FlushL2 value ("" is auto).
func CheckFlush(s string) error {
	if s == "" || slices.Contains(FlushModes, s) {
		return nil
	}
	return fmt.Errorf("PM_FLUSH_L2=%q: want one of %s", s, strings.Join(FlushModes, ", "))
}

// Job is one cell to run at some sizes.
type Job struct {
	Entry build.Entry
	Sizes []int64
	// Tuned is the cell's tuned best per size (the harness's --config flag;
	// run -tuned): each such size is measured again at it, beside the
	// as-published measurement.
	Tuned map[int64]string
}

// Task is one measurement: one process running a cell at one size, in one
// trial (numbered from 1); Config, when set, is the tuned best it runs at.
type Task struct {
	Entry  build.Entry
	Size   int64
	Trial  int
	Config string
}

// Unit is the task's (cell, size, trial, tuned).
func (t Task) Unit() results.Unit {
	return results.Unit{Cell: t.Entry.ID, Size: t.Size, Trial: t.Trial, Tuned: t.Config != ""}
}

// Tasks lists the measurements of jobs in the order they run: trial by
// trial, each trial over every (cell, size), so that a drift of the machine
// hits every cell alike.
func Tasks(jobs []Job, trials int) []Task {
	var out []Task
	for t := 1; t <= max(trials, 1); t++ {
		for _, j := range jobs {
			for _, s := range j.Sizes {
				out = append(out, Task{Entry: j.Entry, Size: s, Trial: t})
				if c := j.Tuned[s]; c != "" {
					out = append(out, Task{Entry: j.Entry, Size: s, Trial: t, Config: c})
				}
			}
		}
	}
	return out
}

// Cells runs every trial of jobs (opt.Trials) in order, one process at a
// time (timings must not share the device), skipping what opt.Done holds.
func Cells(ctx context.Context, jobs []Job, opt Options, w *results.Writer) error {
	if err := CheckFlush(opt.FlushL2); err != nil {
		return err
	}
	return Run(ctx, Tasks(jobs, opt.Trials), opt, w)
}

// Run runs tasks in order, skipping those opt.Done holds. It stops when ctx
// is cancelled; the task it was running then is not recorded (it runs again
// on resume).
func Run(ctx context.Context, tasks []Task, opt Options, w *results.Writer) error {
	var todo []Task
	for _, t := range tasks {
		if !opt.Done[t.Unit()] {
			todo = append(todo, t)
		}
	}
	if skipped := len(tasks) - len(todo); skipped > 0 && opt.Log != nil {
		fmt.Fprintf(opt.Log, "run: %d of %d measurements finished before; %d to run\n", skipped, len(tasks), len(todo))
	}
	// The programs share float64 references that took long (harness --ref-cache),
	// keyed by what they were computed from; they last as long as the run.
	if opt.RefCache == "" {
		refs, err := NewRefCache()
		if err != nil {
			return err
		}
		defer os.RemoveAll(refs)
		opt.RefCache = refs
	}
	copied := map[string]bool{}
	for tc := range opt.HaveCopy {
		copied[tc] = true
	}
	logs := map[string]*os.File{}
	defer func() {
		for _, f := range logs {
			f.Close()
		}
	}()
	start := time.Now()
	for i, t := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logf := logs[t.Entry.ID]
		if logf == nil {
			// Appended: trials and resumed runs add to a cell's log.
			var err error
			logf, err = os.OpenFile(filepath.Join(w.Dir, filepath.FromSlash(results.RunLog(t.Entry.ID))), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return err
			}
			logs[t.Entry.ID] = logf
		}
		var copyBytes int64
		if !copied[t.Entry.Toolchain] && opt.CopyBytes != nil {
			copyBytes = opt.CopyBytes(t.Entry.Target)
			copied[t.Entry.Toolchain] = true
		}
		n, err := one(ctx, t, copyBytes, opt, w, logf)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		status := fmt.Sprintf("%d records", n)
		if err != nil {
			status = err.Error()
		}
		if opt.Log != nil {
			tuned := ""
			if t.Config != "" {
				tuned = " tuned " + t.Config
			}
			fmt.Fprintf(opt.Log, "run [%d/%d %s] %s size %d trial %d%s: %s\n", i+1, len(todo),
				time.Since(start).Round(100*time.Millisecond), t.Entry.ID, t.Size, t.Trial, tuned, status)
		}
	}
	return nil
}

// NewRefCache makes a temporary folder for programs to share references
// in (Options.RefCache); the caller removes it when its programs are done.
func NewRefCache() (string, error) { return os.MkdirTemp("", "portmatrix-refs-") }

// withRefCache adds --ref-cache to a program's arguments where opt has a
// reference folder; the log shows the arguments without it (the same
// program computes its reference without one).
func withRefCache(args []string, opt Options) []string {
	if opt.RefCache == "" {
		return args
	}
	return append(slices.Clip(args), "--ref-cache", opt.RefCache)
}

// measureArgs are the harness flags that name what a program measures.
func measureArgs(e build.Entry, size int64, opt Options) []string {
	return []string{"--size", strconv.FormatInt(size, 10), "--reps", strconv.Itoa(opt.Reps),
		"--warmup", strconv.Itoa(opt.Warmup), "--cell", e.ID, "--toolchain", e.Toolchain}
}

// protocolArgs are the harness flags of the measuring protocol's knobs.
func protocolArgs(opt Options) []string {
	var args []string
	if opt.FlushL2 != "" {
		args = append(args, "--flush-l2", opt.FlushL2)
	}
	if opt.RepSeconds > 0 {
		args = append(args, "--rep-seconds", strconv.FormatFloat(opt.RepSeconds, 'g', -1, 64))
	}
	if opt.NoSections {
		args = append(args, "--sections", "off")
	}
	return args
}

// one runs a program at one size and records what it printed; a failure is
// recorded as an error record, and also returned for the progress line.
func one(ctx context.Context, t Task, copyBytes int64, opt Options, w *results.Writer, logf io.Writer) (int, error) {
	e, size := t.Entry, t.Size
	opt.trial, opt.tuned = t.Trial, t.Config != ""
	if e.Target == "host" && opt.HostFlushL2 != "" {
		opt.FlushL2 = opt.HostFlushL2
	}
	bin := filepath.Join(opt.BuildDir, e.Binary)
	args := measureArgs(e, size, opt)
	if copyBytes > 0 {
		args = append(args, "--stream-bytes", strconv.FormatInt(copyBytes, 10))
	}
	args = append(args, protocolArgs(opt)...)
	if d, _ := ModelDefaults(opt.Model, e); len(d) > 0 {
		args = append(args, "--defaults", defaultsArg(d))
	}
	if t.Config != "" {
		args = append(args, "--config", t.Config)
	}
	shown := args
	args = withRefCache(args, opt)
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := program(cctx, bin, args...) // dies with the runner, even on SIGKILL
	cmd.Env = programEnv(e, opt)
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, logf)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	// The log shows the command without the run's temporary reference
	// cache: the same program computes its reference without it.
	fmt.Fprintf(logf, "$ %s\n", fsutil.Portable(bin+" "+strings.Join(shown, " ")))
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, record(w, e, size, opt, "cannot start: "+err.Error())
	}
	n, kernels := 0, 0
	var parseErr error
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(logf, "%s\n", line)
		var r results.Record
		if err := json.Unmarshal(line, &r); err != nil || r.Kind == "" {
			if parseErr == nil {
				parseErr = fmt.Errorf("output is not a harness record: %.80q", line)
			}
			continue
		}
		annotate(&r, e, opt)
		r.ElapsedS = math.Round(time.Since(started).Seconds()*1000) / 1000
		if err := w.Add(r); err != nil {
			return n, err
		}
		n++
		if r.Kind == results.KindKernel {
			kernels++
		}
	}
	err = cmd.Wait()
	if ctx.Err() == nil && killedFromOutside(err) {
		// The same signal may reach the runner a moment later (scancel):
		// wait for it before calling the program's death a crash.
		select {
		case <-ctx.Done():
		case <-time.After(outsideSignalGrace):
		}
	}
	switch {
	case ctx.Err() != nil:
		return n, ctx.Err() // stopped by the user: not a result of the cell
	case cctx.Err() == context.DeadlineExceeded:
		return n, record(w, e, size, opt, fmt.Sprintf("timed out after %s", opt.Timeout))
	case err != nil:
		return n, record(w, e, size, opt, fmt.Sprintf("%s%s", exitText(err), lastLine(stderr.String())))
	case parseErr != nil:
		return n, record(w, e, size, opt, parseErr.Error())
	case kernels == 0:
		return n, record(w, e, size, opt, "the program printed no measurement")
	}
	return n, nil
}

// outsideSignalGrace is how long a runner whose program died of SIGTERM,
// SIGINT or SIGHUP waits for its own interruption before recording a crash.
const outsideSignalGrace = 2 * time.Second

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ProcessState != nil && !ee.ProcessState.Exited() {
			return "crashed: " + ee.ProcessState.String()
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return ": " + lines[len(lines)-1]
}

// annotate adds the cell's identity and the run's provenance to a record.
func annotate(r *results.Record, e build.Entry, opt Options) {
	r.Cell, r.Kernel, r.Variant, r.Strategy = e.ID, e.Kernel, e.Variant, e.Strategy
	r.Toolchain, r.Target = e.Toolchain, e.Target
	r.DeviceHash = e.DeviceHash
	r.Trial = max(opt.trial, 1)
	r.TunedBest = opt.tuned
	st := opt.Stamp
	r.RunID, r.BatchID, r.Commit, r.Dirty = st.RunID, st.BatchID, st.Commit, st.Dirty
	r.ToolchainVersion = st.ToolchainVersions[e.Toolchain]
	if e.Target != "host" {
		r.GPUUUID = st.GPUUUID
	}
	if e.Binary != "" {
		// The build stage keeps each binary's cache key beside it.
		if key, err := os.ReadFile(filepath.Join(opt.BuildDir, e.Binary+".key")); err == nil {
			r.BuildKey = strings.TrimSpace(string(key))
		}
	}
}

// record writes an error record for a (cell, size) and returns the error.
func record(w *results.Writer, e build.Entry, size int64, opt Options, msg string) error {
	r := results.Record{Kind: results.KindKernel, Size: size, Error: msg}
	annotate(&r, e, opt)
	if err := w.Add(r); err != nil {
		return err
	}
	return errors.New(msg)
}

// programEnv is a program's environment: the inherited one, the
// toolchain's libraries first, and the GPU's name for a GPU program, the
// threads and binding for a host program. A GPU program's OpenMP target
// regions must offload (OMP_TARGET_OFFLOAD=MANDATORY): a runtime that finds
// no device, such as libgomp without its nvptx plugin, then fails the
// program instead of measuring the host fallback as the GPU.
func programEnv(e build.Entry, opt Options) []string {
	env := append(os.Environ(), "LD_LIBRARY_PATH="+libPath(opt.BuildDir, e.Toolchain))
	if e.Target == "host" {
		return append(env, opt.Threads.Env()...)
	}
	env = append(env, "OMP_TARGET_OFFLOAD=MANDATORY")
	if opt.DeviceName != "" {
		env = append(env, "PM_DEVICE_NAME="+opt.DeviceName)
	}
	return env
}

// libPath puts the toolchain's bundled runtime libraries (build/<tc>/lib)
// before the inherited LD_LIBRARY_PATH.
func libPath(buildDir, tc string) string {
	lib, _ := filepath.Abs(filepath.Join(buildDir, tc, "lib"))
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		return lib + ":" + old
	}
	return lib
}

// Package run executes built programs, one process per (cell, size), each
// under a timeout, and appends every JSON line they print to the results as
// soon as it arrives. A crash, a hang or garbage output becomes an error
// record of that cell and size; the other measurements stay.
package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Options configure a run.
type Options struct {
	BuildDir string
	Reps     int
	Warmup   int
	Timeout  time.Duration // per process
	// CopyBytes sizes the STREAM measurement (copy, triad, dot and the
	// runtime's copy: --stream-bytes, two arrays' worth) of the first program
	// of each toolchain; 0 skips it.
	CopyBytes func(target string) int64
	// FlushL2 is the harness's --flush-l2: "auto" (or ""), "on" or "off"
	// (the PM_FLUSH_L2 knob). See FlushModes.
	FlushL2 string
	// DeviceName names the GPU for harnesses that cannot ask for it (OpenMP).
	DeviceName string
	Log        io.Writer
	// Stamp is the provenance written into every record.
	Stamp Stamp
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
}

// Cells runs jobs in order (one at a time: timings must not share the device).
func Cells(ctx context.Context, jobs []Job, opt Options, w *results.Writer) error {
	if err := CheckFlush(opt.FlushL2); err != nil {
		return err
	}
	total := 0
	for _, j := range jobs {
		total += len(j.Sizes)
	}
	copied := map[string]bool{}
	done := 0
	start := time.Now()
	for _, j := range jobs {
		logPath := filepath.Join(w.Dir, "logs", "run", j.Entry.ID+".log")
		// Appended: a worker runs a cell's sizes one call at a time.
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		for _, size := range j.Sizes {
			if ctx.Err() != nil {
				logf.Close()
				return ctx.Err()
			}
			var copyBytes int64
			if !copied[j.Entry.Toolchain] && opt.CopyBytes != nil {
				copyBytes = opt.CopyBytes(j.Entry.Target)
				copied[j.Entry.Toolchain] = true
			}
			n, err := one(ctx, j.Entry, size, copyBytes, opt, w, logf)
			done++
			status := fmt.Sprintf("%d records", n)
			if err != nil {
				status = err.Error()
			}
			if opt.Log != nil {
				fmt.Fprintf(opt.Log, "run [%d/%d %s] %s size %d: %s\n", done, total,
					time.Since(start).Round(100*time.Millisecond), j.Entry.ID, size, status)
			}
		}
		logf.Close()
	}
	return nil
}

// one runs a program at one size and records what it printed; a failure is
// recorded as an error record, and also returned for the progress line.
func one(ctx context.Context, e build.Entry, size, copyBytes int64, opt Options, w *results.Writer, logf io.Writer) (int, error) {
	bin := filepath.Join(opt.BuildDir, e.Binary)
	args := []string{"--size", strconv.FormatInt(size, 10), "--reps", strconv.Itoa(opt.Reps),
		"--warmup", strconv.Itoa(opt.Warmup), "--cell", e.ID, "--toolchain", e.Toolchain}
	if copyBytes > 0 {
		args = append(args, "--stream-bytes", strconv.FormatInt(copyBytes, 10))
	}
	if opt.FlushL2 != "" {
		args = append(args, "--flush-l2", opt.FlushL2)
	}
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libPath(opt.BuildDir, e.Toolchain))
	if e.Target != "host" && opt.DeviceName != "" {
		cmd.Env = append(cmd.Env, "PM_DEVICE_NAME="+opt.DeviceName)
	}
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, logf)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(logf, "$ %s %s\n", bin, strings.Join(args, " "))
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
		if err := w.Add(r); err != nil {
			return n, err
		}
		n++
		if r.Kind == results.KindKernel {
			kernels++
		}
	}
	err = cmd.Wait()
	switch {
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

// libPath puts the toolchain's bundled runtime libraries (build/<tc>/lib)
// before the inherited LD_LIBRARY_PATH.
func libPath(buildDir, tc string) string {
	lib, _ := filepath.Abs(filepath.Join(buildDir, tc, "lib"))
	if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
		return lib + ":" + old
	}
	return lib
}

package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Configs runs a built program once at size over the configurations of its
// run-time tunables listed in configFile ("": the generated values alone;
// the harness's --configs: one
// process, the data and reference set up once, a kernel record per
// configuration, every run of each verified). It returns the kernel records
// in the order the program printed them; a program that stops early (a
// launch the device refuses) returns what it printed and an error with its
// stderr's last line. The command and output go to logf.
func Configs(ctx context.Context, e build.Entry, size int64, configFile string, opt Options, logf io.Writer) ([]results.Record, error) {
	bin := filepath.Join(opt.BuildDir, e.Binary)
	args := measureArgs(e, size, opt)
	if configFile != "" {
		args = append(args, "--configs", configFile)
	}
	args = append(args, protocolArgs(opt)...)
	// The log names no temporary file: the configurations follow the
	// command, every record names its own, and the same program computes
	// its reference without the shared one.
	shown := slices.Clone(args)
	if i := slices.Index(shown, configFile); configFile != "" && i >= 0 {
		shown[i] = "<configs>"
	}
	args = withRefCache(args, opt)
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := program(cctx, bin, args...)
	cmd.Env = programEnv(e, opt)
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, logf)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "$ %s\n", fsutil.Portable(bin+" "+strings.Join(shown, " ")))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	var recs []results.Record
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		fmt.Fprintf(logf, "%s\n", line)
		var r results.Record
		if json.Unmarshal(line, &r) != nil || r.Kind != results.KindKernel {
			continue
		}
		annotate(&r, e, opt)
		recs = append(recs, r)
	}
	if err := cmd.Wait(); err != nil {
		why := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(why, '\n'); i >= 0 {
			why = why[i+1:]
		}
		if cctx.Err() != nil && ctx.Err() == nil {
			why = fmt.Sprintf("timed out after %s", opt.Timeout)
		}
		return recs, fmt.Errorf("%s: %v: %s", e.ID, err, why)
	}
	return recs, nil
}

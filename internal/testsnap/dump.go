package testsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ExitUnusableInput is the exit status of snapcheck and inputcheck for an
// input file they cannot use (its positioned errors on stderr).
const ExitUnusableInput = 3

// BuildCached is Build, reusing dir/name when it is newer than every harness
// source (harness/snap, harness/pm).
func BuildCached(cxx, root, dir, name string, flags ...string) (string, error) {
	bin := filepath.Join(dir, name)
	if st, err := os.Stat(bin); err == nil {
		fresh := true
		for _, sub := range []string{"snap", "pm"} {
			files, _ := filepath.Glob(filepath.Join(root, "harness", sub, "*pp"))
			for _, f := range files {
				if fs, err := os.Stat(f); err != nil || fs.ModTime().After(st.ModTime()) {
					fresh = false
				}
			}
		}
		if fresh {
			return bin, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return Build(cxx, root, dir, name, flags...)
}

// CheckDump compares our SNAP with a LAMMPS dump (snapcheck dump): it builds
// snapcheck with $CXX (else g++) under buildDir, runs it and copies its
// report to log. The potential and the timestep come from PM_SNAP_POTENTIAL
// and PM_SNAP_TIMESTEP (docs/inputs.md). An input snapcheck cannot use is an
// error holding its positioned messages; a comparison beyond rounding is an
// error too.
func CheckDump(ctx context.Context, root, buildDir, dump string, log io.Writer) error {
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	if _, err := exec.LookPath(cxx); err != nil {
		return fmt.Errorf("snapcheck needs a C++ compiler: %v", err)
	}
	bin, err := BuildCached(cxx, root, filepath.Join(buildDir, "snapcheck"), "snapcheck")
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "dump", dump)
	cmd.Stdout = log
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		_, err = log.Write(stderr.Bytes()) // what it chose (a dump's timestep)
		return err
	case errors.As(err, &exit) && exit.ExitCode() == ExitUnusableInput:
		return fmt.Errorf("%s", strings.TrimSpace(stderr.String()))
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return fmt.Errorf("snapcheck: our SNAP and %s differ beyond rounding (the FAIL line above)", dump)
	}
	return fmt.Errorf("snapcheck %s: %v\n%s", dump, err, strings.TrimSpace(stderr.String()))
}

// Package inputs tests the readers of a user's data (docs/inputs.md): LAMMPS
// dumps (harness/snap/lammps_dump.hpp, for TestSNAP) and Matrix Market files
// (harness/pm/matrix_market.hpp, for SPMV and CG-Solve). The readers are
// C++, where the programs use them; this package builds
// harness/pm/inputcheck.cpp, which reads a file as the programs do, and
// reads its summary.
package inputs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ExitUnusable is inputcheck's exit status for a file it cannot use.
const ExitUnusable = 3

// Build compiles harness/pm/inputcheck.cpp (root is the repository) with cxx
// and the extra flags into dir and returns the program's path.
func Build(cxx, root, dir string, flags ...string) (string, error) {
	// Read the sources here too: go test caches a result by the files the
	// test process opens, and the compiler's reads are not among them.
	for _, sub := range []string{"snap", "pm"} {
		files, err := filepath.Glob(filepath.Join(root, "harness", sub, "*pp"))
		if err != nil {
			return "", err
		}
		for _, f := range files {
			if _, err := os.ReadFile(f); err != nil {
				return "", err
			}
		}
	}
	bin := filepath.Join(dir, "inputcheck")
	args := append([]string{"-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(root, "harness")}, flags...)
	args = append(args, "-o", bin, filepath.Join(root, "harness", "pm", "inputcheck.cpp"))
	cmd := exec.Command(cxx, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return bin, nil
}

// Outcome is what inputcheck said of one file.
type Outcome struct {
	Code   int                 // 0, or ExitUnusable
	Fields map[string][]string // first word of a stdout line -> its other words (the last such line)
	Lines  []string            // stdout
	Errors []string            // stderr lines (ExitUnusable)
}

// Check runs bin (inputcheck) on a file: mode "dump" or "mtx". An exit other
// than 0 or ExitUnusable (a crash, a sanitizer's report) is an error.
func Check(bin, mode, path string, args ...string) (Outcome, error) {
	// A reader that loops on some input is a failure too, not a stall.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{mode, path}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	o := Outcome{Fields: map[string][]string{}}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		o.Code = exit.ExitCode()
	} else if err != nil {
		return o, err
	}
	if ctx.Err() != nil {
		return o, fmt.Errorf("inputcheck %s %s: no answer in 20 s", mode, path)
	}
	if o.Code != 0 && o.Code != ExitUnusable {
		return o, fmt.Errorf("inputcheck %s %s: exit %d\n%s", mode, path, o.Code, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		o.Lines = append(o.Lines, sc.Text())
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			o.Fields[f[0]] = f[1:]
		}
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		o.Errors = strings.Split(s, "\n")
	}
	return o, sc.Err()
}

// KV reads the key=value words of a summary line.
func (o Outcome) KV(first string) map[string]string {
	kv := map[string]string{}
	for _, w := range o.Fields[first] {
		if k, v, ok := strings.Cut(w, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// Y is mtx's y = A*x (x[i] = i + 1), by 1-based row.
func (o Outcome) Y() (map[int]float64, error) {
	y := map[int]float64{}
	for _, l := range o.Lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "y" {
			continue
		}
		r, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, err
		}
		y[r] = v
	}
	return y, nil
}

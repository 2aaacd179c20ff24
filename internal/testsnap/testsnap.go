// Package testsnap checks the SNAP reference of the TestSNAP kernels
// (harness/snap) against what does not depend on it: LAMMPS's own SNAP
// (reference outputs in testdata/, made by scripts/testsnap-reference.sh),
// finite differences of the energy, and rotation invariance of the
// bispectrum. The checks themselves are C++ (harness/snap/snapcheck.cpp);
// this package builds that program, runs it and reads its report.
package testsnap

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Result is one line of the checker's report:
// "PASS|FAIL <check> <label> key=value ... [# reason]".
type Result struct {
	Pass   bool
	Check  string             // lammps, fd, rotation, paper_problem
	Label  string             // configuration, "" where the check has none
	Values map[string]float64 // the key=value numbers
	Line   string
}

// Parse reads the checker's report; lines that are not results are errors.
func Parse(out string) ([]Result, error) {
	var rs []Result
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields, _, _ := strings.Cut(line, " # ") // a FAIL's reason in words
		f := strings.Fields(fields)
		if len(f) < 2 || (f[0] != "PASS" && f[0] != "FAIL") {
			return nil, fmt.Errorf("report line %d: not PASS/FAIL: %q", n, line)
		}
		r := Result{Pass: f[0] == "PASS", Check: f[1], Values: map[string]float64{}, Line: line}
		for i, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				if i == 0 {
					r.Label = kv
					continue
				}
				return nil, fmt.Errorf("report line %d: field %q is not key=value", n, kv)
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("report line %d: %s: %v", n, k, err)
			}
			r.Values[k] = x
		}
		rs = append(rs, r)
	}
	return rs, sc.Err()
}

// Build compiles harness/snap/<name>.cpp (root is the repository) with cxx
// and the extra flags into dir and returns the program's path.
func Build(cxx, root, dir, name string, flags ...string) (string, error) {
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
	bin := filepath.Join(dir, name)
	src := filepath.Join(root, "harness", "snap", name+".cpp")
	args := append([]string{"-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(root, "harness")}, flags...)
	args = append(args, "-o", bin, src)
	cmd := exec.Command(cxx, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return bin, nil
}

// ReferenceNames lists the LAMMPS reference configurations in dir (the
// <name>.dump files with their .snapparam and .snapcoeff).
func ReferenceNames(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.dump"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range m {
		name := strings.TrimSuffix(filepath.Base(p), ".dump")
		for _, ext := range []string{".snapparam", ".snapcoeff"} {
			if _, err := os.Stat(filepath.Join(dir, name+ext)); err != nil {
				return nil, fmt.Errorf("reference %s: %v", name, err)
			}
		}
		names = append(names, name)
	}
	return names, nil
}

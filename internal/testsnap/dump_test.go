package testsnap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	snapcheckOnce sync.Once
	snapcheckBin  string
	snapcheckErr  error
)

// snapcheck builds harness/snap/snapcheck.cpp once for the tests of this
// package.
func snapcheck(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	snapcheckOnce.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			snapcheckErr = err
			return
		}
		dir, err := os.MkdirTemp("", "snapcheck")
		if err != nil {
			snapcheckErr = err
			return
		}
		snapcheckBin, snapcheckErr = Build("g++", root, dir, "snapcheck")
	})
	require.NoError(t, snapcheckErr)
	return snapcheckBin
}

// runDump runs snapcheck dump on path with env added; it returns the parsed
// report, stderr and the exit status.
func runDump(t *testing.T, path string, env ...string) ([]Result, string, int) {
	t.Helper()
	cmd := exec.Command(snapcheck(t), "dump", path)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	rs, perr := Parse(string(out))
	require.NoError(t, perr, "%s", out)
	return rs, stderr.String(), code
}

// copyConfig copies testdata/<name>.{dump,snapparam,snapcoeff} into dir,
// the dump through edit; it returns the dump's path.
func copyConfig(t *testing.T, dir, name string, edit func(lines []string) []string) string {
	t.Helper()
	for _, ext := range []string{".snapparam", ".snapcoeff"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+ext))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+ext), b, 0o644))
	}
	b, err := os.ReadFile(filepath.Join("testdata", name+".dump"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if edit != nil {
		lines = edit(lines)
	}
	path := filepath.Join(dir, name+".dump")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return path
}

// lineOf is the index of the first line that starts with prefix.
func lineOf(t *testing.T, lines []string, prefix string) int {
	t.Helper()
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return -1
}

// A dump with several timesteps: the first unless PM_SNAP_TIMESTEP names
// another (said on stderr), each compared with LAMMPS at its own positions;
// a timestep the dump lacks is a positioned error listing those it has.
func TestDumpTimesteps(t *testing.T) {
	path := filepath.Join("testdata", "w2j8_steps_c2.dump")
	rs, stderr, code := runDump(t, path)
	require.Equal(t, 0, code, stderr)
	require.Len(t, rs, 1)
	assert.True(t, rs[0].Pass, rs[0].Line)
	assert.Equal(t, 0.0, rs[0].Values["timestep"])
	assert.Contains(t, stderr, "3 timesteps (0, 1, 2); using the first, timestep 0")
	_, hasB := rs[0].Values["bispectrum_maxrel"]
	assert.False(t, hasB, "this dump has no bispectrum columns")

	rs, stderr, code = runDump(t, path, "PM_SNAP_TIMESTEP=2")
	require.Equal(t, 0, code, stderr)
	assert.True(t, rs[0].Pass, rs[0].Line)
	assert.Equal(t, 2.0, rs[0].Values["timestep"])
	assert.Less(t, rs[0].Values["force_maxrel"], 1e-12)

	_, stderr, code = runDump(t, path, "PM_SNAP_TIMESTEP=5")
	assert.Equal(t, ExitUnusableInput, code)
	assert.Regexp(t, `w2j8_steps_c2.dump:3: no timestep 5 \(the dump has 0, 1, 2\)`, stderr)
}

// The comparison can fail: a force changed in its ninth digit fails and
// names its atom, and the triclinic configuration read as if its box were
// not tilted fails (so the tilt is really used).
func TestDumpCheckIsNotVacuous(t *testing.T) {
	dir := t.TempDir()
	path := copyConfig(t, dir, "w2j8_c2_d005", func(lines []string) []string {
		i := lineOf(t, lines, "ITEM: ATOMS") + 5 // atom 5 (sorted by id)
		f := strings.Fields(lines[i])
		require.Equal(t, "5", f[0])
		var fx float64
		_, err := fmt.Sscan(f[5], &fx)
		require.NoError(t, err)
		f[5] = fmt.Sprintf("%.17g", fx*(1+1e-9)+1e-9)
		lines[i] = strings.Join(f, " ")
		return lines
	})
	rs, _, code := runDump(t, path)
	assert.Equal(t, 1, code)
	require.Len(t, rs, 1)
	assert.False(t, rs[0].Pass, rs[0].Line)
	assert.Equal(t, 5.0, rs[0].Values["force_worst_id"], rs[0].Line)
	assert.Less(t, rs[0].Values["energy_maxrel"], 1e-12, "only the force was changed")

	path = copyConfig(t, dir, "w2j8_tri_c3_d010", func(lines []string) []string {
		i := lineOf(t, lines, "ITEM: BOX BOUNDS")
		for k := 1; k <= 3; k++ {
			f := strings.Fields(lines[i+k])
			lines[i+k] = f[0] + " " + f[1] + " 0"
		}
		return lines
	})
	rs, _, code = runDump(t, path)
	assert.Equal(t, 1, code)
	assert.False(t, rs[0].Pass, rs[0].Line)
	assert.Greater(t, rs[0].Values["force_maxrel"], 1e-3, rs[0].Line)
}

// A box far thinner than the cutoff would need millions of periodic
// images: refused, naming the dump.
func TestDumpThinBox(t *testing.T) {
	dir := t.TempDir()
	path := copyConfig(t, dir, "w2j8_c2_d005", func(lines []string) []string {
		lines[lineOf(t, lines, "ITEM: BOX BOUNDS")+2] = "0 0.001"
		return lines
	})
	_, stderr, code := runDump(t, path)
	assert.Equal(t, ExitUnusableInput, code)
	assert.Contains(t, stderr, path+": the box is 0.001000 thick along b, below 1/64 of the cutoff")
}

var positioned = regexp.MustCompile(`^(.+\.dump):(\d+): \S`)

// Dumps it cannot use: every problem is reported with its line, and the
// stage (CheckDump) returns them as its error.
func TestDumpErrors(t *testing.T) {
	type edit func(t *testing.T, lines []string) []string
	at := func(prefix string, off int, repl string) edit {
		return func(t *testing.T, lines []string) []string {
			lines[lineOf(t, lines, prefix)+off] = repl
			return lines
		}
	}
	cases := []struct {
		name string
		edit edit
		want string // the message after "file:line: "
		line string // the line it points at: off lines after the first line with this prefix
		off  int
	}{
		{"no atoms", at("ITEM: NUMBER OF ATOMS", 1, "0"), "no atoms (NUMBER OF ATOMS is 0)", "ITEM: NUMBER OF ATOMS", 1},
		{"count", at("ITEM: NUMBER OF ATOMS", 1, "17"), "16 atom lines, NUMBER OF ATOMS (line 5) says 17", "", 0},
		{"columns", at("ITEM: ATOMS", 0, "ITEM: ATOMS id type x y fx fy fz c_pe"),
			"positions x y z incomplete: no column z", "ITEM: ATOMS", 0},
		{"not a number", func(t *testing.T, l []string) []string {
			i := lineOf(t, l, "ITEM: ATOMS") + 3
			f := strings.Fields(l[i])
			f[3] = "1.5x"
			l[i] = strings.Join(f, " ")
			return l
		}, `column y (field 4): "1.5x" is not a number`, "ITEM: ATOMS", 3},
		{"no box", func(t *testing.T, l []string) []string {
			i := lineOf(t, l, "ITEM: BOX BOUNDS")
			return append(l[:i:i], l[i+4:]...)
		}, "no ITEM: BOX BOUNDS before ITEM: ATOMS", "ITEM: ATOMS", 0},
		{"not periodic", at("ITEM: BOX BOUNDS", 0, "ITEM: BOX BOUNDS pp ss pp"),
			`boundary y is "ss": SNAP here needs a periodic box (pp pp pp)`, "ITEM: BOX BOUNDS", 0},
		{"duplicate id", func(t *testing.T, l []string) []string {
			i := lineOf(t, l, "ITEM: ATOMS") + 2
			l[i] = "1" + l[i][strings.Index(l[i], " "):]
			return l
		}, "atom id 1 again (first on line 12)", "ITEM: ATOMS", 2},
		{"atoms twice", func(t *testing.T, l []string) []string {
			i := lineOf(t, l, "ITEM: ATOMS")
			return append(l, l[i:i+3]...)
		}, "ITEM: ATOMS again in timestep 0", "", 0},
		{"not a dump", func(t *testing.T, l []string) []string { return append([]string{"1 2 3"}, l...) },
			`expected ITEM: TIMESTEP, found "1 2 3"`, "1 2 3", 0},
	}
	stageBuild := t.TempDir() // one snapcheck for every case's CheckDump
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var want int
			path := copyConfig(t, dir, "w2j8_c2_d005", func(lines []string) []string {
				lines = c.edit(t, lines)
				if c.line != "" {
					want = lineOf(t, lines, c.line) + c.off + 1
				}
				return lines
			})
			_, stderr, code := runDump(t, path)
			assert.Equal(t, ExitUnusableInput, code, stderr)
			var found bool
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				m := positioned.FindStringSubmatch(l)
				require.NotNil(t, m, "not positioned: %q", l)
				if strings.HasSuffix(l, ": "+c.want) {
					found = true
					if want > 0 {
						assert.Equal(t, fmt.Sprint(want), m[2], l)
					}
				}
			}
			assert.True(t, found, "no %q in\n%s", c.want, stderr)
			// The stage's error is the same text.
			root, _ := filepath.Abs("../..")
			var log bytes.Buffer
			err := CheckDump(context.Background(), root, stageBuild, path, &log)
			require.Error(t, err)
			assert.Equal(t, strings.TrimSpace(stderr), err.Error())
		})
	}
}

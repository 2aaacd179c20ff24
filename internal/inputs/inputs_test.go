package inputs

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
)

var (
	buildOnce sync.Once
	checkBin  string
	buildErr  error
)

// inputcheck builds the checker once: with PM_LONG_TESTS=1 (CI) with
// AddressSanitizer and UBSan where g++ has them, so that the fuzz targets
// catch memory errors too; else without them, in a fifth of the compile time.
func inputcheck(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	buildOnce.Do(func() {
		root, err := filepath.Abs("../..")
		if err != nil {
			buildErr = err
			return
		}
		// The fuzzing engine's workers are processes of their own: they
		// find the checker the first process built for these sources.
		key, err := sourceKey(root)
		if err != nil {
			buildErr = err
			return
		}
		sanitized := testenv.LongEnabled()
		flavour := map[bool]string{true: "-sanitized", false: ""}[sanitized]
		checkBin = filepath.Join(os.TempDir(), "portmatrix-inputcheck-"+key+flavour, "inputcheck")
		if _, err := os.Stat(checkBin); err == nil {
			return
		}
		dir, err := os.MkdirTemp("", "inputcheck")
		if err != nil {
			buildErr = err
			return
		}
		var bin string
		if sanitized {
			bin, err = Build("g++", root, dir, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
		}
		if !sanitized || err != nil {
			bin, err = Build("g++", root, dir)
		}
		if err != nil {
			buildErr = err
			return
		}
		if err := os.Rename(dir, filepath.Dir(checkBin)); err != nil { // another process won
			checkBin = bin
		}
	})
	require.NoError(t, buildErr)
	return checkBin
}

// sourceKey hashes the harness sources inputcheck is built from.
func sourceKey(root string) (string, error) {
	h := sha256.New()
	for _, sub := range []string{"snap", "pm"} {
		files, err := filepath.Glob(filepath.Join(root, "harness", sub, "*pp"))
		if err != nil {
			return "", err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// The hand-written matrices, each against its dense form written here:
// symmetric storage expanded, pattern entries 1, entries in any order,
// empty rows, integer values.
func TestMatrixMarketFiles(t *testing.T) {
	bin := inputcheck(t)
	cases := []struct {
		file       string
		dense      [][]float64
		symmetric  bool
		posDiag    bool
		field, sym string
	}{
		{"spd5.mtx", [][]float64{
			{4, -1, 0, 0, 0.5},
			{-1, 4, -1, 0, 0},
			{0, -1, 4, -1, 0},
			{0, 0, -1, 4, -1},
			{0.5, 0, 0, -1, 4},
		}, true, true, "real", "symmetric"},
		{"general4.mtx", [][]float64{
			{2, 0, -5, 0},
			{3, 1, 0, 0},
			{0, 0, 0, 0},
			{1, 0, 0, 7},
		}, false, false, "integer", "general"},
		{"pattern6.mtx", [][]float64{
			{1, 1, 0, 0, 0, 1},
			{1, 1, 1, 0, 0, 0},
			{0, 1, 1, 1, 0, 0},
			{0, 0, 1, 1, 1, 0},
			{0, 0, 0, 1, 1, 1},
			{1, 0, 0, 0, 1, 1},
		}, true, true, "pattern", "symmetric"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			o, err := Check(bin, "mtx", filepath.Join("testdata", c.file))
			require.NoError(t, err)
			require.Equal(t, 0, o.Code, "%v", o.Errors)
			kv := o.KV("mtx")
			nnz := 0
			for _, row := range c.dense {
				for _, v := range row {
					if v != 0 {
						nnz++
					}
				}
			}
			assert.Equal(t, fmt.Sprint(len(c.dense)), kv["rows"])
			assert.Equal(t, fmt.Sprint(nnz), kv["nnz"])
			assert.Equal(t, c.field, kv["field"])
			assert.Equal(t, c.sym, kv["symmetry"])
			assert.Equal(t, map[bool]string{true: "1", false: "0"}[c.symmetric], kv["symmetric"])
			assert.Equal(t, map[bool]string{true: "1", false: "0"}[c.posDiag], kv["positive_diagonal"])
			y, err := o.Y()
			require.NoError(t, err)
			for i, row := range c.dense {
				want := 0.0
				for j, v := range row {
					want += v * float64(j+1)
				}
				assert.Equal(t, want, y[i+1], "row %d", i+1)
			}
		})
	}
}

var positionedMtx = regexp.MustCompile(`^(.+\.mtx):(\d+): \S`)

// Malformed Matrix Market files: each problem with its line.
func TestMatrixMarketErrors(t *testing.T) {
	bin := inputcheck(t)
	const head = "%%MatrixMarket matrix coordinate real general\n"
	cases := []struct{ name, text, want string }{
		{"empty", "", "1: empty file"},
		{"banner", "%MatrixMarket matrix coordinate real general\n2 2 0\n", "1: not a Matrix Market file"},
		{"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", `1: format "array": only coordinate (sparse) is read (array is a dense matrix)`},
		{"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", `1: field "complex": real, integer or pattern (not complex)`},
		{"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", `1: symmetry "skew-symmetric": general or symmetric (not skew-symmetric)`},
		{"size line", head + "% c\n2 two 1\n", "3: the size line must be three non-negative integers"},
		{"no size", head + "% only a comment\n", "2: no size line"},
		{"not square", head + "2 3 1\n1 1 1\n", "2: 2 x 3 is not square"},
		{"rows", head + "99999999999 99999999999 1\n1 1 1\n", "2: 99999999999 rows for 1 entries: more than 2^24 empty rows"},
		{"outside", head + "2 2 2\n1 1 1\n3 1 1\n", "4: entry (3, 1) outside the 2 x 2 matrix (indices are 1-based)"},
		{"zero-based", head + "2 2 1\n0 1 1\n", "3: entry (0, 1) outside the 2 x 2 matrix (indices are 1-based)"},
		{"value", head + "2 2 1\n1 1 abc\n", `3: value "abc" is not a finite number`},
		{"nan", head + "2 2 1\n1 1 nan\n", `3: value "nan" is not a finite number`},
		{"fields", head + "2 2 1\n1 1\n", "3: 2 fields, a real entry has 3 (row column value)"},
		{"too few", head + "2 2 3\n1 1 1\n2 2 1\n", "4: 2 entries, the size line (line 2) says 3"},
		{"too many", head + "2 2 1\n1 1 1\n2 2 1\n", "4: 2 entries, the size line (line 2) says 1"},
		{"duplicate", head + "2 2 2\n1 2 1\n1 2 3\n", "4: entry (1, 2) again (line 3)"},
		{"both triangles", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n", "4: entry (1, 2) again (line 3): a symmetric file stores one triangle"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.mtx")
			require.NoError(t, os.WriteFile(path, []byte(c.text), 0o644))
			o, err := Check(bin, "mtx", path)
			require.NoError(t, err)
			require.Equal(t, ExitUnusable, o.Code)
			found := false
			for _, l := range o.Errors {
				assert.Regexp(t, positionedMtx, l)
				found = found || strings.HasPrefix(l, path+":"+c.want)
			}
			assert.True(t, found, "no %q in %q", c.want, o.Errors)
		})
	}
}

// The dump reader on LAMMPS's own dumps (internal/testsnap/testdata): the
// columns it found, and scaled positions in a triclinic box turned into
// Cartesian ones as LAMMPS defines them (computed here from the raw fields).
func TestDumpShapes(t *testing.T) {
	bin := inputcheck(t)
	dir := filepath.Join("..", "testsnap", "testdata")
	o, err := Check(bin, "dump", filepath.Join(dir, "w2j8_c2_d005.dump"))
	require.NoError(t, err)
	require.Equal(t, 0, o.Code, "%v", o.Errors)
	assert.Equal(t, map[string]string{"atoms": "16", "timestep": "0", "frames": "1", "triclinic": "0", "positions": "x",
		"forces": "1", "energy": "c_pe", "bispectrum": "55"}, o.KV("dump"))

	path := filepath.Join(dir, "w2j8_tri_c3_d010.dump")
	o, err = Check(bin, "dump", path)
	require.NoError(t, err)
	require.Equal(t, 0, o.Code, "%v", o.Errors)
	kv := o.KV("dump")
	assert.Equal(t, "1", kv["triclinic"])
	assert.Equal(t, "xs", kv["positions"]) // "xs ys zs"
	assert.Equal(t, "54", kv["atoms"])
	assert.Equal(t, "55", kv["bispectrum"])

	// The raw dump: bounds with tilts, and atom 1's xs ys zs.
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var bounds [3][3]float64
	var cols []string
	var s [3]float64
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "ITEM: BOX BOUNDS") {
			for k := 0; k < 3; k++ {
				require.True(t, sc.Scan())
				for c, w := range strings.Fields(sc.Text()) {
					bounds[k][c], _ = strconv.ParseFloat(w, 64)
				}
			}
		}
		if strings.HasPrefix(l, "ITEM: ATOMS") {
			cols = strings.Fields(l)[2:]
			for sc.Scan() {
				w := strings.Fields(sc.Text())
				idx := map[string]string{}
				for c, name := range cols {
					idx[name] = w[c]
				}
				if idx["id"] == "1" {
					for k, n := range []string{"xs", "ys", "zs"} {
						s[k], _ = strconv.ParseFloat(idx[n], 64)
					}
					break
				}
			}
			break
		}
	}
	xy, xz, yz := bounds[0][2], bounds[1][2], bounds[2][2]
	xlo := bounds[0][0] - math.Min(math.Min(0, xy), math.Min(xz, xy+xz))
	xhi := bounds[0][1] - math.Max(math.Max(0, xy), math.Max(xz, xy+xz))
	ylo := bounds[1][0] - math.Min(0, yz)
	yhi := bounds[1][1] - math.Max(0, yz)
	zlo, zhi := bounds[2][0], bounds[2][1]
	want := [3]float64{
		xlo + s[0]*(xhi-xlo) + s[1]*xy + s[2]*xz,
		ylo + s[1]*(yhi-ylo) + s[2]*yz,
		zlo + s[2]*(zhi-zlo),
	}
	var got []string
	for _, l := range o.Lines {
		if strings.HasPrefix(l, "atom 1 ") {
			got = strings.Fields(l)[2:]
		}
	}
	require.Len(t, got, 3)
	for k := 0; k < 3; k++ {
		v, err := strconv.ParseFloat(got[k], 64)
		require.NoError(t, err)
		assert.InDelta(t, want[k], v, 1e-12, "coordinate %d", k)
	}
}

// checkFuzzOutcome is the invariant of both fuzz targets: inputcheck either
// reads the file (exit 0) or reports problems, each positioned within it.
func checkFuzzOutcome(t *testing.T, o Outcome, err error, path string, data []byte) {
	require.NoError(t, err) // a crash, a sanitizer's report or another exit
	if o.Code == 0 {
		return
	}
	require.NotEmpty(t, o.Errors)
	lines := strings.Count(string(data), "\n") + 1
	for _, l := range o.Errors {
		rest, ok := strings.CutPrefix(l, path+":")
		require.True(t, ok, "error without the file: %q", l)
		num, _, ok := strings.Cut(rest, ":")
		if !ok || strings.HasSuffix(rest, "more problems") {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			assert.Contains(t, rest, "more problems", l) // "file: N more problems"
			continue
		}
		assert.True(t, n >= 1 && n <= lines, "line %d of a file of %d lines: %q", n, lines, l)
	}
}

// FuzzDumpReader: any bytes as a dump. Seeds: LAMMPS's dumps and cut or
// damaged versions. go test -fuzz=FuzzDumpReader ./internal/inputs/
func FuzzDumpReader(f *testing.F) {
	for _, name := range []string{"w2j8_c1_d010", "w2j8_tri_c3_d010", "w2j8_steps_c2"} {
		b, err := os.ReadFile(filepath.Join("..", "testsnap", "testdata", name+".dump"))
		require.NoError(f, err)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add([]byte(strings.Replace(string(b), "ITEM: BOX BOUNDS", "ITEM: BOX", 1)))
	}
	f.Add([]byte("ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS xy xz yz pp pp pp\n0 1 0\n0 1 0\n0 1 0\nITEM: ATOMS xs ys zs\n0.5 0.5 0.5\n"))
	f.Add([]byte(""))
	bin := inputcheck(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.dump")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		o, err := Check(bin, "dump", path)
		checkFuzzOutcome(t, o, err, path, data)
		if err == nil && o.Code == 0 {
			n, _ := strconv.Atoi(o.KV("dump")["atoms"])
			atoms := 0
			for _, l := range o.Lines {
				if strings.HasPrefix(l, "atom ") {
					atoms++
				}
			}
			assert.Equal(t, n, atoms)
			assert.Greater(t, n, 0)
		}
	})
}

// FuzzMatrixMarket: any bytes as a Matrix Market file.
// go test -fuzz=FuzzMatrixMarket ./internal/inputs/
func FuzzMatrixMarket(f *testing.F) {
	for _, name := range []string{"spd5.mtx", "general4.mtx", "pattern6.mtx"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
		f.Add(b[:len(b)*2/3])
	}
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n3 3 0\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n9999999999 9999999999 1\n1 1 1\n"))
	bin := inputcheck(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.mtx")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		o, err := Check(bin, "mtx", path)
		checkFuzzOutcome(t, o, err, path, data)
		if err == nil && o.Code == 0 {
			rows, _ := strconv.Atoi(o.KV("mtx")["rows"])
			y, err := o.Y()
			require.NoError(t, err)
			assert.Len(t, y, rows)
		}
	})
}

// record is the part of a program's record these tests read.
type record struct {
	Kernel   string  `json:"kernel"`
	Input    string  `json:"input"`
	Verified bool    `json:"verified"`
	MaxErr   float64 `json:"max_rel_err"`
}

// The generated programs measure the user's data: a TestSNAP step on a
// LAMMPS dump (triclinic), SPMV on an unsymmetric and a symmetric matrix
// and CG-Solve on an SPD one, each verified against the float64 reference and naming its
// input; CG-Solve refuses an unsymmetric matrix, and a broken dump stops a
// program with its positioned error.
func TestProgramsReadUserData(t *testing.T) {
	testenv.Long(t) // builds three generated programs
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	build := func(kernel string) string {
		bin := filepath.Join(dir, kernel)
		cmd := exec.Command("g++", "-O1", "-std=c++17", "-fopenmp", "-foffload=disable", "-I", filepath.Join(root, "harness"),
			"-o", bin, filepath.Join(root, "generated", kernel, "omp-host.cpp"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return bin
	}
	run := func(bin string, env ...string) (record, string, error) {
		cmd := exec.Command(bin, "--size", "1", "--reps", "3", "--warmup", "0")
		cmd.Env = append(os.Environ(), append(env, "OMP_NUM_THREADS=2")...)
		out, err := cmd.Output()
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		var r record
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, `{"kind":"kernel"`) {
				require.NoError(t, json.Unmarshal([]byte(l), &r))
			}
		}
		return r, stderr, err
	}
	dump, err := filepath.Abs(filepath.Join("..", "testsnap", "testdata", "w2j8_tri_c3_d010.dump"))
	require.NoError(t, err)
	snap := build("snap_step")
	r, stderr, err := run(snap, "PM_SNAP_DUMP="+dump)
	require.NoError(t, err, stderr)
	assert.True(t, r.Verified, "%+v", r)
	assert.Equal(t, dump+"@0 ("+strings.TrimSuffix(dump, ".dump")+")", r.Input)

	broken := filepath.Join(dir, "broken.dump")
	b, err := os.ReadFile(dump)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(broken, []byte(strings.Replace(string(b), "ITEM: NUMBER OF ATOMS\n54", "ITEM: NUMBER OF ATOMS\n55", 1)), 0o644))
	for _, ext := range []string{".snapparam", ".snapcoeff"} {
		p, err := os.ReadFile(strings.TrimSuffix(dump, ".dump") + ext)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "broken"+ext), p, 0o644))
	}
	_, stderr, err = run(snap, "PM_SNAP_DUMP="+broken)
	require.Error(t, err)
	assert.Contains(t, stderr, broken+":")
	assert.Contains(t, stderr, "54 atom lines, NUMBER OF ATOMS (line 5) says 55")

	general, _ := filepath.Abs(filepath.Join("testdata", "general4.mtx"))
	spd, _ := filepath.Abs(filepath.Join("testdata", "spd5.mtx"))
	spmv := build("spmv")
	r, stderr, err = run(spmv, "PM_MATRIX="+general)
	require.NoError(t, err, stderr)
	assert.True(t, r.Verified, "%+v", r)
	assert.Equal(t, general+" (4 rows, 6 non-zeros, integer general)", r.Input)

	r, stderr, err = run(spmv, "PM_MATRIX="+spd)
	require.NoError(t, err, stderr)
	assert.True(t, r.Verified, "%+v", r)
	assert.Equal(t, spd+" (5 rows, 15 non-zeros, real symmetric)", r.Input)

	// CG-Solve runs 20 iterations: on a matrix it solves in fewer (spd5)
	// the residual it returns is rounding noise, which no tolerance
	// verifies (docs/inputs.md). The 1D Laplacian of 100 rows is not solved
	// in 20.
	laplace, _ := filepath.Abs(filepath.Join("testdata", "laplace100.mtx"))
	cg := build("cgsolve")
	r, stderr, err = run(cg, "PM_MATRIX="+laplace)
	require.NoError(t, err, stderr)
	assert.True(t, r.Verified, "%+v", r)
	assert.Equal(t, laplace+" (100 rows, 298 non-zeros, real symmetric)", r.Input)
	_, stderr, err = run(cg, "PM_MATRIX="+general)
	require.Error(t, err)
	assert.Contains(t, stderr, "CG-Solve needs a symmetric positive definite matrix; not symmetric")
}

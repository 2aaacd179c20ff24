package planted

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
)

// cgBinary builds CG-Solve's serial program (its float64 reference takes
// most of a second at size 80: slow enough to be shared).
func cgBinary(t *testing.T) string {
	testenv.Long(t) // builds a program
	return sharedBinary(t, "generated/cgsolve/serial.cpp")
}

// Programs of one run share a slow reference through --ref-cache, keyed by
// seed, size and inputs; a damaged file is recomputed, never trusted.
func TestSharedReference(t *testing.T) {
	bin := cgBinary(t)
	cache := t.TempDir()
	const size = 80
	first, _ := run(t, bin, 0, size, "--ref-cache", cache)
	require.True(t, first.Verified, first.Error)
	assert.False(t, first.RefCached, "nothing to load yet")
	files, err := filepath.Glob(filepath.Join(cache, "cgsolve-80-*.ref"))
	require.NoError(t, err)
	require.Len(t, files, 1, "the first program saves its reference")

	second, _ := run(t, bin, 0, size, "--ref-cache", cache)
	require.True(t, second.Verified, second.Error)
	assert.True(t, second.RefCached)
	assert.Equal(t, *first.MaxRelErr, *second.MaxRelErr, "the same reference, bit for bit")

	other, _ := run(t, bin, 0, size, "--ref-cache", cache, "--seed", "7")
	assert.True(t, other.Verified, other.Error)
	assert.False(t, other.RefCached, "other data, other reference")

	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	data[len(data)-100] ^= 1 // one bit of a stored output
	require.NoError(t, os.WriteFile(files[0], data, 0o644))
	damaged, _ := run(t, bin, 0, size, "--ref-cache", cache)
	assert.True(t, damaged.Verified, damaged.Error)
	assert.False(t, damaged.RefCached, "a damaged file is not used")
	again, _ := run(t, bin, 0, size, "--ref-cache", cache)
	assert.True(t, again.RefCached, "the recomputed reference replaced it")
}

// Programs of one run share a generated miniFE matrix through the same
// folder: the first writes it, the others map it; a file that is not whole
// is generated again and replaced.
func TestSharedMatrix(t *testing.T) {
	bin := cgBinary(t)
	cache := t.TempDir()
	const size = 40
	alone, _ := run(t, bin, 0, size)
	require.True(t, alone.Verified, alone.Error)
	first, _ := run(t, bin, 0, size, "--ref-cache", cache)
	require.True(t, first.Verified, first.Error)
	file := filepath.Join(cache, "minife27-40.csr")
	whole, err := os.Stat(file)
	require.NoError(t, err, "the first program saves the matrix")

	second, _ := run(t, bin, 0, size, "--ref-cache", cache)
	require.True(t, second.Verified, second.Error)
	assert.Equal(t, *alone.MaxRelErr, *second.MaxRelErr, "the mapped matrix is the generated one, bit for bit")

	require.NoError(t, os.Truncate(file, whole.Size()-8))
	cut, _ := run(t, bin, 0, size, "--ref-cache", cache)
	assert.True(t, cut.Verified, cut.Error)
	again, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, whole.Size(), again.Size(), "a cut file is replaced")
}

// --rep-seconds bounds the timed reps of a slow measurement, keeping 3, and
// drops the warm-ups after a first run that alone took that long; every run
// is still checked.
func TestRepSecondsKeepsThreeReps(t *testing.T) {
	bin := cgBinary(t)
	r, _ := run(t, bin, 0, 20, "--reps", "10", "--rep-seconds", "1e-9")
	require.True(t, r.Verified, r.Error)
	assert.Equal(t, 3, r.Reps)
	assert.Len(t, r.TimesS, 3)
	assert.Equal(t, 0, r.Warmup, "the first run warmed up")
	assert.Equal(t, 1+3+1, r.RunsChecked, "first run, 3 reps, sections run")

	r, _ = run(t, bin, 0, 20, "--reps", "4", "--rep-seconds", "100")
	require.True(t, r.Verified, r.Error)
	assert.Equal(t, warmup, r.Warmup, "a fast first run keeps the warm-ups")
	assert.Equal(t, 4, r.Reps)
	assert.Equal(t, 1+warmup+4+1, r.RunsChecked)

	r, _ = run(t, bin, 0, 20, "--reps", "2", "--rep-seconds", "1e-9")
	assert.Equal(t, 2, r.Reps, "never more than asked")
	r, _ = run(t, bin, 0, 20, "--reps", "6", "--rep-seconds", "0")
	assert.Equal(t, 6, r.Reps, "0: no bound")
}

// A composite's last run times its sections; --sections off (a tuning,
// which compares whole calls) leaves it out: one run fewer, no sections in
// the record, and --sections takes on or off only.
func TestSectionsOff(t *testing.T) {
	bin := cgBinary(t)
	const size = 20
	on, _ := run(t, bin, 0, size)
	require.True(t, on.Verified, on.Error)
	assert.NotEmpty(t, on.Sections, "CG-Solve times the kernels it calls")
	assert.Equal(t, 1+warmup+reps+1, on.RunsChecked, "first run, warm-ups, reps and the sections run")

	off, _ := run(t, bin, 0, size, "--sections", "off")
	require.True(t, off.Verified, off.Error)
	assert.Empty(t, off.Sections)
	assert.Equal(t, 1+warmup+reps, off.RunsChecked, "no sections run")

	out, err := exec.Command(bin, "--size", "20", "--sections", "no").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "--sections takes on or off, not no")
}

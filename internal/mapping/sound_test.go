package mapping

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// soundKernel is a kernel description around a loops: block: sizes 5 and
// 9 (ci), 17 (default), 33 (gpu); args are n = size, m, and the arrays.
func soundKernel(name, m, arrays, loops string) string {
	return "kernel: " + name + `
doc: a loop nest the mapper's checks must judge
size: {name: n, doc: rows, ci: [5, 9], default: [17], gpu: [33]}
args:
  - {name: n, type: int64, value: size}
  - {name: m, type: int64, value: "` + m + `"}
` + arrays + `loops:
` + loops + `reference: |
  // not run
bytes: 8.0 * n
flops: 1.0 * n
tolerance: 16 * eps
`
}

// lowerKernel parses a kernel description and lowers it; the kernel and
// the lowering's problems.
func lowerKernel(t *testing.T, file, src string) (*spec.Kernel, error) {
	t.Helper()
	var errs diag.List
	k := spec.Parse(file, []byte(src), &errs)
	require.NoError(t, errs.Err(), "the description itself must load")
	require.NotNil(t, k)
	Lower(k, gpuModel(t), &errs)
	return k, errs.Err()
}

// The row-leaving read X[i][j+m] is X[i+1][j] in memory: a real distance-1
// dependence along i (row i+1 is read before the next iteration writes
// it). Compared dimension by dimension, j+m never equals j' in a row of m
// elements, and the mapper used to call i parallel and split it over
// league, team and vector.
const rowLeaving = `  params: [n, m]
  assume: [n >= 2, m >= 1]
  arrays: {X: [n, m]}
  body:
    - for:
        index: i
        to: n - 1
        body:
          - for:
              index: j
              to: m
              body:
                - stmt: {reads: "X[i][j+m]", writes: "X[i][j]", value: "X[(i + 1) * m + j] + 1.0"}
`

const rowLeavingArrays = `  - {name: X, type: "double[]", extent: n * m, init: {random: [-1, 1]}, intent: inout}
`

func TestSoundRowLeavingReadWithSymbolicStrideRefused(t *testing.T) {
	_, err := lowerKernel(t, "rl.yaml", soundKernel("rl", "size + 1", rowLeavingArrays, rowLeaving))
	require.Error(t, err)
	// the access's own line:col (the statement's line, the column of X[i][j+m])
	assert.Contains(t, err.Error(), `rl.yaml:21:34: loops: `)
	assert.Contains(t, err.Error(), `read X[i][j+m] (statement S1) at n=5 (size set ci)`)
	assert.Contains(t, err.Error(), `subscript 2 (j + m) takes 6..11 and leaves its dimension: extent m is 6 (0..5)`)
	assert.Contains(t, err.Error(), `uses m, which has no constant value`)
}

func TestSoundRowLeavingReadFlattenedIsSequential(t *testing.T) {
	var errs diag.List
	k := spec.Parse("rl.yaml", []byte(soundKernel("rl", "4", rowLeavingArrays, rowLeaving)), &errs)
	require.NoError(t, errs.Err())
	require.True(t, checkSound(k, &errs), "a read across rows inside the array is analysed: %v", errs.Err())
	assert.Equal(t, 1, k.Loops.Arrays[0].Rank(), "X is analysed flattened")
	assert.Equal(t, "4*i + j + m", k.Loops.Stmts[0].Accesses[0].Subs[0].String())
	assert.Equal(t, "4*i + j", k.Loops.Stmts[0].Accesses[1].Subs[0].String())
	r := depend.Analyze(k.Loops)
	// flattened, X[4i + j + m] (m = 4) meets X[4i' + j'] at i' = i + 1: i carries it
	v := r.Verdict(k.Loops.LoopByID("i"))
	assert.False(t, v.Parallel, "i carries the row-crossing dependence")
	assert.Regexp(t, `anti read X\[i\]\[j\+m\] .* -> write X\[i\]\[j\]`, explainText(r))

	// so the mapper no longer splits i over league, team and vector: with i
	// sequential around the parallel j it refuses the nest (a launch per
	// iteration), where it used to map i to every level
	_, err := lowerKernel(t, "rl.yaml", soundKernel("rl", "4", rowLeavingArrays, rowLeaving))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "loop i (rl.yaml:14:9) encloses the mapped loops sequentially")
}

func explainText(r *depend.Result) string {
	var b strings.Builder
	r.Explain(&b)
	return b.String()
}

func TestSoundFalseAssumeRefused(t *testing.T) {
	// A[i+m] = A[i] + 1 is parallel when m >= n (the writes start past the
	// reads), a recurrence when m = 1: the assumption used to parallelise it.
	loops := `  params: [n, m]
  assume: [n >= 1, m >= n]
  arrays: {A: [n + m]}
  body:
    - for:
        index: i
        to: n
        body:
          - stmt: {reads: "A[i]", writes: "A[i+m]", value: "A[i] + 1.0"}
`
	arrays := `  - {name: A, type: "double[]", extent: n + m, init: {random: [-1, 1]}, intent: inout}
`
	_, err := lowerKernel(t, "fa.yaml", soundKernel("fa", "1", arrays, loops))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `fa.yaml:10:20: loops: assume "m >= n" is false at n=5 (size set ci): m = 1, n = 5`)

	// the same kernel with a true assumption maps as before
	k, err := lowerKernel(t, "fa.yaml", soundKernel("fa", "size", arrays, loops))
	require.NoError(t, err)
	assert.Contains(t, k.Mapping, "loop i -> league+team+vector")
}

func TestSoundOutOfBoundsWriteRefused(t *testing.T) {
	loops := `  params: [n, m]
  arrays: {y: [n], x: [n]}
  body:
    - for:
        index: i
        to: n
        body:
          - stmt: {reads: "x[i]", writes: "y[i+1]", value: "x[i]"}
`
	arrays := `  - {name: x, type: "double[]", extent: n, init: {random: [-1, 1]}, intent: in}
  - {name: y, type: "double[]", extent: n, init: {random: [-1, 1]}, intent: inout}
`
	k, err := lowerKernel(t, "oob.yaml", soundKernel("oob", "1", arrays, loops))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `oob.yaml:17:44: loops: write y[i+1] (statement S1) at n=5 (size set ci): outside array y: subscript 1 (i + 1) takes 1..5 and leaves its dimension: extent n is 5 (0..4); its element index takes 1..5 of 5 elements (0..4)`)
	assert.Nil(t, k.Pattern, "no code is made")

	// a read outside the array is an error too
	loops = strings.Replace(loops, `reads: "x[i]", writes: "y[i+1]"`, `reads: "x[i-1]", writes: "y[i]"`, 1)
	_, err = lowerKernel(t, "oob.yaml", soundKernel("oob", "1", arrays, loops))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `read x[i-1] (statement S1) at n=5 (size set ci): outside array x: subscript 1 (i - 1) takes -1..3`)
}

// A write that leaves its dimension, even inside the array, is refused:
// the analysis would compare its subscripts dimension by dimension.
func TestSoundRowLeavingWriteRefused(t *testing.T) {
	loops := strings.Replace(rowLeaving, `reads: "X[i][j+m]", writes: "X[i][j]"`, `reads: "X[i][j]", writes: "X[i][j+m]"`, 1)
	_, err := lowerKernel(t, "rw.yaml", soundKernel("rw", "4", rowLeavingArrays, loops))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `write X[i][j+m] (statement S1) at n=5 (size set ci): subscript 2 (j + m) takes 4..7 and leaves its dimension: extent m is 4 (0..3): a write must stay in its dimension`)
}

// A kernel the mapper refuses is refused as a description with a problem
// is: reported with its positioned message, every other kernel lowered.
func TestSoundRefusalIsolatesTheKernel(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "templates", "kernels")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	abs, err := filepath.Abs("../../machines")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(root, "machines")))
	good, err := os.ReadFile("../../templates/kernels/atx_mapped.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "atx_mapped.yaml"), good, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rl.yaml"), []byte(soundKernel("rl", "size + 1", rowLeavingArrays, rowLeaving)), 0o644))

	kernels, err := LoadKernels(root)
	var refused spec.Refused
	require.True(t, errors.As(err, &refused), "the refusal comes back as spec.Refused: %v", err)
	assert.Equal(t, []string{"rl"}, refused.Names())
	assert.Contains(t, refused.Error(), "rl.yaml:21:34: loops: read X[i][j+m]")
	assert.Contains(t, refused.Error(), "leaves its dimension") // the reason is kept
	require.Len(t, kernels, 1)
	assert.Equal(t, "atx_mapped", kernels[0].Name)
	assert.NotNil(t, kernels[0].Pattern, "the other kernel is lowered")
}

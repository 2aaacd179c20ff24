package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/work"
)

// The memory asked is the largest item's data, from the kernels' own
// argument lists, times the copies a harness holds, plus the base.
func TestMemoryFromTheLargestItem(t *testing.T) {
	ks, err := spec.LoadDir(filepath.Join("..", "..", "templates", "kernels"))
	require.NoError(t, err)
	kernels := spec.ByName(ks)
	// AXPBY's x and y: two doubles per element. CG-Solve on a minife27 grid
	// of N: (N+1)^3 rows, (3N+1)^3 non-zeros, five vectors of rows.
	assert.Equal(t, int64(16_000_000), DataBytes(kernels["axpby"], 1_000_000))
	rows, nnz := int64(11*11*11), int64(31*31*31)
	assert.Equal(t, 8*(rows+1)+16*nnz+5*8*rows, DataBytes(kernels["cgsolve"], 10))

	kernelOf := map[string]string{"axpby.serial.gcc": "axpby", "axpby.omp-host.gcc": "axpby", "dot.serial.gcc": "dot", "dot.cuda.nvcc": "dot"}
	items := []work.Item{{Cell: "axpby.serial.gcc", Size: 1000}, {Cell: "axpby.omp-host.gcc", Size: 100 << 20}, {Cell: "dot.serial.gcc", Size: 10}}
	mib, err := MemMiB(kernels, kernelOf, items)
	require.NoError(t, err)
	assert.Equal(t, int64(baseMiB+copiesOfData*16*100), mib)
	// A GPU program holds two copies in host memory.
	items = append(items, work.Item{Cell: "dot.cuda.nvcc", Size: 300 << 20, Target: "sm_90"})
	mib, err = MemMiB(kernels, kernelOf, items)
	require.NoError(t, err)
	assert.Equal(t, int64(baseMiB+gpuCopiesOfData*16*300), mib)

	_, err = MemMiB(kernels, kernelOf, []work.Item{{Cell: "nope.serial.gcc", Size: 1}})
	assert.EqualError(t, err, `memory estimate: cell "nope.serial.gcc": kernel "" unknown`)
}

// The job script exports the knobs' threads and binding where given, and
// the cluster file's mem wins over the estimate.
func TestJobScriptKnobsAndMem(t *testing.T) {
	cc, err := ParseConfig("c.yaml", []byte("mem: 16G\n"))
	require.NoError(t, err)
	s := JobScript(cc, Campaign{Dir: "/r/my campaign"}, 1, 2, "/bin/portmatrix", nil, Need{Threads: 4, Bind: "false", MemMiB: 3000})
	assert.Contains(t, s, "#SBATCH --job-name=portmatrix-my-campaign-1\n")
	assert.Contains(t, s, "#SBATCH --mem=16G\n")
	assert.NotContains(t, s, "3000M")
	assert.Contains(t, s, "\nexport OMP_NUM_THREADS=4 OMP_PROC_BIND=false\n")
	assert.Equal(t, 1, strings.Count(s, "--mem"))
}

// A task runs with the knobs the submission was given.
func TestWorkerArgsCarryThreadKnobs(t *testing.T) {
	cfg := config.Config{Root: ".", BuildDir: "build", SizeSet: "ci", Reps: 5, Timeout: 300, Threads: 2, Bind: "spread"}
	args, err := workerArgs(cfg, false)
	require.NoError(t, err)
	assert.Contains(t, args, "-threads=2")
	assert.Contains(t, args, "-bind=spread")
	cfg.Threads, cfg.Bind = 0, ""
	args, err = workerArgs(cfg, false)
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(args, " "), "-threads")
}

// A submission's need reads the plan's cells and the project's kernels;
// the cluster file's mem skips the estimate.
func TestNeedOfASubmission(t *testing.T) {
	c := Campaign{Dir: t.TempDir()}
	require.NoError(t, os.MkdirAll(c.path("plan"), 0o755))
	require.NoError(t, results.WriteBuildCSV(c.path("plan"), []results.BuildRow{{Cell: "axpby.serial.gcc-host", Kernel: "axpby"}}))
	cfg := config.Config{Root: filepath.Join("..", ".."), Threads: 3}
	items := []work.Item{{Cell: "axpby.serial.gcc-host", Size: 64 << 20, Target: "host"}}
	n, err := needOf(cfg, &Config{}, c, items)
	require.NoError(t, err)
	assert.Equal(t, Need{Threads: 3, MemMiB: baseMiB + copiesOfData*16*64}, n)
	n, err = needOf(cfg, &Config{Mem: "4G"}, c, items)
	require.NoError(t, err)
	assert.Zero(t, n.MemMiB)
}

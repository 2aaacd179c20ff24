package cluster

import (
	"fmt"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/work"
)

// Need is what a task asks of its allocation beyond the cluster file: the
// host programs' OpenMP threads (0: the allocation's CPUs) and binding
// (the PM_THREADS and PM_BIND knobs), and the memory its largest
// measurement needs (0: none asked; the cluster file's mem wins).
type Need struct {
	Threads int
	Bind    string
	MemMiB  int64
}

// copiesOfData is how many copies of a cell's arrays a host program holds
// in memory at once: the host data, the float64 reference of the outputs,
// the device arrays, their initial copy (restored before every run) and the
// device's copy of the reference (docs/design.md, the harness protocol). A
// GPU program keeps the last three on the GPU.
const copiesOfData, gpuCopiesOfData = 5, 2

// baseMiB is a task's memory apart from the data: the runner, the
// programs' runtimes, the cache-flush buffer and the STREAM arrays.
const baseMiB = 1024

// MemMiB estimates the memory of a task running items: the largest of
// copiesOfData (gpuCopiesOfData for a GPU item) times an item's data (its
// arrays' bytes at its size, from the kernel's spec), plus baseMiB.
// kernelOf maps a cell to its kernel.
// Arguments whose bytes the spec cannot say here (a snap problem) count 0;
// an item of an unknown cell or kernel is an error.
func MemMiB(kernels map[string]*spec.Kernel, kernelOf map[string]string, items []work.Item) (int64, error) {
	var most int64
	for _, it := range items {
		k := kernels[kernelOf[it.Cell]]
		if k == nil {
			return 0, fmt.Errorf("memory estimate: cell %q: kernel %q unknown", it.Cell, kernelOf[it.Cell])
		}
		copies := int64(copiesOfData)
		if it.Target != "" && it.Target != "host" {
			copies = gpuCopiesOfData
		}
		most = max(most, copies*DataBytes(k, it.Size))
	}
	return baseMiB + (most+1<<20-1)>>20, nil
}

// elemBytes is the size of an array's elements.
var elemBytes = map[string]int64{"double": 8, "int64": 8, "float": 4, "int32": 4, "int": 4}

// DataBytes is the bytes of a kernel's arrays (a CSR matrix: row pointers,
// column indices, values) at size; extents it cannot evaluate count 0.
func DataBytes(k *spec.Kernel, size int64) int64 {
	env := k.Env(size)
	var total int64
	for _, a := range k.Args {
		switch {
		case a.Type == "csr":
			rows, nnz := env[a.Name+".nrows"], env[a.Name+".nnz"]
			total += 8*(rows.I+1) + 16*nnz.I // 0 when the Env could not size it
		case a.IsArray():
			v, err := spec.Eval(a.Extent, env)
			if err != nil {
				continue
			}
			n := int64(v.Float())
			b, ok := elemBytes[a.Elem()]
			if !ok {
				b = 8
			}
			total += n * b
		}
	}
	return total
}

// needOf is the Need of a submission of items: the knobs' threads and
// binding, and, where the cluster file asks no mem, the memory estimate
// from the plan's cells and the project's kernels.
func needOf(cfg config.Config, cc *Config, c Campaign, items []work.Item) (Need, error) {
	n := Need{Threads: cfg.Threads, Bind: cfg.Bind}
	if cc.Mem != "" {
		return n, nil
	}
	rows, err := results.ReadBuildCSV(c.path("plan"))
	if err != nil {
		return n, err
	}
	kernelOf := map[string]string{}
	for _, r := range rows {
		kernelOf[r.Cell] = r.Kernel
	}
	ks, err := spec.LoadDir(filepath.Join(cfg.Root, "templates", "kernels"))
	if err != nil {
		return n, fmt.Errorf("memory estimate: %w (set mem in the cluster file)", err)
	}
	n.MemMiB, err = MemMiB(spec.ByName(ks), kernelOf, items)
	return n, err
}

// hostEnv is the job script's export of the host programs' OpenMP
// threads and binding: the knob's count, else the allocation's CPUs.
func hostEnv(n Need) string {
	threads := `"${SLURM_CPUS_PER_TASK:-1}"`
	if n.Threads > 0 {
		threads = fmt.Sprint(n.Threads)
	}
	th := run.HostThreads(1, n.Bind, nil, nil) // only the binding: a count is given
	s := "export OMP_NUM_THREADS=" + threads + " OMP_PROC_BIND=" + th.Bind
	if th.Places != "" {
		s += " OMP_PLACES=" + th.Places
	}
	return s
}

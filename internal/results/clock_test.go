package results

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Records without "clock" read with the clock their harness used: CUDA
// events for the CUDA dialect (nvcc, hipcc), the host's clock for the rest;
// a record that names its clock keeps it.
func TestOlderRecordsReadWithTheirClock(t *testing.T) {
	dir := t.TempDir()
	writeBatch(t, dir, `{"id":"a","toolchains":[{"id":"nvcc-sm90","family":"nvcc"},{"id":"cuda-x","family":"nvcc"},
{"id":"clang19-sm90","family":"llvm"},{"id":"hip-gfx90a","family":"rocm"},{"id":"gcc-host","family":"gcc"}]}`,
		`{"kind":"kernel","cell":"dot.kk-cuda-3lvl.nvcc-sm90","toolchain":"nvcc-sm90","size":8,"median_s":1,"verified":true}`,
		`{"kind":"kernel","cell":"dot.kk-cuda-3lvl.cuda-x","toolchain":"cuda-x","size":8,"median_s":1,"verified":true}`,
		`{"kind":"kernel","cell":"dot.kk-omp-a.clang19-sm90","toolchain":"clang19-sm90","size":8,"median_s":1,"verified":true}`,
		`{"kind":"kernel","cell":"dot.kk-cuda-3lvl.hip-gfx90a","toolchain":"hip-gfx90a","size":8,"median_s":1,"verified":true}`,
		`{"kind":"kernel","cell":"dot.serial.gcc-host","toolchain":"gcc-host","size":8,"median_s":1,"verified":true}`,
		`{"kind":"kernel","cell":"dot.kk-cuda-3lvl.nvcc-sm90","toolchain":"nvcc-sm90","size":9,"median_s":1,"verified":true,"clock":"host","event_times_s":[0.9],"event_median_s":0.9,"event_min_s":0.9}`,
		`{"kind":"stream","op":"dot","toolchain":"nvcc-sm90","device":"D","gbps":4000}`)
	f, err := Load(dir)
	require.NoError(t, err)
	var got []string
	for _, r := range f.Kernel {
		got = append(got, fmt.Sprintf("%s@%d %s", r.Toolchain, r.Size, r.TimedBy()))
	}
	assert.Equal(t, []string{"nvcc-sm90@8 cuda-event", "cuda-x@8 cuda-event", "clang19-sm90@8 host", "hip-gfx90a@8 cuda-event",
		"gcc-host@8 host", "nvcc-sm90@9 host"}, got, "by run.json's family, whatever the id")
	assert.Equal(t, ClockCUDAEvent, f.Stream[0].TimedBy())
	assert.Equal(t, []float64{0.9}, f.Kernel[5].EventTimesS)

	// The inferred clock is never written: a folder written again holds
	// what it held.
	var b bytes.Buffer
	for _, r := range f.Kernel[:1] {
		line, err := appendLine(nil, r)
		require.NoError(t, err)
		b.Write(line)
	}
	assert.NotContains(t, b.String(), "clock")

	// Without run.json's family, the id's prefix stands for it.
	assert.Equal(t, ClockCUDAEvent, Record{Toolchain: "nvcc-sm80"}.TimedBy())
	assert.Equal(t, ClockCUDAEvent, Record{Toolchain: "hip-gfx942"}.TimedBy())
	assert.Equal(t, ClockHost, Record{Toolchain: "clang22-sm90"}.TimedBy())
}

// The one rule of every ratio: like clocks compare, others say why not.
func TestClocksDiffer(t *testing.T) {
	assert.Empty(t, ClocksDiffer(ClockHost, ClockHost))
	assert.Empty(t, ClocksDiffer(ClockCUDAEvent, ClockCUDAEvent))
	assert.Equal(t, "clocks differ: cuda-event against host", ClocksDiffer(ClockCUDAEvent, ClockHost))
	assert.Equal(t, "clocks differ: host against cuda-event", ClocksDiffer(ClockHost, ClockCUDAEvent))
	mixed := ClockOf([]Record{{Clock: ClockHost}, {Toolchain: "nvcc-sm90"}})
	assert.Equal(t, "mixed (cuda-event, host)", mixed)
	assert.Equal(t, "clocks differ: mixed (cuda-event, host) within one measurement", ClocksDiffer(mixed, mixed),
		"a measurement whose trials mix clocks compares with nothing")
}

// Trials of one device code measured with two clocks (an older harness's
// events, the host clock since) are two measurements: a merge keeps the
// later part's, with a note, as for another launch.
func TestMergeNeverPoolsTwoClocks(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell = "spmv.kk-cuda-3lvl.nvcc-sm90"
	run := `"gpus":[{"name":"NVIDIA H200","uuid":"GPU-A"}],"toolchains":[{"id":"nvcc-sm90","family":"nvcc","version":"13.0"}]`
	rec := func(commit string, trial int, clock string) string {
		r := strings.Replace(kernelRec(cell, commit, "k", 8, trial, "13.0"), `"kind"`, `"device_hash":"h","kind"`, 1)
		if clock != "" {
			r = strings.Replace(r, `"kind"`, fmt.Sprintf(`"clock":%q,"kind"`, clock), 1)
		}
		return r
	}
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+run+`}`, rec("c1", 1, ""), rec("c1", 2, ""))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+run+`}`, rec("c2", 1, ClockHost))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"8#1 b"}, trials(t, out))
	r, err := ReadRun(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		cell + " size 8: trial 1 of batch a dropped: another clock than trial 1 of batch b",
		cell + " size 8: trial 2 of batch a dropped: another clock than trial 1 of batch b"}, r.MergeNotes)
}

// compare never ranks a run of one clock against a run of another.
func TestCompareSaysClocksDiffer(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell = "dot.kk-cuda-3lvl.nvcc-sm90"
	line := func(clock string, s float64) string {
		c := ""
		if clock != "" {
			c = fmt.Sprintf(`,"clock":%q`, clock)
		}
		return fmt.Sprintf(`{"kind":"kernel","cell":%q,"toolchain":"nvcc-sm90","size":8,"bytes":1e9,"times_s":[%g,%g,%g],"median_s":%g,"verified":true%s}`,
			cell, s, s, s, s, c)
	}
	runJSON := `{"id":"%s","toolchains":[{"id":"nvcc-sm90","family":"nvcc"}]}`
	writeBatch(t, a, fmt.Sprintf(runJSON, "a"), line("", 0.001))
	writeBatch(t, b, fmt.Sprintf(runJSON, "b"), line(ClockHost, 0.002))
	var out bytes.Buffer
	n, err := Compare(a, b, 0.1, &out)
	require.NoError(t, err)
	assert.Zero(t, n, "half the GB/s, but of another clock: no regression")
	assert.Contains(t, out.String(), "not compared (clocks differ: host against cuda-event)")
	require.NoError(t, os.WriteFile(filepath.Join(b, JSONLFile), []byte(line("", 0.002)+"\n"), 0o644))
	n, err = Compare(a, b, 0.1, &out)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the same clock: a regression")
}

// Trials of one device code whose host waited for the GPU two ways (the
// offload runtime's blocking sync, the CUDA runtime's auto scheduling the
// harness sets since: cuda_sched) are two measurements, as two clocks are.
func TestMergeNeverPoolsTwoWaysToWait(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell = "dot.kk-ompx-opt.clang22-sm90"
	run := `"gpus":[{"name":"NVIDIA H200","uuid":"GPU-A"}],"toolchains":[{"id":"clang22-sm90","family":"llvm","version":"22.1.8"}]`
	rec := func(commit string, trial int, sched string) string {
		r := strings.Replace(kernelRec(cell, commit, "k", 8, trial, "22.1.8"), `"kind"`, `"device_hash":"h","clock":"host","kind"`, 1)
		if sched != "" {
			r = strings.Replace(r, `"kind"`, fmt.Sprintf(`"cuda_sched":%q,"kind"`, sched), 1)
		}
		return r
	}
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+run+`}`, rec("c1", 1, ""), rec("c1", 2, ""))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+run+`}`, rec("c2", 1, "auto"))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"8#1 b"}, trials(t, out))
	r, err := ReadRun(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		cell + " size 8: trial 1 of batch a dropped: another wait for the GPU (cuda_sched) than trial 1 of batch b",
		cell + " size 8: trial 2 of batch a dropped: another wait for the GPU (cuda_sched) than trial 1 of batch b"}, r.MergeNotes)
	// the same way to wait pools
	c := filepath.Join(root, "c")
	writeRun(t, c, `{"id":"c","commit":"c2","finished":"x",`+run+`}`, rec("c2", 1, "auto"))
	out2 := filepath.Join(root, "out2")
	require.NoError(t, Merge(out2, []string{b, c}))
	assert.Len(t, trials(t, out2), 2)
}

// Trials after a flush that wrote the L2 full of dirty lines and after one
// that read it never pool: the later flush's trials win, the earlier are
// dropped with a note naming the flush. Records without flush_by and with
// flush_l2 true were flushed by writing; without a flush there is no method.
func TestMergeNeverPoolsTwoFlushes(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell = "dot.kk-cuda-3lvl.nvcc-sm90"
	run := `"gpus":[{"name":"NVIDIA H200","uuid":"GPU-A"}],"toolchains":[{"id":"nvcc-sm90","family":"nvcc","version":"13.0"}]`
	rec := func(commit string, trial int, flush string) string {
		r := strings.Replace(kernelRec(cell, commit, "k", 8, trial, "13.0"), `"kind"`, `"device_hash":"h","clock":"host","flush_l2":true,"kind"`, 1)
		if flush != "" {
			r = strings.Replace(r, `"kind"`, fmt.Sprintf(`"flush_by":%q,"kind"`, flush), 1)
		}
		return r
	}
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+run+`}`, rec("c1", 1, ""), rec("c1", 2, "write"))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+run+`}`, rec("c2", 1, "read"))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"8#1 b"}, trials(t, out))
	r, err := ReadRun(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		cell + " size 8: trial 1 of batch a dropped: another flush of the L2 (flush_by) than trial 1 of batch b",
		cell + " size 8: trial 2 of batch a dropped: another flush of the L2 (flush_by) than trial 1 of batch b"}, r.MergeNotes)
	// absent flush_by with a flush is a write: the two trials of a pool
	out2 := filepath.Join(root, "out2")
	require.NoError(t, MergeWith(out2, []string{a}, MergeOptions{Kernels: []string{"dot"}}))
	assert.Len(t, trials(t, out2), 2)
	assert.Equal(t, "", Record{}.Flush(), "no flush, no method")
}

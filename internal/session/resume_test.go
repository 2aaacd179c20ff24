package session

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The comparison a resumption makes: each knob that differs, recorded
// value and asked value, then the cells; how to resume the folder as it was.
func TestDifferencesNameEachSetting(t *testing.T) {
	first := config.Config{Kernels: []string{"axpby"}, Variants: []string{"serial"}, SizeSet: "ci", Reps: 2, Warmup: 1, RepSeconds: 2}
	again := config.Config{Kernels: []string{"dot"}, Variants: []string{"omp-host"}, SizeSet: "ci", Reps: 5, Warmup: 1, RepSeconds: 2,
		Sizes: config.Sizes{"": {2000}}}
	rec := selectionOf(first, 1, false, []string{"axpby.serial.gcc-host"})
	asked := selectionOf(again, 1, false, []string{"dot.omp-host.gcc-host"})
	assert.Equal(t, []difference{
		{"PM_KERNELS", "axpby", "dot"},
		{"PM_VARIANTS", "serial", "omp-host"},
		{"PM_SIZES", "(the size set's)", "2000"},
		{"PM_REPS", "2", "5"},
		{"cells measured", "axpby.serial.gcc-host", "dot.omp-host.gcc-host"},
	}, differences(rec, asked, resumeKnobs))
	assert.Empty(t, differences(rec, rec, resumeKnobs))
	// The filters are sets: the order they are given in is no difference.
	a := selectionOf(config.Config{Kernels: []string{"dot", "axpby"}}, 1, false, nil)
	b := selectionOf(config.Config{Kernels: []string{"axpby", "dot", "dot"}}, 1, false, nil)
	assert.Empty(t, differences(a, b, resumeKnobs))
	// Trials, the GPU and the protocol's knobs count.
	c := rec
	c.Trials, c.GPU, c.FlushL2 = 3, true, "off"
	assert.Equal(t, []string{"PM_TRIALS", "PM_GPU", "PM_FLUSH_L2"}, whats(differences(rec, c, resumeKnobs)))

	env, flags := settingsOf(rec, "results/x", resumeKnobs)
	assert.Equal(t, "PM_RESUME=1 PM_OUT=results/x PM_KERNELS=axpby PM_VARIANTS=serial PM_SUITE=full PM_SIZE_SET=ci PM_REPS=2 PM_WARMUP=1 PM_REP_SECONDS=2 PM_TRIALS=1 PM_GPU=0", env)
	assert.Equal(t, "-resume -out results/x -kernels=axpby -variants=serial -suite=full -size-set=ci -reps=2 -warmup=1 -rep-seconds=2 -trials=1 -gpu=0", flags)
	// What the knobs print reads back as the same selection.
	back, err := config.FromEnviron(strings.Fields(env))
	require.NoError(t, err)
	back.Defaults()
	assert.Empty(t, differences(rec, selectionOf(back, back.Trials, back.GPU == "1", rec.Cells), resumeKnobs))
}

func whats(ds []difference) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.What)
	}
	return out
}

var dotCell = build.Entry{ID: "dot.omp-host.gcc-host", Kernel: "dot", Variant: "omp-host", Strategy: "omp-host",
	Toolchain: "gcc-host", Target: "host", Binary: "gcc-host/dot.omp-host", Status: build.Built, Log: "logs/dot.log",
	Sizes: map[string][]int64{"ci": {5, 6}}}

// resumeConfig selects kernel and variant of the fake build bd into out.
func resumeConfig(bd, out, kernels, variants string, reps int) config.Config {
	return config.Config{Root: filepath.Join("..", ".."), BuildDir: bd, Out: out, GPU: "0", SizeSet: "ci", Reps: reps,
		Kernels: config.List(kernels), Variants: config.List(variants), Log: &bytes.Buffer{}}
}

// snapshot is every file of dir by its path, with its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(b)
		return err
	}))
	return out
}

// A finished axpby/serial folder resumed with dot/omp-host, size 2000 and 5
// reps is refused, each difference named with how to resume it as it was,
// and the folder is byte for byte as it was. Asked for as a batch, the new
// selection is measured beside the first: every byte of results.jsonl and
// every row of build.csv stay, run.json's first run is its first batch.
func TestResumeWithAnotherSelection(t *testing.T) {
	first := hostCell
	first.Log = "logs/axpby.log"
	bd := buildDir(t, first, dotCell)
	require.NoError(t, os.MkdirAll(filepath.Join(bd, "logs"), 0o755))
	for _, f := range []string{"axpby", "dot"} {
		require.NoError(t, os.WriteFile(filepath.Join(bd, "logs", f+".log"), []byte("built "+f+"\n"), 0o644))
	}
	out := filepath.Join(t.TempDir(), "old")
	_, err := Run(context.Background(), resumeConfig(bd, out, "axpby", "serial", 2))
	require.NoError(t, err)
	before := snapshot(t, out)
	require.Contains(t, before, "/"+results.BuildFile)
	jsonl, csv := before["/"+results.JSONLFile], before["/"+results.BuildFile]

	again := resumeConfig(bd, out, "dot", "omp-host", 5)
	again.Sizes, again.Resume = config.Sizes{"": {2000}}, true
	for _, check := range []func() error{func() error { return CheckResume(again) }, func() error { _, err := Run(context.Background(), again); return err }} {
		err = check()
		require.Error(t, err)
		msg := err.Error()
		for _, want := range []string{"records another selection", "not resumed, nothing written",
			"PM_KERNELS: recorded axpby, asked dot", "PM_VARIANTS: recorded serial, asked omp-host",
			"PM_SIZES: recorded (the size set's), asked 2000", "PM_REPS: recorded 2, asked 5",
			"resume it as it was: PM_RESUME=1 PM_OUT=" + out + " PM_KERNELS=axpby PM_VARIANTS=serial",
			"PM_RESUME=batch"} {
			assert.Contains(t, msg, want)
		}
		assert.Equal(t, before, snapshot(t, out), "the refused folder is unchanged")
	}

	// The same selection resumes (nothing is left to measure); a folder
	// stays finished, its records and build rows as they were.
	same := resumeConfig(bd, out, "axpby", "serial", 2)
	same.Resume = true
	_, err = Run(context.Background(), same)
	require.NoError(t, err)
	after := snapshot(t, out)
	assert.Equal(t, jsonl, after["/"+results.JSONLFile])
	assert.Equal(t, csv, after["/"+results.BuildFile])
	r, err := results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, results.StateFinished, r.Status())
	assert.Len(t, r.Resumed, 1)

	// As a batch of its own.
	again.ResumeBatch = true
	_, err = Run(context.Background(), again)
	require.NoError(t, err)
	after = snapshot(t, out)
	assert.True(t, strings.HasPrefix(after["/"+results.JSONLFile], jsonl), "results.jsonl only grows")
	assert.True(t, strings.HasPrefix(after["/"+results.BuildFile], csv), "build.csv keeps its rows")
	assert.Contains(t, after["/"+results.BuildFile], "dot.omp-host.gcc-host")
	assert.Equal(t, before["/logs/build/axpby.serial.gcc-host.log"], after["/logs/build/axpby.serial.gcc-host.log"])
	assert.Equal(t, "built dot\n", after["/logs/build/dot.omp-host.gcc-host.log"])
	r2, err := results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, 2, r2.Reps, "the first run's settings stay")
	assert.Equal(t, r.Selection, r2.Selection)
	assert.Equal(t, r.Started, r2.Started)
	require.Len(t, r2.Batches, 2)
	assert.Equal(t, r.ID, r2.Batches[0].ID)
	assert.Equal(t, r.Selection, r2.Batches[0].Selection)
	b := r2.Batches[1]
	assert.Equal(t, r.ID+"-b2", b.ID)
	require.NotNil(t, b.Selection)
	assert.Equal(t, 5, b.Selection.Reps)
	assert.Equal(t, "2000", b.Selection.Sizes)
	assert.NotEmpty(t, b.Started)
	assert.Equal(t, results.StateFinished, r2.Status())
	assert.Equal(t, 2, r2.Cells.Total)
	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	var ids []string
	for _, rec := range recs {
		if rec.Kind == results.KindKernel {
			ids = append(ids, rec.Cell+"/"+rec.BatchID)
		}
	}
	assert.Equal(t, []string{"axpby.serial.gcc-host/", "dot.omp-host.gcc-host/" + b.ID}, ids)
	_, err = results.Load(out)
	require.NoError(t, err)

	// The batch, resumed as it was, measures nothing again; resumed as the
	// first run, it is refused: the last batch is what a resumption continues.
	again.ResumeBatch = false
	_, err = Run(context.Background(), again)
	require.NoError(t, err)
	recs2, _ := results.ReadJSONL(out)
	assert.Len(t, recs2, len(recs))
	_, err = Run(context.Background(), same)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PM_KERNELS: recorded dot, asked axpby")
}

// An interrupted folder resumed with fewer kernels than it began with is
// refused (no batch is added to it either); resumed with its selection, it
// measures what is missing and is finished.
func TestInterruptedResumedWithFewerKernels(t *testing.T) {
	bd := buildDir(t, hostCell, dotCell)
	out := filepath.Join(t.TempDir(), "cut")
	both := resumeConfig(bd, out, "axpby,dot", "serial,omp-host", 2)
	_, err := Run(context.Background(), both)
	require.NoError(t, err)
	// Cut it after its first measurement, as a kill leaves it.
	r, err := results.ReadRun(out)
	require.NoError(t, err)
	r.State, r.Finished = results.StateInterrupted, ""
	require.NoError(t, results.WriteRun(out, r))
	b, err := os.ReadFile(filepath.Join(out, results.JSONLFile))
	require.NoError(t, err)
	firstLine := b[:bytes.IndexByte(b, '\n')+1]
	require.NoError(t, os.WriteFile(filepath.Join(out, results.JSONLFile), firstLine, 0o644))
	before := snapshot(t, out)

	fewer := resumeConfig(bd, out, "axpby", "serial,omp-host", 2)
	fewer.Resume = true
	_, err = Run(context.Background(), fewer)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PM_KERNELS: recorded axpby,dot, asked axpby")
	assert.Contains(t, err.Error(), "cells measured: recorded axpby.serial.gcc-host, dot.omp-host.gcc-host, asked axpby.serial.gcc-host")
	fewer.ResumeBatch = true
	_, err = Run(context.Background(), fewer)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is an interrupted run; a batch is added to a finished one only")
	assert.Equal(t, before, snapshot(t, out))

	both.Resume = true
	_, err = Run(context.Background(), both)
	require.NoError(t, err)
	r, err = results.ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, results.StateFinished, r.Status())
	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	assert.Len(t, recs, 3, "axpby at 5, dot at 5 and 6")
	after, err := os.ReadFile(filepath.Join(out, results.JSONLFile))
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(after, firstLine))
}

// A folder written before selections were recorded: its run.json names the
// size set, reps, warm-up and trials, its build.csv the cells it measured;
// a resumption with other cells is refused all the same.
func TestResumeOfAnOlderFolder(t *testing.T) {
	bd := buildDir(t, hostCell, dotCell)
	out := filepath.Join(t.TempDir(), "older")
	_, err := Run(context.Background(), resumeConfig(bd, out, "axpby", "serial", 2))
	require.NoError(t, err)
	r, err := results.ReadRun(out)
	require.NoError(t, err)
	r.Selection = nil
	require.NoError(t, results.WriteRun(out, r))
	again := resumeConfig(bd, out, "dot", "omp-host", 5)
	again.Resume = true
	_, err = Run(context.Background(), again)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PM_REPS: recorded 2, asked 5")
	assert.Contains(t, err.Error(), "cells measured: recorded axpby.serial.gcc-host, asked dot.omp-host.gcc-host")
	assert.Contains(t, err.Error(), "predates recorded selections")
}

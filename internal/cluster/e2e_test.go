package cluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/host/smitest"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/testenv"
	"github.com/portmatrix/portmatrix/internal/work"
)

var (
	fixtureOnce sync.Once
	fixtureRoot string
	fixtureBin  string
	fixtureErr  error
	fixtureLog  bytes.Buffer
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureRoot != "" {
		os.RemoveAll(fixtureRoot)
	}
	os.Exit(code)
}

// builtMatrix is a scratch repository with the gcc-host cells of axpby and
// dot built, and the portmatrix CLI that workers run; made once per test binary.
func builtMatrix(t *testing.T) (root, bin string) {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	fixtureOnce.Do(func() {
		t0 := time.Now()
		fixtureRoot, fixtureErr = os.MkdirTemp("", "pm-cluster-")
		if fixtureErr != nil {
			return
		}
		for _, d := range []string{"templates", "variants", "harness", "machines", "toolchains.yaml"} {
			if out, err := exec.Command("cp", "-r", filepath.Join("..", "..", d), fixtureRoot).CombinedOutput(); err != nil {
				fixtureErr = err
				fixtureLog.Write(out)
				return
			}
		}
		fixtureBin = filepath.Join(fixtureRoot, "portmatrix")
		cmd := exec.Command("go", "build", "-o", fixtureBin, "./cmd/portmatrix")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fixtureErr = err
			fixtureLog.Write(out)
			return
		}
		// The CLI generates and builds: the stage table lives above this package.
		for _, s := range []string{"generate", "build"} {
			cmd := exec.Command(fixtureBin, "-root", fixtureRoot, "-build-dir", filepath.Join(fixtureRoot, "build"), "-kernels", "axpby,dot",
				"-toolchains", "gcc-host", "-variants", "serial,omp-host,omp-raw,kk-omp-b", s)
			out, err := cmd.CombinedOutput()
			fixtureLog.Write(out)
			if fixtureErr = err; err != nil {
				return
			}
		}
		fixtureLog.WriteString("fixture built in " + time.Since(t0).Round(time.Millisecond).String() + "\n")
	})
	require.NoError(t, fixtureErr, fixtureLog.String())
	return fixtureRoot, fixtureBin
}

func matrixConfig(root string, log *bytes.Buffer) config.Config {
	return config.Config{Root: root, Kernels: []string{"axpby", "dot"}, Toolchains: []string{"gcc-host"},
		Variants: []string{"serial", "omp-host", "omp-raw", "kk-omp-b"},
		Reps:     5, Warmup: 1, Trials: 1, Timeout: 120, Log: log}
}

// checkCollected asserts that the campaign folder holds every planned item
// exactly once, verified, with the worker's provenance.
func checkCollected(t *testing.T, dir string, plan []work.Item) []results.Record {
	t.Helper()
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	seen := map[string]int{}
	var kernels []results.Record
	for _, r := range recs {
		if r.Kind != "kernel" {
			continue
		}
		kernels = append(kernels, r)
		key := r.Unit().String()
		seen[key]++
		assert.True(t, r.Verified, "%s: %s", key, r.Error)
		assert.NotEmpty(t, r.Shard, key)
		assert.NotEmpty(t, r.Node, key)
	}
	for _, it := range plan {
		assert.Equal(t, 1, seen[it.Key()], "%s measured %d times", it.Key(), seen[it.Key()])
	}
	assert.Len(t, seen, len(plan))
	for _, f := range []string{"run.json", "results.csv", "build.csv", "cluster.json"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	return kernels
}

// Two fake GPUs (a fake nvidia-smi on PATH): a worker each, items handed out
// from one queue, each record with its GPU's UUID, and the agreement check
// over the items both measured.
func TestGPUWorkersShareOneQueue(t *testing.T) {
	testenv.Long(t) // builds the CLI and eight cells (builtMatrix)
	root, bin := builtMatrix(t)
	fake := t.TempDir()
	smitest.Install(t, fake, false,
		host.SMI{Index: "0", UUID: "GPU-aaaaaaaa-0000", Name: "Fake GPU", Driver: "1.0", MemoryMiB: 1024, ComputeCap: "9.0"},
		host.SMI{Index: "1", UUID: "GPU-bbbbbbbb-1111", Name: "Fake GPU", Driver: "1.0", MemoryMiB: 1024, ComputeCap: "9.0"})
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	var log bytes.Buffer
	cfg := matrixConfig(root, &log)
	cfg.Out = filepath.Join(t.TempDir(), "gpus")
	cfg.Trials = 2 // items are (cell, size, trial)
	cfg.FlushL2 = "off"
	// Each worker measures STREAM once: checked here, not measured, so its
	// runs stop after 3 x rep-seconds (the kernels' calls are far shorter).
	cfg.RepSeconds, cfg.RepSecondsSet = 0.05, true
	t0 := time.Now()
	sum, err := RunGPUs(context.Background(), cfg, nil, bin)
	require.NoError(t, err, log.String())
	t.Logf("2 fake GPUs: %d items in %s", sum.Planned, time.Since(t0).Round(time.Millisecond))
	plan, err := work.ReadItems(Campaign{Dir: cfg.Out}.PlanFile())
	require.NoError(t, err)
	require.NotEmpty(t, plan)
	recs := checkCollected(t, cfg.Out, plan)
	perGPU := map[string]int{}
	for _, r := range recs {
		perGPU[r.GPUUUID]++
		assert.Equal(t, "gpu"+map[string]string{"GPU-aaaaaaaa-0000": "0", "GPU-bbbbbbbb-1111": "1"}[r.GPUUUID], r.Worker)
	}
	assert.Len(t, perGPU, 2, "both workers took items: %v", perGPU)
	require.Len(t, sum.Agreement, 1, log.String()) // one toolchain: one item on both GPUs
	assert.Len(t, sum.Agreement[0].GPUs, 2)
	assert.Contains(t, log.String(), "gpu agreement: 1 items measured on every GPU")
	assert.Contains(t, log.String(), "[gpu1] run: ")
	assert.Empty(t, sum.Missing)

	// Nothing missing: a second run measures nothing and keeps the folder.
	log.Reset()
	sum2, err := RunGPUs(context.Background(), cfg, nil, bin)
	require.NoError(t, err, log.String())
	assert.Contains(t, log.String(), "0 of "+strconv.Itoa(len(plan))+" items")
	checkCollected(t, cfg.Out, plan)
	assert.Equal(t, sum.Measured, sum2.Measured)
}

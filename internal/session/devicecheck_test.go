package session

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/run"
)

// onAnH200 makes this process's probe see one NVIDIA H200 (the model
// h200-sxm-141gb reports it), and the device query answer with the H200's
// real properties changed by edit; it returns how many times the device
// was asked.
func onAnH200(t *testing.T, edit func(*machine.Observed)) *int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "machine", "testdata", "device-h200.json"))
	require.NoError(t, err)
	list, err := machine.ParseDeviceJSON(data)
	require.NoError(t, err)
	dev := list[0]
	edit(&dev)
	probeOnce.Do(func() {})
	oldProbe, oldQuery := probed, deviceQuery
	probed = host.Info{GPUs: []host.GPU{{Name: "NVIDIA H200", UUID: "GPU-test", Vendor: "nvidia"}}}
	asked := 0
	deviceQuery = func(string) run.DeviceQuery {
		return func(context.Context) (machine.Observed, string, error) {
			asked++
			return dev, "a fake query", nil
		}
	}
	t.Cleanup(func() { probed, deviceQuery = oldProbe, oldQuery })
	return &asked
}

// buildDir writes a manifest of cells (each binary a fake program with its
// build key) and returns the folder.
func buildDir(t *testing.T, cells ...build.Entry) string {
	t.Helper()
	bd := t.TempDir()
	for _, e := range cells {
		require.NoError(t, os.MkdirAll(filepath.Join(bd, filepath.Dir(e.Binary)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(bd, e.Binary), []byte(fakeProgram), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(bd, e.Binary+".key"), []byte("key-"+e.ID+"\n"), 0o644))
	}
	m := build.Manifest{Toolchains: map[string]build.ToolchainInfo{
		"gcc-host":  {ID: "gcc-host", Family: "gcc", Target: "host"},
		"nvcc-sm90": {ID: "nvcc-sm90", Family: "nvcc", Target: "sm_90"}}, Cells: cells}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(build.ManifestFile(bd), b, 0o644))
	return bd
}

var (
	gpuCell = build.Entry{ID: "spmv.kk-cuda-3lvl.nvcc-sm90", Kernel: "spmv", Variant: "kk-cuda-3lvl", Strategy: "kk-cuda",
		Toolchain: "nvcc-sm90", Target: "sm_90", Binary: "nvcc-sm90/spmv.kk-cuda-3lvl", Status: build.Built,
		Sizes: map[string][]int64{"ci": {5}}}
	hostCell = build.Entry{ID: "axpby.serial.gcc-host", Kernel: "axpby", Variant: "serial", Strategy: "serial",
		Toolchain: "gcc-host", Target: "host", Binary: "gcc-host/axpby.serial", Status: build.Built,
		Sizes: map[string][]int64{"ci": {5}}}
)

// A run or a tuning of a GPU cell on a device its machine model does not
// describe (an H200 model, a device with 114 SMs) stops before anything is
// measured, with an error at the model's line naming the field.
func TestWrongDeviceStopsRunAndTune(t *testing.T) {
	asked := onAnH200(t, func(o *machine.Observed) { o.SMCount = 114 })
	cell := gpuCell
	cell.Space = recorded(t, cell.ID).Space // the space the build records: the tuning gets as far as the device
	bd := buildDir(t, cell)
	var log bytes.Buffer
	cfg := config.Config{Root: filepath.Join("..", ".."), BuildDir: bd, GPU: "1", SizeSet: "ci", Log: &log}
	want := filepath.Join("..", "..", "machines", "h200-sxm-141gb.yaml") +
		`:30:21: sm_count: model 132, device reports 114 (the device "NVIDIA H200" as a fake query reports it, checked against machine h200-sxm-141gb)`

	cfg.Out = filepath.Join(t.TempDir(), "run")
	_, err := Run(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.NoDirExists(t, cfg.Out, "nothing is written")
	assert.Equal(t, 1, *asked)

	cfg.Out = filepath.Join(t.TempDir(), "tune")
	_, err = Tune(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.NoFileExists(t, filepath.Join(cfg.Out, "tuning.jsonl"), "nothing is measured")
	assert.Equal(t, 2, *asked)
}

// A host run is not checked: the query is never asked, though a GPU is here
// and its model would not match.
func TestHostRunIsNotChecked(t *testing.T) {
	asked := onAnH200(t, func(o *machine.Observed) { o.SMCount = 114 })
	var log bytes.Buffer
	cfg := config.Config{Root: filepath.Join("..", ".."), BuildDir: buildDir(t, hostCell, gpuCell), GPU: "1", SizeSet: "ci",
		Variants: []string{"serial"}, Reps: 1, Trials: 1, Log: &log, Out: filepath.Join(t.TempDir(), "run")}
	_, err := Run(context.Background(), cfg)
	require.NoError(t, err, log.String())
	assert.Equal(t, 0, *asked)
}

// A device that matches its model runs, and the log says it was checked.
func TestMatchingDeviceIsChecked(t *testing.T) {
	asked := onAnH200(t, func(*machine.Observed) {})
	var log bytes.Buffer
	cfg := config.Config{Root: filepath.Join("..", ".."), BuildDir: buildDir(t, gpuCell), GPU: "1", SizeSet: "ci",
		Reps: 1, Trials: 1, Log: &log, Out: filepath.Join(t.TempDir(), "run")}
	_, err := Run(context.Background(), cfg)
	assert.Equal(t, 1, *asked)
	assert.Contains(t, log.String(), `machine h200-sxm-141gb: the device "NVIDIA H200" matches it (a fake query)`)
	if err != nil {
		assert.NotContains(t, err.Error(), "machine model")
	}
}

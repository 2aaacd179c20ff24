package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/host/smitest"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// fakeH200 is the GPU host's one GPU: its nvidia-smi (smitest) answers
// gpu-run.sh's queries and internal/host's.
var fakeH200 = host.SMI{Index: "0", UUID: "GPU-0000", Name: "NVIDIA H200", Driver: "550.54", MemoryMiB: 143771, ComputeCap: "9.0"}

// fakeProgram is a built cell: it prints one harness record per call, and
// with FAKE_SLOW set it hangs at size 6 (a run cut by PM_RUN_LIMIT).
const fakeProgram = `#!/bin/sh
size=$2
if [ "$size" = 6 ] && [ -n "$FAKE_SLOW" ]; then exec sleep 60; fi
echo "{\"kind\":\"kernel\",\"size\":$size,\"reps\":1,\"median_s\":0.001,\"min_s\":0.001,\"gbps\":1,\"verified\":true}"
`

// gpuBundle makes what scripts/gpu-bundle.sh makes, with a fake cell: the
// CLI (xz), build.tar.xz (manifest and binary) and COMMIT.
func gpuBundle(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle-t")
	bd := filepath.Join(t.TempDir(), "build")
	require.NoError(t, os.MkdirAll(filepath.Join(bd, "gcc-host"), 0o755))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bd, "gcc-host", "axpby.serial"), []byte(fakeProgram), 0o755))
	m := build.Manifest{Toolchains: map[string]build.ToolchainInfo{"gcc-host": {ID: "gcc-host", Family: "gcc", Target: "host"}},
		Cells: []build.Entry{{ID: "axpby.serial.gcc-host", Kernel: "axpby", Variant: "serial", Strategy: "serial",
			Toolchain: "gcc-host", Target: "host", Binary: "gcc-host/axpby.serial", Status: build.Built,
			Sizes: map[string][]int64{"ci": {5}}}}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(build.ManifestFile(bd), b, 0o644))
	command(t, bd, nil, "tar", "-cJf", filepath.Join(dir, "build.tar.xz"), ".")
	cli := filepath.Join(t.TempDir(), "portmatrix")
	command(t, filepath.Join("..", ".."), []string{"CGO_ENABLED=0"}, "go", "build", "-o", cli, "./cmd/portmatrix")
	command(t, dir, nil, "sh", "-c", "xz -c "+cli+" >portmatrix.xz")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "COMMIT"), []byte("0123abc\n"), 0o644))
	return dir
}

func command(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v:\n%s", name, args, out)
	return string(out)
}

// gpuRun runs scripts/gpu-run.sh in a fresh folder (a GPU host), returning
// the folder and the script's output.
func gpuRun(t *testing.T, bundle string, env ...string) (string, string) {
	t.Helper()
	host := t.TempDir()
	shims := t.TempDir()
	smitest.Install(t, shims, false, fakeH200)
	require.NoError(t, os.WriteFile(filepath.Join(host, "toolchains.yaml"), nil, 0o644)) // as in a checkout: no sources unpacked
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "gpu-run.sh"))
	require.NoError(t, err)
	var clean []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PM_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "OUT=") {
			clean = append(clean, kv)
		}
	}
	cmd := exec.Command("bash", script, bundle, "-kernels", "axpby", "-sizes", "5,6", "-trials", "1", "-reps", "1")
	cmd.Dir = host
	cmd.Env = append(append(clean, "PATH="+shims+":"+os.Getenv("PATH"), "PM_HOST_BUILD="), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return host, string(out)
}

// docs/gpu.md: a run cut by PM_RUN_LIMIT continues in a later job (on
// another machine) given PM_RESUME_FROM=<tarball> and the same arguments;
// what finished is kept.
func TestGPURunResumesFromItsTarball(t *testing.T) {
	testenv.Long(t) // builds and packs the CLI, runs gpu-run.sh twice
	for _, tool := range []string{"bash", "tar", "xz", "timeout", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not found")
		}
	}
	bundle := gpuBundle(t)
	first, out := gpuRun(t, bundle, "PM_RUN_LIMIT=3", "FAKE_SLOW=1")
	tars, err := filepath.Glob(filepath.Join(first, "out", "*-nvidia-h200-bundle-t.tar.gz"))
	require.NoError(t, err)
	require.Len(t, tars, 1, out)
	id := strings.TrimSuffix(filepath.Base(tars[0]), ".tar.gz")
	cut, err := results.ReadRun(filepath.Join(first, "results", id))
	require.NoError(t, err)
	assert.Equal(t, results.StateInterrupted, cut.Status(), out)

	second, out := gpuRun(t, bundle, "PM_RESUME_FROM="+tars[0])
	dir := filepath.Join(second, "results", id)
	r, err := results.ReadRun(dir)
	require.NoError(t, err, out)
	assert.Equal(t, results.StateFinished, r.Status())
	assert.Len(t, r.Resumed, 1)
	assert.Equal(t, []results.GPU{{Name: "NVIDIA H200", Driver: "550.54", MemoryMiB: 143771, UUID: "GPU-0000", Vendor: "nvidia"}}, r.GPUs, "the host record as nvidia-smi lists it")
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	sizes := map[int64]int{}
	for _, rec := range recs {
		if rec.Kind == results.KindKernel {
			sizes[rec.Size]++
			assert.True(t, rec.Verified, "size %d: %s", rec.Size, rec.Error)
		}
	}
	assert.Equal(t, map[int64]int{5: 1, 6: 1}, sizes, "size 5 kept from the cut run, size 6 measured once")
	assert.FileExists(t, filepath.Join(second, "out", id+".tar.gz"))
}

package run

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/portmatrix/portmatrix/internal/build"
)

// A GPU program must offload: a runtime without its device plugin fails the
// program rather than measuring the host fallback as the GPU. A host
// program's target regions run on the host by design.
func TestGPUProgramsMustOffload(t *testing.T) {
	gpu := programEnv(build.Entry{Target: "sm_90", Toolchain: "gcc12-nvptx"}, Options{BuildDir: t.TempDir(), DeviceName: "NVIDIA H100"})
	assert.Contains(t, gpu, "OMP_TARGET_OFFLOAD=MANDATORY")
	assert.Contains(t, gpu, "PM_DEVICE_NAME=NVIDIA H100")
	host := programEnv(build.Entry{Target: "host", Toolchain: "gcc-host"}, Options{BuildDir: t.TempDir()})
	assert.NotContains(t, host, "OMP_TARGET_OFFLOAD=MANDATORY")
}

package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// compile builds src with the command (skips when it is missing) and returns
// the binary and the toolchain that built it.
func compile(t *testing.T, command, name, src string, flags ...string) (string, *toolchain.Toolchain) {
	testenv.Long(t) // compiles a GPU program
	path, err := exec.LookPath(command)
	if err != nil {
		t.Skipf("%s not found", command)
	}
	if _, err := exec.LookPath("cuobjdump"); err != nil {
		t.Skip("cuobjdump not found")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	bin := filepath.Join(dir, "prog")
	out, err := exec.Command(path, append(flags, "-o", bin, file)...).CombinedOutput()
	if err != nil {
		t.Skipf("%s cannot build for sm_90 here: %v\n%s", command, err, out)
	}
	return bin, &toolchain.Toolchain{ID: command, Path: path, Target: "sm_90"}
}

// An LLVM OpenMP offload binary: the image comes out of .llvm.offloading.
func TestKernelResourcesLLVM(t *testing.T) {
	bin, tc := compile(t, "clang++-19", "k.cpp", `
int main() {
  double s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s) map(tofrom : s)
  for (int i = 0; i < 1000; ++i) s += i * 0.5;
  return s > 0 ? 0 : 1;
}
`, "-O2", "-fopenmp", "--offload-arch=sm_90", "--libomptarget-nvptx-bc-path=/usr/lib/llvm-19/lib", "-Wno-unknown-cuda-version")
	images, err := offloadImages(bin)
	require.NoError(t, err)
	require.Len(t, images, 1)
	assert.Equal(t, "nvptx64-nvidia-cuda", images[0].Triple)
	assert.Equal(t, "sm_90", images[0].Arch)
	ks, note := kernelResources(context.Background(), bin, tc)
	require.Empty(t, note)
	require.NotEmpty(t, ks)
	assert.True(t, strings.HasPrefix(ks[0].Name, "__omp_offloading_"), ks[0].Name)
	assert.Positive(t, ks[0].Registers)
	assert.Equal(t, "sm_90", ks[0].Arch)
}

// An nvcc fat binary is read whole; the static shared memory is the kernel's
// own (512 bytes), as ptxas -v says.
func TestKernelResourcesNVCC(t *testing.T) {
	bin, tc := compile(t, "nvcc", "k.cu", `
__global__ void k(const double* x, double* y) {
  __shared__ double s[64];
  s[threadIdx.x % 64] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
int main() { k<<<1, 64>>>(nullptr, nullptr); return 0; }
`, "-arch=sm_90")
	images, err := offloadImages(bin)
	require.NoError(t, err)
	assert.Empty(t, images, "no .llvm.offloading in an nvcc binary")
	ks, note := kernelResources(context.Background(), bin, tc)
	require.Empty(t, note)
	require.Len(t, ks, 1)
	assert.Equal(t, Kernel{Name: "_Z1kPKdPd", Arch: "sm_90", Registers: ks[0].Registers, SharedBytes: 512}, ks[0])
}

// Without cuobjdump the build goes on without resources, and says why.
func TestKernelResourcesMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ks, note := kernelResources(context.Background(), "/nonexistent", &toolchain.Toolchain{Target: "sm_90"})
	assert.Empty(t, ks)
	assert.Contains(t, note, "no cuobjdump")
	ks, note = kernelResources(context.Background(), "/nonexistent", &toolchain.Toolchain{Target: "host"})
	assert.Empty(t, ks)
	assert.Empty(t, note, "a host cell has no kernel resources to record")
}

// tune-register-limit: a block whose registers exceed the 65536 of a block
// does not launch ("too many resources requested for launch"), as the
// tuning's 512- and 1024-thread teams of a 130-register kernel did.
// The kernel keeps 48 doubles live (about 100 registers); the program reads
// its registers (cudaFuncGetAttributes), prints the arithmetic of the
// occupancy rule and launches the largest block that fits and the next.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void heavy(const double* in, double* out, int n) {
  double r[48];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 48; ++k) r[k] = in[(i + k * 977) % n];
#pragma unroll
  for (int s = 0; s < 8; ++s)
#pragma unroll
    for (int k = 0; k < 48; ++k) r[k] = r[k] * r[(k + 7) % 48] + r[(k + 13) % 48];
  double sum = 0;
#pragma unroll
  for (int k = 0; k < 48; ++k) sum += r[k];
  if (i < n) out[i] = sum;
}

int main() {
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, heavy);
  const int regs = a.numRegs;
  const int perWarp = (regs * 32 + 255) / 256 * 256;  // allocated in units of 256
  std::printf("registers per thread %d: %d per warp (rounded to 256), most threads a block %d\n", regs, perWarp,
              a.maxThreadsPerBlock);
  const int n = 1 << 20;
  double *in, *out;
  cudaMalloc(&in, n * sizeof(double));
  cudaMalloc(&out, n * sizeof(double));
  cudaMemset(in, 0, n * sizeof(double));
  int verdict = 1;
  for (int threads : {a.maxThreadsPerBlock, a.maxThreadsPerBlock + 32}) {
    if (threads > 1024) break;
    const int warps = (threads + 31) / 32, held = (warps + 3) / 4 * 4;  // warps rounded to the 4 sub-partitions
    const int need = perWarp * held;
    heavy<<<n / threads, threads>>>(in, out, n);
    const cudaError_t e = cudaGetLastError();
    cudaDeviceSynchronize();
    std::printf("%4d threads: %d warps (%d held) x %d = %d registers (65536 a block): %s\n", threads, warps, held, perWarp, need,
                e == cudaSuccess ? "launched" : cudaGetErrorString(e));
    if (threads > a.maxThreadsPerBlock && e == cudaErrorLaunchOutOfResources) verdict = 0;
  }
  std::printf("tune-register-limit: %s\n", verdict == 0 ? "REPRODUCED" : "NOT REPRODUCED (the kernel holds every block)");
  return verdict;
}

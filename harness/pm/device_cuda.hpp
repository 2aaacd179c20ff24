// portmatrix harness: a CUDA device. Kernel time from CUDA events, created
// once per timer outside any timed region.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace pm {
namespace device {
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "portmatrix: CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}
inline const cudaDeviceProp& props() {
  static cudaDeviceProp prop;
  static bool done = false;
  if (!done) {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    done = true;
  }
  return prop;
}
inline const char* name() { return props().name; }
inline bool is_gpu() { return true; }
inline bool host_accessible() { return false; }
inline void* alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 64), "cudaMalloc");
  return p;
}
inline void release(void* p) { cudaFree(p); }
// Pinned host memory: verification copies every output back after every run.
inline void* host_alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMallocHost(&p, bytes ? bytes : 64), "cudaMallocHost");
  return p;
}
inline void host_release(void* p) { cudaFreeHost(p); }
inline void to_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
inline void to_host(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
inline void copy(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
}
inline void poison(void* p, size_t bytes) { check(cudaMemset(p, 0xFF, bytes), "cudaMemset"); }
inline void sync() { check(cudaDeviceSynchronize(), "kernel"); }
// dmem: the device memory the harness keeps for itself (the flush buffer,
// the STREAM arrays); here the arrays' own.
namespace dmem {
using device::alloc;
using device::copy;
using device::poison;
using device::release;
using device::to_device;
using device::to_host;
}  // namespace dmem

// Twice the device's L2 (cudaDevAttrL2CacheSize), written with cudaMemset.
inline size_t flush_bytes() {
  static const size_t bytes = [] {
    int dev = 0, l2 = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute (L2 size)");
    const size_t b = 2 * static_cast<size_t>(l2);
    return b > (size_t(8) << 20) ? b : (size_t(8) << 20);
  }();
  return bytes;
}
inline void flush() {
  static void* buf = alloc(flush_bytes());
  static unsigned char round = 0;
  check(cudaMemset(buf, ++round, flush_bytes()), "cudaMemset (L2 flush)");
  sync();
}

// STREAM kernels, BabelStream's CUDA forms: one element per thread for copy
// and triad; dot over a grid of 4 blocks per SM with a shared-memory block
// sum, the block partials summed on the host (inside the timed call).
constexpr int kStreamBlock = 1024;
template <int = 0>
__global__ void stream_copy_kernel(double* __restrict__ c, const double* __restrict__ a, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i];
}
template <int = 0>
__global__ void stream_triad_kernel(double* __restrict__ b, const double* __restrict__ a,
                                    const double* __restrict__ c, double s, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + s * c[i];
}
template <int = 0>
__global__ void stream_dot_kernel(const double* __restrict__ a, const double* __restrict__ b, double* partial,
                                  int64_t n) {
  __shared__ double tb[kStreamBlock];
  double sum = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
    sum += a[i] * b[i];
  tb[threadIdx.x] = sum;
  for (int off = blockDim.x / 2; off > 0; off /= 2) {
    __syncthreads();
    if (threadIdx.x < off) tb[threadIdx.x] += tb[threadIdx.x + off];
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = tb[0];
}
inline unsigned stream_grid(int64_t n) { return static_cast<unsigned>((n + kStreamBlock - 1) / kStreamBlock); }
inline void stream_copy(double* c, const double* a, int64_t n) {
  stream_copy_kernel<<<stream_grid(n), kStreamBlock>>>(c, a, n);
  check(cudaGetLastError(), "stream copy launch");
}
inline void stream_triad(double* b, const double* a, const double* c, double s, int64_t n) {
  stream_triad_kernel<<<stream_grid(n), kStreamBlock>>>(b, a, c, s, n);
  check(cudaGetLastError(), "stream triad launch");
}
inline double stream_dot(const double* a, const double* b, int64_t n) {
  static const int blocks = 4 * props().multiProcessorCount;
  static double* partial = static_cast<double*>(alloc(blocks * sizeof(double)));
  static double* host = static_cast<double*>(host_alloc(blocks * sizeof(double)));
  stream_dot_kernel<<<blocks, kStreamBlock>>>(a, b, partial, n);
  check(cudaGetLastError(), "stream dot launch");
  to_host(host, partial, blocks * sizeof(double));
  double sum = 0;
  for (int i = 0; i < blocks; ++i) sum += host[i];
  return sum;
}

// Events are created with the timer; make timers outside timed regions.
struct Timer {
  cudaEvent_t a = nullptr, b = nullptr;
  Timer() {
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start() {
    sync();
    check(cudaEventRecord(a), "cudaEventRecord");
  }
  double stop() {
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "kernel");
    check(cudaGetLastError(), "kernel launch");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return ms * 1e-3;
  }
};
}  // namespace device
}  // namespace pm

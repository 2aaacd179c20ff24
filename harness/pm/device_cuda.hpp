// portmatrix harness: a CUDA device. Kernel time from CUDA events.
#pragma once
#include <cuda_runtime.h>
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
inline const char* name() {
  static cudaDeviceProp prop;
  static bool done = false;
  if (!done) {
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    done = true;
  }
  return prop.name;
}
inline void* alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 64), "cudaMalloc");
  return p;
}
inline void release(void* p) { cudaFree(p); }
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
  void start() {
    sync();
    cudaEventRecord(a);
  }
  double stop() {
    cudaEventRecord(b);
    check(cudaEventSynchronize(b), "kernel");
    check(cudaGetLastError(), "kernel launch");
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms * 1e-3;
  }
};
}  // namespace device
}  // namespace pm

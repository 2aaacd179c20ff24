// praja on CUDA: cuda_exec<BlockSize>, RAJA's native CUDA forall: one thread
// per index, BlockSize threads per block, the body a [=] __device__ lambda
// passed by value as the kernel argument. Loops of a sequence are ordered on
// the default stream; synchronize<cuda_synchronize>() has nothing to wait for
// (the harness times with CUDA events after the last kernel; RAJA's
// cuda_synchronize is a cudaDeviceSynchronize, docs/raja.md).
// Under hipcc (AMD targets) the same source is HIP (pm/gpu_runtime.hpp).
#pragma once
#include "pm/gpu_runtime.hpp"

#include <cstdint>

#include "pm/device_cuda.hpp"

#define PRAJA_DEVICE __device__
#include "raja.hpp"

namespace praja {

template <int BlockSize>
struct cuda_exec {};

namespace detail {

template <class Body>
__global__ void forall_kernel(const Body body, const int64_t begin, const int64_t end) {
  const int64_t i = begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < end) body(i);
}

// Per-thread value, a shared-memory tree per block, one atomicAdd per block
// (RAJA's CUDA ReduceSum combines block partials the same way, through
// device memory).
template <int BlockSize, class Body>
__global__ void sum_kernel(const Body body, const int64_t begin, const int64_t end, double* const out) {
  __shared__ double part[BlockSize];
  const int64_t i = begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  double v = 0;
  if (i < end) {
    expt::ValOp<double, operators::plus> acc{v};
    body(i, acc);
  }
  part[threadIdx.x] = v;
  __syncthreads();
  for (int s = BlockSize / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) ::atomicAdd(out, part[0]);
}

inline double* sum_scratch() {
  static double* p = static_cast<double*>(pm::device::alloc(sizeof(double)));
  return p;
}

}  // namespace detail

template <int BlockSize, class Body>
void forall_range(cuda_exec<BlockSize>, int64_t begin, int64_t end, const Body& body) {
  if (end <= begin) return;
  const int64_t blocks = (end - begin + BlockSize - 1) / BlockSize;
  detail::forall_kernel<Body><<<static_cast<unsigned>(blocks), BlockSize>>>(body, begin, end);
  pm::device::check(cudaGetLastError(), "praja::forall");
}

template <int BlockSize, class Body>
double sum_range(cuda_exec<BlockSize>, int64_t begin, int64_t end, const Body& body) {
  if (end <= begin) return 0;
  double* out = detail::sum_scratch();
  pm::device::check(cudaMemsetAsync(out, 0, sizeof(double)), "praja::forall (sum)");
  const int64_t blocks = (end - begin + BlockSize - 1) / BlockSize;
  detail::sum_kernel<BlockSize, Body><<<static_cast<unsigned>(blocks), BlockSize>>>(body, begin, end, out);
  pm::device::check(cudaGetLastError(), "praja::forall (sum)");
  double sum = 0;
  pm::device::check(cudaMemcpy(&sum, out, sizeof(double), cudaMemcpyDeviceToHost), "praja::forall (sum)");
  return sum;
}

inline void synchronize_policy(cuda_synchronize) {}

}  // namespace praja

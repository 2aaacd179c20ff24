// portmatrix harness: the CUDA runtime API the CUDA-dialect layers use
// (pm/device_cuda.hpp, kk/cuda.hpp, kk/cuda_team.hpp, raja/cuda.hpp), from
// CUDA under nvcc and from HIP under hipcc, so that one source serves both.
// Under HIP each cuda* name below is its hip* twin (the names hipify gives);
// the warp-level operations whose forms differ are functions here:
//   shfl_down, shfl_xor  CUDA's __shfl_*_sync; HIP 5.2 has no *_sync forms,
//                        and a wavefront's lanes run together, so HIP's
//                        __shfl_down/__shfl_xor take no mask.
//   load_l2              CUDA's __ldcg (skip L1): HIP has none; a relaxed
//                        atomic load reads past the non-coherent L1 too.
// The warp width is pm::kWarpSize (pm/warp.hpp): 64 on gfx90a, never 32.
// PM_GPU_DEVICE_CODE is 1 in the device compilation (__CUDA_ARCH__ under
// nvcc, __HIP_DEVICE_COMPILE__ under hipcc).
#pragma once

#include "pm/warp.hpp"

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>

#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaDevAttrL2CacheSize hipDeviceAttributeL2CacheSize
#define cudaDevAttrMaxGridDimX hipDeviceAttributeMaxGridDimX
// AMD has no opt-in (HIP's SharedMemPerBlockOptin is CUDA's only): a
// block's limit is the LDS it may take.
#define cudaDevAttrMaxSharedMemoryPerBlockOptin hipDeviceAttributeMaxSharedMemoryPerBlock
#define cudaDevAttrMaxThreadsPerMultiProcessor hipDeviceAttributeMaxThreadsPerMultiProcessor
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaError_t hipError_t
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventQuery hipEventQuery
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaFreeHost hipHostFree
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define cudaFuncSetAttribute hipFuncSetAttribute
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaGetErrorString hipGetErrorString
#define cudaGetLastError hipGetLastError
#define cudaMalloc hipMalloc
#define cudaMallocHost hipHostMalloc
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define cudaStreamQuery hipStreamQuery
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaErrorNotReady hipErrorNotReady
#define cudaSuccess hipSuccess

#if defined(__HIP_DEVICE_COMPILE__)
#define PM_GPU_DEVICE_CODE 1
#endif
#else
#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__)
#define PM_GPU_DEVICE_CODE 1
#endif
#endif

#ifndef PM_GPU_DEVICE_CODE
#define PM_GPU_DEVICE_CODE 0
#endif

namespace pm {
namespace gpu {

__device__ inline double shfl_down(const warp_mask_t mask, const double v, const unsigned delta,
                                   const int width = kWarpSize) {
#if defined(__HIPCC__)
  (void)mask;
  return __shfl_down(v, delta, width);
#else
  return __shfl_down_sync(mask, v, delta, width);
#endif
}

__device__ inline double shfl_xor(const warp_mask_t mask, const double v, const int lane_mask, const int width = kWarpSize) {
#if defined(__HIPCC__)
  (void)mask;
  return __shfl_xor(v, lane_mask, width);
#else
  return __shfl_xor_sync(mask, v, lane_mask, width);
#endif
}

__device__ inline double load_l2(const double* p) {
#if defined(__HIPCC__)
  double v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
#else
  return __ldcg(p);
#endif
}

}  // namespace gpu
}  // namespace pm

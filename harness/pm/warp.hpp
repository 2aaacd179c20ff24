// portmatrix harness: the warp (NVIDIA) or wavefront (AMD) a GPU layer
// shuffles in, and lane 0's broadcast for OpenMP kernel mode (ompx_bare).
//
// The width and the mask type come from the toolchain (toolchains.yaml
// passes them for AMD targets); the defaults are NVIDIA's:
//   PM_WARP_SIZE    lanes of a warp: 32 on NVIDIA; 64 on gfx90a, the MI250X
//                   GCD's wavefront (machines/mi250x-gcd.yaml, warp_size).
//   PM_WARP_MASK_T  an unsigned type with a bit per lane: unsigned on NVIDIA
//                   (CUDA's *_sync masks), uint64_t for wavefront 64
//                   (ompx.h's masks are uint64_t on every target).
#pragma once

// lane_mask is called from CUDA and HIP device code too: without
// __host__ __device__ nvcc calls the host function there (warning 20013) and
// the shuffles get a wrong mask.
#ifndef PM_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PM_HD __host__ __device__
#else
#define PM_HD
#endif
#endif

#include <cstdint>

#ifndef PM_WARP_SIZE
#define PM_WARP_SIZE 32
#endif
#ifndef PM_WARP_MASK_T
#define PM_WARP_MASK_T unsigned
#endif

namespace pm {

constexpr int kWarpSize = PM_WARP_SIZE;
using warp_mask_t = PM_WARP_MASK_T;
static_assert(sizeof(warp_mask_t) * 8 >= kWarpSize, "PM_WARP_MASK_T needs a bit per lane of PM_WARP_SIZE");
static_assert((kWarpSize & (kWarpSize - 1)) == 0, "PM_WARP_SIZE is a power of two");
#if defined(__AMDGCN_WAVEFRONT_SIZE)  // clang's, in AMDGPU device compilations
static_assert(kWarpSize == __AMDGCN_WAVEFRONT_SIZE, "PM_WARP_SIZE differs from the target's wavefront size");
#endif

// Every lane of a warp.
constexpr warp_mask_t kFullWarpMask = kWarpSize == sizeof(warp_mask_t) * 8 ? ~warp_mask_t{0}
                                                                           : (warp_mask_t{1} << kWarpSize) - 1;

// The mask of width consecutive lanes from lane first (width a power of two
// up to kWarpSize, first a multiple of width).
PM_HD constexpr warp_mask_t lane_mask(const int width, const int first) {
  return width >= kWarpSize ? kFullWarpMask
                            : ((warp_mask_t{1} << (width & (kWarpSize - 1))) - 1) << (first & (kWarpSize - 1));
}

// lane0 returns lane 0's v in every lane of mask, a warp segment of width
// lanes (a power of two up to kWarpSize): the NVPTX shfl.sync.idx, or the
// AMDGPU ds_bpermute HIP's __shfl uses, under ompx.h, which offers only
// shfl_down in LLVM 19. No address is taken: in a bare kernel an escaping
// local is "globalised" through runtime state kernel mode never sets up (a
// memcpy-based version hung). Host compilations keep v; they never run.
// The AMDGPU form is compile-checked only (no AMD GPU, docs/amd.md).
inline double lane0(const warp_mask_t mask, const double v, const int width) {
#if defined(__NVPTX__)
  const long long bits = __builtin_bit_cast(long long, v);
  const int c = ((32 - width) << 8) | 0x1f;
  const int lo = __nvvm_shfl_sync_idx_i32(mask, static_cast<int>(bits), 0, c);
  const int hi = __nvvm_shfl_sync_idx_i32(mask, static_cast<int>(bits >> 32), 0, c);
  return __builtin_bit_cast(double, (static_cast<long long>(hi) << 32) | static_cast<unsigned>(lo));
#elif defined(__AMDGCN__)
  (void)mask;  // a wavefront's lanes run together: ds_bpermute takes no mask
  const long long bits = __builtin_bit_cast(long long, v);
  const int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  const int from = (lane & ~(width - 1)) << 2;  // byte address of the segment's lane 0
  const int lo = __builtin_amdgcn_ds_bpermute(from, static_cast<int>(bits));
  const int hi = __builtin_amdgcn_ds_bpermute(from, static_cast<int>(bits >> 32));
  return __builtin_bit_cast(double, (static_cast<long long>(hi) << 32) | static_cast<unsigned>(lo));
#else
  (void)mask;
  (void)width;
  return v;
#endif
}

}  // namespace pm

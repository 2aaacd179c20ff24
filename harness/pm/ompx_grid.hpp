// portmatrix harness: grid sizes of OpenMP kernel-mode (ompx_bare) launches,
// the one place the kernel-mode strategies (kk-ompx's layer, direct-ompx's
// template) take them from. docs/ompx.md, "max_teams", says where they come from.
#pragma once

#include <cstdint>

#include "tune.hpp"

// -DPM_OMPX_MAX_TEAMS=N replaces max_teams() (e.g. to force the league loop).
// The device for resident_teams(), from the toolchain (OpenMP has no query);
// the defaults are the H100 SXM's and the H200's (sm_90):
//   PM_OMPX_NUM_SMS            SMs (CUs on AMD): 132; 110 on an MI250X GCD
//   PM_OMPX_THREADS_PER_SM     resident threads per SM: 2048; 2048 on gfx90a
//                              (32 waves of 64 per CU)
//   PM_OMPX_SHARED_PER_SM      shared memory per SM: 228 KiB; the 64 KiB LDS
//                              of a gfx90a CU
//   PM_OMPX_SHARED_PER_BLOCK_SYSTEM  shared memory the system takes per
//                              block: 1 KiB on sm_90; 0 on AMD
// (gfx90a numbers: machines/mi250x-gcd.yaml, sm_count, max_warps_per_sm x
// warp_size, shared_memory_per_sm_bytes). Blocks per SM stay at sm_90's 32:
// the AMD model has no such limit, and the 256-thread teams the bound serves
// are held to 8 per CU by threads first.
#ifndef PM_OMPX_NUM_SMS
#define PM_OMPX_NUM_SMS 132
#endif
#ifndef PM_OMPX_THREADS_PER_SM
#define PM_OMPX_THREADS_PER_SM 2048
#endif
#ifndef PM_OMPX_SHARED_PER_SM
#define PM_OMPX_SHARED_PER_SM (228 * 1024)
#endif
#ifndef PM_OMPX_SHARED_PER_BLOCK_SYSTEM
#define PM_OMPX_SHARED_PER_BLOCK_SYSTEM 1024
#endif

namespace pm {
namespace ompx_grid {

// The largest x extent of a CUDA grid (cudaDeviceProp::maxGridSize[0] on
// compute capability >= 3.0), also the largest value num_teams takes (an int).
constexpr int64_t kMaxGridX = 2147483647;

// max_teams of 000 Fig. 12 and 19 for a team launch: the bound Kokkos CUDA
// puts on a TeamPolicy grid. Kokkos CUDA launches one block per league rank
// (ParallelFor<TeamPolicy>: grid = league_size) and only rejects leagues of
// maxGridSize[0] or more (TeamPolicyInternal<Cuda>), so the loop-free launch
// of Fig. 19 applies to every league a grid can hold.
// A run-time tunable ("max_teams", e.g. the occupancy bound of Fig. 12 that
// the machine model gives).
inline int64_t max_teams() {
#ifdef PM_OMPX_MAX_TEAMS
  return tune("max_teams", PM_OMPX_MAX_TEAMS);
#else
  return tune("max_teams", kMaxGridX);
#endif
}

// Teams the GPU keeps resident at once (threads, blocks and shared memory
// per SM; registers not counted): the team count of the RangePolicy
// reductions, which stride over their range and add one partial per team.
inline int64_t resident_teams(const int threads, const int64_t shared_bytes) {
  constexpr int64_t kThreadsPerSM = PM_OMPX_THREADS_PER_SM, kBlocksPerSM = 32;
  constexpr int64_t kSharedPerSM = PM_OMPX_SHARED_PER_SM, kSharedPerBlockSystem = PM_OMPX_SHARED_PER_BLOCK_SYSTEM;
  int64_t per_sm = kThreadsPerSM / (threads > 0 ? threads : 1);
  if (per_sm > kBlocksPerSM) per_sm = kBlocksPerSM;
  const int64_t by_shared = kSharedPerSM / (shared_bytes + kSharedPerBlockSystem);
  if (per_sm > by_shared) per_sm = by_shared;
  if (per_sm < 1) per_sm = 1;
  return int64_t{PM_OMPX_NUM_SMS} * per_sm;
}

}  // namespace ompx_grid
}  // namespace pm

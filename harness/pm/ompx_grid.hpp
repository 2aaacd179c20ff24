// portmatrix harness: grid sizes of OpenMP kernel-mode (ompx_bare) launches,
// the one place the kernel-mode strategies (kk-ompx's layer, direct-ompx's
// template) take them from. docs/ompx.md, "max_teams", says where they come from.
#pragma once

#include <cstdint>

#include "tune.hpp"

// -DPM_OMPX_MAX_TEAMS=N replaces max_teams() (e.g. to force the league loop).
// -DPM_OMPX_NUM_SMS=N: streaming multiprocessors for resident_teams(); 132 on
// the H100 SXM and the H200. OpenMP has no query for either.
#ifndef PM_OMPX_NUM_SMS
#define PM_OMPX_NUM_SMS 132
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

// Teams an sm_80/sm_90 GPU keeps resident at once (threads, blocks and shared
// memory per SM; registers not counted): the team count of the RangePolicy
// reductions, which stride over their range and add one partial per team.
inline int64_t resident_teams(const int threads, const int64_t shared_bytes) {
  constexpr int64_t kThreadsPerSM = 2048, kBlocksPerSM = 32;
  constexpr int64_t kSharedPerSM = 228 * 1024, kSharedPerBlockSystem = 1024;  // sm_90
  int64_t per_sm = kThreadsPerSM / (threads > 0 ? threads : 1);
  if (per_sm > kBlocksPerSM) per_sm = kBlocksPerSM;
  const int64_t by_shared = kSharedPerSM / (shared_bytes + kSharedPerBlockSystem);
  if (per_sm > by_shared) per_sm = by_shared;
  if (per_sm < 1) per_sm = 1;
  return int64_t{PM_OMPX_NUM_SMS} * per_sm;
}

}  // namespace ompx_grid
}  // namespace pm

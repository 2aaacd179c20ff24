// portmatrix harness: device memory for team scratch that lives in global
// memory (level 1, and level 0 where a toolchain has no team-shared memory
// to give), one slice per team. Kept across calls and grown on demand, as
// Kokkos keeps its scratch space, so that a timed call allocates nothing.
// And the check every GPU team layer makes before a launch with level-0
// scratch (check_team_scratch).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ompx_grid.hpp"
#include "tune.hpp"

#ifndef PM_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PM_HD __host__ __device__
#else
#define PM_HD
#endif
#endif

namespace pm {
// TeamSlice is a team's part of an array promoted to scratch, indexed as the
// global array (the mapper's promotions, docs/mapping.md): x[i] and x + i
// reach slice[i - offset]. The mapper's code used to shift the pointer
// itself, slice - offset, a pointer outside the scratch buffer: undefined
// behaviour, and after inlining LLVM moves that subtraction into the shared
// address space before the generic conversion (cvta.shared of an address
// outside the window), which faulted on the GPU
// (docs/repro/scratch-rebase-out-of-window).
template <class T>
struct TeamSlice {
  T* slice;
  int64_t offset;
  PM_HD T& operator[](const int64_t i) const { return slice[i - offset]; }
  PM_HD T* operator+(const int64_t i) const { return slice + (i - offset); }
};

inline char* scratch_pool(const int64_t bytes) {
  static char* pool = nullptr;
  static int64_t have = 0;
  if (bytes > have) {
    if (pool) device::release(pool);
    pool = static_cast<char*>(device::alloc(static_cast<size_t>(bytes)));
    have = bytes;
  }
  return pool;
}

// Team-shared memory one OpenMP team may take (OpenMP has no query; LLVM's
// plugin opts a kernel in up to the device's limit): the SM's less what the
// system keeps per block, from pm/ompx_grid.hpp's device macros. sm_90:
// 233472 - 1024 = 232448 bytes (227 KiB, CUDA's opt-in limit); sm_80 (A100):
// 166912; gfx90a: the CU's 64 KiB LDS.
constexpr int64_t kOmpTeamSharedPerBlock = int64_t{PM_OMPX_SHARED_PER_SM} - PM_OMPX_SHARED_PER_BLOCK_SYSTEM;

// check_team_scratch dies before a team launch whose level-0 scratch, with
// the layer's own shared buffer (own), exceeds the device's limit of one
// block (0: none, level 0 is host or global memory) or --team-shared-limit:
// the runtime would only say "invalid argument" (CUDA's
// cudaFuncSetAttribute) or "failure of target construct while offloading is
// mandatory" (LLVM offload). The message names the numbers and the
// configuration (the tuner's --config); docs/tuning.md, "Team scratch and
// the device's limit".
inline void check_team_scratch(const char* name, const int64_t level0, const int64_t own, const int64_t device_limit) {
  const int64_t flag = tuning().team_shared_limit;
  const bool by_flag = flag > 0 && (device_limit <= 0 || flag < device_limit);
  const int64_t limit = by_flag ? flag : device_limit;
  if (limit <= 0 || level0 + own <= limit) return;
  std::string config;
  if (const auto* c = tuning().config)
    for (const auto& kv : *c) config += (config.empty() ? "" : ",") + kv.first + "=" + std::to_string(kv.second);
  std::fprintf(stderr, "portmatrix: %s: team scratch %lld bytes at level 0", name, static_cast<long long>(level0));
  if (own > 0) std::fprintf(stderr, " and %lld bytes of the layer's own", static_cast<long long>(own));
  std::fprintf(stderr, " > %s %lld bytes per block (%s): a smaller team or scratch level 1 fits\n",
               by_flag ? "--team-shared-limit's" : "the device's", static_cast<long long>(limit),
               config.empty() ? "the generated launch parameters" : config.c_str());
  std::exit(2);
}
}  // namespace pm

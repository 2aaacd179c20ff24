// pmkk in LLVM OpenMP kernel mode: the Kokkos-OMPX backend of 000 (Section IV).
// docs/ompx.md maps every piece to the paper's figures; in short:
//
//   RangePolicy   one kernel-mode launch (ompx_bare), one element per thread;
//                 reductions: one wave of teams (range_teams when not 0)
//                 striding over the range (range_unroll strides a step),
//                 per-thread partial, block sum in dynamic shared
//                 memory (ompx_dyn_cgroup_mem), the last team to finish adds the
//                 teams' partials (no atomics on doubles: the result is the same
//                 bits every run), one copy of the scalar back.
//   TeamPolicy    Fig. 12: target teams ompx_bare num_teams(...)
//                 thread_limit(vector, team, 1) ompx_dyn_cgroup_mem(shmem);
//                 vector lanes on x, team threads on y. Multi-dimensional
//                 thread_limit needs LLVM >= 20 (PM_HAS_OMPX_MULTIDIM_GRID);
//                 below that the documented fallback: the team is a flat block
//                 of vector*team threads with x = tid % vector, y = tid / vector
//                 (the numbering CUDA gives a (vector, team, 1) block, so warps
//                 hold the same lanes either way).
//                 PMKK_OMPX_LEAGUE_LOOP 1: min(league, max_teams) teams walk the
//                 league (Fig. 12). 0: one team per league rank and no loop
//                 whenever league_size <= max_teams (Fig. 19). max_teams is the
//                 bound Kokkos CUDA puts on its grid (pm/ompx_grid.hpp).
//   TeamThreadRange    a loop over y (Fig. 12).
//   ThreadVectorRange  a loop over x; reductions by PMKK_OMPX_REDUCE:
//                 0  Fig. 16: each thread accumulates into its element of the
//                    shared buffer, team sync, lane 0 adds the lanes' elements
//                    and stores the sum, team sync, every lane reads it.
//                 1  Fig. 17: the same accumulation, ompx::shfl_down_sync over
//                    the lanes, then the two team syncs and the broadcast
//                    through the buffer.
//                 2  beyond the paper (NVPTX; AMDGPU compile-checked): shuffles,
//                    then lane 0's sum to the other lanes by a warp shuffle; no
//                    shared buffer and no team barrier (other targets compile
//                    mode 1).
// Warps: pm::kWarpSize lanes with masks of pm::warp_mask_t (pm/warp.hpp):
// 32 and 32-bit on NVIDIA, 64 and 64-bit for gfx90a's wavefront (the
// toolchain passes -DPM_WARP_SIZE=64, machines/mi250x-gcd.yaml).
//
// Two departures from the figures, both for correctness, not speed:
// - The sum is stored in a slot of its own per team thread (Fig. 16 and 17
//   reuse lane 0's element, which lane 0 of the next reduction overwrites
//   while other lanes may still read it: a race).
// - The shuffles name the lanes of one team thread (mask and width), the
//   "common mask" 000 asks for after Fig. 16; Fig. 17's mask -1 names lanes
//   that may have left the kernel (the ragged last team), which is undefined.
// A team sync is the aligned block barrier (ompx_sync_block_acq_rel, a
// __syncthreads). As in the figures, threads without rows skip the vector
// reductions of a TeamThreadRange loop; that is correct where they leave the
// kernel (PTX barriers wait for non-exited threads only), which holds for a
// team body whose TeamThreadRange loop ends it and whose ragged rank is the
// league's last, as in SPMV. docs/ompx.md has the history (drain loop,
// divergent barrier) and why it was dropped.
//
// Build: with LLVM 19 the team patterns need clang's CUDA data-sharing mode
// (-fopenmp-cuda-mode). In the default generic mode clang gives every local
// that a nested [&] lambda captures or that is passed by reference (row_start
// and y_row in SPMV) a __kmpc_alloc_shared slot; that call reads device
// runtime state an ompx_bare kernel never initialises, OpenMPOpt proves the
// team body undefined and deletes it, and the kernel writes nothing (the
// harness reports NaN). RangePolicy launches are not affected.
#pragma once
#include <omp.h>
#include <ompx.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "pm/ompx_grid.hpp"
#include "pm/warp.hpp"
#include "policy.hpp"

#ifndef PMKK_OMPX_REDUCE
#define PMKK_OMPX_REDUCE 0
#endif
#define PMKK_OMPX_SHUFFLE (PMKK_OMPX_REDUCE >= 1)
// The warp-only reduction exists on NVPTX and AMDGPU only (pm::lane0).
#if PMKK_OMPX_REDUCE >= 2 && (defined(__NVPTX__) || defined(__AMDGCN__))
#define PMKK_OMPX_WARP_ONLY 1
#else
#define PMKK_OMPX_WARP_ONLY 0
#endif
#ifndef PMKK_OMPX_LEAGUE_LOOP
#define PMKK_OMPX_LEAGUE_LOOP 1
#endif
#ifndef PM_HAS_OMPX_MULTIDIM_GRID
#define PM_HAS_OMPX_MULTIDIM_GRID 0
#endif

#define PMKK_LAMBDA [=]

namespace pmkk {

namespace ompx_impl {

constexpr int kWarp = pm::kWarpSize;  // 32 on NVIDIA, 64 on gfx90a; masks are pm::warp_mask_t
constexpr int kRangeBlock = 256;  // threads per team of a RangePolicy launch: the default of range_block

constexpr int kRangeBlockMin = 128;  // the smallest range_block: sizes the reduction scratch
constexpr int kRangeTeamsMax = 8448;  // the most teams range_teams asks a reduction for: sizes the scratch too

inline int clamp_teams(const int64_t teams) { return teams < INT_MAX ? static_cast<int>(teams) : INT_MAX; }

// Fig. 16's team sync, ompx::sync_block_acq_rel (ompx.h of LLVM 19 to 22 has it
// only as the C function): the aligned block barrier, __syncthreads.
inline void sync_block_acq_rel() { ompx_sync_block_acq_rel(); }

// Sum over the Block threads of a 1-D team; every thread calls it, the
// sum is valid in thread 0. buf holds Block doubles of shared memory.
template <int Block>
inline double block_sum(double v, double* const buf, const int tid) {
#if PMKK_OMPX_SHUFFLE
  // Warp shuffles (Fig. 17), one partial per warp through shared memory.
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += ompx::shfl_down_sync(pm::kFullWarpMask, v, static_cast<unsigned>(offset));
  if (tid % kWarp == 0) buf[tid / kWarp] = v;
  sync_block_acq_rel();
  if (tid < kWarp) {
    v = tid < Block / kWarp ? buf[tid] : 0.0;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += ompx::shfl_down_sync(pm::kFullWarpMask, v, static_cast<unsigned>(offset));
  }
#else
  // One double per thread in shared memory (Fig. 15, 16), a tree of team syncs.
  buf[tid] = v;
  sync_block_acq_rel();
  for (int half = Block / 2; half > 0; half /= 2) {
    if (tid < half) buf[tid] += buf[tid + half];
    sync_block_acq_rel();
  }
  v = buf[0];
#endif
  return v;
}

// Device memory for RangePolicy reductions: one partial per team, the result,
// and the count of teams done. Allocated on first use and kept for the life of
// the program (freeing it from a static destructor would race the offload
// runtime's own shutdown). The count is zero between launches: the last team
// resets it.
struct ReduceScratch {
  int device = 0;
  int capacity = 0;            // most teams a reduction launches
  double* partials = nullptr;  // [capacity] partials, then [capacity] the result
  unsigned* done = nullptr;
};

inline ReduceScratch& reduce_scratch() {
  static ReduceScratch s = [] {
    ReduceScratch r;
    r.device = omp_get_default_device();
    r.capacity = clamp_teams(pm::ompx_grid::resident_teams(kRangeBlockMin, (kRangeBlockMin + 1) * int64_t{sizeof(double)}));
    if (r.capacity < kRangeTeamsMax) r.capacity = kRangeTeamsMax;
    const size_t bytes = (static_cast<size_t>(r.capacity) + 2) * sizeof(double);
    r.partials = static_cast<double*>(omp_target_alloc(bytes, r.device));
    if (!r.partials) {
      std::fprintf(stderr, "pmkk (ompx): omp_target_alloc of %zu bytes for reductions failed\n", bytes);
      std::abort();
    }
    r.done = reinterpret_cast<unsigned*>(r.partials + r.capacity + 1);
    const unsigned zero = 0;
    omp_target_memcpy(r.done, &zero, sizeof zero, 0, 0, r.device, omp_get_initial_device());
    return r;
  }();
  return s;
}

}  // namespace ompx_impl

// The team handle the user's team lambda receives. Built on the device, one per
// thread; league_rank changes as the thread's team walks the league.
class Member {
 public:
  Member(const int64_t league, const int team, const int vector, void* const shared) : league_(league) {
#if PM_HAS_OMPX_MULTIDIM_GRID
    (void)team;
    (void)vector;
    x_ = ompx::thread_id(ompx::dim_x);
    y_ = ompx::thread_id(ompx::dim_y);
    bx_ = ompx::block_dim(ompx::dim_x);
    by_ = ompx::block_dim(ompx::dim_y);
#else
    // The fallback below LLVM 20: one flat block of vector*team threads,
    // lanes varying fastest, as in CUDA.
    const int tid = ompx::thread_id(ompx::dim_x);
    x_ = tid % vector;
    y_ = tid / vector;
    bx_ = vector;
    by_ = team;
#endif
    grid_id_ = y_ * bx_ + x_;  // Fig. 16's gridId
    // Shared buffer (team_shared_bytes): one double per thread (Fig. 15), then
    // one result slot per team thread.
    buf_ = static_cast<double*>(shared);
    sum_ = buf_ + bx_ * by_;
    // The lanes of one team thread are bx_ consecutive threads of one warp
    // (bx_ a power of two up to the warp size, checked at launch); shuffles
    // name exactly them (the "common mask" 000 calls for after Fig. 16).
    lane_mask_ = pm::lane_mask(bx_, grid_id_ % ompx_impl::kWarp - x_);
  }

  int64_t league_rank() const { return rank_; }
  int64_t league_size() const { return league_; }
  int team_rank() const { return y_; }
  int team_size() const { return by_; }
  int vector_length() const { return bx_; }

  // Layer internals (the parallel patterns below use them).
  // Fig. 15: one element per thread for nested reductions, plus the result
  // slots (one per team thread).
  static int64_t team_shared_bytes(const int team, const int vector) {
    return (int64_t{team} * vector + team) * int64_t{sizeof(double)};
  }
  int impl_lane() const { return x_; }
  void impl_set_league_rank(const int64_t rank) { rank_ = rank; }
  // This thread's element of the shared buffer (Fig. 16's buf[gridId]).
  double& impl_element() const { return buf_[grid_id_]; }

  // Fig. 16 lines 20-31 (PMKK_OMPX_REDUCE 0) or Fig. 17 (1): the sum of the
  // lanes' elements, in every lane. Two team syncs, reached by every thread
  // that runs the reduction.
  double impl_vector_sum() const {
    double v = 0;
#if PMKK_OMPX_SHUFFLE
    // Fig. 17: shuffles among the lanes; lane 0 ends with the sum.
    v = buf_[grid_id_];
    for (int offset = bx_ / 2; offset > 0; offset /= 2)
      v += ompx::shfl_down_sync(lane_mask_, v, static_cast<unsigned>(offset), bx_);
    ompx_impl::sync_block_acq_rel();  // team sync
#else
    // Fig. 16: team sync, then thread x = 0 adds its team thread's elements.
    ompx_impl::sync_block_acq_rel();  // team sync
    if (x_ == 0)
      for (int lane = 0; lane < bx_; ++lane) v += buf_[y_ * bx_ + lane];
#endif
    // Store the sum in a common location; every lane reads it.
    if (x_ == 0) sum_[y_] = v;
    ompx_impl::sync_block_acq_rel();  // team sync
    return sum_[y_];
  }

  // Beyond the paper (PMKK_OMPX_REDUCE 2, NVPTX and AMDGPU): the sum of v over the lanes,
  // in every lane, by shuffles alone: no shared buffer, no team barrier.
  double impl_warp_sum(double v) const {
    for (int offset = bx_ / 2; offset > 0; offset /= 2)
      v += ompx::shfl_down_sync(lane_mask_, v, static_cast<unsigned>(offset), bx_);
    return pm::lane0(lane_mask_, v, bx_);
  }

 private:
  int64_t rank_ = 0, league_;
  int x_, y_, bx_, by_, grid_id_;
  double* buf_;
  double* sum_;
  pm::warp_mask_t lane_mask_;
};

namespace ompx_impl {

// One kernel-mode launch of a team lambda (Fig. 12).
template <bool LeagueLoop, class F>
void launch_team(const F& body, const int64_t league, const int team, const int vector, const int teams,
                 const int64_t shared) {
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
#if PM_HAS_OMPX_MULTIDIM_GRID
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector, team, 1) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector) PM_OMP_NOWAIT
#else
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector * team) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector) PM_OMP_NOWAIT
#endif
  {
    Member member(league, team, vector, llvm_omp_target_dynamic_shared_alloc());
    if constexpr (LeagueLoop) {
      // Fig. 12: each team walks the league.
      const int64_t stride = ompx::grid_dim(ompx::dim_x);
      for (int64_t rank = ompx::block_id(ompx::dim_x); rank < league; rank += stride) {
        member.impl_set_league_rank(rank);
        f(static_cast<const Member&>(member));
      }
    } else {
      // Fig. 19: one team per league rank (ompx_bare launches exactly
      // num_teams teams), no loop.
      member.impl_set_league_rank(ompx::block_id(ompx::dim_x));
      f(static_cast<const Member&>(member));
    }
  }
}

}  // namespace ompx_impl

namespace ompx_impl {

// A RangePolicy launch of Block-thread teams: each block size its own
// kernel with the constant thread_limit the compiler bounds it by.
template <int Block, class F>
void range_for(const F& body, const int64_t b, const int64_t n) {
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
  const int teams = clamp_teams((n + Block - 1) / Block);
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(Block) firstprivate(f, b, n) PM_OMP_NOWAIT
  {
    // One element per thread; the stride only matters past INT_MAX teams.
    const int64_t stride = int64_t{ompx::grid_dim(ompx::dim_x)} * ompx::block_dim(ompx::dim_x);
    for (int64_t i = int64_t{ompx::block_id(ompx::dim_x)} * ompx::block_dim(ompx::dim_x) + ompx::thread_id(ompx::dim_x);
         i < n; i += stride)
      f(b + i);
  }
}

// Unroll (the run-time tunable range_unroll) grid-strided elements a step,
// each into its own partial so that their loads are independent: more loads
// in flight per thread (docs/analysis/dot.md). 1 is the as-published loop.
// The last team stores the sum at dst, device memory (the scratch's result
// slot, copied back, for a host result; a DeviceResult's element otherwise).
template <int Block, int Unroll, class F>
void range_reduce(const F& body, const int64_t b, const int64_t n, double* const dst, double* const host) {
  const ReduceScratch& s = reduce_scratch();
  // One wave of Block-thread teams at most (the scratch holds the smallest
  // blocks' wave), or the run-time tunable range_teams when it is not 0: its
  // teams stride over the range the same way (docs/analysis/dot.md).
  const int64_t asked = pm::tune("range_teams", 0);
  if (asked < 0 || asked > s.capacity) {
    std::fprintf(stderr, "pmkk ompx: range_teams must be 0 to %d, not %lld\n", s.capacity, static_cast<long long>(asked));
    std::exit(2);
  }
  const int wave = asked > 0 ? static_cast<int>(asked)
                             : clamp_teams(pm::ompx_grid::resident_teams(Block, (Block + 1) * int64_t{sizeof(double)}));
  const int64_t wanted = (n + Block - 1) / Block;
  const int teams = wanted < wave ? static_cast<int>(wanted) : wave;
  double* const partials = s.partials;
  unsigned* const done = s.done;
  const int64_t shared = (Block + 1) * int64_t{sizeof(double)};  // block_sum's buffer, a flag
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(Block) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, b, n) is_device_ptr(partials, done, dst) PM_OMP_NOWAIT
  {
    double* const buf = static_cast<double*>(llvm_omp_target_dynamic_shared_alloc());
    int* const last = reinterpret_cast<int*>(buf + Block);
    const int tid = ompx::thread_id(ompx::dim_x);
    const int team = ompx::block_id(ompx::dim_x), nteams = ompx::grid_dim(ompx::dim_x);
    const int64_t stride = int64_t{nteams} * Block;
    // Each thread's partial over a grid-strided share of the range.
    double sum = 0;
    if constexpr (Unroll == 1) {
      for (int64_t i = int64_t{team} * Block + tid; i < n; i += stride) f(b + i, sum);
    } else {
      // Steps of Unroll strides while the step's last element is in the
      // range, then the rest one stride at a time: every element once.
      double part[Unroll] = {};
      int64_t i = int64_t{team} * Block + tid;
      for (; i + (Unroll - 1) * stride < n; i += Unroll * stride) {
#pragma unroll
        for (int u = 0; u < Unroll; ++u) f(b + i + u * stride, part[u]);
      }
      for (; i < n; i += stride) f(b + i, part[0]);
#pragma unroll
      for (int u = 0; u < Unroll; ++u) sum += part[u];
    }
    sum = block_sum<Block>(sum, buf, tid);
    // Publish the team's partial; the team that finishes last adds them all.
    if (tid == 0) {
      partials[team] = sum;
      unsigned ticket;
#pragma omp atomic capture acq_rel
      ticket = (*done)++;
      *last = ticket + 1 == static_cast<unsigned>(nteams);
    }
    sync_block_acq_rel();
    if (*last) {
      double total = 0;
      for (int t = tid; t < nteams; t += Block) {
        double v;
#pragma omp atomic read
        v = partials[t];
        total += v;
      }
      total = block_sum<Block>(total, buf, tid);
      if (tid == 0) {
        *dst = total;
        *done = 0;  // ready for the next launch
      }
    }
  }
  // A host result: copied back after the launch (and, under PM_OMP_ASYNC, the
  // launches before it) is done.
  if (host) {
    pm::device::settle();
    omp_target_memcpy(host, dst, sizeof(double), 0, 0, omp_get_initial_device(), s.device);
  }
}

// range_block calls run(std::integral_constant<int, Block>) with the
// run-time tunable range_block (default kRangeBlock).
template <class Run>
void range_block(const Run& run) {
  switch (pm::tune("range_block", kRangeBlock)) {
    case 128: run(std::integral_constant<int, 128>{}); break;
    case 256: run(std::integral_constant<int, 256>{}); break;
    case 512: run(std::integral_constant<int, 512>{}); break;
    case 1024: run(std::integral_constant<int, 1024>{}); break;
    default:
      std::fprintf(stderr, "pmkk ompx: range_block must be 128, 256, 512 or 1024\n");
      std::exit(2);
  }
}

// range_unroll calls run(std::integral_constant<int, Unroll>) with the
// run-time tunable range_unroll (default 1, the as-published loop).
template <class Run>
void range_unroll(const Run& run) {
  switch (pm::tune("range_unroll", 1)) {
    case 1: run(std::integral_constant<int, 1>{}); break;
    case 2: run(std::integral_constant<int, 2>{}); break;
    case 4: run(std::integral_constant<int, 4>{}); break;
    default:
      std::fprintf(stderr, "pmkk ompx: range_unroll must be 1, 2 or 4\n");
      std::exit(2);
  }
}

}  // namespace ompx_impl

template <class F>
void parallel_for(const char*, const RangePolicy& p, const F& f) {
  const int64_t b = p.begin, n = p.end - p.begin;
  if (n <= 0) return;
  ompx_impl::range_block([&](auto block) { ompx_impl::range_for<decltype(block)::value>(f, b, n); });
}

template <class F>
void parallel_reduce(const char*, const RangePolicy& p, const F& f, double& result) {
  const int64_t b = p.begin, n = p.end - p.begin;
  if (n <= 0) {
    result = 0;
    return;
  }
  ompx_impl::range_block([&](auto block) {
    ompx_impl::range_unroll([&](auto unroll) {
      ompx_impl::range_reduce<decltype(block)::value, decltype(unroll)::value>(
          f, b, n, ompx_impl::reduce_scratch().partials + ompx_impl::reduce_scratch().capacity, &result);
    });
  });
}

// A result in device memory: the last team stores the sum there; the launch
// returns without a copy back (and without waiting under PM_OMP_ASYNC).
template <class F>
void parallel_reduce(const char*, const RangePolicy& p, const F& f, const DeviceResult& result) {
  const int64_t b = p.begin, n = p.end - p.begin;
  if (n <= 0) {
    const double zero = 0;  // the identity
    pm::device::to_device(result.ptr, &zero, sizeof zero);
    return;
  }
  ompx_impl::range_block([&](auto block) {
    ompx_impl::range_unroll([&](auto unroll) {
      ompx_impl::range_reduce<decltype(block)::value, decltype(unroll)::value>(f, b, n, result.ptr, nullptr);
    });
  });
}

template <class F>
void parallel_for(const char*, const TeamPolicy& p, const F& f) {
  const int64_t league = p.league_size;
  if (league <= 0) return;
  const int team = p.team_size, vector = p.vector_length;
#if PMKK_OMPX_SHUFFLE
  // Shuffle reductions keep a team thread's lanes in one warp, as Kokkos CUDA does.
  if (vector < 1 || vector > ompx_impl::kWarp || (vector & (vector - 1)) != 0) {
    std::fprintf(stderr, "pmkk ompx: vector length %d must be a power of two up to %d with shuffles\n", vector,
                 ompx_impl::kWarp);
    std::exit(2);
  }
#endif
  const int64_t shared = Member::team_shared_bytes(team, vector);
  const int64_t max_teams = pm::ompx_grid::max_teams();
#if PMKK_OMPX_LEAGUE_LOOP
  ompx_impl::launch_team<true>(f, league, team, vector, ompx_impl::clamp_teams(league < max_teams ? league : max_teams),
                               shared);
#else
  if (league <= max_teams)
    ompx_impl::launch_team<false>(f, league, team, vector, ompx_impl::clamp_teams(league), shared);
  else
    ompx_impl::launch_team<true>(f, league, team, vector, ompx_impl::clamp_teams(max_teams), shared);
#endif
}

// TeamThreadRange: team threads take rows by y (Fig. 12).
template <class F>
void parallel_for(const TeamThreadRangeT<Member>& r, const F& f) {
  const Member& t = r.team;
  for (int64_t i = r.begin + t.team_rank(); i < r.end; i += t.team_size()) f(i);
}

// ThreadVectorRange: lanes take elements by x (Fig. 12).
template <class F>
void parallel_for(const ThreadVectorRangeT<Member>& r, const F& f) {
  const Member& t = r.team;
  for (int64_t i = r.begin + t.impl_lane(); i < r.end; i += t.vector_length()) f(i);
}

// ThreadVectorRange reduction: every lane of the team thread gets the sum.
template <class F>
void parallel_reduce(const ThreadVectorRangeT<Member>& r, const F& f, double& result) {
  const Member& t = r.team;
#if PMKK_OMPX_WARP_ONLY
  double partial = 0;
  for (int64_t i = r.begin + t.impl_lane(); i < r.end; i += t.vector_length()) f(i, partial);
  result = t.impl_warp_sum(partial);
#else
  // Fig. 16 lines 13-18: each thread accumulates into its element.
  double& element = t.impl_element();
  element = 0;
  for (int64_t i = r.begin + t.impl_lane(); i < r.end; i += t.vector_length()) {
    double tmp = 0;
    f(i, tmp);
    element += tmp;
  }
  result = t.impl_vector_sum();
#endif
}

}  // namespace pmkk

// pmkk in LLVM OpenMP kernel mode: the Kokkos-OMPX backend of 000 (Section IV).
// docs/ompx.md maps every piece to the paper's figures; in short:
//
//   RangePolicy   one kernel-mode launch (ompx_bare), one element per thread;
//                 reductions: per-thread partial, block sum in dynamic shared
//                 memory (ompx_dyn_cgroup_mem), the last team to finish adds the
//                 teams' partials (no atomics on doubles: the result is the same
//                 bits every run), one copy of the scalar back.
//   TeamPolicy    Fig. 12: target teams ompx_bare num_teams(max_teams)
//                 thread_limit(vector, team, 1) ompx_dyn_cgroup_mem(shmem);
//                 vector lanes on x, team threads on y. Multi-dimensional
//                 thread_limit needs LLVM >= 20 (PM_HAS_OMPX_MULTIDIM_GRID);
//                 before that the team is a flat block of vector*team threads
//                 with x = tid % vector, y = tid / vector (the same numbering
//                 CUDA gives a (vector, team, 1) block, so warps hold the same
//                 lanes either way).
//                 PMKK_OMPX_LEAGUE_LOOP 1: max_teams teams walk the league
//                 (Fig. 12). 0: one team per league rank and no loop when the
//                 league fits in max_teams, the loop otherwise (Fig. 19).
//   TeamThreadRange    a loop over y (Fig. 12).
//   ThreadVectorRange  a loop over x; reductions as Fig. 16 (one double per
//                 thread in the shared buffer, team sync, lane 0 adds the
//                 lanes' partials, team sync, every lane reads the sum) or, with
//                 PMKK_OMPX_SHUFFLE 1, Fig. 17 (ompx::shfl_down_sync over the
//                 lanes, then the same broadcast).
//
// Team syncs and uneven rows. The vector reduction synchronises the whole
// block (ompx_sync_block*: __syncthreads), as in Figs. 16 and 17, but team
// threads own different numbers of rows whenever the range is not a multiple
// of team_size (the last SPMV team), so a plain TeamThreadRange loop would have
// some threads skip barriers that others wait at. Here a team thread that has
// run out of rows keeps answering barriers, two at a time (every vector
// reduction takes exactly two), until a shared count says that all team
// threads are done (Member::impl_team_loop_done). Since threads of one warp
// can then wait at different barrier instructions, team kernels use the
// unaligned block barrier ompx::sync_block_divergent (barrier.sync) rather
// than the aligned ompx_sync_block_acq_rel (bar.sync 0).
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

#include "pm/warp.hpp"
#include "policy.hpp"

#ifndef PMKK_OMPX_SHUFFLE
#define PMKK_OMPX_SHUFFLE 0
#endif
// With shuffles on NVPTX, a vector reduction never touches a block barrier:
// lane 0's sum goes back to the other lanes by a warp shuffle (shfl.sync.idx,
// the NVPTX builtin under ompx.h, which offers only shfl_down in LLVM 19).
// Team kernels then need no drain and no divergent barrier, whose named
// barrier limited residency to 4 blocks per SM (Nsight Compute, H200).
#if PMKK_OMPX_SHUFFLE && defined(__NVPTX__)
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
// Streaming multiprocessors of the target GPU: 132 on the H100 SXM and the
// H200. OpenMP has no query for it; override with -DPMKK_OMPX_NUM_SMS=N.
#ifndef PMKK_OMPX_NUM_SMS
#define PMKK_OMPX_NUM_SMS 132
#endif
// -DPMKK_OMPX_MAX_TEAMS=N replaces the occupancy estimate of max_teams.

#define PMKK_LAMBDA [=]

namespace pmkk {

namespace ompx_impl {

constexpr int kWarp = 32;                       // NVIDIA; lane masks below are 32-bit
constexpr int kRangeBlock = 256;                // threads per team of a RangePolicy launch
constexpr int kThreadsPerSM = 2048;             // sm_80 and sm_90
constexpr int kBlocksPerSM = 32;                // sm_80 and sm_90
constexpr int64_t kSharedPerSM = 228 * 1024;    // sm_90
constexpr int64_t kSharedPerBlockSystem = 1024; // reserved by CUDA for each resident block

// max_teams (Fig. 12): the teams the GPU keeps resident at once, an occupancy
// estimate in the spirit of Kokkos' (Kokkos-OMP: concurrency / team_size):
// SMs x blocks per SM, limited by threads, blocks and shared memory per SM.
// Registers are not counted, so it can overestimate; launching more teams
// than fit only queues them, it stays correct.
inline int64_t max_teams(const int threads, const int64_t shared_bytes) {
#ifdef PMKK_OMPX_MAX_TEAMS
  (void)threads;
  (void)shared_bytes;
  return PMKK_OMPX_MAX_TEAMS;
#else
  int64_t per_sm = kThreadsPerSM / (threads > 0 ? threads : 1);
  if (per_sm > kBlocksPerSM) per_sm = kBlocksPerSM;
  const int64_t by_shared = kSharedPerSM / (shared_bytes + kSharedPerBlockSystem);
  if (per_sm > by_shared) per_sm = by_shared;
  if (per_sm < 1) per_sm = 1;
  return int64_t{PMKK_OMPX_NUM_SMS} * per_sm;
#endif
}

inline int clamp_teams(const int64_t teams) { return teams < INT_MAX ? static_cast<int>(teams) : INT_MAX; }

// A team barrier every thread of the block reaches at the same instruction
// (Fig. 16's ompx::sync_block_acq_rel; clang 19's ompx.h has it only in C).
inline void sync_block() { ompx_sync_block_acq_rel(); }
// A team barrier threads of one warp may reach at different instructions.
inline void sync_team() { ompx::sync_block_divergent(); }

// Sum over the kRangeBlock threads of a 1-D team; every thread calls it, the
// sum is valid in thread 0. buf holds kRangeBlock doubles of shared memory.
inline double block_sum(double v, double* const buf, const int tid) {
#if PMKK_OMPX_SHUFFLE
  // Warp shuffles (Fig. 17), one partial per warp through shared memory.
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += ompx::shfl_down_sync(~0u, v, static_cast<unsigned>(offset));
  if (tid % kWarp == 0) buf[tid / kWarp] = v;
  sync_block();
  if (tid < kWarp) {
    v = tid < kRangeBlock / kWarp ? buf[tid] : 0.0;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += ompx::shfl_down_sync(~0u, v, static_cast<unsigned>(offset));
  }
#else
  // One double per thread in shared memory (Fig. 15, 16), a tree of team syncs.
  buf[tid] = v;
  sync_block();
  for (int half = kRangeBlock / 2; half > 0; half /= 2) {
    if (tid < half) buf[tid] += buf[tid + half];
    sync_block();
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
    r.capacity = clamp_teams(max_teams(kRangeBlock, (kRangeBlock + 1) * int64_t{sizeof(double)}));
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
    tid_ = y_ * bx_ + x_;
#else
    // One flat block of vector*team threads: lanes vary fastest, as in CUDA.
    tid_ = ompx::thread_id(ompx::dim_x);
    x_ = tid_ % vector;
    y_ = tid_ / vector;
    bx_ = vector;
    by_ = team;
#endif
    // Shared buffer (team_shared_bytes): one double per thread (Fig. 15),
    // one result per team thread, the count of team threads out of rows.
    partial_ = static_cast<double*>(shared);
    sum_ = partial_ + bx_ * by_;
    done_ = reinterpret_cast<unsigned*>(sum_ + by_);
    // The lanes of one team thread are bx_ consecutive threads; when bx_ is a
    // power of two up to a warp they sit in one warp, and shuffles among them
    // name exactly them (the "common mask" 000 calls for after Fig. 16).
    shuffle_ = bx_ <= ompx_impl::kWarp && (bx_ & (bx_ - 1)) == 0;
    const int first_lane = tid_ % ompx_impl::kWarp - x_;
    lane_mask_ = bx_ >= ompx_impl::kWarp ? 0xffffffffu : ((1u << (bx_ & 31)) - 1u) << (first_lane & 31);
  }

  int64_t league_rank() const { return rank_; }
  int64_t league_size() const { return league_; }
  int team_rank() const { return y_; }
  int team_size() const { return by_; }
  int vector_length() const { return bx_; }

  // Layer internals (the parallel patterns below use them).
  static int64_t team_shared_bytes(const int team, const int vector) {
    return (int64_t{team} * vector + team) * int64_t{sizeof(double)} + int64_t{sizeof(double)};
  }
  int impl_lane() const { return x_; }
  void impl_set_league_rank(const int64_t rank) { rank_ = rank; }
  void impl_begin_kernel() const {
#if !PMKK_OMPX_WARP_ONLY
    if (tid_ == 0) *done_ = 0;
    ompx_impl::sync_team();
#endif
  }

  // The sum of v over the lanes of this team thread, in every lane.
  // Exactly two team syncs on every path but vector_length 1 (none).
  double impl_vector_sum(double v) const {
    if (bx_ == 1) return v;
#if PMKK_OMPX_WARP_ONLY
    // Fig. 17's shuffles, then lane 0's sum to every lane: no team barrier.
    for (int offset = bx_ / 2; offset > 0; offset /= 2)
      v += ompx::shfl_down_sync(lane_mask_, v, static_cast<unsigned>(offset), bx_);
    return pm::lane0(lane_mask_, v, bx_);
#else
    bool reduced = false;
#if PMKK_OMPX_SHUFFLE
    if (shuffle_) {
      // Fig. 17: shuffles among the lanes; lane 0 ends with the sum.
      for (int offset = bx_ / 2; offset > 0; offset /= 2)
        v += ompx::shfl_down_sync(lane_mask_, v, static_cast<unsigned>(offset), bx_);
      ompx_impl::sync_team();  // every lane has read sum_[y_] of the last reduction
      reduced = true;
    }
#endif
    if (!reduced) {
      // Fig. 16: one partial per thread; lane 0 adds its team thread's lanes.
      partial_[tid_] = v;
      ompx_impl::sync_team();
      if (x_ == 0) {
        v = 0;
        for (int lane = 0; lane < bx_; ++lane) v += partial_[tid_ + lane];
      }
    }
    // Lane 0 publishes the sum in a slot of its own; every lane reads it.
    if (x_ == 0) sum_[y_] = v;
    ompx_impl::sync_team();
    return sum_[y_];
#endif
  }

  // End of a TeamThreadRange loop, reached by every thread of the team. A team
  // thread with fewer rows gets here while others still run vector reductions;
  // it answers their barriers in pairs until every team thread has arrived.
  // The count only changes between the second and the first barrier of a pair
  // and is only read between the first and the second, so all threads read the
  // same value in a round and leave in the same round.
  void impl_team_loop_done() const {
#if !PMKK_OMPX_WARP_ONLY  // else no reduction waits at a team barrier: nothing to drain
    ++loops_;
    if (x_ == 0) {
#pragma omp atomic update
      *done_ += 1u;
    }
    const unsigned everyone = loops_ * static_cast<unsigned>(by_);
    unsigned seen = 0;
    do {
      ompx_impl::sync_team();
#pragma omp atomic read
      seen = *done_;
      ompx_impl::sync_team();
    } while (seen != everyone);
#endif
  }

 private:
  int64_t rank_ = 0, league_;
  int tid_, x_, y_, bx_, by_;
  double* partial_;
  double* sum_;
  unsigned* done_;
  unsigned lane_mask_;
  bool shuffle_;
  mutable unsigned loops_ = 0;  // TeamThreadRange loops finished in this kernel
};

namespace ompx_impl {

// One kernel-mode launch of a team lambda.
template <bool LeagueLoop, class F>
void launch_team(const F& f, const int64_t league, const int team, const int vector, const int teams,
                 const int64_t shared) {
#if PM_HAS_OMPX_MULTIDIM_GRID
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector, team, 1) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector)
#else
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector * team) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector)
#endif
  {
    Member member(league, team, vector, llvm_omp_target_dynamic_shared_alloc());
    member.impl_begin_kernel();
    if constexpr (LeagueLoop) {
      // Fig. 12: fewer teams than league ranks; each team walks the league.
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

template <class F>
void parallel_for(const char*, const RangePolicy& p, const F& f) {
  const int64_t b = p.begin, n = p.end - p.begin;
  if (n <= 0) return;
  const int teams = ompx_impl::clamp_teams((n + ompx_impl::kRangeBlock - 1) / ompx_impl::kRangeBlock);
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(ompx_impl::kRangeBlock) firstprivate(f, b, n)
  {
    // One element per thread; the stride only matters past INT_MAX teams.
    const int64_t stride = int64_t{ompx::grid_dim(ompx::dim_x)} * ompx::block_dim(ompx::dim_x);
    for (int64_t i = int64_t{ompx::block_id(ompx::dim_x)} * ompx::block_dim(ompx::dim_x) + ompx::thread_id(ompx::dim_x);
         i < n; i += stride)
      f(b + i);
  }
}

template <class F>
void parallel_reduce(const char*, const RangePolicy& p, const F& f, double& result) {
  const int64_t b = p.begin, n = p.end - p.begin;
  if (n <= 0) {
    result = 0;
    return;
  }
  using namespace ompx_impl;
  const ReduceScratch& s = reduce_scratch();
  const int64_t wanted = (n + kRangeBlock - 1) / kRangeBlock;
  const int teams = wanted < s.capacity ? static_cast<int>(wanted) : s.capacity;
  const int capacity = s.capacity;
  double* const partials = s.partials;
  unsigned* const done = s.done;
  const int64_t shared = (kRangeBlock + 1) * int64_t{sizeof(double)};  // block_sum's buffer, a flag
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(kRangeBlock) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, b, n) is_device_ptr(partials, done)
  {
    double* const buf = static_cast<double*>(llvm_omp_target_dynamic_shared_alloc());
    int* const last = reinterpret_cast<int*>(buf + kRangeBlock);
    const int tid = ompx::thread_id(ompx::dim_x);
    const int team = ompx::block_id(ompx::dim_x), nteams = ompx::grid_dim(ompx::dim_x);
    const int64_t stride = int64_t{nteams} * kRangeBlock;
    // Each thread's partial over a grid-strided share of the range.
    double sum = 0;
    for (int64_t i = int64_t{team} * kRangeBlock + tid; i < n; i += stride) f(b + i, sum);
    sum = block_sum(sum, buf, tid);
    // Publish the team's partial; the team that finishes last adds them all.
    if (tid == 0) {
      partials[team] = sum;
      unsigned ticket;
#pragma omp atomic capture acq_rel
      ticket = (*done)++;
      *last = ticket + 1 == static_cast<unsigned>(nteams);
    }
    sync_block();
    if (*last) {
      double total = 0;
      for (int t = tid; t < nteams; t += kRangeBlock) {
        double v;
#pragma omp atomic read
        v = partials[t];
        total += v;
      }
      total = block_sum(total, buf, tid);
      if (tid == 0) {
        partials[capacity] = total;
        *done = 0;  // ready for the next launch
      }
    }
  }
  omp_target_memcpy(&result, partials + capacity, sizeof(double), 0, 0, omp_get_initial_device(), s.device);
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
  const int64_t max_teams = ompx_impl::max_teams(team * vector, shared);
#if PMKK_OMPX_LEAGUE_LOOP
  ompx_impl::launch_team<true>(f, league, team, vector, ompx_impl::clamp_teams(league < max_teams ? league : max_teams),
                               shared);
#else
  if (league <= max_teams)
    ompx_impl::launch_team<false>(f, league, team, vector, static_cast<int>(league), shared);
  else
    ompx_impl::launch_team<true>(f, league, team, vector, ompx_impl::clamp_teams(max_teams), shared);
#endif
}

// TeamThreadRange: team threads take rows by y (Fig. 12).
template <class F>
void parallel_for(const TeamThreadRangeT<Member>& r, const F& f) {
  const Member& t = r.team;
  for (int64_t i = r.begin + t.team_rank(); i < r.end; i += t.team_size()) f(i);
  t.impl_team_loop_done();
}

// ThreadVectorRange: lanes take elements by x (Fig. 12).
template <class F>
void parallel_for(const ThreadVectorRangeT<Member>& r, const F& f) {
  const Member& t = r.team;
  for (int64_t i = r.begin + t.impl_lane(); i < r.end; i += t.vector_length()) f(i);
}

// ThreadVectorRange reduction (Fig. 16; Fig. 17 with PMKK_OMPX_SHUFFLE): every
// lane of the team thread gets the sum.
template <class F>
void parallel_reduce(const ThreadVectorRangeT<Member>& r, const F& f, double& result) {
  const Member& t = r.team;
  double partial = 0;
  for (int64_t i = r.begin + t.impl_lane(); i < r.end; i += t.vector_length()) f(i, partial);
  result = t.impl_vector_sum(partial);
}

}  // namespace pmkk

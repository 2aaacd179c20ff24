// pmkk on OpenMP target: team scratch, team barriers, multi-dimensional
// ranges and atomics, as Kokkos' OpenMPTarget backend lowers them (the
// kokkos backend includes this header after omptarget.hpp when a kernel
// uses them).
//   Scratch (000, Fig. 5 and 6): with PM_HAS_OMPX_TEAM_SHARED_SCRATCH (LLVM
//     >= 18, as 000 and Kokkos 4.3 gate it) level 0 is team-shared memory
//     from ompx_dyn_cgroup_mem(level-0 bytes), reached through
//     llvm_omp_target_dynamic_shared_alloc(), and level 1 a slice per team of
//     memory from omp_target_alloc; before that (clang 16, GCC) both levels
//     live in that memory, level 0 then level 1 in each team's slice,
//     indexed by omp_get_team_num(). A scratch launch always passes
//     num_teams, which bounds the team numbers and so the slices (Kokkos'
//     scratch launch does the same); "w/o num_teams" changes only launches
//     without scratch.
//   team_barrier: #pragma omp barrier in the team's parallel region; form b's
//     league loop also has one before a team takes its next rank.
//   MDRangePolicy: target teams distribute parallel for collapse(N).
//   single(PerThread): the body itself (the vector level is an omp simd loop,
//     so a team thread's body runs once).
//   atomic_add: #pragma omp atomic update.
//   On the initial device (omptarget.hpp, host_league) a team is one host
//   thread: both levels live in the pool, a slice per thread, and an
//   MDRangePolicy is a parallel for collapse(N).
#pragma once
#include "omptarget.hpp"
#include "pm/scratch.hpp"

#ifndef PM_HAS_OMPX_TEAM_SHARED_SCRATCH
#define PM_HAS_OMPX_TEAM_SHARED_SCRATCH 0
#endif
#if PM_HAS_OMPX_TEAM_SHARED_SCRATCH
#define PMKK_OMP_TEAM_SHARED(bytes) ompx_dyn_cgroup_mem(bytes)
#else
#define PMKK_OMP_TEAM_SHARED(bytes)
#endif

namespace pmkk {

namespace omp_impl {

// The team handle of a scratch launch: a Member and its scratch (Fig. 6).
struct ScratchMember : Member {
  char* scratch[2];
  // A host team (host_league): levels 0 and 1 in slice `team` of global.
  ScratchMember(int64_t rank, int64_t league, int vector, char* const global, const int64_t team, const int64_t l0,
                const int64_t l1)
      : Member(rank, league, 0, 1, vector) {
    scratch[0] = global + team * (l0 + l1);
    scratch[1] = scratch[0] + l0;
  }
  ScratchMember(int64_t rank, int64_t league, int vector, char* const global, const int64_t per_team, const int64_t l0)
      : Member(rank, league, omp_get_thread_num(), omp_get_num_threads(), vector) {
    char* const mine = global + omp_get_team_num() * per_team;
#if PM_HAS_OMPX_TEAM_SHARED_SCRATCH
    (void)l0;
    scratch[0] = static_cast<char*>(llvm_omp_target_dynamic_shared_alloc());
    scratch[1] = mine;
#else
    scratch[0] = mine;
    scratch[1] = mine + l0;
#endif
  }
};

// Calls the body of a device scratch launch, out of line under clang before
// 22. clang globalizes the body's locals that its nested [&] lambdas capture
// (__kmpc_alloc_shared: the team's 512-byte shared-memory stack, then device
// malloc). clang 19's OpenMPOpt moves that malloc fallback to the thread's
// stack while it optimises the body as a function of its own (as it does in
// Kokkos 4.6's launch), but not once the body is inlined into the kernel's
// league loop: there every league rank's body took device malloc memory, slow
// (form a) and null once the resident teams exhaust CUDA's 8 MiB heap (form
// b; docs/repro/clang19-scratch-heap). Out of line the body allocates no heap
// memory; a call per league rank and thread costs little beside the body.
#if defined(__clang__) && __clang_major__ < 22
#define PMKK_OMP_BODY_NOINLINE __attribute__((noinline))
#else
#define PMKK_OMP_BODY_NOINLINE
#endif
template <class F>
PMKK_OMP_BODY_NOINLINE void call_body(const F& f, const Member& m) {
  f(m);
}

}  // namespace omp_impl

// The first byte of the team's scratch at level 0 or 1 (Kokkos:
// team.team_scratch(level)); valid in the body of a scratch launch.
inline char* team_scratch(const Member& team, const int level) {
  return static_cast<const omp_impl::ScratchMember&>(team).scratch[level];
}

// Kokkos: team.team_barrier().
inline void team_barrier(const Member&) {
#pragma omp barrier
}

template <class F>
void single(const PerThreadT<Member>&, const F& f) {
  f();
}

inline void atomic_add(double* const p, const double v) {
#pragma omp atomic update
  *p += v;
}

template <class F>
void parallel_for(const ThreadVectorRangeT<Member>& r, const F& f) {
#pragma omp simd
  for (int64_t i = r.begin; i < r.end; ++i) f(i);
}

template <class F>
void parallel_for(const char* name, const ScratchTeamPolicy& p, const F& f) {
  const int64_t league = p.league_size;
  const int team = pm::device::team_threads(p.team_size), vector = p.vector_length;
  const int64_t l0 = p.scratch_bytes[0], l1 = p.scratch_bytes[1];
  if (league <= 0) return;
#if PM_HAS_OMPX_TEAM_SHARED_SCRATCH
  pm::check_team_scratch(name, l0, 0, omp_impl::on_host() ? 0 : pm::kOmpTeamSharedPerBlock);
#else
  pm::check_team_scratch(name, l0, 0, 0);  // level 0 in global memory
#endif
  if (omp_impl::on_host()) {
    char* const pool = pm::scratch_pool(omp_get_max_threads() * (l0 + l1));
    omp_impl::host_league(league, [&](const int64_t rank, const int64_t team) {
      const omp_impl::ScratchMember m(rank, league, vector, pool, team, l0, l1);
      f(static_cast<const Member&>(m));
    });
    return;
  }
  const int64_t max_active = pm::tune("max_active_teams", kMaxActiveTeams);
  const int64_t teams = league < max_active ? league : max_active;
#if PM_HAS_OMPX_TEAM_SHARED_SCRATCH
  const int64_t per_team = l1;  // level 0 is team-shared memory
#else
  const int64_t per_team = l0 + l1;
#endif
  char* const global = pm::scratch_pool(teams * per_team);
#if PMKK_OMP_FORM_B == 0
#pragma omp target teams distribute num_teams(teams) thread_limit(team) firstprivate(f) is_device_ptr(global) \
    PMKK_OMP_TEAM_SHARED(l0)
  for (int64_t rank = 0; rank < league; ++rank) {
#pragma omp parallel num_threads(team)
    {
      const omp_impl::ScratchMember m(rank, league, vector, global, per_team, l0);
      omp_impl::call_body(f, static_cast<const Member&>(m));
    }
  }
#else
#pragma omp target teams num_teams(teams) thread_limit(team) firstprivate(f) is_device_ptr(global) \
    PMKK_OMP_TEAM_SHARED(l0)
#pragma omp parallel num_threads(team)
  {
    const int64_t first = omp_get_team_num(), stride = omp_get_num_teams();
    for (int64_t rank = first; rank < league; rank += stride) {
      const omp_impl::ScratchMember m(rank, league, vector, global, per_team, l0);
      omp_impl::call_body(f, static_cast<const Member&>(m));
#pragma omp barrier
    }
  }
#endif
}

template <int N, class F>
void parallel_for(const char*, const MDRangePolicy<N>& p, const F& f) {
  static_assert(N == 2 || N == 3, "MDRangePolicy of rank 2 or 3");
  const int64_t b0 = p.begin[0], e0 = p.end[0], b1 = p.begin[1], e1 = p.end[1];
  if (omp_impl::on_host()) {
    if constexpr (N == 2) {
#pragma omp parallel for collapse(2)
      for (int64_t i = b0; i < e0; ++i)
        for (int64_t j = b1; j < e1; ++j) f(i, j);
    } else {
      const int64_t b2 = p.begin[2], e2 = p.end[2];
#pragma omp parallel for collapse(3)
      for (int64_t i = b0; i < e0; ++i)
        for (int64_t j = b1; j < e1; ++j)
          for (int64_t k = b2; k < e2; ++k) f(i, j, k);
    }
    return;
  }
  if constexpr (N == 2) {
#pragma omp target teams distribute parallel for collapse(2) firstprivate(f)
    for (int64_t i = b0; i < e0; ++i)
      for (int64_t j = b1; j < e1; ++j) f(i, j);
  } else {
    const int64_t b2 = p.begin[2], e2 = p.end[2];
#pragma omp target teams distribute parallel for collapse(3) firstprivate(f)
    for (int64_t i = b0; i < e0; ++i)
      for (int64_t j = b1; j < e1; ++j)
        for (int64_t k = b2; k < e2; ++k) f(i, j, k);
  }
}

}  // namespace pmkk

#include "team_reduce.hpp"

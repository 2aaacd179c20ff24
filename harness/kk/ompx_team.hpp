// pmkk in LLVM OpenMP kernel mode: team scratch, team barriers,
// multi-dimensional ranges and atomics for the Kokkos-OMPX layer (the kokkos
// backend includes this header after ompx.hpp when a kernel uses them).
//   Scratch (000, Fig. 12): level 0 in the launch's dynamic shared memory,
//     ompx_dyn_cgroup_mem(layer bytes + level-0 bytes), after the layer's own
//     reduction buffer; level 1 a slice per team of memory from
//     omp_target_alloc (as Kokkos-OMP keeps level 1 in HBM). The number of
//     teams counts the scratch in its occupancy estimate.
//   team_barrier: ompx::sync_block_divergent (a block barrier that threads of
//     one warp may reach at different instructions); the league loop also
//     syncs before a team takes its next rank, which reuses its scratch.
//   MDRangePolicy: one thread per point of the flattened range, 256-thread
//     teams, as RangePolicy.
//   single(PerThread): vector lane 0 (x) of the team thread.
//   atomic_add: #pragma omp atomic update.
#pragma once
#include "ompx.hpp"
#include "pm/scratch.hpp"

namespace pmkk {

namespace ompx_team_impl {

// The team handle of a scratch launch: a Member and its scratch.
struct ScratchMember : Member {
  char* scratch[2];
  ScratchMember(const int64_t league, const int team, const int vector, void* const shared, char* const s0,
                char* const s1)
      : Member(league, team, vector, shared), scratch{s0, s1} {}
};

// Bytes of the layer's own shared buffer, rounded up to 16 so level 0
// starts aligned.
inline int64_t layer_bytes(const int team, const int vector) {
  return (Member::team_shared_bytes(team, vector) + 15) / 16 * 16;
}

template <bool LeagueLoop, class F>
void launch(const F& f, const int64_t league, const int team, const int vector, const int teams, const int64_t l0,
            char* const global, const int64_t l1) {
  const int64_t own = layer_bytes(team, vector), shared = own + l0;
#if PM_HAS_OMPX_MULTIDIM_GRID
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector, team, 1) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector, own, l1) is_device_ptr(global)
#else
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(vector * team) ompx_dyn_cgroup_mem(shared) \
    firstprivate(f, league, team, vector, own, l1) is_device_ptr(global)
#endif
  {
    char* const dyn = static_cast<char*>(llvm_omp_target_dynamic_shared_alloc());
    const int block = ompx::block_id(ompx::dim_x);
    ScratchMember member(league, team, vector, dyn, dyn + own, global + int64_t{block} * l1);
    if constexpr (LeagueLoop) {
      const int64_t stride = ompx::grid_dim(ompx::dim_x);
      for (int64_t rank = block; rank < league; rank += stride) {
        member.impl_set_league_rank(rank);
        f(static_cast<const Member&>(member));
        ompx::sync_block_divergent();  // the team's next rank reuses its scratch
      }
    } else {
      member.impl_set_league_rank(block);
      f(static_cast<const Member&>(member));
    }
  }
}

template <int N, class F>
void mdrange(const F& f, const MDRangePolicy<N>& p) {
  const int64_t points = p.points();
  if (points <= 0) return;
  const int teams = ompx_impl::clamp_teams((points + ompx_impl::kRangeBlock - 1) / ompx_impl::kRangeBlock);
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(ompx_impl::kRangeBlock) firstprivate(f, p, points)
  {
    const int64_t stride = int64_t{ompx::grid_dim(ompx::dim_x)} * ompx::block_dim(ompx::dim_x);
    for (int64_t k = int64_t{ompx::block_id(ompx::dim_x)} * ompx::block_dim(ompx::dim_x) + ompx::thread_id(ompx::dim_x);
         k < points; k += stride)
      p.call(f, k);
  }
}

}  // namespace ompx_team_impl

// The first byte of the team's scratch at level 0 or 1 (Kokkos:
// team.team_scratch(level)); valid in the body of a scratch launch.
inline char* team_scratch(const Member& team, const int level) {
  return static_cast<const ompx_team_impl::ScratchMember&>(team).scratch[level];
}

// Kokkos: team.team_barrier().
inline void team_barrier(const Member&) { ompx::sync_block_divergent(); }

// Lane 0 of the team thread: x, as the layer numbers lanes.
template <class F>
void single(const PerThreadT<Member>& s, const F& f) {
#if PM_HAS_OMPX_MULTIDIM_GRID
  const int lane = ompx::thread_id(ompx::dim_x);
#else
  const int lane = ompx::thread_id(ompx::dim_x) % s.team.vector_length();
#endif
  if (lane == 0) f();
}

inline void atomic_add(double* const p, const double v) {
#pragma omp atomic update
  *p += v;
}

template <class F>
void parallel_for(const char* name, const ScratchTeamPolicy& p, const F& f) {
  const int64_t league = p.league_size;
  if (league <= 0) return;
  const int team = p.team_size, vector = p.vector_length;
  const int64_t l0 = p.scratch_bytes[0], l1 = p.scratch_bytes[1];
  pm::check_team_scratch(name, l0, ompx_team_impl::layer_bytes(team, vector), pm::kOmpTeamSharedPerBlock);
  const int64_t shared = ompx_team_impl::layer_bytes(team, vector) + l0;
  // Level 1 scratch is a slice of global memory per launched team, so teams
  // are bounded by what is resident at once (Kokkos sizes its level-1 pool
  // by concurrency too), not by the grid bound of pm/ompx_grid.hpp.
  const int64_t max_teams = pm::ompx_grid::resident_teams(team * vector, shared);
#if PMKK_OMPX_LEAGUE_LOOP
  const bool loop = true;
#else
  const bool loop = league > max_teams;
#endif
  const int teams = ompx_impl::clamp_teams(league < max_teams ? league : max_teams);
  char* const global = pm::scratch_pool(int64_t{teams} * l1);
  if (loop)
    ompx_team_impl::launch<true>(f, league, team, vector, teams, l0, global, l1);
  else
    ompx_team_impl::launch<false>(f, league, team, vector, teams, l0, global, l1);
}

template <int N, class F>
void parallel_for(const char*, const MDRangePolicy<N>& p, const F& f) {
  ompx_team_impl::mdrange(f, p);
}

}  // namespace pmkk

#include "team_reduce.hpp"

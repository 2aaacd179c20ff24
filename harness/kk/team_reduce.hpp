// pmkk: parallel_reduce over a TeamThreadRange (Kokkos' team-level
// reduction), written once over what every layer's team header gives:
// team_scratch, team_barrier, single(PerThread) and atomic_add. Each team
// thread sums its share of the range (its lanes redundantly, as Kokkos runs
// a team thread's body in every lane); the shares meet in the team's slot,
// the first double of its level-0 scratch (the generator gives every team
// that reduces over its threads that view, pm_team_sum); every thread and
// lane reads the sum. Three barriers: after the reset, after the adds, and
// before the next reduction resets the slot. The order of the adds is the
// atomics', so the last bits may differ from run to run.
// Included at the end of each <layer>_team.hpp.
#pragma once

namespace pmkk {

template <class F>
PMKK_FUNCTION void parallel_reduce(const TeamThreadRangeT<Member>& r, const F& f, double& result) {
  double share = 0;
  parallel_for(r, [&](const int64_t i) {
    double part = 0;
    f(i, part);
    share += part;
  });
  double* const slot = reinterpret_cast<double*>(team_scratch(r.team, 0));
  if (r.team.team_rank() == 0) single(PerThread(r.team), [&]() { *slot = 0; });
  team_barrier(r.team);
  single(PerThread(r.team), [&]() { atomic_add(slot, share); });
  team_barrier(r.team);
  result = *slot;
  team_barrier(r.team);
}

}  // namespace pmkk

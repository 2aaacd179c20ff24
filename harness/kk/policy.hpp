// pmkk: the small Kokkos-like layer the kokkos backend's code is written
// against (parallel_for/parallel_reduce over RangePolicy and TeamPolicy,
// TeamThreadRange, ThreadVectorRange). Each layer header (omptarget.hpp,
// cuda.hpp, ompx.hpp) maps it to hardware the way one Kokkos backend does.
#pragma once
#include <cstdint>

#ifndef PMKK_FUNCTION
#define PMKK_FUNCTION
#endif

namespace pmkk {

struct RangePolicy {
  int64_t begin, end;
  RangePolicy(int64_t b, int64_t e) : begin(b), end(e) {}
};

// The result of a RangePolicy parallel_reduce that stays in device memory
// (Kokkos: a View of one double in the execution space's memory): the launch
// does not wait, and the next kernel reads the sum there (a range_reduce
// with into, docs/kernels.md).
struct DeviceResult {
  double* ptr;
};
inline DeviceResult device_result(double* p) { return DeviceResult{p}; }

struct PerTeam;
struct ScratchTeamPolicy;

struct TeamPolicy {
  int64_t league_size;
  int team_size, vector_length;
  TeamPolicy(int64_t league, int64_t team, int64_t vector)
      : league_size(league), team_size(static_cast<int>(team)), vector_length(static_cast<int>(vector)) {}
  // Team scratch (Kokkos' set_scratch_size): a policy of its own type, so
  // that each layer launches scratch teams by an overload of its own.
  inline ScratchTeamPolicy set_scratch_size(int level, PerTeam bytes) const;
};

template <class Member>
struct TeamThreadRangeT {
  const Member& team;
  int64_t begin, end;
};
template <class Member>
struct ThreadVectorRangeT {
  const Member& team;
  int64_t begin, end;
};

template <class Member>
PMKK_FUNCTION TeamThreadRangeT<Member> TeamThreadRange(const Member& team, int64_t begin, int64_t end) {
  return {team, begin, end};
}
template <class Member>
PMKK_FUNCTION ThreadVectorRangeT<Member> ThreadVectorRange(const Member& team, int64_t begin, int64_t end) {
  return {team, begin, end};
}
template <class Member>
PMKK_FUNCTION ThreadVectorRangeT<Member> ThreadVectorRange(const Member& team, int64_t count) {
  return {team, 0, count};
}

// Team scratch, multi-dimensional ranges and PerThread: the layers' team
// headers (cuda_team.hpp, omptarget_team.hpp, ompx_team.hpp) lower them.
struct PerTeam {
  int64_t bytes;
  explicit PerTeam(int64_t b) : bytes(b) {}
};
struct ScratchTeamPolicy : TeamPolicy {
  int64_t scratch_bytes[2] = {0, 0};  // per team, levels 0 and 1
  explicit ScratchTeamPolicy(const TeamPolicy& p) : TeamPolicy(p) {}
  ScratchTeamPolicy set_scratch_size(int level, PerTeam bytes) const {
    ScratchTeamPolicy q(*this);
    q.scratch_bytes[level == 0 ? 0 : 1] = (bytes.bytes + 7) / 8 * 8;
    return q;
  }
};
inline ScratchTeamPolicy TeamPolicy::set_scratch_size(int level, PerTeam bytes) const {
  return ScratchTeamPolicy(*this).set_scratch_size(level, bytes);
}

// Kokkos' MDRangePolicy<Rank<N>>: begin and end per dimension, the last
// dimension fastest.
template <int N>
struct MDRangePolicy {
  int64_t begin[N], end[N];
  MDRangePolicy(const int64_t (&b)[N], const int64_t (&e)[N]) {
    for (int d = 0; d < N; ++d) begin[d] = b[d], end[d] = e[d];
  }
  PMKK_FUNCTION int64_t extent(int d) const { return end[d] > begin[d] ? end[d] - begin[d] : 0; }
  PMKK_FUNCTION int64_t points() const {
    int64_t n = 1;
    for (int d = 0; d < N; ++d) n *= extent(d);
    return n;
  }
  // Calls f with the indices of point k (0 <= k < points()).
  template <class F>
  PMKK_FUNCTION void call(const F& f, int64_t k) const {
    int64_t idx[N];
    for (int d = N - 1; d >= 0; --d) {
      idx[d] = begin[d] + k % extent(d);
      k /= extent(d);
    }
    if constexpr (N == 2) {
      f(idx[0], idx[1]);
    } else {
      f(idx[0], idx[1], idx[2]);
    }
  }
};

// Kokkos::ScopeGuard: Kokkos::initialize and finalize around the program's
// runs (the kokkos backend's main declares one after the harness read its
// flags). Our layers need neither: it holds nothing.
struct ScopeGuard {
  ScopeGuard(int&, char**) {}
};

template <class Member>
struct PerThreadT {
  const Member& team;
};
// Kokkos::PerThread(team): single(PerThread(team), f) runs f once per team
// thread, not once per vector lane.
template <class Member>
PMKK_FUNCTION PerThreadT<Member> PerThread(const Member& team) {
  return {team};
}

}  // namespace pmkk

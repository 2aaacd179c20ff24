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

struct TeamPolicy {
  int64_t league_size;
  int team_size, vector_length;
  TeamPolicy(int64_t league, int64_t team, int64_t vector)
      : league_size(league), team_size(static_cast<int>(team)), vector_length(static_cast<int>(vector)) {}
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

}  // namespace pmkk

// portmatrix harness: the iteration orders of the mapcheck strategy
// (docs/loopnest.md, "Checked in every order"). Each loop the mapper runs
// in parallel (the league, team-thread and vector loops of a mapped
// kernel's team) iterates in the order order() gives, on one host thread:
// PM_MAPCHECK_ORDER 0 reverses [begin, end), 1 shuffles it by a
// permutation seeded from the range alone, 2 ("both") alternates the two by
// call of the kernel (begin_call, at its first launch): the first call
// reversed, the next shuffled, and so on, so that the harness's runs, each
// verified, check both orders in one program. A loop that carries a dependence
// but was called parallel then reads values a sequential run had not yet
// written (or has overwritten), and the verification against the float64
// reference fails in every run, not only when the threads happen to
// interleave badly.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#ifndef PM_MAPCHECK_ORDER
#error "pm/mapcheck.hpp needs PM_MAPCHECK_ORDER (0 reversed, 1 shuffled, 2 both by call): the mapcheck strategy's order knob"
#endif

namespace pm::mapcheck {

// splitmix64: a small generator whose stream depends on its seed only, so
// that a range is shuffled the same way by every build and every run.
inline uint64_t next(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// shuffled_call is whether the current call shuffles (order 2): begin_call
// flips it, and the first call reverses.
inline bool& shuffled_call() {
  static bool s = true;
  return s;
}

// begin_call starts a call of the kernel: with order 2 the next order.
inline void begin_call() {
#if PM_MAPCHECK_ORDER == 2
  shuffled_call() = !shuffled_call();
#endif
}

// shuffles is whether order() shuffles now.
inline bool shuffles() {
#if PM_MAPCHECK_ORDER == 2
  return shuffled_call();
#else
  return PM_MAPCHECK_ORDER == 1;
#endif
}

// order is the indices of [begin, end) in the order the check runs them:
// reversed, or a Fisher-Yates shuffle seeded from (begin, end) (shuffles). Empty when
// end <= begin, as the loop it replaces would run no iteration.
inline std::vector<int64_t> order(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  if (end <= begin) return out;
  out.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = end - 1; i >= begin; --i) out.push_back(i);
  if (!shuffles()) return out;
  uint64_t s = 0x6d61706368656bULL ^ (static_cast<uint64_t>(begin) * 0x100000001b3ULL) ^ static_cast<uint64_t>(end);
  for (size_t k = out.size() - 1; k > 0; --k) std::swap(out[k], out[next(s) % (k + 1)]);
  return out;
}

}  // namespace pm::mapcheck

// praja on OpenMP target: the execution policies of 003 Section 4.
//
//   omp_target_block_exec   one GPU block: `target` + `parallel for
//                           schedule(static, 1)` (Fig. 4)
//   omp_target_teams_exec   many blocks: `target teams distribute parallel for
//                           schedule(static, 1)` (Fig. 9), the combined
//                           construct compilers lower in SPMD mode (the
//                           "simplified code generation" of Section 4.3.2.2)
//   omp_target_split_exec   many blocks written split: `target teams`, then
//                           `distribute` over chunks of kSplitChunk iterations,
//                           then `parallel for schedule(static, 1)` in each:
//                           the general form lowered in generic mode (a team
//                           master drives the threads through a state
//                           machine), Fig. 13's baseline for the simplified one
//   omp_target_async_exec   omp_target_teams_exec with `nowait` (Fig. 10); the
//                           loops of a sequence are ordered by a dependence on
//                           one stream token (as a CUDA stream orders kernels:
//                           without it the second loop of PRESSURE_CALC may
//                           start before the first is done), and
//                           synchronize<omp_synchronize>() is the `taskwait`
//                           after the sequence;
//                           each body is copied to the heap and kept until
//                           then: the deferred task reads its firstprivate
//                           body when it runs, after forall has returned and
//                           the caller's lambda is gone (on the H200 that read
//                           a reused stack slot: illegal or misaligned
//                           addresses in every multi-loop kernel)
//   omp_target_mapped_exec  omp_target_teams_exec over host-resident arrays
//                           that the kernel maps once with target enter/exit
//                           data (Fig. 5); the body is mapped, not
//                           firstprivate, so that the runtime translates the
//                           pointers it captured to their device copies (the
//                           lambda "deep copy" of Section 4.3.1, in OpenMP 5.0
//                           the attachment of a mapped lambda's pointers)
//
// The template cannot see the arrays the lambda uses (003 Section 4.1), so it
// maps none. Under the other policies the body is passed firstprivate and the
// pointers it captured by value are already device addresses (the harness
// allocates with omp_target_alloc: the data environment is set up once per
// size, outside the timed calls).
#pragma once
#include <omp.h>

#include <memory>
#include <vector>

#include "raja.hpp"

namespace praja {

struct omp_target_block_exec {};
struct omp_target_teams_exec {};
struct omp_target_split_exec {};
struct omp_target_async_exec {};
struct omp_target_mapped_exec {};

constexpr int64_t kSplitChunk = 256;  // iterations per team in the split form

namespace detail {
inline char stream_token;  // the async loops' dependence: one in-order stream
// The bodies of the deferred loops not yet waited for.
inline std::vector<std::shared_ptr<const void>>& pending_bodies() {
  static std::vector<std::shared_ptr<const void>> bodies;
  return bodies;
}
inline void wait_pending() {
#pragma omp taskwait
  pending_bodies().clear();
}
}  // namespace detail

template <class Body>
void forall_range(omp_target_block_exec, int64_t begin, int64_t end, const Body& body) {
#pragma omp target firstprivate(body)
#pragma omp parallel for schedule(static, 1)
  for (int64_t i = begin; i < end; ++i) body(i);
}

template <class Body>
void forall_range(omp_target_teams_exec, int64_t begin, int64_t end, const Body& body) {
#pragma omp target teams distribute parallel for schedule(static, 1) firstprivate(body)
  for (int64_t i = begin; i < end; ++i) body(i);
}

template <class Body>
void forall_range(omp_target_split_exec, int64_t begin, int64_t end, const Body& body) {
  const int64_t chunks = (end - begin + kSplitChunk - 1) / kSplitChunk;
#pragma omp target teams firstprivate(body)
#pragma omp distribute
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = begin + c * kSplitChunk;
    const int64_t hi = lo + kSplitChunk < end ? lo + kSplitChunk : end;
#pragma omp parallel for schedule(static, 1)
    for (int64_t i = lo; i < hi; ++i) body(i);
  }
}

template <class Body>
void forall_range(omp_target_async_exec, int64_t begin, int64_t end, const Body& body) {
  // Without an offload device (the CPU builds' host fallback) the loops run
  // undeferred: GCC 12's host fallback of a deferred target task hung once
  // in CI (INT_PREDICT, killed after 5 minutes) and never on its own since.
  if (omp_get_num_devices() == 0) {
    forall_range(omp_target_teams_exec(), begin, end, body);
    return;
  }
  const auto owned = std::make_shared<const Body>(body);
  detail::pending_bodies().push_back(owned);
  const Body& kept = *owned;
#pragma omp target teams distribute parallel for schedule(static, 1) firstprivate(kept) nowait \
    depend(inout : detail::stream_token)
  for (int64_t i = begin; i < end; ++i) kept(i);
}

template <class Body>
void forall_range(omp_target_mapped_exec, int64_t begin, int64_t end, const Body& body) {
#pragma omp target teams distribute parallel for schedule(static, 1) map(to : body)
  for (int64_t i = begin; i < end; ++i) body(i);
}

// Reductions return a value to the host, so every policy completes them.
template <class Body>
double sum_range(omp_target_block_exec, int64_t begin, int64_t end, const Body& body) {
  double sum = 0;
#pragma omp target firstprivate(body) map(tofrom : sum)
#pragma omp parallel for schedule(static, 1) reduction(+ : sum)
  for (int64_t i = begin; i < end; ++i) {
    expt::ValOp<double, operators::plus> acc{sum};
    body(i, acc);
  }
  return sum;
}

template <class Body>
double sum_range(omp_target_teams_exec, int64_t begin, int64_t end, const Body& body) {
  double sum = 0;
#pragma omp target teams distribute parallel for schedule(static, 1) reduction(+ : sum) firstprivate(body) \
    map(tofrom : sum)
  for (int64_t i = begin; i < end; ++i) {
    expt::ValOp<double, operators::plus> acc{sum};
    body(i, acc);
  }
  return sum;
}

template <class Body>
double sum_range(omp_target_split_exec, int64_t begin, int64_t end, const Body& body) {
  const int64_t chunks = (end - begin + kSplitChunk - 1) / kSplitChunk;
  double sum = 0;
#pragma omp target teams firstprivate(body) map(tofrom : sum) reduction(+ : sum)
#pragma omp distribute
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = begin + c * kSplitChunk;
    const int64_t hi = lo + kSplitChunk < end ? lo + kSplitChunk : end;
#pragma omp parallel for schedule(static, 1) reduction(+ : sum)
    for (int64_t i = lo; i < hi; ++i) {
      expt::ValOp<double, operators::plus> acc{sum};
      body(i, acc);
    }
  }
  return sum;
}

template <class Body>
double sum_range(omp_target_async_exec, int64_t begin, int64_t end, const Body& body) {
  detail::wait_pending();
  return sum_range(omp_target_teams_exec(), begin, end, body);
}

template <class Body>
double sum_range(omp_target_mapped_exec, int64_t begin, int64_t end, const Body& body) {
  double sum = 0;
#pragma omp target teams distribute parallel for schedule(static, 1) reduction(+ : sum) map(to : body) \
    map(tofrom : sum)
  for (int64_t i = begin; i < end; ++i) {
    expt::ValOp<double, operators::plus> acc{sum};
    body(i, acc);
  }
  return sum;
}

// synchronize<omp_synchronize>(): the async policy's taskwait; the other
// policies complete each loop before forall returns and leave nothing to wait
// for.
inline void synchronize_policy(omp_synchronize) {
  if (!detail::pending_bodies().empty()) detail::wait_pending();
}

}  // namespace praja

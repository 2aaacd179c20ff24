// pmkk on OpenMP target, the Kokkos OpenMPTarget backend as 002 describes it:
// the body is a lambda passed firstprivate into the target region (Listing 1.4);
// team launches follow Listing 1.10 (PMKK_OMP_FORM_B 0: "a", teams distribute
// over the league, parallel inside) or Listing 1.11 (PMKK_OMP_FORM_B 1: "b",
// teams + parallel, a league loop stepping by omp_get_num_teams());
// PMKK_OMP_NUM_TEAMS 0 drops the num_teams clause ("w/o num_teams").
// PM_OMP_ASYNC 1 (-async): launches whose results stay on the device go with
// nowait on one stream (pm/device_omptarget.hpp); a reduction the host reads
// waits for them and for itself.
// Team threads share rows with omp for; the vector level is omp simd, which
// the compilers do not parallelise on GPUs (002, Section 2.3).
// On the initial device (built without offload, or no GPU found) the launches
// are lowered as Kokkos' host (OpenMP) backend lowers them, not through the
// target constructs: GCC's host fallback runs a target region's teams one
// after another, each team's parallel region a fork-join of thread_limit
// threads, and starts new threads for every target region (docs/cpu.md,
// docs/repro/gcc-host-fallback-teams), so a team launch there costs a
// fork-join per league rank.
#pragma once
#include <omp.h>

#include "policy.hpp"
#include "pm/tune.hpp"

#ifndef PMKK_OMP_FORM_B
#define PMKK_OMP_FORM_B 1
#endif
#ifndef PMKK_OMP_NUM_TEAMS
#define PMKK_OMP_NUM_TEAMS 1
#endif
#define PMKK_LAMBDA [=]

namespace pmkk {

// The most teams a launch asks for with num_teams; the league loop covers the
// rest. The run-time tunable "max_active_teams" replaces it (pm::tune).
constexpr int64_t kMaxActiveTeams = 65536;

class Member {
 public:
  Member(int64_t rank, int64_t size, int thread, int threads, int vector)
      : rank_(rank), size_(size), thread_(thread), threads_(threads), vector_(vector) {}
  int64_t league_rank() const { return rank_; }
  int64_t league_size() const { return size_; }
  int team_rank() const { return thread_; }
  int team_size() const { return threads_; }
  int vector_length() const { return vector_; }

 private:
  int64_t rank_, size_;
  int thread_, threads_, vector_;
};

namespace omp_impl {

inline bool on_host() { return !pm::device::is_gpu(); }

// The host's team launch, as Kokkos' OpenMP backend runs a TeamPolicy: one
// parallel region of the process's threads, each thread a team that takes a
// contiguous block of league ranks. A team is one thread (Kokkos' host
// backends recommend a core's hardware threads, and the runner places one
// thread on each core); its nested region of one thread is what the body's
// omp for and team barriers bind to. body(rank, team) gets the team's index,
// below omp_get_max_threads().
template <class Body>
void host_league(const int64_t league, const Body& body) {
#pragma omp parallel
  {
    const int64_t team = omp_get_thread_num(), teams = omp_get_num_threads();
    const int64_t first = league * team / teams, last = league * (team + 1) / teams;
#pragma omp parallel num_threads(1)
    for (int64_t rank = first; rank < last; ++rank) body(rank, team);
  }
}

}  // namespace omp_impl

template <class F>
void parallel_for(const char*, const RangePolicy& p, const F& body) {
  const int64_t b = p.begin, e = p.end;
  if (omp_impl::on_host()) {
#pragma omp parallel for simd
    for (int64_t i = b; i < e; ++i) body(i);
    return;
  }
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
#pragma omp target teams distribute parallel for simd firstprivate(f) PM_OMP_NOWAIT
  for (int64_t i = b; i < e; ++i) f(i);
}

// The run-time tunables range_num_teams and range_thread_limit give the
// reduction's num_teams and thread_limit clauses; 0 (the default) launches
// without them, as Kokkos does (docs/analysis/dot.md). The host has no
// teams: there they change nothing.
template <class F>
void parallel_reduce(const char*, const RangePolicy& p, const F& f, double& result) {
  const int64_t b = p.begin, e = p.end;
  double sum = 0;
  if (omp_impl::on_host()) {
#pragma omp parallel for simd reduction(+ : sum)
    for (int64_t i = b; i < e; ++i) f(i, sum);
    result = sum;
    return;
  }
  const pm::RangeClauses c = pm::range_clauses();
  const int num_teams = c.num_teams, thread_limit = c.thread_limit;
  if (c.given()) {
#pragma omp target teams distribute parallel for simd num_teams(num_teams) thread_limit(thread_limit) \
    reduction(+ : sum) firstprivate(f) PM_OMP_ORDERED
    for (int64_t i = b; i < e; ++i) f(i, sum);
  } else {
#pragma omp target teams distribute parallel for simd reduction(+ : sum) firstprivate(f) PM_OMP_ORDERED
    for (int64_t i = b; i < e; ++i) f(i, sum);
  }
  result = sum;
}

// A result in device memory (a range_reduce with into): OpenMP's reduction
// clause would return the sum to the host, so the teams reduce their shares
// themselves, as omp-raw's range_reduce_into does: each team's threads sum
// the team's contiguous share (omp for, a reduction into the team's
// variable), one thread publishes it, and the team that takes the last ticket
// adds the partials and stores the sum (only a parallel region stands
// directly in the teams region, as OpenMP requires). One launch, no copy back; the
// teams: range_num_teams and range_thread_limit when given, else one team
// per 256 elements.
template <class F>
void parallel_reduce(const char*, const RangePolicy& p, const F& body, const DeviceResult& result) {
  const int64_t b = p.begin, e = p.end;
  double* const into = result.ptr;
  if (omp_impl::on_host()) {
    double sum = 0;
#pragma omp parallel for simd reduction(+ : sum)
    for (int64_t i = b; i < e; ++i) body(i, sum);
    *into = sum;
    return;
  }
  const pm::device::ResidentReduce& r = pm::device::resident_reduce();
  double* const partials = r.partials;
  unsigned* const done = r.done;
  const pm::RangeClauses c = pm::range_clauses();
  const int thread_limit = c.thread_limit > 0 ? c.thread_limit : 256;
  const int num_teams = pm::device::resident_teams(e - b, c.num_teams, thread_limit);
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
#pragma omp target teams num_teams(num_teams) thread_limit(thread_limit) firstprivate(f) \
    is_device_ptr(partials, done, into) PM_OMP_NOWAIT
  {
    double sum = 0;    // this team's
    double total = 0;  // the last team's: the teams' sums
    int last = 0;
#pragma omp parallel
    {
      // The team's contiguous share of the range, as distribute deals it.
      const int64_t team = omp_get_team_num(), teams = omp_get_num_teams();
      const int64_t lo = b + (e - b) * team / teams, hi = b + (e - b) * (team + 1) / teams;
#pragma omp for simd reduction(+ : sum)
      for (int64_t i = lo; i < hi; ++i) f(i, sum);
#pragma omp single
      {
        partials[team] = sum;
        unsigned ticket;
#pragma omp atomic capture seq_cst
        ticket = (*done)++;
        last = ticket + 1 == static_cast<unsigned>(teams);  // the last team: every sum is published
      }
      if (last) {
#pragma omp for reduction(+ : total)
        for (int64_t t = 0; t < teams; ++t) {
          double part;
#pragma omp atomic read
          part = partials[t];
          total += part;
        }
#pragma omp single
        {
          *into = total;
          *done = 0;  // ready for the next launch
        }
      }
    }
  }
}

template <class F>
void parallel_for(const char*, const TeamPolicy& p, const F& body) {
  const int64_t league = p.league_size;
  if (omp_impl::on_host()) {
    const int vector = p.vector_length;
    omp_impl::host_league(league, [&](const int64_t rank, int64_t) { body(Member(rank, league, 0, 1, vector)); });
    return;
  }
  const F& f = pm::device::keep(body);  // a deferred launch reads it when it runs (PM_OMP_ASYNC)
  const int team = pm::device::team_threads(p.team_size), vector = p.vector_length;
  const int64_t max_active = pm::tune("max_active_teams", kMaxActiveTeams);
  const int64_t teams = league < max_active ? league : max_active;
  (void)teams;
#if PMKK_OMP_FORM_B == 0
#if PMKK_OMP_NUM_TEAMS
#pragma omp target teams distribute num_teams(teams) thread_limit(team) firstprivate(f) PM_OMP_NOWAIT
#else
#pragma omp target teams distribute thread_limit(team) firstprivate(f) PM_OMP_NOWAIT
#endif
  for (int64_t rank = 0; rank < league; ++rank) {
#pragma omp parallel num_threads(team)
    {
      const Member m(rank, league, omp_get_thread_num(), omp_get_num_threads(), vector);
      f(m);
    }
  }
#else
#if PMKK_OMP_NUM_TEAMS
#pragma omp target teams num_teams(teams) thread_limit(team) firstprivate(f) PM_OMP_NOWAIT
#else
#pragma omp target teams thread_limit(team) firstprivate(f) PM_OMP_NOWAIT
#endif
#pragma omp parallel num_threads(team)
  {
    const int64_t first = omp_get_team_num(), stride = omp_get_num_teams();
    for (int64_t rank = first; rank < league; rank += stride) {
      const Member m(rank, league, omp_get_thread_num(), omp_get_num_threads(), vector);
      f(m);
    }
  }
#endif
}

template <class F>
void parallel_for(const TeamThreadRangeT<Member>& r, const F& f) {
#pragma omp for
  for (int64_t i = r.begin; i < r.end; ++i) f(i);
}

// Each lane's contribution goes through a temporary, as in Kokkos: handing the
// simd-privatised sum itself to the functor by reference is miscompiled by
// clang 16 and 19 for NVPTX (the rows come out wrong; the harness caught it).
template <class F>
void parallel_reduce(const ThreadVectorRangeT<Member>& r, const F& f, double& result) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = r.begin; i < r.end; ++i) {
    double part = 0;
    f(i, part);
    sum += part;
  }
  result = sum;
}

}  // namespace pmkk

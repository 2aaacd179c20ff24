// The pmkk OpenMP target layer on the initial device (kkhost_test.go builds
// it as gcc-host builds a cell): every launch kind runs on the host's own
// threads, a team launch as teams side by side, each one thread with its own
// scratch. One line per check: "ok <what>" or "FAIL <what>: <seen>".
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "pm/device_omptarget.hpp"
#include "pm/harness.hpp"

#include "kk/omptarget_team.hpp"

static int failed = 0;
static void check(const bool ok, const char* what, const long seen) {
  if (ok) {
    std::printf("ok %s\n", what);
  } else {
    std::printf("FAIL %s: %ld\n", what, seen);
    failed++;
  }
}

int main() {
  const int threads = omp_get_max_threads();
  const int64_t league = 1000, rows = 8;

  // A team launch: each rank once, its rows once, by teams of one thread
  // that the host's threads run side by side.
  std::vector<int> visits(league * rows), owner(league, -1), width(league);
  int *const v = visits.data(), *const o = owner.data(), *const w = width.data();
  pmkk::parallel_for("team", pmkk::TeamPolicy(league, 32, 1), PMKK_LAMBDA(const pmkk::Member& team) {
    const int64_t r = team.league_rank();
    o[r] = omp_get_ancestor_thread_num(1);
    w[r] = team.team_size();
    pmkk::parallel_for(pmkk::TeamThreadRange(team, r * rows, (r + 1) * rows), [&](const int64_t i) { v[i]++; });
    pmkk::team_barrier(team);
  });
  long wrong = 0;
  for (const int n : visits) wrong += n != 1;
  check(wrong == 0, "team launch: every row once", wrong);
  wrong = 0;
  for (const int n : width) wrong += n != 1;
  check(wrong == 0, "team launch: a team is one thread", wrong);
  const std::set<int> owners(owner.begin(), owner.end());
  check(static_cast<int>(owners.size()) == threads && *owners.begin() == 0, "team launch: every host thread runs teams",
        static_cast<long>(owners.size()));
  wrong = 0;
  for (int64_t r = 1; r < league; ++r) wrong += owner[r] < owner[r - 1];
  check(wrong == 0, "team launch: a thread's ranks are one block", wrong);

  // A scratch launch with a team-level reduction: teams running at once
  // have their own scratch.
  std::vector<char*> slice(league);
  std::vector<double> sums(league);
  char** const s = slice.data();
  double* const sum = sums.data();
  pmkk::parallel_for("scratch", pmkk::TeamPolicy(league, 32, 1).set_scratch_size(0, pmkk::PerTeam(64)),
                     PMKK_LAMBDA(const pmkk::Member& team) {
                       const int64_t r = team.league_rank();
                       s[r] = pmkk::team_scratch(team, 0);
                       double got = 0;
                       pmkk::parallel_reduce(pmkk::TeamThreadRange(team, 0, r), [&](const int64_t i, double& part) {
                         part += static_cast<double>(i);
                       }, got);
                       sum[r] = got;
                     });
  wrong = 0;
  for (int64_t r = 0; r < league; ++r) wrong += sums[r] != static_cast<double>(r) * static_cast<double>(r - 1) / 2;
  check(wrong == 0, "scratch launch: team reductions right", wrong);
  std::map<int, std::set<char*>> by_owner;
  for (int64_t r = 0; r < league; ++r) by_owner[owner[r]].insert(slice[r]);
  std::set<char*> all;
  for (const auto& kv : by_owner) all.insert(kv.second.begin(), kv.second.end());
  check(all.size() == by_owner.size(), "scratch launch: a slice per host team", static_cast<long>(all.size()));

  // Range launches: a reduction, and two calls that run on the same threads
  // (the host's pool, where a target region would start new ones).
  const int64_t n = 100003;
  double total = 0;
  pmkk::parallel_reduce("reduce", pmkk::RangePolicy(0, n), PMKK_LAMBDA(const int64_t i, double& part) {
    part += static_cast<double>(i);
  }, total);
  check(total == static_cast<double>(n) * static_cast<double>(n - 1) / 2, "range reduction right",
        static_cast<long>(total));
  std::set<long> ids[2];
  for (auto& set : ids) {
    std::vector<long> tid(n);
    long* const t = tid.data();
    pmkk::parallel_for("range", pmkk::RangePolicy(0, n), PMKK_LAMBDA(const int64_t i) { t[i] = syscall(SYS_gettid); });
    set.insert(tid.begin(), tid.end());
  }
  check(ids[0] == ids[1] && static_cast<int>(ids[0].size()) == threads, "range launches: the same host threads",
        static_cast<long>(ids[1].size()));

  // Multi-dimensional ranges: each point once.
  std::vector<int> points(7 * 9 * 11);
  int* const p = points.data();
  pmkk::parallel_for("md2", pmkk::MDRangePolicy<2>({0, 0}, {7, 9}), PMKK_LAMBDA(const int64_t i, const int64_t j) {
    p[i * 9 + j]++;
  });
  pmkk::parallel_for("md3", pmkk::MDRangePolicy<3>({0, 0, 0}, {7, 9, 11}),
                     PMKK_LAMBDA(const int64_t i, const int64_t j, const int64_t k) { p[(i * 9 + j) * 11 + k]++; });
  wrong = 0;
  for (int64_t k = 0; k < 7 * 9 * 11; ++k) wrong += points[k] != 1 + (k < 7 * 9);
  check(wrong == 0, "md ranges: every point once", wrong);
  return failed == 0 ? 0 : 1;
}

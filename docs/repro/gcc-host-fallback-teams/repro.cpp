// GCC's OpenMP target host fallback (libgomp, g++ -fopenmp without offload):
// 1. the teams of a target region run one after another on the encountering
//    thread (GOMP_teams4 in libgomp/target.c), so a league of L teams, each
//    with a parallel region, is L fork-joins in a row;
// 2. thread_limit(T) (and num_threads(T)) give each team's parallel region T
//    threads whatever OMP_NUM_THREADS or OMP_THREAD_LIMIT say;
// 3. every target region gets a fresh thread state and frees it at its end
//    (gomp_target_fallback), so its first parallel region creates new threads.
// Prints what it saw and, last, a verdict line. Arguments: ranks (2000), team
// size (32).
//   g++ -O2 -fopenmp -foffload=disable repro.cpp -o repro && ./repro [ranks [team]]
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>

static long tid() { return syscall(SYS_gettid); }

int main(int argc, char** argv) {
  const long league = argc > 1 ? std::atol(argv[1]) : 2000;  // ranks, as spmv's rows/32
  const int team = argc > 2 ? std::atoi(argv[2]) : 32;        // the kernel's team size
  // Four teams, each busy 10 ms: when did each run, and how wide was it?
  double start[4] = {0}, end[4] = {0};
  int width[4] = {0}, limit[4] = {0};
#pragma omp target teams num_teams(4) thread_limit(team) map(tofrom : start, end, width, limit)
#pragma omp parallel num_threads(team)
  if (omp_get_thread_num() == 0) {
    const int t = omp_get_team_num();
    start[t] = omp_get_wtime();
    while (omp_get_wtime() - start[t] < 0.01) {
    }
    end[t] = omp_get_wtime();
    width[t] = omp_get_num_threads();
    limit[t] = omp_get_thread_limit();
  }
  int teams_seen = 0, overlap = 1, max_team_threads = 0, limit_seen = limit[0];
  for (int t = 0; t < 4; ++t) {
    teams_seen += end[t] > 0;
    if (width[t] > max_team_threads) max_team_threads = width[t];
    for (int u = 0; u < t; ++u)
      if (start[t] < end[u] && start[u] < end[t]) overlap = 2;
  }
  // Threads of two consecutive target regions and of two host parallel regions.
  std::set<long> target_tids[2], host_tids[2];
  for (int k = 0; k < 2; ++k) {
    std::set<long>* s = &target_tids[k];
#pragma omp target map(to : s)
#pragma omp parallel
#pragma omp critical
    s->insert(tid());
  }
  for (int k = 0; k < 2; ++k) {
#pragma omp parallel
#pragma omp critical
    host_tids[k].insert(tid());
  }
  // Worker threads only: the initial thread is in every region.
  const long self = tid();
  int reused = 0, host_reused = 0;
  for (long t : target_tids[1]) reused += t != self && target_tids[0].count(t);
  for (long t : host_tids[1]) host_reused += t != self && host_tids[0].count(t);
  // A team launch as the kk-omp form a lowers it, against one parallel loop.
  double sink = 0;
  double t0 = omp_get_wtime();
#pragma omp target teams distribute thread_limit(team) map(tofrom : sink)
  for (long rank = 0; rank < league; ++rank) {
#pragma omp parallel num_threads(team)
    {
#pragma omp atomic
      sink += 1;
    }
  }
  const double team_loop = omp_get_wtime() - t0;
  t0 = omp_get_wtime();
#pragma omp parallel for reduction(+ : sink)
  for (long rank = 0; rank < league; ++rank) sink += 1;
  const double host_loop = omp_get_wtime() - t0;
  // An empty range kernel, 100 calls: a target region against a host region.
  t0 = omp_get_wtime();
  for (int k = 0; k < 100; ++k) {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < 64; ++i) {
    }
  }
  const double target_call = (omp_get_wtime() - t0) / 100;
  t0 = omp_get_wtime();
  for (int k = 0; k < 100; ++k) {
#pragma omp parallel for
    for (int i = 0; i < 64; ++i) {
    }
  }
  const double host_call = (omp_get_wtime() - t0) / 100;
  std::printf("OMP_NUM_THREADS=%s max threads %d\n", std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)",
              omp_get_max_threads());
  std::printf("num_teams(4): %d teams ran, %s; each team's parallel region had %d threads (thread limit %d)\n",
              teams_seen, overlap == 1 ? "one after another" : "overlapping", max_team_threads, limit_seen);
  std::printf("two target regions: %zu and %zu threads, %d worker thread ids shared; two host parallel regions: %d of %zu workers shared\n",
              target_tids[0].size(), target_tids[1].size(), reused, host_reused, host_tids[1].size() - 1);
  std::printf("team loop of %ld ranks x %d threads: %.3f ms (%.2f us a rank); host parallel for: %.3f ms\n", league, team,
              team_loop * 1e3, team_loop * 1e6 / league, host_loop * 1e3);
  std::printf("an empty range kernel: %.1f us a target region, %.1f us a host parallel region\n", target_call * 1e6,
              host_call * 1e6);
  const bool sequential = overlap == 1 && teams_seen == 4;
  const bool fresh = reused == 0 && target_tids[0].size() > 1;
  std::printf("%s: teams %s, team width %d, target regions %s\n", sequential && fresh ? "REPRODUCED" : "NOT REPRODUCED",
              sequential ? "one after another" : "concurrent", max_team_threads,
              fresh ? "start new threads" : "reuse the host's threads");
  return 0;
}

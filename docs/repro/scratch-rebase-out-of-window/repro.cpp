// scratch-rebase-out-of-window: a team's part of an array in team-shared
// memory, indexed as the global array through a pointer shifted back by the
// part's offset, as the mapper generated it for promoted arrays (work =
// pm_team_work - ie * part). For ie > 0 that pointer lies outside the buffer
// (undefined behaviour); clang 22 moves the subtraction into the shared
// address space and hands the result to cvta.shared, an address outside the
// shared window. -DSLICE indexes as pm::TeamSlice does (part[i - offset]).
// The launch is pmkk's (harness/kk/omptarget_team.hpp, form a): the team
// body a [=] lambda, firstprivate, called in the team's parallel region, its
// loops lambdas taken by reference. Prints "verified" or "wrong: N values".
#include <omp.h>

#include <cstdint>
#include <cstdio>

extern "C" void* llvm_omp_target_dynamic_shared_alloc();

constexpr int64_t kPart = 2304;  // doubles per team: 18432 bytes, as work's

template <class F>
void team_for(const int64_t n, const F& f) {
#pragma omp for
  for (int64_t i = 0; i < n; ++i) f(i);
}

template <class F>
void launch(const int64_t league, const F& f) {
#pragma omp target teams distribute num_teams(league) thread_limit(32) firstprivate(f) \
    ompx_dyn_cgroup_mem(kPart * sizeof(double))
  for (int64_t t = 0; t < league; ++t) {
#pragma omp parallel num_threads(32)
    f(t, static_cast<double*>(llvm_omp_target_dynamic_shared_alloc()));
  }
}

int main(int argc, char**) {
  const int64_t league = 1001 + (argc > 5);  // not a constant to the compiler
  const int dev = omp_get_default_device();
  double* const out = static_cast<double*>(omp_target_alloc(league * kPart * sizeof(double), dev));
  launch(league, [=](const int64_t ie, double* const part) {
#ifdef SLICE
    auto work = [&](const int64_t i) -> double& { return part[i - ie * kPart]; };
#else
    double* const shifted = part - ie * kPart;  // outside the buffer for ie > 0
    auto work = [&](const int64_t i) -> double& { return shifted[i]; };
#endif
    team_for(kPart, [&](const int64_t i) { work(ie * kPart + i) = double(ie + i); });
#pragma omp barrier
    team_for(kPart, [&](const int64_t i) { out[ie * kPart + i] = work(ie * kPart + (kPart - 1 - i)); });
  });
  int64_t bad = 0;
  static double v[kPart];
  for (int64_t t = 0; t < league; t += 100) {
    omp_target_memcpy(v, out + t * kPart, sizeof v, 0, 0, omp_get_initial_device(), dev);
    for (int64_t i = 0; i < kPart; ++i) bad += v[i] != double(t + kPart - 1 - i);
  }
  omp_target_free(out, dev);
  std::printf(bad ? "wrong: %lld values\n" : "verified\n", static_cast<long long>(bad));
  return bad != 0;
}

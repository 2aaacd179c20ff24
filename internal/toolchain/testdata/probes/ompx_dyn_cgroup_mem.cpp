// capability: ompx_dyn_cgroup_mem
// Dynamic team-shared memory through the LLVM extension clause.
#include <omp.h>

int main() {
  const int teams = 4, threads = 64;
  int *d = (int *)omp_target_alloc(teams * sizeof(int), omp_get_default_device());
#pragma omp target teams num_teams(teams) thread_limit(threads) ompx_dyn_cgroup_mem(threads * sizeof(int)) is_device_ptr(d)
  {
    int *s = (int *)llvm_omp_target_dynamic_shared_alloc();
#pragma omp parallel num_threads(threads)
    s[omp_get_thread_num()] = omp_get_thread_num();
    int sum = 0;
    for (int i = 0; i < threads; ++i) sum += s[i];
    d[omp_get_team_num()] = sum;
  }
  int h[teams];
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), omp_get_default_device());
  omp_target_free(d, omp_get_default_device());
  for (int t = 0; t < teams; ++t)
    if (h[t] != threads * (threads - 1) / 2) return 1;
  return 0;
}

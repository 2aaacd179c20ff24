// capability: omp6_dyn_groupprivate
// flags llvm: -fopenmp-version=61
// The OpenMP 6.1 dyn_groupprivate clause (the standard form of
// ompx_dyn_cgroup_mem). LLVM 22 lowers it to the same launch argument but
// ships no omp_get_dyn_groupprivate_ptr, so the memory is reached through
// llvm_omp_target_dynamic_shared_alloc().
#include <omp.h>
#include <ompx.h>

int main() {
  const int teams = 4, threads = 64;
  int *d = (int *)omp_target_alloc(teams * sizeof(int), omp_get_default_device());
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(threads) dyn_groupprivate(fallback(abort): threads * sizeof(int)) is_device_ptr(d)
  {
    int *s = (int *)llvm_omp_target_dynamic_shared_alloc();
    int t = ompx::thread_id(ompx::dim_x);
    s[t] = t;
    ompx_sync_block_acq_rel();
    if (t == 0) {
      int sum = 0;
      for (int i = 0; i < threads; ++i) sum += s[i];
      d[ompx::block_id(ompx::dim_x)] = sum;
    }
  }
  int h[teams];
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), omp_get_default_device());
  omp_target_free(d, omp_get_default_device());
  for (int b = 0; b < teams; ++b)
    if (h[b] != threads * (threads - 1) / 2) return 1;
  return 0;
}

// capability: ompx_bare
// A bare kernel: one-dimensional num_teams/thread_limit, the ompx.h grid API
// and a block barrier (000 Section IV).
#include <omp.h>
#include <ompx.h>

int main() {
  const int teams = 4, threads = 64, n = teams * threads;
  int *d = (int *)omp_target_alloc(n * sizeof(int), omp_get_default_device());
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(threads) is_device_ptr(d)
  {
    int i = ompx::block_id(ompx::dim_x) * ompx::block_dim(ompx::dim_x) + ompx::thread_id(ompx::dim_x);
    d[i] = i;
    ompx_sync_block_acq_rel();
  }
  int h[teams * threads];
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), omp_get_default_device());
  omp_target_free(d, omp_get_default_device());
  for (int i = 0; i < n; ++i)
    if (h[i] != i) return 1;
  return 0;
}

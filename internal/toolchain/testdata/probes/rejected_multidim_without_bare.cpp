// capability: -
// flags llvm: -fopenmp-version=61
// Multi-dimensional num_teams/thread_limit lists on a non-bare target teams:
// clang accepts lists only with ompx_bare ("only one expression allowed in
// 'num_teams' clause"). When a compiler accepts it, add a capability row.
#include <omp.h>

int main() {
  int *d = (int *)omp_target_alloc(64 * sizeof(int), omp_get_default_device());
#pragma omp target teams num_teams(2, 2, 1) thread_limit(8, 2, 1) is_device_ptr(d)
  {
    d[omp_get_team_num()] = 1;
  }
  omp_target_free(d, omp_get_default_device());
  return 0;
}

// capability: -
// flags llvm: -fopenmp-version=61
// OpenMP 6.1's dims modifier for multi-dimensional teams without ompx_bare
// (clang parses it only after the LLVM 22 branch, llvm/llvm-project PR 206412).
// No compiler here accepts it; when one does, add a capability row.
#include <omp.h>

int main() {
  int *d = (int *)omp_target_alloc(64 * sizeof(int), omp_get_default_device());
#pragma omp target teams num_teams(dims(2): 2, 2) thread_limit(dims(2): 8, 2) is_device_ptr(d)
  {
    d[omp_get_team_num()] = 1;
  }
  omp_target_free(d, omp_get_default_device());
  return 0;
}

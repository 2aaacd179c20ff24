// capability: ompx_multidim_grid
// A 3-D grid of 3-D blocks with ompx_bare, written as 000 Fig. 12 writes
// thread_limit(vector, team, 1).
#include <omp.h>
#include <ompx.h>

int main() {
  const int bx = 3, by = 2, bz = 2, tx = 32, ty = 4, tz = 1;
  const int n = bx * by * bz * tx * ty * tz;
  int *d = (int *)omp_target_alloc(n * sizeof(int), omp_get_default_device());
#pragma omp target teams ompx_bare num_teams(bx, by, bz) thread_limit(tx, ty, tz) is_device_ptr(d)
  {
    int b = (ompx::block_id(ompx::dim_z) * by + ompx::block_id(ompx::dim_y)) * bx + ompx::block_id(ompx::dim_x);
    int t = (ompx::thread_id(ompx::dim_z) * ty + ompx::thread_id(ompx::dim_y)) * tx + ompx::thread_id(ompx::dim_x);
    d[b * tx * ty * tz + t] = ompx::block_dim(ompx::dim_y);
  }
  int h[n];
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), omp_get_default_device());
  omp_target_free(d, omp_get_default_device());
  for (int i = 0; i < n; ++i)
    if (h[i] != ty) return 1;
  return 0;
}

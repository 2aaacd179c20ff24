// capability: ompx_shfl_down_sync
// A warp sum with ompx::shfl_down_sync inside a bare kernel (000 Fig. 17).
#include <omp.h>
#include <ompx.h>

int main() {
  const int warps = 4;
  double *d = (double *)omp_target_alloc(warps * sizeof(double), omp_get_default_device());
#pragma omp target teams ompx_bare num_teams(warps) thread_limit(32) is_device_ptr(d)
  {
    double v = ompx::thread_id(ompx::dim_x) + 1;
    for (int o = 16; o > 0; o /= 2) v += ompx::shfl_down_sync(~0ull, v, o);
    if (ompx::thread_id(ompx::dim_x) == 0) d[ompx::block_id(ompx::dim_x)] = v;
  }
  double h[warps];
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), omp_get_default_device());
  omp_target_free(d, omp_get_default_device());
  for (int w = 0; w < warps; ++w)
    if (h[w] != 32 * 33 / 2) return 1;
  return 0;
}

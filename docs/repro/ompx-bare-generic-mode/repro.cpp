// An ompx_bare kernel that calls a device function with a local passed by
// reference, as TestSNAP's helpers do (snap::yi_element, zi_element).
// Built without -fopenmp-cuda-mode (clang's generic data-sharing mode), LLVM
// 19 and 22 reduce the bare kernel to LDC + EXIT in the device link: it
// writes nothing, and y keeps whatever it held. With -fopenmp-cuda-mode the
// kernel keeps its body. Prints "verified" or the first wrong element.
#include <cstdio>
#include <omp.h>
#include <ompx.h>

__attribute__((noinline)) void add(double& acc, double v) { acc += v; }

// The local whose address escapes lives in a device function, not in the
// kernel: generic mode globalises such locals of every device function.
__attribute__((noinline)) double sum4(const double* x, int i) {
  double acc = 0.5;
  for (int k = 0; k < 4; ++k) add(acc, x[4 * i + k]);
  return acc;
}

int main() {
  if (omp_get_num_devices() == 0) {
    std::printf("no offload device\n");
    return 3;  // run-all.sh: SKIP
  }
  const int teams = 64, threads = 128, n = teams * threads;
  double* x = static_cast<double*>(omp_target_alloc(4 * n * sizeof(double), 0));
  double* y = static_cast<double*>(omp_target_alloc(n * sizeof(double), 0));
#pragma omp target teams distribute parallel for is_device_ptr(x, y)
  for (int i = 0; i < 4 * n; ++i) x[i] = 1.0, y[i / 4] = 0.0;
#pragma omp target teams ompx_bare num_teams(teams) thread_limit(threads) is_device_ptr(x, y)
  {
    const int i = ompx::block_id_x() * ompx::block_dim_x() + ompx::thread_id_x();
    y[i] = sum4(x, i);
  }
  double* h = new double[n];
  omp_target_memcpy(h, y, n * sizeof(double), 0, 0, omp_get_initial_device(), omp_get_default_device());
  for (int i = 0; i < n; ++i)
    if (h[i] != 4.5) {
      std::printf("wrong: y[%d] = %g, want 4.5\n", i, h[i]);
      return 1;
    }
  std::printf("verified\n");
  return 0;
}

// A lambda that captures device-resident pointers, mapped into a target
// region with map(to: body) as praja::omp_target_mapped_exec does (003
// Section 4.3.1). OpenMP 5.0 attaches the pointers a mapped lambda captured
// to their device copies; without that the kernel dereferences host
// addresses. Prints "verified" or the first wrong element.
#include <cstdio>
#include <omp.h>

template <class Body>
void forall(long n, const Body& body) {
#pragma omp target teams distribute parallel for map(to : body)
  for (long i = 0; i < n; ++i) body(i);
}

int main() {
  if (omp_get_num_devices() == 0) {
    std::printf("no offload device\n");
    return 3;  // run-all.sh: SKIP
  }
  const long n = 1 << 20;
  double* x = new double[n];
  double* y = new double[n];
  for (long i = 0; i < n; ++i) y[i] = i, x[i] = -1;
#pragma omp target enter data map(to : y[0:n]) map(alloc : x[0:n])
  forall(n, [=](long i) { x[i] = 2 * y[i]; });
#pragma omp target exit data map(from : x[0:n]) map(release : y[0:n])
  for (long i = 0; i < n; ++i)
    if (x[i] != 2.0 * i) {
      std::printf("wrong: x[%ld] = %g, want %g\n", i, x[i], 2.0 * i);
      return 1;
    }
  std::printf("verified\n");
  return 0;
}

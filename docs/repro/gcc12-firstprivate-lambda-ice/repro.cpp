// Paper 002's Listing 1.5 reduced: a lambda made firstprivate on a combined
// target construct. GCC 12 stops with "internal compiler error: in
// gimplify_adjust_omp_clauses" (with -foffload=disable too); clang builds it.
#include <cstdio>

int main() {
  const int n = 1000;
  double* x = new double[n];
  auto body = [=](int i) { x[i] = 2.0 * i; };
#pragma omp target teams distribute parallel for map(from : x[0:n]) firstprivate(body)
  for (int i = 0; i < n; ++i) body(i);
  std::printf("%s\n", x[n - 1] == 2.0 * (n - 1) ? "verified" : "wrong");
  return 0;
}

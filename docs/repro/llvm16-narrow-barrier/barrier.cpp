// A team's parallel region narrower than a warp with a barrier, as
// TestSNAP's 4-thread teams under Kokkos-OMP: LLVM 16's device runtime never
// passes the barrier for T = 4 or 8 (the run hangs), and passes it for 32.
// Usage: barrier T. Prints "verified" when every team's threads met.
#include <cstdio>
#include <cstdlib>
#include <omp.h>

int main(int argc, char** argv) {
  if (omp_get_num_devices() == 0) {
    std::printf("no offload device\n");
    return 3;  // run-all.sh: SKIP
  }
  const int T = argc > 1 ? std::atoi(argv[1]) : 4, teams = 8;
  int met[teams] = {};
#pragma omp target teams num_teams(teams) map(tofrom : met)
  {
    int n = 0;
#pragma omp parallel num_threads(T) reduction(+ : n)
    {
#pragma omp barrier
      n = 1;
    }
    met[omp_get_team_num()] = n;
  }
  for (int i = 0; i < teams; ++i)
    if (met[i] != T) {
      std::printf("wrong: team %d met %d of %d threads\n", i, met[i], T);
      return 1;
    }
  std::printf("verified\n");
  return 0;
}

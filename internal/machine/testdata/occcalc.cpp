// The CUDA occupancy calculator (cuda_occupancy.h, header-only) over the
// launches on stdin, for TestOccupancyMatchesCUDA: argv holds a model's
// device properties, each stdin line "threads regs static dynamic optin",
// each output line "blocks byRegs bySmem byWarps byBlocks".
#include <cuda_occupancy.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 13) {
    std::fprintf(stderr, "usage: occcalc major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize "
                         "smemPerBlock smemPerSM numSms smemOptin smemReserved < launches\n");
    return 2;
  }
  cudaOccDeviceProp p;
  p.computeMajor = std::atoi(argv[1]);
  p.computeMinor = std::atoi(argv[2]);
  p.maxThreadsPerBlock = std::atoi(argv[3]);
  p.maxThreadsPerMultiprocessor = std::atoi(argv[4]);
  p.regsPerBlock = std::atoi(argv[5]);
  p.regsPerMultiprocessor = std::atoi(argv[6]);
  p.warpSize = std::atoi(argv[7]);
  p.sharedMemPerBlock = std::atol(argv[8]);
  p.sharedMemPerMultiprocessor = std::atol(argv[9]);
  p.numSms = std::atoi(argv[10]);
  p.sharedMemPerBlockOptin = std::atol(argv[11]);
  p.reservedSharedMemPerBlock = std::atol(argv[12]);
  int threads, regs, optin;
  long stat, dyn;
  while (std::scanf("%d %d %ld %ld %d", &threads, &regs, &stat, &dyn, &optin) == 5) {
    cudaOccFuncAttributes a;
    a.maxThreadsPerBlock = p.maxThreadsPerBlock;
    a.numRegs = regs;
    a.sharedSizeBytes = static_cast<size_t>(stat);
    a.shmemLimitConfig = optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    a.maxDynamicSharedSizeBytes = (optin ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock) - static_cast<size_t>(stat);
    cudaOccDeviceState s;
    cudaOccResult r;
    const cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, threads, static_cast<size_t>(dyn));
    if (e != CUDA_OCC_SUCCESS) {
      std::printf("error %d\n", static_cast<int>(e));
      continue;
    }
    std::printf("%d %d %d %d %d\n", r.activeBlocksPerMultiprocessor, r.blockLimitRegs, r.blockLimitSharedMem,
                r.blockLimitWarps, r.blockLimitBlocks);
  }
  return 0;
}

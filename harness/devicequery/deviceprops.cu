// portmatrix: print the CUDA devices' properties as JSON, one object per
// device in a list, under the field names of the machine models
// (machines/*.yaml, internal/machine): the run checks the device against the
// model it was given (machine.ParseDeviceJSON, machine.Check).
//
//   nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu
//   build/deviceprops            # every visible device
//
// Only the CUDA runtime: no harness header, so it builds with any nvcc >= 11.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

namespace {
void put_string(const char* key, const char* s) {
  std::printf("\"%s\": \"", key);
  for (; *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') std::printf("\\%c", c);
    else if (c < 0x20) std::printf("\\u%04x", c);
    else std::putchar(c);
  }
  std::printf("\"");
}
void put_int(const char* key, long long v) { std::printf(",\n    \"%s\": %lld", key, v); }
void put_dims(const char* key, const int* d) {
  std::printf(",\n    \"%s\": [%d, %d, %d]", key, d[0], d[1], d[2]);
}
int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
}
}  // namespace

int main() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "deviceprops: cudaGetDeviceCount: %s\n", cudaGetErrorString(e));
    return 1;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("[");
  for (int dev = 0; dev < n; ++dev) {
    cudaDeviceProp p;
    std::memset(&p, 0, sizeof p);
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
      std::fprintf(stderr, "deviceprops: cudaGetDeviceProperties(%d) failed\n", dev);
      return 1;
    }
    char arch[16];
    std::snprintf(arch, sizeof arch, "sm_%d%d", p.major, p.minor);
    std::printf("%s\n  {\n    ", dev ? "," : "");
    put_string("name", p.name);
    std::printf(",\n    ");
    put_string("arch", arch);
    put_int("index", dev);
    put_int("cuda_driver", driver);
    put_int("cuda_runtime", runtime);
    put_int("sm_count", p.multiProcessorCount);
    put_int("warp_size", p.warpSize);
    put_int("max_threads_per_block", p.maxThreadsPerBlock);
    put_dims("max_block_dims", p.maxThreadsDim);
    put_dims("max_grid_dims", p.maxGridSize);
    put_int("max_threads_per_sm", p.maxThreadsPerMultiProcessor);
    put_int("max_blocks_per_sm", p.maxBlocksPerMultiProcessor);
    put_int("registers_per_sm", p.regsPerMultiprocessor);
    put_int("registers_per_block", p.regsPerBlock);
    put_int("shared_memory_per_sm_bytes", static_cast<long long>(p.sharedMemPerMultiprocessor));
    put_int("shared_memory_per_block_bytes", static_cast<long long>(p.sharedMemPerBlock));
    put_int("shared_memory_per_block_optin_bytes", static_cast<long long>(p.sharedMemPerBlockOptin));
    put_int("shared_memory_reserved_per_block_bytes", static_cast<long long>(p.reservedSharedMemPerBlock));
    put_int("l2_bytes", p.l2CacheSize);
    put_int("memory_bytes", static_cast<long long>(p.totalGlobalMem));
    // kHz in the attribute; the models keep MHz. Informational: Check does
    // not compare clocks (they move with the driver's settings).
    put_int("clock_mhz", attr(cudaDevAttrClockRate, dev) / 1000);
    put_int("memory_clock_mhz", attr(cudaDevAttrMemoryClockRate, dev) / 1000);
    put_int("memory_bus_bits", attr(cudaDevAttrGlobalMemoryBusWidth, dev));
    std::printf("\n  }");
  }
  std::printf("\n]\n");
  return 0;
}

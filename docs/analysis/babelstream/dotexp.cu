// Which part of BabelStream's dot makes it faster than ours: the same
// reduction written both ways, launches varied, one process, host clock
// around launch + synchronisation (+ reading the result), 100 runs each.
#include <cstdio>
#include <cstdint>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

template <int Block>
__device__ double block_sum(double v) {
  __shared__ double w[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < Block / 32 ? w[threadIdx.x] : 0;
  if (threadIdx.x < 32)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();
  return v;
}

// Ours: grid-stride, Unroll partials, 32-bit index, last block adds the partials.
template <int Block, int Unroll>
__global__ void __launch_bounds__(Block) ours(const double* a, const double* b, uint32_t n, double* partial,
                                              unsigned* counter, double* result) {
  __shared__ bool last;
  double acc = 0;
  const uint32_t stride = blockDim.x * gridDim.x;
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (Unroll > 1) {
    double p[Unroll] = {};
    for (; k + (Unroll - 1) * stride < n; k += Unroll * stride)
#pragma unroll
      for (int u = 0; u < Unroll; ++u) p[u] += a[k + u * stride] * b[k + u * stride];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += p[u];
  }
  for (; k < n; k += stride) acc += a[k] * b[k];
  acc = block_sum<Block>(acc);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();
    last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double s = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) s += __ldcg(partial + i);
  s = block_sum<Block>(s);
  if (threadIdx.x == 0) *result = s;
}

// BabelStream 5.0's dot kernel (shared-memory tree, partials to host memory).
__global__ void bs(const double* a, const double* b, double* sums, size_t n) {
  __shared__ double smem[1024];
  double tmp = 0;
  const size_t t = threadIdx.x;
  size_t i = t + (size_t)blockDim.x * blockIdx.x;
  for (; i < n; i += (size_t)gridDim.x * blockDim.x) tmp += a[i] * b[i];
  smem[t] = tmp;
  for (int o = blockDim.x / 2; o > 0; o /= 2) {
    __syncthreads();
    if (t < o) smem[t] += smem[t + o];
  }
  if (t == 0) sums[blockIdx.x] = smem[t];
}

int main() {
  const uint32_t n = 100000000;
  double *a, *b, *partial, *hres, *hsums;
  unsigned* counter;
  CK(cudaMalloc(&a, n * 8ull)); CK(cudaMalloc(&b, n * 8ull));
  CK(cudaMalloc(&partial, 65536 * 8)); CK(cudaMalloc(&counter, 4)); CK(cudaMemset(counter, 0, 4));
  CK(cudaMallocHost(&hres, 8)); CK(cudaMallocHost(&hsums, 65536 * 8));
  std::vector<double> h(n, 0.5);
  CK(cudaMemcpy(a, h.data(), n * 8ull, cudaMemcpyHostToDevice));
  for (auto& x : h) x = 0.25;
  CK(cudaMemcpy(b, h.data(), n * 8ull, cudaMemcpyHostToDevice));
  int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double want = 0.125 * n;
  auto time = [&](const char* name, auto launch, auto read) {
    std::vector<double> t;
    for (int r = 0; r < 105; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      launch();
      CK(cudaDeviceSynchronize());
      double s = read();
      auto t1 = std::chrono::steady_clock::now();
      if (s != want) { printf("%s: wrong sum %.17g\n", name, s); exit(1); }
      if (r >= 5) t.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    std::sort(t.begin(), t.end());
    double mean = 0; for (double x : t) mean += x; mean /= t.size();
    printf("%-28s min %.1f us  median %.1f us  mean %.1f us  GB/s(min) %.0f\n", name, t[0] * 1e6, t[t.size() / 2] * 1e6, mean * 1e6, 16.0 * n / t[0] / 1e9);
  };
  for (int rep = 0; rep < 3; ++rep) {
    for (int waves = 1; waves <= 4; waves *= 2) {
      char name[64];
      int per = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, ours<1024, 2>, 1024, 0));
      unsigned g = per * sms * waves;
      snprintf(name, sizeof name, "ours 1024 u2 x%d (%u)", waves, g);
      time(name, [&] { ours<1024, 2><<<g, 1024>>>(a, b, n, partial, counter, hres); }, [&] { return *hres; });
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, ours<1024, 1>, 1024, 0));
      g = per * sms * waves;
      snprintf(name, sizeof name, "ours 1024 u1 x%d (%u)", waves, g);
      time(name, [&] { ours<1024, 1><<<g, 1024>>>(a, b, n, partial, counter, hres); }, [&] { return *hres; });
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, ours<256, 1>, 256, 0));
      g = per * sms * waves;
      snprintf(name, sizeof name, "ours 256 u1 x%d (%u)", waves, g);
      time(name, [&] { ours<256, 1><<<g, 256>>>(a, b, n, partial, counter, hres); }, [&] { return *hres; });
    }
    const unsigned g = 4 * sms;
    time("babelstream 1024 (4/SM)", [&] { bs<<<g, 1024>>>(a, b, hsums, n); },
         [&] { double s = 0; for (unsigned i = 0; i < g; ++i) s += hsums[i]; return s; });
    time("babelstream 1024 (2/SM)", [&] { bs<<<2 * sms, 1024>>>(a, b, hsums, n); },
         [&] { double s = 0; for (int i = 0; i < 2 * sms; ++i) s += hsums[i]; return s; });
  }
  return 0;
}

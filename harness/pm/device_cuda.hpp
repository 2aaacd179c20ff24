// portmatrix harness: a CUDA device (or a HIP one under hipcc, through
// pm/gpu_runtime.hpp). Kernel time from the host's clock around the call and a
// device synchronisation (the OpenMP device's clock); CUDA events around the
// same call are kept as a second series (Timer below).
#pragma once
#include "pm/gpu_runtime.hpp"

#include <chrono>
#include <string>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pm {
namespace device {
// --cuda-sched: only the OpenMP target device sets a scheduling
// (device_omptarget.hpp); here nothing is set.
inline const char* cuda_sched(const std::string&) { return ""; }

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "portmatrix: CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}
inline const cudaDeviceProp& props() {
  static cudaDeviceProp prop;
  static bool done = false;
  if (!done) {
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    done = true;
  }
  return prop;
}
inline const char* name() { return props().name; }
inline bool is_gpu() { return true; }
inline bool host_accessible() { return false; }
inline void* alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 64), "cudaMalloc");
  return p;
}
inline void release(void* p) { (void)cudaFree(p); }
// Pinned host memory: verification copies every output back after every run.
inline void* host_alloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMallocHost(&p, bytes ? bytes : 64), "cudaMallocHost");
  return p;
}
inline void host_release(void* p) { (void)cudaFreeHost(p); }
inline void to_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
inline void to_host(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
inline void copy(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
}
inline void poison(void* p, size_t bytes) { check(cudaMemset(p, 0xFF, bytes), "cudaMemset"); }
inline void sync() { check(cudaDeviceSynchronize(), "kernel"); }
// diff and same compare device data on the device (host_cache::diff's
// definitions): the checks of runs between the first and the last. Partial
// results meet in atomics; max works on the bits of non-negative doubles.
constexpr int kCheckBlock = 256;
template <int = 0>
__global__ void diff_kernel(const double* got, const double* ref, int64_t n, unsigned long long* out) {
  __shared__ double sn[kCheckBlock], sd[kCheckBlock];
  __shared__ unsigned long long sb[kCheckBlock];
  double num = 0, den = 0;
  unsigned long long bad = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const double g = got[i], r = ref[i];
    if (g - g == 0) {
      const double d = g > r ? g - r : r - g, a = r < 0 ? -r : r;
      if (d > num) num = d;
      if (a > den) den = a;
    } else {
      ++bad;
    }
  }
  sn[threadIdx.x] = num;
  sd[threadIdx.x] = den;
  sb[threadIdx.x] = bad;
  for (int off = blockDim.x / 2; off > 0; off /= 2) {
    __syncthreads();
    if (threadIdx.x < off) {
      sn[threadIdx.x] = sn[threadIdx.x] > sn[threadIdx.x + off] ? sn[threadIdx.x] : sn[threadIdx.x + off];
      sd[threadIdx.x] = sd[threadIdx.x] > sd[threadIdx.x + off] ? sd[threadIdx.x] : sd[threadIdx.x + off];
      sb[threadIdx.x] += sb[threadIdx.x + off];
    }
  }
  if (threadIdx.x == 0) {
    atomicMax(&out[0], static_cast<unsigned long long>(__double_as_longlong(sn[0])));
    atomicMax(&out[1], static_cast<unsigned long long>(__double_as_longlong(sd[0])));
    atomicAdd(&out[2], sb[0]);
  }
}
template <int = 0>
__global__ void same_kernel(const unsigned char* a, const unsigned char* b, int64_t bytes, unsigned long long* out) {
  const int64_t words = bytes / 8;
  const uint64_t* x = reinterpret_cast<const uint64_t*>(a);
  const uint64_t* y = reinterpret_cast<const uint64_t*>(b);
  unsigned long long differ = 0;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = first; i < words; i += step) differ += x[i] != y[i];
  for (int64_t i = 8 * words + first; i < bytes; i += step) differ += a[i] != b[i];
  if (differ) atomicAdd(out, differ);
}
inline unsigned long long* check_slots() {
  static unsigned long long* slots = static_cast<unsigned long long*>(alloc(4 * sizeof(unsigned long long)));
  return slots;
}
inline unsigned check_grid(int64_t n) {
  const int64_t most = 8LL * props().multiProcessorCount, need = (n + kCheckBlock - 1) / kCheckBlock;
  return static_cast<unsigned>(need < 1 ? 1 : (need < most ? need : most));
}
inline void diff(const double* got, const double* ref, int64_t n, double out[3]) {
  unsigned long long* s = check_slots();
  unsigned long long h[3];
  check(cudaMemset(s, 0, 3 * sizeof(unsigned long long)), "cudaMemset");
  diff_kernel<<<check_grid(n), kCheckBlock>>>(got, ref, n, s);
  check(cudaGetLastError(), "check launch");
  to_host(h, s, sizeof h);
  std::memcpy(&out[0], &h[0], sizeof(double));
  std::memcpy(&out[1], &h[1], sizeof(double));
  out[2] = static_cast<double>(h[2]);
}
inline bool same(const void* a, const void* b, size_t bytes) {
  unsigned long long* s = check_slots();
  unsigned long long h = 0;
  check(cudaMemset(s, 0, sizeof h), "cudaMemset");
  same_kernel<<<check_grid(static_cast<int64_t>(bytes / 8 + 1)), kCheckBlock>>>(
      static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b), static_cast<int64_t>(bytes), s);
  check(cudaGetLastError(), "check launch");
  to_host(&h, s, sizeof h);
  return h == 0;
}

// dmem: the device memory the harness keeps for itself (the flush buffer,
// the STREAM arrays); here the arrays' own.
namespace dmem {
using device::alloc;
using device::copy;
using device::poison;
using device::release;
using device::to_device;
using device::to_host;
}  // namespace dmem

// Twice the device's L2 (cudaDevAttrL2CacheSize), written with cudaMemset.
inline size_t flush_bytes() {
  static const size_t bytes = [] {
    int dev = 0, l2 = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute (L2 size)");
    const size_t b = 2 * static_cast<size_t>(l2);
    return b > (size_t(8) << 20) ? b : (size_t(8) << 20);
  }();
  return bytes;
}
// The device's L2 (the STREAM arrays are made four times it) and its free
// memory (cudaMemGetInfo).
inline size_t cache_bytes() {
  int dev = 0, l2 = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute (L2 size)");
  return static_cast<size_t>(l2);
}
inline size_t free_bytes() {
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}
// The L2 flush reads a buffer of flush_bytes() (twice the L2) rather than
// writing one: a written buffer leaves the L2 full of dirty lines, which
// the timed call then writes back to memory as its own lines evict them
// (on an H200 DOT at 1e8 ran 2-3% slower after a write than after a read,
// and BabelStream's dot does not pay it; docs/analysis/dot.md). The sum
// is never the sentinel, so the loads stay.
template <int = 0>
__global__ void flush_read_kernel(const double* __restrict__ p, int64_t n, double* sink) {
  double acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
#pragma unroll 4
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) acc += p[i];
  if (acc == 12345.678) *sink = acc;
}
// How the flush evicts (the record's flush_by).
inline const char* flush_by() { return "read"; }
inline void flush() {
  static void* buf = [] {
    void* b = alloc(flush_bytes());
    check(cudaMemset(b, 0, flush_bytes()), "cudaMemset (L2 flush buffer)");
    return b;
  }();
  static double* sink = static_cast<double*>(alloc(sizeof(double)));
  const int64_t n = static_cast<int64_t>(flush_bytes() / sizeof(double));
  flush_read_kernel<<<1056, 256>>>(static_cast<const double*>(buf), n, sink);
  check(cudaGetLastError(), "flush_read_kernel (L2 flush)");
  sync();
}

// STREAM kernels, BabelStream's current CUDA forms (its for_each): blocks
// of 256 threads, as many as a quarter of the elements need, each thread
// walking a grid-stride loop unrolled by 4 (so about four elements a
// thread, their loads in flight together); dot over a grid of 4 blocks of
// 1024 threads per SM with a shared-memory block sum, the block partials
// summed on the host (inside the timed call).
constexpr int kStreamBlock = 256;
constexpr int kStreamUnroll = 4;
constexpr int kStreamDotBlock = 1024;
template <int = 0>
__global__ void stream_copy_kernel(double* __restrict__ c, const double* __restrict__ a, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
#pragma unroll 4
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i];
}
template <int = 0>
__global__ void stream_triad_kernel(double* __restrict__ b, const double* __restrict__ a,
                                    const double* __restrict__ c, double s, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
#pragma unroll 4
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    b[i] = a[i] + s * c[i];
}
template <int = 0>
__global__ void stream_dot_kernel(const double* __restrict__ a, const double* __restrict__ b, double* partial,
                                  int64_t n) {
  __shared__ double tb[kStreamDotBlock];
  double sum = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
    sum += a[i] * b[i];
  tb[threadIdx.x] = sum;
  for (int off = blockDim.x / 2; off > 0; off /= 2) {
    __syncthreads();
    if (threadIdx.x < off) tb[threadIdx.x] += tb[threadIdx.x + off];
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = tb[0];
}
inline unsigned stream_grid(int64_t n) {
  const int64_t per_block = int64_t{kStreamBlock} * kStreamUnroll;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}
inline void stream_copy(double* c, const double* a, int64_t n) {
  stream_copy_kernel<<<stream_grid(n), kStreamBlock>>>(c, a, n);
  check(cudaGetLastError(), "stream copy launch");
}
inline void stream_triad(double* b, const double* a, const double* c, double s, int64_t n) {
  stream_triad_kernel<<<stream_grid(n), kStreamBlock>>>(b, a, c, s, n);
  check(cudaGetLastError(), "stream triad launch");
}
inline double stream_dot(const double* a, const double* b, int64_t n) {
  static const int blocks = 4 * props().multiProcessorCount;
  static double* partial = static_cast<double*>(alloc(blocks * sizeof(double)));
  static double* host = static_cast<double*>(host_alloc(blocks * sizeof(double)));
  stream_dot_kernel<<<blocks, kStreamDotBlock>>>(a, b, partial, n);
  check(cudaGetLastError(), "stream dot launch");
  to_host(host, partial, blocks * sizeof(double));
  double sum = 0;
  for (int i = 0; i < blocks; ++i) sum += host[i];
  return sum;
}

// The clock of every GPU measurement (docs/results-format.md, "clock"): the
// host's steady clock from the launch to the completion the host sees, with
// one device synchronisation before the interval and one inside it at the
// end, as the OpenMP target timer measures its synchronous regions. The
// interval of CUDA events around the same call is kept beside it
// (event_s(): the clock of older folders, "cuda-event"), so one run measures
// what the two clocks differ by. Events are created with the timer; make
// timers outside timed regions.
constexpr const char* kClock = "host";
constexpr bool kHasEvents = true;
struct Timer {
  cudaEvent_t a = nullptr, b = nullptr;
  std::chrono::steady_clock::time_point t0;
  double event = -1;
  Timer() {
    check(cudaEventCreate(&a), "cudaEventCreate");
    check(cudaEventCreate(&b), "cudaEventCreate");
  }
  ~Timer() {
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  // The start event is recorded after the synchronisation and before the
  // host's timestamp: its enqueue (a runtime call of about a microsecond)
  // stays out of the host interval, which OpenMP does not pay either, and
  // the event pair brackets the call exactly as the older event timer did
  // (sync, record, call, record). The end: a call that returned with work
  // still queued on the default stream (a kernel launched and not waited
  // for) has the end event enqueued right after it, before the final
  // synchronisation: that enqueue overlaps the kernel running on the
  // device, and the synchronisation that ends the host interval waits for
  // it with the kernel. A call that waited for its own work (a reduction
  // read on the host) returns with the stream idle: the device is then
  // synchronised and the host's timestamp taken first, and the end event
  // enqueued after it, so the host interval does not pay the event's
  // enqueue and its round trip through the idle device (1.1% of DOT at
  // 1e8 on an H200, docs/analysis/dot.md), which BabelStream's and the
  // OpenMP timers do not pay either; that event interval then includes
  // the call's host part and the synchronisation, as it did already.
  void start() {
    sync();
    check(cudaEventRecord(a), "cudaEventRecord");
    t0 = std::chrono::steady_clock::now();
  }
  double stop() {
    const cudaError_t queued = cudaStreamQuery(0);
    if (queued != cudaSuccess && queued != cudaErrorNotReady) check(queued, "kernel");
    std::chrono::steady_clock::time_point t1;
    if (queued == cudaSuccess) {
      check(cudaDeviceSynchronize(), "kernel");  // work of other streams, if any
      t1 = std::chrono::steady_clock::now();
      check(cudaEventRecord(b), "cudaEventRecord");
      check(cudaDeviceSynchronize(), "cudaEventRecord");
    } else {
      check(cudaEventRecord(b), "cudaEventRecord");
      check(cudaDeviceSynchronize(), "kernel");
      t1 = std::chrono::steady_clock::now();
    }
    check(cudaGetLastError(), "kernel launch");
    // Self-check, of order and not of timing: after the device
    // synchronised, the end event is complete.
    check(cudaEventQuery(b), "the end event after cudaDeviceSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    event = ms * 1e-3;
    return std::chrono::duration<double>(t1 - t0).count();
  }
  // The event interval of the last start/stop, seconds.
  double event_s() const { return event; }
};
}  // namespace device
}  // namespace pm

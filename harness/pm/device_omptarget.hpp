// portmatrix harness: an OpenMP target device. Falls back to the initial
// (host) device when the program was built without offload or finds no GPU;
// the fallback then follows the host's rules (cache flush, STREAM loops).
// Timing: omp_get_wtime after a taskwait, around synchronous target regions
// (the host clock, as every GPU measurement: Timer).
// PM_HOST_DATA 1: arrays live on the host and the kernel maps them.
// PM_OMP_ASYNC 1 (the -async strategies): launches without a result for the
// host are target regions with nowait, ordered on one stream by a dependence
// on stream_token; every other target region carries the dependence and so
// waits for them, and the host waits (taskwait, settle) before it touches
// device memory or stops the clock.
#pragma once
#include <dlfcn.h>
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#ifndef PM_OMP_ASYNC
#define PM_OMP_ASYNC 0
#endif
// The clauses of an asynchronous launch (its results stay on the device) and
// of one whose result the host reads (it starts after the launches in flight
// and is waited for); nothing without PM_OMP_ASYNC. OpenMP directives are
// macro-expanded, so a pragma names them.
#if PM_OMP_ASYNC
#define PM_OMP_NOWAIT nowait depend(inout : pm::device::stream_token)
#define PM_OMP_ORDERED depend(inout : pm::device::stream_token)
#else
#define PM_OMP_NOWAIT
#define PM_OMP_ORDERED
#endif

#include "host_cache.hpp"

namespace pm {
namespace device {
// How the host waits for an NVIDIA GPU (--cuda-sched, docs/results-format.md
// "cuda_sched"). LLVM's offload runtime sets the CUDA primary context of a
// device it starts to CU_CTX_SCHED_BLOCKING_SYNC, unless the context is
// already active: the host thread then sleeps until the device signals,
// and wakes late, the later the longer it slept (on an H200 with clang 22,
// kernel mode's empty launch 31-40 us against 12-16 us, DOT at 1e8 505-526
// against 402-413 us; docs/analysis/launch.md). "auto" (the default)
// activates each device's primary context with CU_CTX_SCHED_AUTO, the
// scheduling every CUDA runtime program gets, before the offload runtime
// starts, so that OpenMP and CUDA programs wait for the device the same
// way; "runtime" leaves the choice to the offload runtime. GCC's libgomp
// creates its contexts with CU_CTX_SCHED_AUTO itself, and without an
// NVIDIA driver (AMD, the build machine) there is nothing to set. The
// driver is opened at run time: the program links no CUDA library. It
// returns what it set: "auto", or "" (the runtime's choice).
inline const char* cuda_sched(const std::string& mode) {
#if defined(__clang__)
  if (mode != "auto") return "";
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return "";
  using init_t = int (*)(unsigned);
  using count_t = int (*)(int*);
  using get_t = int (*)(int*, int);
  using flags_t = int (*)(int, unsigned);
  using retain_t = int (*)(void**, int);
  const auto init = reinterpret_cast<init_t>(dlsym(h, "cuInit"));
  const auto count = reinterpret_cast<count_t>(dlsym(h, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<get_t>(dlsym(h, "cuDeviceGet"));
  const auto flags = reinterpret_cast<flags_t>(dlsym(h, "cuDevicePrimaryCtxSetFlags_v2"));
  const auto retain = reinterpret_cast<retain_t>(dlsym(h, "cuDevicePrimaryCtxRetain"));
  int n = 0;
  if (!init || !count || !get || !flags || !retain || init(0) != 0 || count(&n) != 0 || n < 1) return "";
  constexpr unsigned kSchedAuto = 0;  // CU_CTX_SCHED_AUTO
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    void* ctx = nullptr;  // retained for the program's life: the offload runtime finds it active
    if (get(&dev, i) != 0 || flags(dev, kSchedAuto) != 0 || retain(&ctx, dev) != 0) {
      std::fprintf(stderr, "portmatrix harness: --cuda-sched auto: device %d's primary context refused\n", i);
      std::exit(2);
    }
  }
  return "auto";
#else
  (void)mode;
  return "";
#endif
}
inline int id() {
  static const int dev = omp_get_num_devices() > 0 ? omp_get_default_device() : omp_get_initial_device();
  return dev;
}
inline bool is_gpu() { return id() != omp_get_initial_device(); }
#if PM_HOST_DATA
inline bool host_accessible() { return true; }
#else
inline bool host_accessible() { return !is_gpu(); }
#endif
// The OpenMP API cannot name a device: the runner passes the GPU's name
// (nvidia-smi) as PM_DEVICE_NAME, so records of all toolchains group by device.
inline const char* name() {
  if (!is_gpu()) return "host (OpenMP initial device)";
  const char* env = std::getenv("PM_DEVICE_NAME");
  return env && *env ? env : "OpenMP target device";
}
// team_threads is the width of a team's parallel region for a team of n
// threads. LLVM's device runtime before 18 hangs at a barrier in a parallel
// region narrower than a warp (clang 16 on an H200: 4 and 8 threads hang,
// 32 and 64 finish; docs/capabilities.md); there, on a GPU, the region is
// padded to whole warps and the extra threads take no iterations of the
// team's loops. Evaluated on the host, before the target region.
inline int team_threads(int64_t n) {
#if defined(__clang__) && __clang_major__ < 18
  if (is_gpu()) return static_cast<int>((n + 31) / 32 * 32);
#endif
  return static_cast<int>(n);
}
// Asynchronous launches (PM_OMP_ASYNC): the dependence that orders them as
// one in-order stream, and the bodies of deferred launches not yet waited
// for. A deferred target task reads a firstprivate lambda when it runs, after
// the launching call has returned (raja/omptarget.hpp: on the H200 that read
// a reused stack slot), so a layer launching a lambda with nowait keeps a
// copy here (keep) until the next settle. Without PM_OMP_ASYNC keep is the
// body itself and settle does nothing.
inline char stream_token;
#if PM_OMP_ASYNC
inline std::vector<std::shared_ptr<const void>>& pending_bodies() {
  static std::vector<std::shared_ptr<const void>> bodies;
  return bodies;
}
template <class F>
const F& keep(const F& f) {
  auto owned = std::make_shared<const F>(f);
  pending_bodies().push_back(owned);
  return *owned;
}
inline void settle() {
#pragma omp taskwait
  pending_bodies().clear();
}
#else
template <class F>
const F& keep(const F& f) {
  return f;
}
inline void settle() {}
#endif

// Device memory of reductions whose sum stays on the device (a range_reduce
// with into): one partial per team and the count of teams done, which the
// last team to finish resets. Allocated on first use, kept for the program's
// life; capacity bounds the teams such a launch may ask for.
struct ResidentReduce {
  double* partials = nullptr;
  unsigned* done = nullptr;
  int capacity = 0;
};
constexpr int kResidentReduceTeams = 65536;
inline const ResidentReduce& resident_reduce() {
  static ResidentReduce r = [] {
    ResidentReduce s;
    s.capacity = kResidentReduceTeams;
    const size_t bytes = (static_cast<size_t>(s.capacity) + 1) * sizeof(double);
    s.partials = static_cast<double*>(omp_target_alloc(bytes, id()));
    if (!s.partials) {
      std::fprintf(stderr, "portmatrix: omp_target_alloc of %zu bytes for device-resident reductions failed\n", bytes);
      std::abort();
    }
    s.done = reinterpret_cast<unsigned*>(s.partials + s.capacity);
    const unsigned zero = 0;
    omp_target_memcpy(s.done, &zero, sizeof zero, 0, 0, id(), omp_get_initial_device());
    return s;
  }();
  return r;
}
// The teams of such a launch over count elements: the configuration's
// num_teams when it gives one, else one team per threads elements, at most
// the capacity.
inline int resident_teams(const int64_t count, const int num_teams, const int threads) {
  int64_t t = num_teams > 0 ? num_teams : (count + threads - 1) / threads;
  if (t > kResidentReduceTeams) t = kResidentReduceTeams;
  return static_cast<int>(t < 1 ? 1 : t);
}

// dmem: device memory, also where the kernel's arrays are host-resident: what
// the harness keeps for itself (the L2 flush buffer, the STREAM arrays).
// Under PM_OMP_ASYNC each waits for the launches in flight first.
namespace dmem {
inline void* alloc(size_t bytes) { return omp_target_alloc(bytes ? bytes : 64, id()); }
inline void release(void* p) {
  settle();
  omp_target_free(p, id());
}
inline void to_device(void* dst, const void* src, size_t bytes) {
  settle();
  omp_target_memcpy(dst, src, bytes, 0, 0, id(), omp_get_initial_device());
}
inline void to_host(void* dst, const void* src, size_t bytes) {
  settle();
  omp_target_memcpy(dst, src, bytes, 0, 0, omp_get_initial_device(), id());
}
inline void copy(void* dst, const void* src, size_t bytes) {
  settle();
  omp_target_memcpy(dst, src, bytes, 0, 0, id(), id());
  // libgomp's device-to-device copy returns before it is done; a copy back to
  // the host is ordered after it, so the copy is complete when this returns.
  char probe;
  if (bytes > 0) to_host(&probe, dst, 1);
}
inline void poison(void* p, size_t bytes) {
  settle();
  // All-ones bytes read as a NaN double; a target loop avoids a host buffer.
  uint64_t* w = static_cast<uint64_t*>(p);
  const int64_t words = static_cast<int64_t>(bytes / sizeof(uint64_t));
  const int dev = id();
#pragma omp target teams distribute parallel for is_device_ptr(w) device(dev)
  for (int64_t i = 0; i < words; ++i) w[i] = ~uint64_t(0);
}
// diff and same compare device data where it lies (host_cache::diff's
// definitions): the checks of runs between the first and the last. Without a
// GPU the target regions run on the host (how the tests run them).
// One reduction per region: GCC 12's NVPTX offload turns several into a
// 16-byte atomic its libatomic lacks.
inline void diff(const double* got, const double* ref, int64_t n, double out[3]) {
  settle();
  double num = 0, den = 0;
  int64_t bad = 0;
  const int dev = id();
#pragma omp target teams distribute parallel for reduction(max : num) is_device_ptr(got, ref) device(dev)
  for (int64_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i], d = g > r ? g - r : r - g;
    if (g - g == 0 && d > num) num = d;
  }
#pragma omp target teams distribute parallel for reduction(max : den) is_device_ptr(got, ref) device(dev)
  for (int64_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i], a = r < 0 ? -r : r;
    if (g - g == 0 && a > den) den = a;
  }
#pragma omp target teams distribute parallel for reduction(+ : bad) is_device_ptr(got) device(dev)
  for (int64_t i = 0; i < n; ++i) bad += got[i] - got[i] == 0 ? 0 : 1;
  out[0] = num;
  out[1] = den;
  out[2] = static_cast<double>(bad);
}
inline bool same(const void* a, const void* b, size_t bytes) {
  settle();
  const uint64_t* x = static_cast<const uint64_t*>(a);
  const uint64_t* y = static_cast<const uint64_t*>(b);
  const unsigned char* xb = static_cast<const unsigned char*>(a);
  const unsigned char* yb = static_cast<const unsigned char*>(b);
  const int64_t words = static_cast<int64_t>(bytes / 8), all = static_cast<int64_t>(bytes);
  int64_t differ = 0;
  const int dev = id();
#pragma omp target teams distribute parallel for reduction(+ : differ) is_device_ptr(x, y) device(dev)
  for (int64_t i = 0; i < words; ++i) differ += x[i] != y[i];
  if (all > 8 * words) {
#pragma omp target teams distribute parallel for reduction(+ : differ) is_device_ptr(xb, yb) device(dev)
    for (int64_t i = 8 * words; i < all; ++i) differ += xb[i] != yb[i];
  }
  return differ == 0;
}
}  // namespace dmem

// Host staging for the checks' copies back: pinned where LLVM's runtime has
// it (copies back run several times faster), else malloc.
inline std::set<void*>& pinned() {
  static std::set<void*> blocks;
  return blocks;
}
inline void* host_alloc(size_t bytes) {
#if defined(__clang__)
  if (is_gpu()) {
    if (void* p = omp_alloc(bytes ? bytes : 64, llvm_omp_target_host_mem_alloc)) {
      pinned().insert(p);
      return p;
    }
  }
#endif
  return std::malloc(bytes);
}
inline void host_release(void* p) {
#if defined(__clang__)
  if (pinned().erase(p)) {
    omp_free(p, llvm_omp_target_host_mem_alloc);
    return;
  }
#endif
  std::free(p);
}

#if PM_HOST_DATA
// Host-resident arrays: the kernel maps them itself, with map clauses on its
// target region (003 Fig. 3) or target enter/exit data around its loops (Fig.
// 5), so every call moves its data. Restoring and poisoning stay on the host.
inline void* alloc(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return nullptr;
  return p;
}
inline void release(void* p) { std::free(p); }
inline void to_device(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void poison(void* p, size_t bytes) { std::memset(p, 0xFF, bytes); }
inline void diff(const double* got, const double* ref, int64_t n, double out[3]) { host_cache::diff(got, ref, n, out); }
inline bool same(const void* a, const void* b, size_t bytes) { return std::memcmp(a, b, bytes) == 0; }
#else
using dmem::alloc;
using dmem::copy;
using dmem::diff;
using dmem::poison;
using dmem::same;
using dmem::release;
using dmem::to_device;
using dmem::to_host;
#endif
inline void sync() {
#pragma omp taskwait
  settle();
}

// The OpenMP API cannot ask a device for its L2 size: 256 MiB covers at least
// twice the L2 of every NVIDIA data-centre GPU to date (A100 40 MB, H100 and
// H200 50 MB) and the whole 256 MB Infinity Cache of an MI300X.
constexpr size_t kDeviceFlushBytes = size_t(256) << 20;
inline size_t flush_bytes() { return is_gpu() ? kDeviceFlushBytes : host_cache::flush_bytes(); }
// The caches the STREAM arrays must pass (four times these): on a GPU half
// the flush, more than any L2 the flush covers; the OpenMP API cannot tell
// a device's free memory (0: not known).
inline size_t cache_bytes() { return is_gpu() ? kDeviceFlushBytes / 2 : host_cache::cache_bytes(); }
inline size_t free_bytes() { return is_gpu() ? 0 : host_cache::free_bytes(); }
// On a GPU the flush reads its buffer, as the CUDA device's does
// (device_cuda.hpp: a written buffer leaves the L2 dirty for the timed
// call to write back): a word is written only where it holds the sentinel,
// which the buffer, zeroed once, never does, so the loads stay and nothing
// is written. The host fallback flushes the host's caches.
inline const char* flush_by() { return is_gpu() ? "read" : "write"; }
inline void flush() {
  settle();
  if (!is_gpu()) {
    host_cache::flush();
    return;
  }
  const int64_t words = static_cast<int64_t>(kDeviceFlushBytes / sizeof(uint64_t));
  const int dev = id();
  static uint64_t* const buffer = [&] {
    uint64_t* b = static_cast<uint64_t*>(dmem::alloc(kDeviceFlushBytes));
#pragma omp target teams distribute parallel for is_device_ptr(b) device(dev)
    for (int64_t i = 0; i < words; ++i) b[i] = 0;
    return b;
  }();
  uint64_t* const buf = buffer;
  const uint64_t sentinel = ~uint64_t(0);
#pragma omp target teams distribute parallel for is_device_ptr(buf) device(dev)
  for (int64_t i = 0; i < words; ++i)
    if (buf[i] == sentinel) buf[i] = 0;
}

inline void stream_copy(double* c, const double* a, int64_t n) {
  if (!is_gpu()) return host_cache::stream_copy(c, a, n);
  const int dev = id();
#pragma omp target teams distribute parallel for is_device_ptr(a, c) device(dev)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i];
}
inline void stream_triad(double* b, const double* a, const double* c, double s, int64_t n) {
  if (!is_gpu()) return host_cache::stream_triad(b, a, c, s, n);
  const int dev = id();
#pragma omp target teams distribute parallel for is_device_ptr(a, b, c) device(dev)
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] + s * c[i];
}
inline double stream_dot(const double* a, const double* b, int64_t n) {
  if (!is_gpu()) return host_cache::stream_dot(a, b, n);
  const int dev = id();
  double sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) is_device_ptr(a, b) device(dev)
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// The clock of every GPU measurement (device_cuda.hpp's Timer): the host's
// clock from the launch to the completion the host sees, one synchronisation
// before the interval and one inside it at the end. Target regions without
// nowait are synchronous, so the final taskwait finds nothing to wait for.
constexpr const char* kClock = "host";
constexpr bool kHasEvents = false;
struct Timer {
  double t0 = 0;
  void start() {
    sync();
    t0 = omp_get_wtime();
  }
  double stop() {
    sync();
    return omp_get_wtime() - t0;
  }
  double event_s() const { return -1; }  // no device events here
};
}  // namespace device
}  // namespace pm

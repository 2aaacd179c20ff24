// portmatrix harness: an OpenMP target device. Falls back to the initial
// (host) device when the program was built without offload or finds no GPU;
// the fallback then follows the host's rules (cache flush, STREAM loops).
// Timing: omp_get_wtime after a taskwait, around synchronous target regions.
// PM_HOST_DATA 1: arrays live on the host and the kernel maps them.
#pragma once
#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include "host_cache.hpp"

namespace pm {
namespace device {
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
// dmem: device memory, also where the kernel's arrays are host-resident: what
// the harness keeps for itself (the L2 flush buffer, the STREAM arrays).
namespace dmem {
inline void* alloc(size_t bytes) { return omp_target_alloc(bytes ? bytes : 64, id()); }
inline void release(void* p) { omp_target_free(p, id()); }
inline void to_device(void* dst, const void* src, size_t bytes) {
  omp_target_memcpy(dst, src, bytes, 0, 0, id(), omp_get_initial_device());
}
inline void to_host(void* dst, const void* src, size_t bytes) {
  omp_target_memcpy(dst, src, bytes, 0, 0, omp_get_initial_device(), id());
}
inline void copy(void* dst, const void* src, size_t bytes) {
  omp_target_memcpy(dst, src, bytes, 0, 0, id(), id());
  // libgomp's device-to-device copy returns before it is done; a copy back to
  // the host is ordered after it, so the copy is complete when this returns.
  char probe;
  if (bytes > 0) to_host(&probe, dst, 1);
}
inline void poison(void* p, size_t bytes) {
  // All-ones bytes read as a NaN double; a target loop avoids a host buffer.
  uint64_t* w = static_cast<uint64_t*>(p);
  const int64_t words = static_cast<int64_t>(bytes / sizeof(uint64_t));
  const int dev = id();
#pragma omp target teams distribute parallel for is_device_ptr(w) device(dev)
  for (int64_t i = 0; i < words; ++i) w[i] = ~uint64_t(0);
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
#else
using dmem::alloc;
using dmem::copy;
using dmem::poison;
using dmem::release;
using dmem::to_device;
using dmem::to_host;
#endif
inline void sync() {
#pragma omp taskwait
}

// The OpenMP API cannot ask a device for its L2 size: 256 MiB covers at least
// twice the L2 of every NVIDIA data-centre GPU to date (A100 40 MB, H100 and
// H200 50 MB) and the whole 256 MB Infinity Cache of an MI300X.
constexpr size_t kDeviceFlushBytes = size_t(256) << 20;
inline size_t flush_bytes() { return is_gpu() ? kDeviceFlushBytes : host_cache::flush_bytes(); }
inline void flush() {
  if (!is_gpu()) {
    host_cache::flush();
    return;
  }
  static uint64_t* const buffer = static_cast<uint64_t*>(dmem::alloc(kDeviceFlushBytes));
  static uint64_t round = 0;
  const uint64_t value = ++round;
  uint64_t* const buf = buffer;
  const int64_t words = static_cast<int64_t>(kDeviceFlushBytes / sizeof(uint64_t));
  const int dev = id();
#pragma omp target teams distribute parallel for is_device_ptr(buf) device(dev)
  for (int64_t i = 0; i < words; ++i) buf[i] = value;
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
};
}  // namespace device
}  // namespace pm

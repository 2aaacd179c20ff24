// portmatrix harness: the host as the device (serial, OpenMP host, and OpenMP
// target code built without offload). Wall time after a (no-op) sync.
#pragma once
#include <unistd.h>

#include <chrono>
#include <string>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "host_cache.hpp"

namespace pm {
namespace device {
// --cuda-sched: only the OpenMP target device sets a scheduling
// (device_omptarget.hpp); here nothing is set.
inline const char* cuda_sched(const std::string&) { return ""; }

inline const char* name() { return "host"; }
inline bool is_gpu() { return false; }
inline bool host_accessible() { return true; }
inline void* alloc(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return nullptr;
  return p;
}
inline void release(void* p) { std::free(p); }
inline void* host_alloc(size_t bytes) { return alloc(bytes); }
inline void host_release(void* p) { release(p); }
inline void to_device(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void poison(void* p, size_t bytes) { std::memset(p, 0xFF, bytes); }
inline void sync() {}
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
// The harness compares host-accessible data on the host itself; these are
// the same comparisons for code that names them.
inline void diff(const double* got, const double* ref, int64_t n, double out[3]) { host_cache::diff(got, ref, n, out); }
inline bool same(const void* a, const void* b, size_t bytes) { return std::memcmp(a, b, bytes) == 0; }
inline size_t flush_bytes() { return host_cache::flush_bytes(); }
inline size_t cache_bytes() { return host_cache::cache_bytes(); }
inline size_t free_bytes() { return host_cache::free_bytes(); }
inline void flush() { host_cache::flush(); }
// How the flush evicts (the record's flush_by): the host's writes.
inline const char* flush_by() { return "write"; }
inline void stream_copy(double* c, const double* a, int64_t n) { host_cache::stream_copy(c, a, n); }
inline void stream_triad(double* b, const double* a, const double* c, double s, int64_t n) {
  host_cache::stream_triad(b, a, c, s, n);
}
inline double stream_dot(const double* a, const double* b, int64_t n) { return host_cache::stream_dot(a, b, n); }
constexpr const char* kClock = "host";
constexpr bool kHasEvents = false;
struct Timer {
  std::chrono::steady_clock::time_point t0;
  double event_s() const { return -1; }  // no device events here
  void start() { t0 = std::chrono::steady_clock::now(); }
  double stop() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};
}  // namespace device
}  // namespace pm

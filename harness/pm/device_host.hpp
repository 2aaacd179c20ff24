// portmatrix harness: the host as the device (serial, OpenMP host, and OpenMP
// target code built without offload). Wall time after a (no-op) sync.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace pm {
namespace device {
inline const char* name() { return "host"; }
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
inline void sync() {}
struct Timer {
  std::chrono::steady_clock::time_point t0;
  void start() { t0 = std::chrono::steady_clock::now(); }
  double stop() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};
}  // namespace device
}  // namespace pm

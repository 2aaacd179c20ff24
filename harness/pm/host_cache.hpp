// portmatrix harness: host memory helpers shared by the host device and the
// OpenMP target device's host fallback: the cache flush and the STREAM loops,
// parallel with OpenMP where the program is built with it (all cores: the
// host's own bandwidth).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace pm {
namespace host_cache {

// Twice the caches the host has (last level plus every core's L2), at least
// 64 MiB: what one pass of writes must cover to leave none of a rep's data
// cached. sysconf reports 0 or -1 where it cannot tell.
inline size_t cache_bytes();
inline size_t flush_bytes() {
  static const size_t bytes = [] {
    const size_t floor = size_t(64) << 20;
    return 2 * cache_bytes() > floor ? 2 * cache_bytes() : floor;
  }();
  return bytes;
}

// cache_bytes is the caches the host has (last level plus every core's L2),
// 32 MiB where sysconf cannot tell: the STREAM arrays are made four times it.
inline size_t cache_bytes() {
  long l3 = 0, l2 = 0, cores = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  const size_t caches = (l3 > 0 ? l3 : 0) + (l2 > 0 ? l2 : 0) * (cores > 0 ? cores : 1);
  return caches > 0 ? caches : size_t(32) << 20;
}

// free_bytes is the memory the host has free (0 where sysconf cannot tell).
inline size_t free_bytes() {
  long pages = -1, page = -1;
#ifdef _SC_AVPHYS_PAGES
  pages = sysconf(_SC_AVPHYS_PAGES);
  page = sysconf(_SC_PAGESIZE);
#endif
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

// flush writes the flush buffer from every thread (each core's private L2
// too), a different byte each time so no pass can be skipped.
inline void flush() {
  static char* buf = [] {
    void* p = nullptr;
    if (posix_memalign(&p, 64, flush_bytes()) != 0) std::abort();
    return static_cast<char*>(p);
  }();
  static unsigned char round = 0;
  const int value = ++round;
  const int64_t n = static_cast<int64_t>(flush_bytes());
#ifdef _OPENMP
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
    std::memset(buf + lo, value, static_cast<size_t>(hi - lo));
  }
#else
  std::memset(buf, value, static_cast<size_t>(n));
#endif
}

// diff compares got with ref: out = {max|got-ref| and max|ref| over the
// finite values of got, how many are NaN or Inf} (the device form of the
// harness's compare, for the checks of runs between the first and the last).
inline void diff(const double* got, const double* ref, int64_t n, double out[3]) {
  double num = 0, den = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i];
    if (!(g - g == 0)) {  // NaN or Inf
      ++bad;
      continue;
    }
    const double d = g > r ? g - r : r - g, a = r < 0 ? -r : r;
    if (d > num) num = d;
    if (a > den) den = a;
  }
  out[0] = num;
  out[1] = den;
  out[2] = static_cast<double>(bad);
}

inline void stream_copy(double* c, const double* a, int64_t n) {
#ifdef _OPENMP
#pragma omp parallel for simd schedule(static)
#endif
  for (int64_t i = 0; i < n; ++i) c[i] = a[i];
}
inline void stream_triad(double* b, const double* a, const double* c, double s, int64_t n) {
#ifdef _OPENMP
#pragma omp parallel for simd schedule(static)
#endif
  for (int64_t i = 0; i < n; ++i) b[i] = a[i] + s * c[i];
}
inline double stream_dot(const double* a, const double* b, int64_t n) {
  double sum = 0;
#ifdef _OPENMP
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
#endif
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace host_cache
}  // namespace pm

// portmatrix harness: the host side of a measurement in parallel (data,
// reference copies, checks of large arrays), deterministic whatever the
// number of threads.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

namespace pm {

// parallel_split says how many parts parallel_parts cuts [0, n) into: up to
// 16 host threads when n is large, else one.
inline int64_t parallel_split(int64_t n) {
  constexpr int64_t kChunk = int64_t(1) << 22;
  const int64_t parts = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  return std::max<int64_t>(1, std::min(parts, (n + kChunk - 1) / kChunk));
}

// parallel_map runs f(lo, hi) over the parts of [0, n) (the host side of a
// measurement: data, reference copies, checks) and returns what each part
// returned, in index order. Each part sees a contiguous range.
template <class F>
auto parallel_map(int64_t n, F f) -> std::vector<decltype(f(int64_t(0), int64_t(0)))> {
  const int64_t parts = parallel_split(n);
  std::vector<decltype(f(int64_t(0), int64_t(0)))> out(parts);
  if (parts == 1) {
    out[0] = f(int64_t(0), n);
    return out;
  }
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < parts; ++t) threads.emplace_back([&, t] { out[t] = f(n * t / parts, n * (t + 1) / parts); });
  for (std::thread& th : threads) th.join();
  return out;
}

// parallel_parts is parallel_map for f that returns nothing.
template <class F>
void parallel_parts(int64_t n, F f) {
  parallel_map(n, [&](int64_t lo, int64_t hi) {
    f(lo, hi);
    return 0;
  });
}

// host_pages allocates bytes for a host array: large ones aligned to 2 MiB
// and marked for transparent huge pages where the kernel offers them, so that
// first touching gigabytes (a miniFE matrix, 1e8-element vectors) takes a
// fault per 2 MiB instead of per 4 KiB.
inline void* host_pages(size_t bytes) {
  constexpr size_t kHuge = size_t(2) << 20;
  if (bytes < kHuge) return std::malloc(bytes ? bytes : 1);
  const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, rounded);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: no error matters
#endif
  return p;
}

// A host array left uninitialised on allocation, so that the threads that
// fill it first touch its pages (a std::vector of 1e8 doubles spends most of
// a second zeroing them in one thread).
template <class T>
class HostArray {
 public:
  explicit HostArray(int64_t n = 0) : n_(n), p_(n > 0 ? alloc(n) : nullptr, Free{true}) {}
  // mapped views n values at p inside memory that owner keeps alive (a file
  // mapped read-only: writing through the view faults).
  static HostArray mapped(const T* p, int64_t n, std::shared_ptr<const void> owner) {
    HostArray a;
    a.n_ = n;
    a.p_ = std::unique_ptr<T[], Free>(const_cast<T*>(p), Free{false});
    a.owner_ = std::move(owner);
    return a;
  }
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  int64_t size() const { return n_; }
  T& operator[](int64_t i) { return p_[i]; }
  const T& operator[](int64_t i) const { return p_[i]; }
  void fill(T v) {
    T* d = p_.get();
    parallel_parts(n_, [&](int64_t a, int64_t b) { std::fill(d + a, d + b, v); });
  }
  void copy_from(const HostArray& o) {
    T* d = p_.get();
    const T* s = o.p_.get();
    parallel_parts(n_, [&](int64_t a, int64_t b) { std::memcpy(d + a, s + a, static_cast<size_t>(b - a) * sizeof(T)); });
  }

 private:
  struct Free {
    bool owned = true;
    void operator()(T* p) const {
      if (owned) std::free(p);
    }
  };
  static T* alloc(int64_t n) {
    static_assert(std::is_trivially_copyable<T>::value, "HostArray holds plain data");
    void* p = host_pages(static_cast<size_t>(n) * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  int64_t n_;
  std::unique_ptr<T[], Free> p_;
  std::shared_ptr<const void> owner_;  // a mapped view's mapping
};

// same_bytes compares two host buffers in parallel.
inline bool same_bytes(const void* a, const void* b, size_t bytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  const std::vector<char> differ = parallel_map(static_cast<int64_t>(bytes), [&](int64_t lo, int64_t hi) {
    return static_cast<char>(std::memcmp(x + lo, y + lo, static_cast<size_t>(hi - lo)) != 0);
  });
  return std::find(differ.begin(), differ.end(), 1) == differ.end();
}

}  // namespace pm

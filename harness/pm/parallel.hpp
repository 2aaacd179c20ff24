// portmatrix harness: the host side of a measurement in parallel (data,
// reference copies, checks of large arrays), deterministic whatever the
// number of threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace pm {

// parallel_parts runs f(lo, hi) over [0, n) in up to 16 host threads when n
// is large (the host side of a measurement: data, reference copies, checks),
// else in this thread. Each part sees a contiguous range, in index order.
template <class F>
void parallel_parts(int64_t n, F f) {
  constexpr int64_t kChunk = int64_t(1) << 22;
  int64_t parts = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  parts = std::min(parts, (n + kChunk - 1) / kChunk);
  if (parts <= 1) {
    f(int64_t(0), n);
    return;
  }
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < parts; ++t) threads.emplace_back([&, t] { f(n * t / parts, n * (t + 1) / parts); });
  for (std::thread& th : threads) th.join();
}

// same_bytes compares two host buffers in parallel.
inline bool same_bytes(const void* a, const void* b, size_t bytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  std::atomic<bool> differ{false};
  parallel_parts(static_cast<int64_t>(bytes), [&](int64_t lo, int64_t hi) {
    if (std::memcmp(x + lo, y + lo, static_cast<size_t>(hi - lo)) != 0) differ = true;
  });
  return !differ;
}

}  // namespace pm

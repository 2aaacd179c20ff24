// portmatrix harness: device memory for team scratch that lives in global
// memory (level 1, and level 0 where a toolchain has no team-shared memory
// to give), one slice per team. Kept across calls and grown on demand, as
// Kokkos keeps its scratch space, so that a timed call allocates nothing.
#pragma once
#include <cstdint>

namespace pm {
inline char* scratch_pool(const int64_t bytes) {
  static char* pool = nullptr;
  static int64_t have = 0;
  if (bytes > have) {
    if (pool) device::release(pool);
    pool = static_cast<char*>(device::alloc(static_cast<size_t>(bytes)));
    have = bytes;
  }
  return pool;
}
}  // namespace pm

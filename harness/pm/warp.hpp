// portmatrix harness: warp helpers for OpenMP kernel mode (ompx_bare) on NVPTX.
#pragma once

namespace pm {

// lane0 returns lane 0's v in every lane of mask, a warp segment of width
// lanes (a power of two up to 32): the NVPTX shfl.sync.idx under ompx.h, which
// offers only shfl_down in LLVM 19. No address is taken: in a bare kernel an
// escaping local is "globalised" through runtime state kernel mode never sets
// up (a memcpy-based version hung). Host compilations keep v; they never run.
inline double lane0(const unsigned mask, const double v, const int width) {
#if defined(__NVPTX__)
  const long long bits = __builtin_bit_cast(long long, v);
  const int c = ((32 - width) << 8) | 0x1f;
  const int lo = __nvvm_shfl_sync_idx_i32(mask, static_cast<int>(bits), 0, c);
  const int hi = __nvvm_shfl_sync_idx_i32(mask, static_cast<int>(bits >> 32), 0, c);
  return __builtin_bit_cast(double, (static_cast<long long>(hi) << 32) | static_cast<unsigned>(lo));
#else
  (void)mask;
  (void)width;
  return v;
#endif
}

}  // namespace pm

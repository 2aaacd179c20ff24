// pmkk on CUDA, the Kokkos CUDA backend as 002 describes it (Section 2.3,
// Listing 1.9): "KK-CUDA 3 levels" (vector_length > 1) and "2 levels"
// (vector_length 1). Bodies are [=] __host__ __device__ lambdas, passed by
// value as kernel arguments.
//   RangePolicy for:     1-D kernel, 256-thread blocks, one thread per element
//                        (grid-stride for ranges beyond the grid limit).
//   RangePolicy reduce:  per-thread accumulation over a grid-stride loop, warp
//                        shuffles, shared memory across warps, then the last
//                        block to finish combines the block partials
//                        (Kokkos' cuda_single_inter_block_reduce_scan with its
//                        scratch flag); the result lands in pinned host memory
//                        (Kokkos' unified scratch) and the call fences;
//                        into a DeviceResult (device memory) the last block
//                        stores it there and the call returns at once.
//                        Grid: one wave (SMs x resident blocks from the
//                        occupancy API); Kokkos instead caps grid.x at its
//                        block size (occupancy-chosen there, 256 here).
//   TeamPolicy:          league -> blockIdx.x, team thread -> threadIdx.y,
//                        vector lane -> threadIdx.x, block(vector, team);
//                        grid = min(league, max grid), league loop stepping by
//                        gridDim.x (Kokkos' ParallelFor<TeamPolicy, Cuda>).
//   TeamThreadRange:     threadIdx.y strides over the range.
//   ThreadVectorRange:   threadIdx.x strides over the range, then a shuffle
//                        reduction among the vector lanes of one thread; every
//                        lane ends with the result (Kokkos' vector_reduce).
// Kernels are asynchronous; the harness times them with CUDA events.
// Under hipcc (AMD targets) the same source is HIP through pm/gpu_runtime.hpp;
// a warp is then a wavefront of pm::kWarpSize lanes (64 on gfx90a).
#pragma once
#include "pm/gpu_runtime.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "pm/device_cuda.hpp"

#define PMKK_FUNCTION __host__ __device__
#define PMKK_LAMBDA [=] __host__ __device__
#include "policy.hpp"
#include "pm/tune.hpp"

namespace pmkk {

// The team handle (Kokkos' CudaTeamMember): league rank from the league loop,
// team rank threadIdx.y, vector lane threadIdx.x.
class Member {
 public:
  PMKK_FUNCTION Member(int64_t rank, int64_t size, int thread, int threads, int lane, int vector)
      : rank_(rank), size_(size), thread_(thread), threads_(threads), lane_(lane), vector_(vector) {}
  PMKK_FUNCTION int64_t league_rank() const { return rank_; }
  PMKK_FUNCTION int64_t league_size() const { return size_; }
  PMKK_FUNCTION int team_rank() const { return thread_; }
  PMKK_FUNCTION int team_size() const { return threads_; }
  PMKK_FUNCTION int vector_length() const { return vector_; }
  PMKK_FUNCTION int vector_rank() const { return lane_; }  // pmkk-internal: threadIdx.x

 private:
  int64_t rank_, size_;
  int thread_, threads_, lane_, vector_;
};

namespace cuda_impl {

constexpr int kRangeBlock = 256;  // threads per block of RangePolicy kernels: the default of range_block
constexpr int kRangeBlockMin = 128;  // the smallest range_block (range_launch): sizes the reduction scratch
constexpr int kWarp = pm::kWarpSize;  // 32 on NVIDIA, 64 on gfx90a (pm/warp.hpp)

[[noreturn]] inline void fail(const char* what, const char* why) {
  std::fprintf(stderr, "portmatrix: pmkk cuda: %s: %s\n", what, why);
  std::exit(3);
}

// Device facts, read once (Kokkos' CudaInternal keeps the same).
struct Device {
  int sms = 0, max_threads_per_sm = 0;
  int64_t max_grid_x = 0;
  int64_t shared_per_block_optin = 0;  // the most dynamic shared memory a block may opt in to
};
inline const Device& device() {
  static Device d = [] {
    Device r;
    int dev = 0;
    pm::device::check(cudaGetDevice(&dev), "cudaGetDevice");
    pm::device::check(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    pm::device::check(cudaDeviceGetAttribute(&r.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
                      "cudaDeviceGetAttribute");
    int gx = 0;
    pm::device::check(cudaDeviceGetAttribute(&gx, cudaDevAttrMaxGridDimX, dev), "cudaDeviceGetAttribute");
    r.max_grid_x = gx;
    int optin = 0;
    pm::device::check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "cudaDeviceGetAttribute");
    r.shared_per_block_optin = optin;
    return r;
  }();
  return d;
}

// Reduction scratch kept across calls (Kokkos' scratch space, scratch flags
// and unified scratch): one partial per block, a block counter that the
// kernel resets itself, and the result in pinned, device-visible host memory.
struct ReduceScratch {
  double* partial = nullptr;
  unsigned* counter = nullptr;
  double* result = nullptr;
  int capacity = 0;  // blocks
};
inline const ReduceScratch& reduce_scratch() {
  static ReduceScratch s = [] {
    ReduceScratch r;
    const Device& d = device();
    r.capacity = d.sms * (d.max_threads_per_sm / kRangeBlockMin);  // one full wave at most, of the smallest blocks
    if (r.capacity < 1) r.capacity = 1;
    pm::device::check(cudaMalloc(&r.partial, r.capacity * sizeof(double)), "cudaMalloc (reduce scratch)");
    pm::device::check(cudaMalloc(&r.counter, sizeof(unsigned)), "cudaMalloc (reduce flags)");
    pm::device::check(cudaMemset(r.counter, 0, sizeof(unsigned)), "cudaMemset (reduce flags)");
    pm::device::check(cudaMallocHost(&r.result, sizeof(double)), "cudaMallocHost (reduce result)");
    return r;
  }();
  return s;
}

inline void check_launch(const char* name) { pm::device::check(cudaGetLastError(), name); }

// Sum over a block of Block threads (1-D); the total is valid in thread
// 0. Every thread of the block must call it. The caller must put a barrier
// between two calls (warp_sums is reused).
template <int Block>
__device__ inline double block_sum(double v) {
  __shared__ double warp_sums[Block / kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int off = kWarp / 2; off > 0; off >>= 1) v += pm::gpu::shfl_down(pm::kFullWarpMask, v, off);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < Block / kWarp ? warp_sums[lane] : 0.0;
    for (int off = kWarp / 2; off > 0; off >>= 1) v += pm::gpu::shfl_down(pm::kFullWarpMask, v, off);
  }
  return v;
}

// RangePolicy kernels walk the offsets k in [0, n) of the range in the
// index type I: uint32_t when the range and kMaxUnroll grid strides past it
// fit in 32 bits (use_32bit_index), as Kokkos' CUDA backend indexes such
// ranges, else int64_t. A 64-bit grid-stride loop costs each thread a 64-bit division
// for its trip count (a called routine in the SASS), which a one-element-
// per-thread launch pays once per element.
template <class I>
__device__ inline I range_first() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
}
template <class I>
__device__ inline I range_stride() {
  return static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
}
// use_32bit_index: the launch of grid blocks of Block threads may index a
// range of n in 32 bits (k + kMaxUnroll strides stays below 2^32).
constexpr int kMaxUnroll = 4;
inline bool use_32bit_index(int64_t n, int64_t grid, int Block) {
  return n + kMaxUnroll * grid * Block <= int64_t(0xffffffff);
}

template <int Block, class I, class F>
__global__ void __launch_bounds__(Block) range_for_kernel(const F f, const int64_t begin, const I n) {
  const I stride = range_stride<I>();
  for (I k = range_first<I>(); k < n; k += stride) f(begin + static_cast<int64_t>(k));
}

// Unroll (the run-time tunable range_unroll) grid-strided elements a step,
// each into its own partial, so that their loads are independent and more
// of them are in flight per thread; 1 is Kokkos' loop, one element a step.
template <int Block, int Unroll, class I, class F>
__global__ void __launch_bounds__(Block)
    range_reduce_kernel(const F f, const int64_t begin, const I n, double* const partial,
                        unsigned* const counter, double* const result) {
  __shared__ bool last;
  // Stage 1: each thread accumulates its grid-stride share from the identity.
  double acc = 0;
  const I stride = range_stride<I>();
  I k = range_first<I>();
  if constexpr (Unroll > 1) {
    double part[Unroll] = {};
    for (; k + (Unroll - 1) * stride < n; k += Unroll * stride) {
#pragma unroll
      for (int u = 0; u < Unroll; ++u) f(begin + static_cast<int64_t>(k + u * stride), part[u]);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += part[u];
  }
  for (; k < n; k += stride) f(begin + static_cast<int64_t>(k), acc);
  acc = block_sum<Block>(acc);
  // Stage 2: publish the block partial; the block that takes the last ticket
  // combines them. atomicInc wraps to 0 at gridDim.x-1, so the counter is
  // ready for the next call.
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc;
    __threadfence();
    last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();  // also separates the two block_sum calls
  if (!last) return;
  __threadfence();
  double sum = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) sum += pm::gpu::load_l2(partial + b);
  sum = block_sum<Block>(sum);
  if (threadIdx.x == 0) *result = sum;
}

template <class F>
__global__ void team_kernel(const F f, const int64_t league) {
  // Every thread of a block walks the same ranks, so barriers and shuffles in
  // the body see the whole block.
  for (int64_t rank = blockIdx.x; rank < league; rank += gridDim.x) {
    const Member m(rank, league, threadIdx.y, blockDim.y, threadIdx.x, blockDim.x);
    f(m);
  }
}

}  // namespace cuda_impl

namespace cuda_impl {

// range_unroll calls run(std::integral_constant<int, Unroll>) with the
// run-time tunable range_unroll (default 1, Kokkos' loop).
template <class Run>
void range_unroll(const char* name, const Run& run) {
  switch (pm::tune("range_unroll", 1)) {
    case 1: run(std::integral_constant<int, 1>{}); break;
    case 2: run(std::integral_constant<int, 2>{}); break;
    case 4: run(std::integral_constant<int, 4>{}); break;
    default: fail(name, "range_unroll must be 1, 2 or 4");
  }
}

// range_launch calls run(std::integral_constant<int, Block>) with the
// RangePolicy block size of the run-time tunable range_block (default
// kRangeBlock): each size is its own kernel with its own __launch_bounds__
// and warp-sum array, so the default's kernel is the one a constant block
// compiles to.
template <class Run>
void range_launch(const char* name, const Run& run) {
  switch (pm::tune("range_block", kRangeBlock)) {
    case 128: run(std::integral_constant<int, 128>{}); break;
    case 256: run(std::integral_constant<int, 256>{}); break;
    case 512: run(std::integral_constant<int, 512>{}); break;
    case 1024: run(std::integral_constant<int, 1024>{}); break;
    default: fail(name, "range_block must be 128, 256, 512 or 1024");
  }
}

}  // namespace cuda_impl

template <class F>
void parallel_for(const char* name, const RangePolicy& p, const F& f) {
  const int64_t n = p.end - p.begin;
  if (n <= 0) return;
  cuda_impl::range_launch(name, [&](auto block) {
    constexpr int Block = decltype(block)::value;
    const int64_t blocks = (n + Block - 1) / Block;
    const int64_t cap = cuda_impl::device().max_grid_x;
    const unsigned grid = static_cast<unsigned>(blocks < cap ? blocks : cap);
    if (cuda_impl::use_32bit_index(n, grid, Block))
      cuda_impl::range_for_kernel<Block, uint32_t, F><<<grid, Block>>>(f, p.begin, static_cast<uint32_t>(n));
    else
      cuda_impl::range_for_kernel<Block, int64_t, F><<<grid, Block>>>(f, p.begin, n);
  });
  cuda_impl::check_launch(name);
}

// The reduction's launch: the last block stores the sum at result (pinned
// host memory, or device memory for a DeviceResult). Returns at once.
template <class F>
void reduce_launch(const char* name, const RangePolicy& p, const F& f, double* const result) {
  const int64_t n = p.end - p.begin;
  const cuda_impl::ReduceScratch& s = cuda_impl::reduce_scratch();
  cuda_impl::range_launch(name, [&](auto block) {
    constexpr int Block = decltype(block)::value;
    // Blocks resident at once for this body (one wave), read once per body
    // type and block (the 64-bit kernel's: it uses at least the registers of
    // the 32-bit one).
    static const int resident = [] {
      int per_sm = 0;
      pm::device::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &per_sm, cuda_impl::range_reduce_kernel<Block, 1, int64_t, F>, Block, 0),
                        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
      const int r = per_sm * cuda_impl::device().sms;
      return r < 1 ? 1 : r;
    }();
    int64_t blocks = (n + Block - 1) / Block;
    if (blocks > resident) blocks = resident;
    if (blocks > s.capacity) blocks = s.capacity;
    const unsigned grid = static_cast<unsigned>(blocks);
    if (cuda_impl::use_32bit_index(n, grid, Block))
      cuda_impl::range_unroll(name, [&](auto unroll) {
        cuda_impl::range_reduce_kernel<Block, decltype(unroll)::value, uint32_t, F>
            <<<grid, Block>>>(f, p.begin, static_cast<uint32_t>(n), s.partial, s.counter, result);
      });
    else
      cuda_impl::range_reduce_kernel<Block, 1, int64_t, F><<<grid, Block>>>(f, p.begin, n, s.partial, s.counter, result);
  });
  cuda_impl::check_launch(name);
}

template <class F>
void parallel_reduce(const char* name, const RangePolicy& p, const F& f, double& result) {
  if (p.end - p.begin <= 0) {
    result = 0;  // the identity, as Kokkos returns for an empty range
    return;
  }
  reduce_launch(name, p, f, cuda_impl::reduce_scratch().result);
  // The fence Kokkos does before reading a host result.
  pm::device::check(cudaStreamSynchronize(0), name);
  result = *cuda_impl::reduce_scratch().result;
}

// A result in device memory: no fence, no copy; the sum is there when the
// next kernel on the stream starts (Kokkos' reduction into a device View).
template <class F>
void parallel_reduce(const char* name, const RangePolicy& p, const F& f, const DeviceResult& result) {
  if (p.end - p.begin <= 0) {
    pm::device::check(cudaMemsetAsync(result.ptr, 0, sizeof(double)), name);  // the identity
    return;
  }
  reduce_launch(name, p, f, result.ptr);
}

template <class F>
void parallel_for(const char* name, const TeamPolicy& p, const F& f) {
  const int64_t league = p.league_size;
  const int team = p.team_size, vector = p.vector_length;
  // Kokkos' limits: vector length a power of two up to the warp size, and a
  // block of at most 1024 threads.
  if (vector < 1 || vector > cuda_impl::kWarp || (vector & (vector - 1)) != 0)
    cuda_impl::fail(name, "vector length must be a power of two <= the warp size");
  if (team < 1 || team * vector > 1024) cuda_impl::fail(name, "team_size * vector_length must be in [1, 1024]");
  if (league <= 0) return;
  const int64_t cap = cuda_impl::device().max_grid_x;
  const unsigned grid = static_cast<unsigned>(league < cap ? league : cap);
  cuda_impl::team_kernel<F><<<grid, dim3(vector, team)>>>(f, league);
  cuda_impl::check_launch(name);
}

// Kokkos: for (i = begin + threadIdx.y; i < end; i += blockDim.y).
template <class F>
PMKK_FUNCTION void parallel_for(const TeamThreadRangeT<Member>& r, const F& f) {
  for (int64_t i = r.begin + r.team.team_rank(); i < r.end; i += r.team.team_size()) f(i);
}

// Kokkos: each lane accumulates i = begin + threadIdx.x, stepping blockDim.x,
// then vector_reduce combines the lanes of this threadIdx.y. Lanes of one y
// are blockDim.x consecutive lanes of a warp (x runs fastest and blockDim.x
// divides the warp size), so the mask below covers exactly them; all of them reach this
// call together since TeamThreadRange gives them the same indices. The xor
// butterfly leaves the same bits in every lane (a+b == b+a), which is Kokkos'
// shuffle-down plus broadcast in fewer steps. Vector length 1: a serial loop.
template <class F>
PMKK_FUNCTION void parallel_reduce(const ThreadVectorRangeT<Member>& r, const F& f, double& result) {
  const int lane = r.team.vector_rank(), width = r.team.vector_length();
  double sum = 0;
  for (int64_t i = r.begin + lane; i < r.end; i += width) f(i, sum);
#if PM_GPU_DEVICE_CODE
  if (width > 1) {
    const pm::warp_mask_t mask = pm::lane_mask(width, (r.team.team_rank() % (cuda_impl::kWarp / width)) * width);
    for (int off = width / 2; off > 0; off >>= 1) sum += pm::gpu::shfl_xor(mask, sum, off, width);
  }
#endif
  result = sum;
}

}  // namespace pmkk

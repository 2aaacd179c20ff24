// pmkk on CUDA: team scratch, team barriers, multi-dimensional ranges and
// atomics, as Kokkos' CUDA backend lowers them (the kokkos backend includes
// this header after cuda.hpp when a kernel uses them).
//   Scratch level 0: the launch's dynamic shared memory (the third <<< >>>
//                    argument; above 48 KiB the kernel opts in with
//                    cudaFuncAttributeMaxDynamicSharedMemorySize).
//   Scratch level 1: global memory, one slice per block of a grid capped at
//                    the blocks resident at once (occupancy API), walked by
//                    the league loop, as Kokkos' scratch space per team.
//   team_barrier:    __syncthreads(); the league loop also syncs before a
//                    block takes its next rank, which reuses its scratch.
//   MDRangePolicy:   one thread per point of the flattened range (256-thread
//                    blocks, grid-stride), the last index fastest.
//   single(PerThread): vector lane 0 of the team thread.
//   atomic_add:      atomicAdd on doubles (sm_60 and later).
#pragma once
#include "cuda.hpp"
#include "pm/scratch.hpp"

namespace pmkk {

namespace cuda_impl {

// The team handle of a scratch launch: a Member and its scratch.
struct ScratchMember : Member {
  char* scratch[2];
  __device__ ScratchMember(int64_t rank, int64_t league, char* s0, char* s1)
      : Member(rank, league, threadIdx.y, blockDim.y, threadIdx.x, blockDim.x), scratch{s0, s1} {}
};

template <class F>
__global__ void team_scratch_kernel(const F f, const int64_t league, char* const global, const int64_t per_block) {
  extern __shared__ double2 pmkk_team_shared[];
  char* const s0 = reinterpret_cast<char*>(pmkk_team_shared);
  char* const s1 = global + static_cast<int64_t>(blockIdx.x) * per_block;
  for (int64_t rank = blockIdx.x; rank < league; rank += gridDim.x) {
    const ScratchMember m(rank, league, s0, s1);
    f(static_cast<const Member&>(m));
    __syncthreads();  // the block's next rank reuses its scratch
  }
}

template <int N, class F>
__global__ void __launch_bounds__(kRangeBlock) mdrange_kernel(const F f, const MDRangePolicy<N> p, const int64_t points) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < points; k += stride) p.call(f, k);
}

}  // namespace cuda_impl

// The first byte of the team's scratch at level 0 or 1 (Kokkos:
// team.team_scratch(level)); valid in the body of a scratch launch.
PMKK_FUNCTION inline char* team_scratch(const Member& team, const int level) {
  return static_cast<const cuda_impl::ScratchMember&>(team).scratch[level];
}

// Kokkos: team.team_barrier().
PMKK_FUNCTION inline void team_barrier(const Member&) {
#if PM_GPU_DEVICE_CODE
  __syncthreads();
#endif
}

template <class F>
PMKK_FUNCTION void single(const PerThreadT<Member>& s, const F& f) {
  if (s.team.vector_rank() == 0) f();
}

PMKK_FUNCTION inline void atomic_add(double* const p, const double v) {
#if PM_GPU_DEVICE_CODE
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

// Kokkos: i = begin + threadIdx.x, stepping blockDim.x.
template <class F>
PMKK_FUNCTION void parallel_for(const ThreadVectorRangeT<Member>& r, const F& f) {
  for (int64_t i = r.begin + r.team.vector_rank(); i < r.end; i += r.team.vector_length()) f(i);
}

template <class F>
void parallel_for(const char* name, const ScratchTeamPolicy& p, const F& f) {
  const int64_t league = p.league_size;
  const int team = p.team_size, vector = p.vector_length;
  const int64_t l0 = p.scratch_bytes[0], l1 = p.scratch_bytes[1];
  if (vector < 1 || vector > cuda_impl::kWarp || (vector & (vector - 1)) != 0)
    cuda_impl::fail(name, "vector length must be a power of two <= the warp size");
  if (team < 1 || team * vector > 1024) cuda_impl::fail(name, "team_size * vector_length must be in [1, 1024]");
  if (league <= 0) return;
  auto kernel = cuda_impl::team_scratch_kernel<F>;
  pm::check_team_scratch(name, l0, 0, cuda_impl::device().shared_per_block_optin);
  if (l0 > 48 * 1024)
    pm::device::check(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(l0)),
                      "cudaFuncSetAttribute (scratch level 0)");
  int per_sm = 0;
  pm::device::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, team * vector, static_cast<size_t>(l0)),
                    "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (per_sm < 1) cuda_impl::fail(name, "scratch level 0 does not fit in a block's shared memory");
  int64_t grid = league < cuda_impl::device().max_grid_x ? league : cuda_impl::device().max_grid_x;
  if (l1 > 0) {
    const int64_t resident = int64_t{per_sm} * cuda_impl::device().sms;
    if (grid > resident) grid = resident;
  }
  char* const global = pm::scratch_pool(grid * l1);
  kernel<<<static_cast<unsigned>(grid), dim3(vector, team), static_cast<size_t>(l0)>>>(f, league, global, l1);
  cuda_impl::check_launch(name);
}

template <int N, class F>
void parallel_for(const char* name, const MDRangePolicy<N>& p, const F& f) {
  const int64_t points = p.points();
  if (points <= 0) return;
  const int64_t blocks = (points + cuda_impl::kRangeBlock - 1) / cuda_impl::kRangeBlock;
  const int64_t cap = cuda_impl::device().max_grid_x;
  cuda_impl::mdrange_kernel<N, F><<<static_cast<unsigned>(blocks < cap ? blocks : cap), cuda_impl::kRangeBlock>>>(f, p, points);
  cuda_impl::check_launch(name);
}

}  // namespace pmkk

#include "team_reduce.hpp"

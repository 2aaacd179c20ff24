// pmkk on real Kokkos (4.6.01): the kokkos backend's user code compiled
// against <Kokkos_Core.hpp>, each pmkk name the Kokkos name it stands for,
// so the same generated program measures our layers (omptarget.hpp,
// cuda.hpp, ompx.hpp) and the library (docs/kokkos.md). The strategies
// kokkos-* select it (variants/strategies.yaml, library: kokkos); the
// install of their backend (Cuda, OpenMPTarget or OpenMP) gives the include
// path, the library and its flags. Kokkos' default execution space is that
// backend: every policy here runs on it.
//   RangePolicy, TeamPolicy, Member:  Kokkos::RangePolicy<>, TeamPolicy<>,
//                      TeamPolicy<>::member_type.
//   MDRangePolicy<N>:  Kokkos::MDRangePolicy<Rank<N, Iterate::Right,
//                      Iterate::Right>>: the last index fastest, as pmkk's
//                      (Kokkos' own default on CUDA is Iterate::Left).
//   team_scratch(team, level): team.team_scratch(level).get_shmem_aligned(0,
//                      8), the first double-aligned byte of the team's
//                      scratch at that level (the generated views carve it
//                      up themselves).
//   team_barrier(team): team.team_barrier().
//   device_result(p):  an unmanaged Kokkos::View<double> over device memory
//                      p, a parallel_reduce's result that stays there.
//   parallel_for, parallel_reduce, TeamThreadRange, ThreadVectorRange,
//   PerTeam, PerThread, single, atomic_add: Kokkos' own (a reduction over a
//                      TeamThreadRange is Kokkos' team reduction, not
//                      kk/team_reduce.hpp's).
//   ScopeGuard:        Kokkos::initialize on the device the harness uses
//                      (CUDA's current device, OpenMP's default device),
//                      Kokkos::finalize at its end; pm::finish's _Exit skips
//                      the finalize as it skips the other runtimes' teardown
//                      (PM_FULL_EXIT=1 keeps it).
// The harness allocates the arrays itself (cudaMalloc, omp_target_alloc, or
// host memory) and the bodies capture raw pointers to them: Kokkos' own
// Views hold the same kind of pointer on each backend, and the ScopeGuard
// puts Kokkos on the harness's device.
#pragma once
#include <Kokkos_Core.hpp>

#include <cstdint>

#include "pm/tune.hpp"

#define PMKK_FUNCTION KOKKOS_INLINE_FUNCTION
#define PMKK_LAMBDA KOKKOS_LAMBDA

namespace pmkk {

using RangePolicy = Kokkos::RangePolicy<>;
using TeamPolicy = Kokkos::TeamPolicy<>;
using Member = TeamPolicy::member_type;
template <int N>
using MDRangePolicy = Kokkos::MDRangePolicy<Kokkos::Rank<N, Kokkos::Iterate::Right, Kokkos::Iterate::Right>>;

using Kokkos::atomic_add;
using Kokkos::parallel_for;
using Kokkos::parallel_reduce;
using Kokkos::PerTeam;
using Kokkos::PerThread;
using Kokkos::single;
using Kokkos::TeamThreadRange;
using Kokkos::ThreadVectorRange;

// The first double-aligned byte of the team's scratch at level 0 or 1: a
// zero-byte get_shmem_aligned returns the level's start, moved up to the
// alignment, without taking any of it. Kokkos' OpenMPTarget backend lays
// level-1 slices out every (bytes + bytes / 10 + 512) bytes
// (OpenMPTargetExecTeamMember, Kokkos_OpenMPTarget_Parallel.hpp), so a
// slice starts off a double's alignment whenever bytes / 10 is not a
// multiple of 8 (TestSNAP ui at 32 threads a team: "misaligned address");
// the 10 % padding behind the slice holds the at most 7 bytes moved.
// Kokkos' own scratch Views align the same way (get_shmem_aligned).
KOKKOS_INLINE_FUNCTION char* team_scratch(const Member& team, const int level) {
  return static_cast<char*>(team.team_scratch(level).get_shmem_aligned(0, alignof(double)));
}

KOKKOS_INLINE_FUNCTION void team_barrier(const Member& team) { team.team_barrier(); }

// A reduction's result in device memory (a range_reduce with into): Kokkos'
// parallel_reduce into a View of one double in the default execution space's
// memory, unmanaged over the harness's element; Kokkos does not wait for it.
using DeviceResult = Kokkos::View<double, Kokkos::DefaultExecutionSpace::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
KOKKOS_INLINE_FUNCTION DeviceResult device_result(double* p) { return DeviceResult(p); }

// Kokkos::ScopeGuard with the harness's device.
class ScopeGuard {
 public:
  ScopeGuard(int&, char**) {
    Kokkos::InitializationSettings settings;
#if defined(KOKKOS_ENABLE_CUDA)
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) settings.set_device_id(dev);
#elif defined(KOKKOS_ENABLE_OPENMPTARGET)
    // Without a GPU Kokkos' OpenMPTarget backend refuses to start (it has no
    // host fallback, unlike kk/omptarget.hpp): Kokkos::initialize says so.
    if (pm::device::is_gpu()) settings.set_device_id(pm::device::id());
#endif
    Kokkos::initialize(settings);
  }
  ~ScopeGuard() { Kokkos::finalize(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
};

}  // namespace pmkk

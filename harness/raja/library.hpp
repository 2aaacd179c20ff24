// The raja backend's programs against RAJA itself (v2025.09.1): praja is
// RAJA's namespace, so forall, RangeSegment, TypedIndexSet, ExecPolicy<
// seq_segit, P>, expt::Reduce / ValOp, atomicAdd<auto_atomic> and
// synchronize<> in the generated code are RAJA's, and the variant's
// PRAJA_POLICY / PRAJA_SYNC_POLICY name RAJA's policies
// (RAJA::omp_target_parallel_for_exec<256>, RAJA::cuda_exec<256>,
// RAJA::omp_parallel_for_exec; RAJA::omp_synchronize, RAJA::cuda_synchronize).
// A strategy with this layer names its install (library: {name: raja,
// backend}); the build adds the install's include path and libraries
// (libRAJA.a, libcamp.a). What differs from praja: docs/raja.md.
#pragma once
#include <RAJA/RAJA.hpp>

namespace praja = RAJA;

// A forall body: __device__ under CUDA (RAJA_DEVICE), nothing elsewhere.
#define PRAJA_DEVICE RAJA_DEVICE

// praja on the host: seq_exec (a plain loop, RAJA's seq_exec / simd_exec of
// 003 Fig. 2) and omp_parallel_for_exec (`omp parallel for`, Fig. 2);
// synchronize<omp_synchronize>() has nothing to wait for.
#pragma once
#include <omp.h>

#include "raja.hpp"

namespace praja {

struct seq_exec {};
struct omp_parallel_for_exec {};

template <class Body>
void forall_range(seq_exec, int64_t begin, int64_t end, const Body& body) {
  for (int64_t i = begin; i < end; ++i) body(i);
}

template <class Body>
void forall_range(omp_parallel_for_exec, int64_t begin, int64_t end, const Body& body) {
#pragma omp parallel for schedule(static)
  for (int64_t i = begin; i < end; ++i) body(i);
}

template <class Body>
double sum_range(seq_exec, int64_t begin, int64_t end, const Body& body) {
  double sum = 0;
  for (int64_t i = begin; i < end; ++i) {
    expt::ValOp<double, operators::plus> acc{sum};
    body(i, acc);
  }
  return sum;
}

template <class Body>
double sum_range(omp_parallel_for_exec, int64_t begin, int64_t end, const Body& body) {
  double sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
  for (int64_t i = begin; i < end; ++i) {
    expt::ValOp<double, operators::plus> acc{sum};
    body(i, acc);
  }
  return sum;
}

// Both policies complete each loop before forall returns.
inline void synchronize_policy(omp_synchronize) {}

}  // namespace praja

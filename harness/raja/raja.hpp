// praja: the small RAJA-like layer the raja backend's code is written against
// (003 Section 2). A loop is forall<Policy>(segment, body): the traversal is
// the policy, a type; the body is a lambda taking the index, as RAJA passes
// it. Segments are RangeSegment [begin, end); an IndexSet is a list of them
// (RAJA's IndexSet of range segments, LCALS's real zones of a Domain, 003
// Fig. 5), traversed segment by segment on the host, each segment a forall
// under the policy (RAJA's IndexSet::ExecPolicy<seq_segit, Policy>).
// Each policy header (host.hpp, omptarget.hpp, cuda.hpp) defines its
// policies and forall_range/sum_range/synchronize for them; the definitions
// below are the shared front end.
#pragma once
#include <cstdint>
#include <vector>

#ifndef PRAJA_DEVICE
#define PRAJA_DEVICE
#endif

namespace praja {

struct RangeSegment {
  int64_t begin, end;
  RangeSegment(int64_t b, int64_t e) : begin(b), end(e) {}
};

class IndexSet {
 public:
  void push_back(const RangeSegment& s) { segments_.push_back(s); }
  const std::vector<RangeSegment>& segments() const { return segments_; }
  int64_t size() const {
    int64_t n = 0;
    for (const RangeSegment& s : segments_) n += s.end - s.begin;
    return n;
  }

 private:
  std::vector<RangeSegment> segments_;
};

// RAJA's atomicAdd<auto_atomic>: a scatter (LCALS PIC_2D's histogram) from
// a forall body. CUDA's device atomic; OpenMP's atomic update elsewhere, in
// a declare target region so that an offloaded body can call it.
#pragma omp declare target
PRAJA_DEVICE inline void atomic_add(double* target, double value) {
// CUDA device code only: clang defines __CUDA_ARCH__ in OpenMP NVPTX device
// code too, but __CUDA__ / __CUDACC__ only when compiling CUDA.
#if (defined(__CUDACC__) || defined(__CUDA__)) && defined(__CUDA_ARCH__)
  atomicAdd(target, value);
#else
#pragma omp atomic update
  *target += value;
#endif
}
#pragma omp end declare target

template <class Policy, class Body>
void forall(const RangeSegment& r, const Body& body) {
  forall_range(Policy(), r.begin, r.end, body);
}

template <class Policy, class Body>
void forall(const IndexSet& is, const Body& body) {
  for (const RangeSegment& r : is.segments()) forall_range(Policy(), r.begin, r.end, body);
}

// A sum reduction: body(i, sum) adds to sum (RAJA's ReduceSum<Policy,
// double>, reduced to a reference parameter so that every backend can
// privatise it with its own reduction clause). Synchronous under every policy.
template <class Policy, class Body>
double forall_sum(const RangeSegment& r, const Body& body) {
  return sum_range(Policy(), r.begin, r.end, body);
}

// Completes the loops issued so far (the async policy's taskwait, 003 Fig.
// 10; nothing for the synchronous policies).
template <class Policy>
void synchronize() {
  synchronize_policy(Policy());
}

}  // namespace praja

// praja: the small RAJA-like layer the raja backend's code is written against
// (003 Section 2). A loop is forall<Policy>(segment, body): the traversal is
// the policy, a type; the body is a lambda taking the index, as RAJA passes
// it. Segments are RangeSegment [begin, end); a TypedIndexSet<RangeSegment>
// is a list of them (RAJA's index set of range segments, LCALS's real zones
// of a Domain, 003 Fig. 5), traversed segment by segment on the host under
// ExecPolicy<seq_segit, Policy>, each segment a forall under the policy.
// Each policy header (host.hpp, omptarget.hpp, cuda.hpp) defines its
// policies and forall_range/sum_range/synchronize_policy for them; the
// definitions below are the shared front end.
//
// Every name the generated code uses is RAJA's (v2025.09.1), so the same
// program compiles against RAJA itself with library.hpp, which makes praja
// RAJA's namespace: forall over a RangeSegment or a TypedIndexSet, a sum as
// RAJA's parameter reduction (expt::Reduce<operators::plus>(&sum), the body
// taking an expt::ValOp<double, operators::plus>&), atomicAdd<auto_atomic>,
// synchronize<SyncPolicy>() with RAJA's omp_synchronize / cuda_synchronize
// (docs/raja.md). What praja has beyond RAJA is its policies, which only the
// variants' defines name.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#ifndef PRAJA_DEVICE
#define PRAJA_DEVICE
#endif

namespace praja {

struct RangeSegment {
  int64_t begin, end;
  RangeSegment(int64_t b, int64_t e) : begin(b), end(e) {}
};

// A list of segments (RAJA's TypedIndexSet; praja holds range segments only).
template <class... Segments>
class TypedIndexSet {
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

// An index set's policy: the segments in order on the host (seq_segit), each
// a forall under SegmentPolicy.
struct seq_segit {};
template <class SegmentIteration, class SegmentPolicy>
struct ExecPolicy {};

// The synchronization policies of synchronize<> (RAJA's names); each policy
// header says what they wait for.
struct omp_synchronize {};
struct cuda_synchronize {};

// The atomic policy of atomicAdd: the one the compiler's target takes.
struct auto_atomic {};

namespace operators {
// RAJA's operators::plus, the one reduction operator praja has.
template <class Ret, class Arg1 = Ret, class Arg2 = Arg1>
struct plus {
  PRAJA_DEVICE constexpr Ret operator()(const Arg1& lhs, const Arg2& rhs) const { return Ret{lhs} + rhs; }
  PRAJA_DEVICE static constexpr Ret identity() { return Ret{0}; }
};
}  // namespace operators

#pragma omp declare target
// RAJA's atomicAdd<auto_atomic>: a scatter (LCALS PIC_2D's histogram) from
// a forall body. CUDA's device atomic; OpenMP's atomic update elsewhere, in
// a declare target region so that an offloaded body can call it.
template <class Policy>
PRAJA_DEVICE inline void atomicAdd(double* target, double value) {
// CUDA or HIP device code only: clang defines __CUDA_ARCH__ in OpenMP NVPTX
// device code too, but __CUDA__ / __CUDACC__ only when compiling CUDA; HIP's
// device compilation (hipcc, gfx90a) defines neither, and there the OpenMP
// pragma, without -fopenmp, would leave a plain add.
#if ((defined(__CUDACC__) || defined(__CUDA__)) && defined(__CUDA_ARCH__)) || defined(__HIP_DEVICE_COMPILE__)
  ::atomicAdd(target, value);
#else
#pragma omp atomic update
  *target += value;
#endif
}

namespace expt {
// What a reduction's body adds to: RAJA's ValOp. praja's refers to the
// backend's private sum (the variable of its reduction clause, or a CUDA
// thread's register), so `acc += x` is the `sum += x` of a plain reduction.
template <class T, template <class, class, class> class Op>
struct ValOp {
  T& val;
  PRAJA_DEVICE ValOp& operator+=(const T& rhs) {
    val += rhs;
    return *this;
  }
};
}  // namespace expt
#pragma omp end declare target

namespace expt {
// A reduction parameter of forall: RAJA's expt::Reduce<Op>(&target). After
// the forall, *target = Op(*target, the reduction of the bodies' values).
template <class T, template <class, class, class> class Op>
struct Reducer {
  T* target;
};

template <template <class, class, class> class Op, class T>
Reducer<T, Op> Reduce(T* target) {
  static_assert(std::is_same<Op<T, T, T>, operators::plus<T, T, T>>::value && std::is_same<T, double>::value,
                "praja reduces sums of doubles only (operators::plus)");
  return Reducer<T, Op>{target};
}
}  // namespace expt

template <class Policy, class Body>
void forall(const RangeSegment& r, const Body& body) {
  forall_range(Policy(), r.begin, r.end, body);
}

namespace detail {
template <class SegmentPolicy, class Body>
void forall_segments(ExecPolicy<seq_segit, SegmentPolicy>, const TypedIndexSet<RangeSegment>& is, const Body& body) {
  for (const RangeSegment& r : is.segments()) forall_range(SegmentPolicy(), r.begin, r.end, body);
}
}  // namespace detail

template <class Policy, class Body>
void forall(const TypedIndexSet<RangeSegment>& is, const Body& body) {
  detail::forall_segments(Policy(), is, body);
}

// A sum reduction: body(i, acc) adds to acc, an expt::ValOp over the
// backend's private sum (sum_range: each backend privatises it with its own
// reduction clause). Synchronous under every policy.
template <class Policy, class T, template <class, class, class> class Op, class Body>
void forall(const RangeSegment& r, expt::Reducer<T, Op> sum, const Body& body) {
  *sum.target = Op<T, T, T>()(*sum.target, sum_range(Policy(), r.begin, r.end, body));
}

// Completes the loops issued so far (the async policy's taskwait, 003 Fig.
// 10; nothing for the synchronous policies).
template <class SyncPolicy>
void synchronize() {
  synchronize_policy(SyncPolicy());
}

}  // namespace praja

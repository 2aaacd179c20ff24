// portmatrix harness: cuBLAS, the vendor library of a kernel's vendor form
// (a kernel's `vendor: {cublas: ...}`, the cublas strategy; docs/kernels.md,
// "Vendor forms"). One handle per process, made on the first call (the
// untimed first run), on the default stream the harness synchronises, with
// cuBLAS's default math mode (no reduced-precision tensor-core paths: FP64
// DGEMM runs on the FP64 units or FP64 tensor cores as the library picks).
// A failed call is a harness error that names it, as a failed CUDA call is.
#pragma once
#include <cublas_v2.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace pm {
namespace cublas {

inline void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "portmatrix: cuBLAS error in %s: %s (status %d)\n", what, cublasGetStatusString(s), static_cast<int>(s));
    std::exit(3);
  }
}

inline cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t made = nullptr;
    check(cublasCreate(&made), "cublasCreate");
    check(cublasSetPointerMode(made, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    return made;
  }();
  return h;
}

// dim is a kernel's extent as cuBLAS's int, or a harness error where it
// does not fit (the 32-bit interface; cuBLAS's _64 forms are CUDA 12's).
inline int dim(int64_t n, const char* what) {
  if (n < 0 || n > INT_MAX) {
    std::fprintf(stderr, "portmatrix: cuBLAS: %s = %lld does not fit its 32-bit int\n", what, static_cast<long long>(n));
    std::exit(3);
  }
  return static_cast<int>(n);
}

}  // namespace cublas
}  // namespace pm

// PM_CUBLAS(call) runs a cuBLAS call and fails the program, naming it, on
// any status but success.
#define PM_CUBLAS(call) ::pm::cublas::check((call), #call)

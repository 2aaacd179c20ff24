// portmatrix harness: CSR matrices with 64-bit indices, and the miniFE
// 27-point stencil on an (N+1)^3 grid of nodes (8/12/18/27 non-zeros per row).
#pragma once
#include <cmath>
#include <cstdint>

#include "parallel.hpp"

namespace pm {

// Csr is what kernels see: a view of device (or host) arrays.
struct Csr {
  int64_t nrows = 0, nnz = 0;
  const int64_t* row_ptr = nullptr;
  const int64_t* col_idx = nullptr;
  const double* values = nullptr;
};

// The host copy, filled in parallel (its arrays are not zeroed first).
struct CsrHost {
  int64_t nrows = 0;
  HostArray<int64_t> row_ptr, col_idx;
  HostArray<double> values;
  int64_t nnz() const { return values.size(); }
  Csr view() const { return Csr{nrows, nnz(), row_ptr.data(), col_idx.data(), values.data()}; }
};

// minife27 builds a symmetric, strictly diagonally dominant matrix (so CG
// converges) whose off-diagonal values vary per edge, so that a wrong column
// index or a missed term changes the product. Rows are filled in parallel:
// each row's length follows from its position on the grid.
inline CsrHost minife27(int64_t N) {
  const int64_t n1 = N + 1;
  CsrHost m;
  m.nrows = n1 * n1 * n1;
  auto span = [n1](int64_t i) -> int64_t { return (i > 0) + 1 + (i < n1 - 1); };  // neighbours along one axis
  auto row_len = [&](int64_t row) {
    const int64_t ix = row % n1, iy = (row / n1) % n1, iz = row / (n1 * n1);
    return span(ix) * span(iy) * span(iz);
  };
  m.row_ptr = HostArray<int64_t>(m.nrows + 1);
  m.row_ptr[0] = 0;
  for (int64_t row = 0; row < m.nrows; ++row) m.row_ptr[row + 1] = m.row_ptr[row] + row_len(row);
  const int64_t nnz = m.row_ptr[m.nrows];
  m.col_idx = HostArray<int64_t>(nnz);
  m.values = HostArray<double>(nnz);
  auto weight = [](int64_t i, int64_t j) {
    const uint64_t lo = i < j ? i : j, hi = i < j ? j : i;
    uint64_t z = lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull);
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 29;
    return -(0.5 + 0.5 * ((z >> 11) * 0x1.0p-53));
  };
  parallel_parts(m.nrows, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t ix = row % n1, iy = (row / n1) % n1, iz = row / (n1 * n1);
      int64_t k = m.row_ptr[row], diag_at = -1;
      double off = 0;
      for (int64_t dz = -1; dz <= 1; ++dz)
        for (int64_t dy = -1; dy <= 1; ++dy)
          for (int64_t dx = -1; dx <= 1; ++dx) {
            const int64_t x = ix + dx, y = iy + dy, z = iz + dz;
            if (x < 0 || y < 0 || z < 0 || x >= n1 || y >= n1 || z >= n1) continue;
            const int64_t col = (z * n1 + y) * n1 + x;
            m.col_idx[k] = col;
            if (col == row) {
              diag_at = k;
              m.values[k] = 0;
            } else {
              const double w = weight(row, col);
              off += std::fabs(w);
              m.values[k] = w;
            }
            ++k;
          }
      m.values[diag_at] = off + 1.0;
    }
  });
  return m;
}

}  // namespace pm

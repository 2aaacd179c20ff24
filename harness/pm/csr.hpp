// portmatrix harness: CSR matrices with 64-bit indices, and the miniFE
// 27-point stencil on an (N+1)^3 grid of nodes (8/12/18/27 non-zeros per row).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace pm {

// Csr is what kernels see: a view of device (or host) arrays.
struct Csr {
  int64_t nrows = 0, nnz = 0;
  const int64_t* row_ptr = nullptr;
  const int64_t* col_idx = nullptr;
  const double* values = nullptr;
};

struct CsrHost {
  int64_t nrows = 0;
  std::vector<int64_t> row_ptr, col_idx;
  std::vector<double> values;
  Csr view() const {
    return Csr{nrows, static_cast<int64_t>(values.size()), row_ptr.data(), col_idx.data(), values.data()};
  }
};

// minife27 builds a symmetric, strictly diagonally dominant matrix (so CG
// converges) whose off-diagonal values vary per edge, so that a wrong column
// index or a missed term changes the product.
inline CsrHost minife27(int64_t N) {
  const int64_t n1 = N + 1;
  CsrHost m;
  m.nrows = n1 * n1 * n1;
  m.row_ptr.resize(m.nrows + 1);
  m.row_ptr[0] = 0;
  m.col_idx.reserve(m.nrows * 27);
  m.values.reserve(m.nrows * 27);
  auto weight = [](int64_t i, int64_t j) {
    const uint64_t lo = i < j ? i : j, hi = i < j ? j : i;
    uint64_t z = lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull);
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 29;
    return -(0.5 + 0.5 * ((z >> 11) * 0x1.0p-53));
  };
  for (int64_t iz = 0; iz < n1; ++iz)
    for (int64_t iy = 0; iy < n1; ++iy)
      for (int64_t ix = 0; ix < n1; ++ix) {
        const int64_t row = (iz * n1 + iy) * n1 + ix;
        int64_t diag_at = -1;
        double off = 0;
        for (int64_t dz = -1; dz <= 1; ++dz)
          for (int64_t dy = -1; dy <= 1; ++dy)
            for (int64_t dx = -1; dx <= 1; ++dx) {
              const int64_t x = ix + dx, y = iy + dy, z = iz + dz;
              if (x < 0 || y < 0 || z < 0 || x >= n1 || y >= n1 || z >= n1) continue;
              const int64_t col = (z * n1 + y) * n1 + x;
              m.col_idx.push_back(col);
              if (col == row) {
                diag_at = static_cast<int64_t>(m.values.size());
                m.values.push_back(0);
              } else {
                const double w = weight(row, col);
                off += std::fabs(w);
                m.values.push_back(w);
              }
            }
        m.values[diag_at] = off + 1.0;
        m.row_ptr[row + 1] = static_cast<int64_t>(m.values.size());
      }
  return m;
}

}  // namespace pm

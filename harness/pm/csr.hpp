// portmatrix harness: CSR matrices with 64-bit indices, and the miniFE
// 27-point stencil on an (N+1)^3 grid of nodes (8/12/18/27 non-zeros per row).
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

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

// A generated matrix shared by the programs of one run (csr_save, csr_load):
// a header page (magic, nrows, nnz), then row_ptr, col_idx and values, each
// starting on a page. Loading maps the file read-only: the pages are the
// page cache's, so a program skips generating and first touching gigabytes.
namespace csr_file {
constexpr uint64_t kMagic = 0x31305253434D4D50ull;  // "PMMCSR01"
constexpr size_t kPage = 4096;
inline size_t pages(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }
struct Layout {
  size_t row_ptr, col_idx, values, end;
};
inline Layout layout(int64_t nrows, int64_t nnz) {
  Layout l;
  l.row_ptr = kPage;
  l.col_idx = l.row_ptr + pages(static_cast<size_t>(nrows + 1) * sizeof(int64_t));
  l.values = l.col_idx + pages(static_cast<size_t>(nnz) * sizeof(int64_t));
  l.end = l.values + static_cast<size_t>(nnz) * sizeof(double);
  return l;
}
inline bool write_at(int fd, const void* p, size_t bytes, size_t at) {
  const char* c = static_cast<const char*>(p);
  while (bytes > 0) {
    const ssize_t w = pwrite(fd, c, bytes < (size_t(1) << 30) ? bytes : (size_t(1) << 30), static_cast<off_t>(at));
    if (w <= 0) return false;
    c += w;
    at += static_cast<size_t>(w);
    bytes -= static_cast<size_t>(w);
  }
  return true;
}
}  // namespace csr_file

// csr_save writes m to path (through a temporary file and a rename, so that
// a reader sees all of it or nothing); false when it could not.
inline bool csr_save(const std::string& path, const CsrHost& m) {
  using namespace csr_file;
  const std::string tmp = path + "." + std::to_string(static_cast<long>(getpid())) + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return false;
  const Layout l = layout(m.nrows, m.nnz());
  const uint64_t header[3] = {kMagic, static_cast<uint64_t>(m.nrows), static_cast<uint64_t>(m.nnz())};
  bool ok = write_at(fd, header, sizeof header, 0) &&
            write_at(fd, m.row_ptr.data(), static_cast<size_t>(m.nrows + 1) * sizeof(int64_t), l.row_ptr) &&
            write_at(fd, m.col_idx.data(), static_cast<size_t>(m.nnz()) * sizeof(int64_t), l.col_idx) &&
            write_at(fd, m.values.data(), static_cast<size_t>(m.nnz()) * sizeof(double), l.values);
  ok = close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

// csr_load maps the matrix csr_save wrote to path; false when there is none
// or it is not whole.
inline bool csr_load(const std::string& path, CsrHost* m) {
  using namespace csr_file;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  uint64_t header[3] = {0, 0, 0};
  struct stat st;
  bool ok = pread(fd, header, sizeof header, 0) == static_cast<ssize_t>(sizeof header) && header[0] == kMagic &&
            fstat(fd, &st) == 0;
  const int64_t nrows = static_cast<int64_t>(header[1]), nnz = static_cast<int64_t>(header[2]);
  const Layout l = ok ? layout(nrows, nnz) : Layout{};
  ok = ok && static_cast<size_t>(st.st_size) == l.end;
  void* p = ok ? mmap(nullptr, l.end, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) return false;
  const size_t bytes = l.end;
  std::shared_ptr<const void> mapping(p, [bytes](const void* q) { munmap(const_cast<void*>(q), bytes); });
  const char* base = static_cast<const char*>(p);
  const int64_t* row_ptr = reinterpret_cast<const int64_t*>(base + l.row_ptr);
  if (row_ptr[0] != 0 || row_ptr[nrows] != nnz) return false;
  m->nrows = nrows;
  m->row_ptr = HostArray<int64_t>::mapped(row_ptr, nrows + 1, mapping);
  m->col_idx = HostArray<int64_t>::mapped(reinterpret_cast<const int64_t*>(base + l.col_idx), nnz, mapping);
  m->values = HostArray<double>::mapped(reinterpret_cast<const double*>(base + l.values), nnz, mapping);
  return true;
}

}  // namespace pm

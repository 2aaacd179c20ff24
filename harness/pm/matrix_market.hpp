// portmatrix harness: a reader of Matrix Market coordinate files
// (`%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric`,
// 1-based, % comments), the user's matrix that SPMV and CG-Solve measure
// instead of the miniFE one (PM_MATRIX, docs/inputs.md). Symmetric storage
// is expanded; rows are sorted by column; pattern entries are 1. A file it
// cannot use fails with every problem found (up to 20), each as
// "file:line: what is wrong".
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "csr.hpp"

namespace pm {

struct MatrixError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the header said and what the reader found.
struct MatrixInfo {
  std::string field, symmetry;
  int64_t nrows = 0, ncols = 0, entries = 0;  // entries as stored in the file
  bool symmetric = false;                     // A == A^T (stored symmetric, or checked)
  bool positive_diagonal = false;             // every diagonal entry > 0
};

namespace mtx_detail {

class Errors {
 public:
  explicit Errors(std::string file) : file_(std::move(file)) {}
  void add(int64_t line, const std::string& msg) {
    if (n_++ < 20) list_ += (list_.empty() ? "" : "\n") + file_ + ":" + std::to_string(line) + ": " + msg;
  }
  bool any() const { return n_ > 0; }
  void raise() const {
    if (!any()) return;
    throw MatrixError(list_ + (n_ > 20 ? "\n" + file_ + ": " + std::to_string(n_ - 20) + " more problems" : ""));
  }

 private:
  std::string file_, list_;
  int64_t n_ = 0;
};

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

inline bool integer(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtoll(s.c_str(), &end, 10);
  return end == s.c_str() + s.size() && errno != ERANGE;
}

inline bool number(const std::string& s, double* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v) && errno != ERANGE;
}

struct Entry {
  int64_t row, col;
  double v;
  int64_t line;
  bool operator<(const Entry& o) const { return row != o.row ? row < o.row : col < o.col; }
};

}  // namespace mtx_detail

// read_matrix_market reads path into CSR; info (if given) gets the header and
// the symmetry found.
inline CsrHost read_matrix_market(const std::string& path, MatrixInfo* info = nullptr) {
  using namespace mtx_detail;
  std::ifstream in(path);
  if (!in) throw MatrixError(path + ": cannot read");
  Errors errs(path);
  MatrixInfo mi;
  std::string line;
  int64_t no = 0;
  // Header: %%MatrixMarket matrix coordinate <field> <symmetry>.
  if (!std::getline(in, line)) {
    errs.add(1, "empty file: a Matrix Market file starts with %%MatrixMarket matrix coordinate real general");
    errs.raise();
  }
  ++no;
  {
    std::istringstream ss(line);
    std::string banner, object, format, field, symmetry, extra;
    ss >> banner >> object >> format >> field >> symmetry;
    if (banner != "%%MatrixMarket") {
      errs.add(1, "not a Matrix Market file: the first line must start with %%MatrixMarket");
      errs.raise();
    }
    object = lower(object), format = lower(format), field = lower(field), symmetry = lower(symmetry);
    if (object != "matrix") errs.add(1, "object \"" + object + "\": only matrix is read");
    if (format != "coordinate")
      errs.add(1, "format \"" + format + "\": only coordinate (sparse) is read" +
                      (format == "array" ? " (array is a dense matrix)" : ""));
    if (field != "real" && field != "integer" && field != "pattern" && field != "double")
      errs.add(1, "field \"" + field + "\": real, integer or pattern" + (field == "complex" ? " (not complex)" : ""));
    if (symmetry != "general" && symmetry != "symmetric")
      errs.add(1, "symmetry \"" + symmetry + "\": general or symmetric" +
                      (symmetry == "skew-symmetric" || symmetry == "hermitian" ? " (not " + symmetry + ")" : ""));
    errs.raise();
    mi.field = field;
    mi.symmetry = symmetry;
  }
  const bool pattern = mi.field == "pattern", sym = mi.symmetry == "symmetric";
  // Size line after the comments.
  int64_t size_line = 0, nnz = -1;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t at = line.find_first_not_of(" \t\r");
    if (at == std::string::npos || line[at] == '%') continue;
    size_line = no;
    std::istringstream ss(line);
    std::string a, b, c, d;
    ss >> a >> b >> c >> d;
    if (!integer(a, &mi.nrows) || !integer(b, &mi.ncols) || !integer(c, &nnz) || !d.empty() || mi.nrows < 1 ||
        mi.ncols < 1 || nnz < 0) {
      errs.add(no, "the size line must be three non-negative integers \"rows columns entries\", rows and columns >= 1");
      errs.raise();
    }
    break;
  }
  if (!size_line) {
    errs.add(no, "no size line (rows columns entries) after the header");
    errs.raise();
  }
  if (mi.nrows != mi.ncols)
    errs.add(size_line, std::to_string(mi.nrows) + " x " + std::to_string(mi.ncols) +
                            " is not square: SPMV and CG-Solve here multiply square matrices");
  if (sym && mi.nrows != mi.ncols) errs.add(size_line, "a symmetric matrix must be square");
  if (nnz > (int64_t(1) << 34)) {
    errs.add(size_line, std::to_string(nnz) + " entries is beyond what this reader takes");
    errs.raise();
  }
  // Row pointers cost 8 bytes a row: refuse a size line that asks for far
  // more of them than the entries need (a typo, or a file cut short).
  if (mi.nrows > nnz + (int64_t(1) << 24)) {
    errs.add(size_line, std::to_string(mi.nrows) + " rows for " + std::to_string(nnz) +
                            " entries: more than 2^24 empty rows is beyond what this reader takes");
    errs.raise();
  }
  std::vector<Entry> e;
  e.reserve(static_cast<size_t>(std::min<int64_t>(nnz, int64_t(1) << 24)) * (sym ? 2 : 1));
  int64_t read = 0;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t at = line.find_first_not_of(" \t\r");
    if (at == std::string::npos || line[at] == '%') continue;
    ++read;
    if (read > nnz) continue;
    std::istringstream ss(line);
    std::string a, b, c, extra;
    ss >> a >> b >> c >> extra;
    const size_t want = pattern ? 2 : 3;
    const size_t got = a.empty() ? 0 : b.empty() ? 1 : c.empty() ? 2 : extra.empty() ? 3 : 4;
    if (got != want) {
      errs.add(no, std::to_string(got) + " fields, a " + mi.field + " entry has " + std::to_string(want) +
                       (pattern ? " (row column)" : " (row column value)"));
      continue;
    }
    Entry x{0, 0, 1.0, no};
    if (!integer(a, &x.row) || !integer(b, &x.col)) {
      errs.add(no, "row and column must be integers");
      continue;
    }
    if (x.row < 1 || x.row > mi.nrows || x.col < 1 || x.col > mi.ncols) {
      errs.add(no, "entry (" + a + ", " + b + ") outside the " + std::to_string(mi.nrows) + " x " +
                       std::to_string(mi.ncols) + " matrix (indices are 1-based)");
      continue;
    }
    if (!pattern && !number(c, &x.v)) {
      errs.add(no, "value \"" + c.substr(0, 30) + "\" is not a finite number");
      continue;
    }
    --x.row, --x.col;
    e.push_back(x);
    if (sym && x.row != x.col) e.push_back(Entry{x.col, x.row, x.v, no});
  }
  if (read != nnz)
    errs.add(no, std::to_string(read) + " entries, the size line (line " + std::to_string(size_line) + ") says " +
                     std::to_string(nnz));
  errs.raise();
  std::sort(e.begin(), e.end());
  for (size_t q = 1; q < e.size(); ++q)
    if (e[q].row == e[q - 1].row && e[q].col == e[q - 1].col)
      errs.add(std::max(e[q].line, e[q - 1].line),
               "entry (" + std::to_string(e[q].row + 1) + ", " + std::to_string(e[q].col + 1) + ") again (line " +
                   std::to_string(std::min(e[q].line, e[q - 1].line)) + ")" +
                   (sym ? ": a symmetric file stores one triangle" : ""));
  errs.raise();
  mi.entries = nnz;
  CsrHost m;
  m.nrows = mi.nrows;
  m.row_ptr = HostArray<int64_t>(m.nrows + 1);
  m.col_idx = HostArray<int64_t>(static_cast<int64_t>(e.size()));
  m.values = HostArray<double>(static_cast<int64_t>(e.size()));
  for (int64_t r = 0; r <= m.nrows; ++r) m.row_ptr[r] = 0;
  for (const Entry& x : e) ++m.row_ptr[x.row + 1];
  for (int64_t r = 0; r < m.nrows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  for (size_t q = 0; q < e.size(); ++q) {
    m.col_idx[static_cast<int64_t>(q)] = e[q].col;
    m.values[static_cast<int64_t>(q)] = e[q].v;
  }
  // Symmetry (for CG): every (i, j, v) has its (j, i, v).
  mi.symmetric = mi.nrows == mi.ncols;
  mi.positive_diagonal = true;
  for (int64_t r = 0; r < m.nrows; ++r) {
    bool diag = false;
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      const int64_t c = m.col_idx[k];
      if (c == r) diag = m.values[k] > 0;
      if (!mi.symmetric || c >= m.nrows) continue;
      const int64_t* lo = &m.col_idx[m.row_ptr[c]];
      const int64_t* hi = lo + (m.row_ptr[c + 1] - m.row_ptr[c]);
      const int64_t* t = std::lower_bound(lo, hi, r);
      if (t == hi || *t != r || m.values[m.row_ptr[c] + (t - lo)] != m.values[k]) mi.symmetric = false;
    }
    mi.positive_diagonal = mi.positive_diagonal && diag;
  }
  if (info) *info = mi;
  return m;
}

}  // namespace pm

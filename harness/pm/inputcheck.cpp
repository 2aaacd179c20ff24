// Reads a user's input file the way the programs do (docs/inputs.md) and
// prints what it found, or its positioned errors: for the tests and fuzzing
// of the readers (internal/testsnap), and for a user to try a file.
//
//   inputcheck dump <file.dump> [timestep]   a LAMMPS dump (harness/snap/lammps_dump.hpp)
//   inputcheck mtx <file.mtx>                a Matrix Market file (harness/pm/matrix_market.hpp),
//                                            and y = A*x for x[i] = i + 1
//
// Exit status 0 with a summary on stdout, 3 with the file's errors on stderr
// (every error line "file:line: ..."), 2 for a wrong command line.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "pm/matrix_market.hpp"
#include "snap/lammps_dump.hpp"

namespace {

int dump(const std::string& path, long want) {
  const snap::DumpFrame d = snap::read_lammps_dump(path, want);
  std::printf("dump atoms=%d timestep=%ld frames=%d triclinic=%d positions=%s forces=%d energy=%s bispectrum=%d\n",
              d.natoms, d.timestep, d.frames, d.triclinic ? 1 : 0, d.position_columns.c_str(), d.f.empty() ? 0 : 1,
              d.energy_column.empty() ? "-" : d.energy_column.c_str(), d.nb);
  std::printf("box lo=%.17g,%.17g,%.17g len=%.17g,%.17g,%.17g tilt=%.17g,%.17g,%.17g\n", d.lo[0], d.lo[1], d.lo[2],
              d.len[0], d.len[1], d.len[2], d.tilt[0], d.tilt[1], d.tilt[2]);
  for (int i = 0; i < d.natoms; ++i)
    std::printf("atom %ld %.17g %.17g %.17g\n", d.id[i], d.x[3 * i], d.x[3 * i + 1], d.x[3 * i + 2]);
  if (!d.note.empty()) std::printf("note %s\n", d.note.c_str());
  return 0;
}

int mtx(const std::string& path) {
  pm::MatrixInfo info;
  const pm::CsrHost m = pm::read_matrix_market(path, &info);
  std::printf("mtx rows=%" PRId64 " nnz=%" PRId64 " entries=%" PRId64 " field=%s symmetry=%s symmetric=%d positive_diagonal=%d\n",
              m.nrows, m.nnz(), info.entries, info.field.c_str(), info.symmetry.c_str(), info.symmetric ? 1 : 0,
              info.positive_diagonal ? 1 : 0);
  for (int64_t r = 0; r < m.nrows; ++r) {
    double y = 0;
    for (int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) y += m.values[k] * double(m.col_idx[k] + 1);
    std::printf("y %" PRId64 " %.17g\n", r + 1, y);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "dump" && (argc == 3 || argc == 4)) {
      long want = -1;
      if (argc == 4 && !snap::parse_integer(argv[3], &want)) {
        std::fprintf(stderr, "inputcheck: timestep %s is not an integer\n", argv[3]);
        return 2;
      }
      return dump(argv[2], want);
    }
    if (mode == "mtx" && argc == 3) return mtx(argv[2]);
  } catch (const snap::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  } catch (const pm::MatrixError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
  std::fprintf(stderr, "usage: inputcheck dump <file.dump> [timestep] | inputcheck mtx <file.mtx>\n");
  return 2;
}

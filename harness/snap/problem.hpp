// SNAP problems and potentials (host only): perturbed bcc tungsten lattices
// with their periodic neighbour lists, the 2J8 W potential of the TestSNAP
// proxy, and readers for LAMMPS's .snapparam / .snapcoeff files.
//
// Neighbour layout (what the kernels index): pair p = i*nnbor + n for atom i
// and neighbour slot n < nnbor; rij[3p..3p+2] = x_j(image) - x_i; jatom[p] is
// the atom j (of which this is a periodic image), -1 in an empty slot.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "input_error.hpp"
#include "snap.hpp"
#include "tables.hpp"

namespace snap {

struct Problem {
  int natoms = 0, nnbor = 0;
  double box[3] = {0, 0, 0};   // periodic box edges lx ly lz, origin 0
  double tilt[3] = {0, 0, 0};  // LAMMPS's xy xz yz: edges (lx,0,0), (xy,ly,0), (xz,yz,lz)
  std::vector<double> x;      // [3*natoms]
  std::vector<double> rij;    // [3*natoms*nnbor]
  std::vector<int> jatom;     // [natoms*nnbor]
  long npairs() const { return long(natoms) * nnbor; }
};

// A potential: parameters and beta[0] (constant) .. beta[ncoeff-1].
struct Potential {
  Params p;
  std::vector<double> beta;
};

// splitmix64: a deterministic stream of uniform doubles in [0, 1).
struct SplitMix {
  uint64_t s;
  explicit SplitMix(uint64_t seed) : s(seed) {}
  double next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * (1.0 / 9007199254740992.0);
  }
};

// bcc lattice, cells^3 conventional cells of side a (2 atoms each), every
// coordinate displaced by a uniform amount in [-disp, disp).
inline Problem bcc_lattice(int cells, double a, double disp, uint64_t seed) {
  Problem pr;
  pr.natoms = 2 * cells * cells * cells;
  pr.box[0] = pr.box[1] = pr.box[2] = cells * a;
  pr.x.reserve(3 * pr.natoms);
  SplitMix rng(seed);
  for (int ix = 0; ix < cells; ++ix)
    for (int iy = 0; iy < cells; ++iy)
      for (int iz = 0; iz < cells; ++iz)
        for (int b = 0; b < 2; ++b) {
          const double h = 0.5 * b;
          const double c[3] = {(ix + h) * a, (iy + h) * a, (iz + h) * a};
          for (int k = 0; k < 3; ++k) pr.x.push_back(c[k] + disp * (2.0 * rng.next() - 1.0));
        }
  return pr;
}

// Fills rij/jatom with every periodic image within rcut (0 < r < rcut), so
// boxes shorter than 2*rcut are right too. nnbor = the largest count. The
// box may be triclinic (tilt); the search is over all pairs and images
// (time ~ natoms^2, seconds at 10^4 atoms).
inline void build_neighbours(Problem& pr, double rcut) {
  const double* L = pr.box;
  const double xy = pr.tilt[0], xz = pr.tilt[1], yz = pr.tilt[2];
  const bool tilted = xy != 0 || xz != 0 || yz != 0;
  // Edges a = (lx,0,0), b = (xy,ly,0), c = (xz,yz,lz). With positions
  // wrapped into the cell, a fractional difference is below 1 in
  // magnitude: images up to ceil(rcut/width) cells away (one more when
  // tilted) can be within rcut, width the distance between opposite faces.
  const double vol = L[0] * L[1] * L[2];
  auto norm = [](double u, double v, double w) { return std::sqrt(u * u + v * v + w * w); };
  const double bc = norm(L[1] * L[2], -xy * L[2], xy * yz - L[1] * xz);  // |b x c|
  const double ac = norm(0, -L[0] * L[2], L[0] * yz);                    // |a x c|
  const double width[3] = {tilted ? vol / bc : L[0], tilted ? vol / ac : L[1], L[2]};
  int img[3];
  for (int k = 0; k < 3; ++k) {
    const double n = std::ceil(rcut / width[k]) + (tilted ? 1 : 0);
    if (!(n <= 64))  // a user's box (PM_SNAP_DUMP) a few atoms thin
      throw InputError(std::string("the box is ") + std::to_string(width[k]) + " thick along " + "abc"[k] +
                       ", below 1/64 of the cutoff " + std::to_string(rcut) + ": too many periodic images");
    img[k] = int(n);
  }
  std::vector<double> xw(pr.x);
  for (int i = 0; i < pr.natoms; ++i) {
    double* v = &xw[3 * i];
    if (!tilted) {
      for (int k = 0; k < 3; ++k) v[k] -= std::floor(v[k] / L[k]) * L[k];
      continue;
    }
    double s2 = v[2] / L[2];
    double s1 = (v[1] - yz * s2) / L[1];
    double s0 = (v[0] - xy * s1 - xz * s2) / L[0];
    s0 -= std::floor(s0);
    s1 -= std::floor(s1);
    s2 -= std::floor(s2);
    v[0] = s0 * L[0] + s1 * xy + s2 * xz;
    v[1] = s1 * L[1] + s2 * yz;
    v[2] = s2 * L[2];
  }
  std::vector<std::vector<double>> d(pr.natoms);
  std::vector<std::vector<int>> o(pr.natoms);
  const double rc2 = rcut * rcut;
  for (int i = 0; i < pr.natoms; ++i)
    for (int j = 0; j < pr.natoms; ++j)
      for (int a = -img[0]; a <= img[0]; ++a)
        for (int b = -img[1]; b <= img[1]; ++b)
          for (int c = -img[2]; c <= img[2]; ++c) {
            const double dx = xw[3 * j] + a * L[0] + b * xy + c * xz - xw[3 * i];
            const double dy = xw[3 * j + 1] + b * L[1] + c * yz - xw[3 * i + 1];
            const double dz = xw[3 * j + 2] + c * L[2] - xw[3 * i + 2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2 && r2 > 1e-20) {
              d[i].insert(d[i].end(), {dx, dy, dz});
              o[i].push_back(j);
            }
          }
  pr.nnbor = 0;
  for (int i = 0; i < pr.natoms; ++i) pr.nnbor = std::max(pr.nnbor, int(o[i].size()));
  pr.rij.assign(3 * pr.npairs(), 0.0);
  pr.jatom.assign(pr.npairs(), -1);
  for (int i = 0; i < pr.natoms; ++i)
    for (size_t n = 0; n < o[i].size(); ++n) {
      const long p = long(i) * pr.nnbor + long(n);
      for (int k = 0; k < 3; ++k) pr.rij[3 * p + k] = d[i][3 * n + k];
      pr.jatom[p] = o[i][n];
    }
}

// The 2J8 tungsten SNAP potential of TestSNAP's "2J8 W" problem: LAMMPS's
// potentials/W_2940_2017_2.snapparam/.snapcoeff (M. A. Wood and A. P.
// Thompson, "Quantum-accurate molecular dynamics potential for tungsten",
// arXiv:1702.07042), 56 coefficients.
inline Potential w2940_2j8() {
  Potential w;
  w.p = Params{8, 4.73442, 0.99363, 0.0, 0.5, 1.0, 1.0, 1};
  w.beta = {0.781170857801,  -0.001794941735, -0.016628679036, -0.066625537037, -0.073716343967, -0.062913923923,
            0.032552694672,  -0.134901744419, -0.075076334103, -0.148558616547, -0.140808831101, -0.166749145704,
            -0.047487675984, -0.049892090603, -0.032483739965, -0.114766534860, -0.106759718242, -0.125894850485,
            -0.103409735225, -0.095247335447, -0.061998736346, -0.053895610976, -0.010799734206, -0.011644828900,
            -0.028316826924, 0.011176085541,  0.064619474684,  -0.023886279996, -0.004099224312, -0.056084222496,
            -0.035551497650, -0.056678501024, -0.004905851656, -0.015701146162, -0.008462280779, 0.016429018676,
            0.032432633993,  -0.010805361272, -0.014841893457, 0.019414134562,  -0.008112452759, -0.002700775447,
            0.007032887063,  -0.009706065042, 0.008385967833,  0.028606085876,  -0.007003591067, 0.006467260152,
            -0.006666986361, 0.029243285316,  0.002477673872,  -0.000199497504, 0.004068954075,  0.006036129972,
            -0.013010633924, -0.008314173699};
  return w;
}

// The W potential's parameters at another twojmax, with coefficients made up
// deterministically (a test and benchmark potential, not a physical one). At
// twojmax 8 this is w2940_2j8().
inline Potential w_like(int twojmax) {
  Potential w = w2940_2j8();
  if (twojmax == 8) return w;
  w.p.twojmax = twojmax;
  const int n = bispectrum_count(twojmax) + 1;
  const std::vector<double> base = w.beta;
  w.beta.resize(n);
  for (int k = 0; k < n; ++k) w.beta[k] = k < int(base.size()) ? base[k] : 0.01 * std::cos(1.7 * k);
  return w;
}

// bcc W, a = 3.1803 A (LAMMPS examples/snap/in.snap.W.2940).
constexpr double kLatticeW = 3.1803;

// The paper's problem (000, TestSNAP's 2J8 W ECP problem): 10^3 cells =
// 2000 atoms, displacements of at most 0.05 A per coordinate, which keep
// every atom at exactly 26 neighbours (the third shell, a*sqrt(2) = 4.498 A,
// stays inside rcut = 4.734 A and the fourth, 5.274 A, outside).
inline Problem paper_problem(const Params& p, uint64_t seed = 2024) {
  Problem pr = bcc_lattice(10, kLatticeW, 0.05, seed);
  build_neighbours(pr, p.rcut());
  return pr;
}

// The CI problem: one cell (2 atoms), each with its 26 periodic images as
// neighbours, the same lattice and perturbation.
inline Problem ci_problem(const Params& p, uint64_t seed = 2024) {
  Problem pr = bcc_lattice(1, kLatticeW, 0.05, seed);
  build_neighbours(pr, p.rcut());
  return pr;
}

// Readers for LAMMPS's potential files: .snapparam ("key value" lines) and
// .snapcoeff ("nelem ncoeff", "elem radius weight", then one coefficient a
// line). One element only. Problems are positioned (InputError).
inline Potential read_lammps_potential(const std::string& param_file, const std::string& coeff_file) {
  Potential w = w2940_2j8();
  w.beta.clear();
  std::ifstream pf(param_file);
  if (!pf) throw InputError(param_file + ": cannot read");
  InputErrors perr(param_file);
  std::string line;
  long no = 0;
  bool have_rcut = false, have_twojmax = false;
  while (std::getline(pf, line)) {
    ++no;
    const std::vector<std::string> f = split_fields(line.substr(0, line.find('#')));
    if (f.empty()) continue;
    double v = 0;
    if (f.size() != 2 || !parse_number(f[1], &v)) {
      perr.add(no, "expected \"key value\", found \"" + line.substr(0, 40) + "\"");
      continue;
    }
    const std::string& key = f[0];
    if (key == "rcutfac") w.p.rcutfac = v, have_rcut = true;
    else if (key == "twojmax") w.p.twojmax = int(v), have_twojmax = true;
    else if (key == "rfac0") w.p.rfac0 = v;
    else if (key == "rmin0") w.p.rmin0 = v;
    else if (key == "switchflag") w.p.switchflag = int(v);
    else if ((key == "bzeroflag" || key == "quadraticflag" || key == "chemflag" || key == "bnormflag") && v != 0)
      perr.add(no, key + " " + f[1] + ": only 0 is supported");
    if (key == "twojmax" && (v < 0 || v > 16 || v != std::floor(v))) perr.add(no, "twojmax " + f[1] + ": 0..16");
  }
  if (!have_rcut) perr.add(no ? no : 1, "no rcutfac");
  if (!have_twojmax) perr.add(no ? no : 1, "no twojmax");
  perr.raise();
  std::ifstream cf(coeff_file);
  if (!cf) throw InputError(coeff_file + ": cannot read");
  InputErrors cerr(coeff_file);
  std::vector<std::pair<std::string, long>> tok;
  no = 0;
  while (std::getline(cf, line)) {
    ++no;
    for (const std::string& s : split_fields(line.substr(0, line.find('#')))) tok.push_back({s, no});
  }
  long nelem = 0, ncoeff = 0;
  if (tok.size() < 5 || !parse_integer(tok[0].first, &nelem) || !parse_integer(tok[1].first, &ncoeff)) {
    cerr.add(tok.empty() ? 1 : tok[0].second, "expected \"nelem ncoeff\", then \"element radius weight\"");
    cerr.raise();
  }
  if (nelem != 1) cerr.add(tok[0].second, "nelem " + tok[0].first + ": one element only");
  if (!parse_number(tok[3].first, &w.p.radelem)) cerr.add(tok[3].second, "radius \"" + tok[3].first + "\" is not a number");
  if (!parse_number(tok[4].first, &w.p.wj)) cerr.add(tok[4].second, "weight \"" + tok[4].first + "\" is not a number");
  if (ncoeff != bispectrum_count(w.p.twojmax) + 1)
    cerr.add(tok[1].second, std::to_string(ncoeff) + " coefficients, twojmax " + std::to_string(w.p.twojmax) + " (" +
                                param_file + ") needs " + std::to_string(bispectrum_count(w.p.twojmax) + 1));
  else if (long(tok.size()) != 5 + ncoeff)
    cerr.add(tok.back().second, std::to_string(tok.size() - 5) + " coefficients, the header (line " +
                                    std::to_string(tok[1].second) + ") says " + std::to_string(ncoeff));
  cerr.raise();
  for (long k = 0; k < ncoeff; ++k) {
    double v = 0;
    if (!parse_number(tok[5 + k].first, &v)) cerr.add(tok[5 + k].second, "\"" + tok[5 + k].first + "\" is not a number");
    w.beta.push_back(v);
  }
  cerr.raise();
  return w;
}

}  // namespace snap

// The serial float64 SNAP reference in TestSNAP's structure: one step is
// compute_ui, compute_yi, compute_duarray, compute_deidrj and the force
// accumulation, each a loop over the work items a device kernel runs in
// parallel, calling the same per-work-item functions (snap.hpp). Energies and
// bispectra (compute_bi) are for checking; TestSNAP's step does not need them.
//
// Global arrays (docs/testsnap.md), atom index fastest so that neighbouring
// work items touch neighbouring memory:
//   ulisttot[jju*natoms + i]              cplx, idxu_max x natoms
//   ylist[jjuh*natoms + i]                cplx, idxuh_max x natoms
//   dulist[(jjuh*3 + k)*npairs + p]       cplx, 3*idxuh_max x npairs
//   dedr[k*npairs + p]                    double, 3 x npairs
//   blist[jjb*natoms + i]                 double, idxb_max x natoms
//   force[3*i + k], energy[i]             double
#pragma once

#include <algorithm>
#include <vector>

#include "problem.hpp"
#include "snap.hpp"
#include "tables.hpp"

namespace snap {
namespace serial {

inline void add(cplx& a, double s, const cplx& b) {
  a.re += s * b.re;
  a.im += s * b.im;
}

// Utot_i = wself I + sum_j wj fc(r_ij) U(r_ij): one work item per
// (atom, neighbour) and element of layer j, layers in order.
inline void compute_ui(const System& s, cplx* ulisttot) {
  const Tables& t = s.t;
  const long n = s.natoms;
  std::vector<cplx> a(layer_size(t.twojmax)), b(layer_size(t.twojmax));
  for (int jju = 0; jju < t.idxu_max; ++jju)
    for (long i = 0; i < n; ++i) ulisttot[jju * n + i] = cplx{t.utot_init[jju], 0.0};
  for (long i = 0; i < n; ++i)
    for (int nb = 0; nb < s.nnbor; ++nb) {
      const long p = i * s.nnbor + nb;
      if (s.jatom[p] < 0) continue;
      CK c;
      cayley_klein(s.p, s.rij[3 * p], s.rij[3 * p + 1], s.rij[3 * p + 2], c);
      cplx *prev = a.data(), *cur = b.data();
      for (int j = 0; j <= t.twojmax; ++j) {
        for (int e = 0; e < layer_half_size(j); ++e) {
          const UElem o = ui_element(t, c, j, e, prev, cur);
          add(ulisttot[o.jju * n + i], c.sfac, o.v);
          if (o.jjm >= 0) add(ulisttot[o.jjm * n + i], c.sfac, o.vm);
        }
        std::swap(prev, cur);
      }
    }
}

// Y_i = dE_i/dUtot_i: one work item per (atom, Z element).
inline void compute_yi(const System& s, const cplx* ulisttot, cplx* ylist) {
  const Tables& t = s.t;
  const long n = s.natoms;
  std::fill(ylist, ylist + t.idxuh_max * n, cplx{0, 0});
  for (long i = 0; i < n; ++i)
    for (int jjz = 0; jjz < t.idxz_max; ++jjz) {
      const YElem y = yi_element(t, jjz, ulisttot + i, n, s.beta + 1);
      add(ylist[y.jjuh * n + i], 1.0, y.v);
    }
}

// d(wj fc U)/dr_ij in the half layout: one work item per (atom, neighbour)
// and element of layer j, layers in order.
inline void compute_duarray(const System& s, cplx* dulist) {
  const Tables& t = s.t;
  const long np = long(s.natoms) * s.nnbor;
  const int ls = layer_size(t.twojmax);
  std::vector<cplx> u0(ls), u1(ls), du0(3 * ls), du1(3 * ls);
  for (long p = 0; p < np; ++p) {
    if (s.jatom[p] < 0) {
      for (int q = 0; q < 3 * t.idxuh_max; ++q) dulist[q * np + p] = cplx{0, 0};
      continue;
    }
    CKD c;
    cayley_klein_d(s.p, s.rij[3 * p], s.rij[3 * p + 1], s.rij[3 * p + 2], c);
    cplx *up = u0.data(), *uc = u1.data(), *dup = du0.data(), *duc = du1.data();
    for (int j = 0; j <= t.twojmax; ++j) {
      for (int e = 0; e < layer_half_size(j); ++e) {
        const DUElem o = du_element(t, c, j, e, up, dup, uc, duc, ls);
        for (int k = 0; k < 3; ++k) dulist[(o.jjuh * 3L + k) * np + p] = o.du[k];
      }
      std::swap(up, uc);
      std::swap(dup, duc);
    }
  }
}

// dE_i/dr_ij: one work item per (atom, neighbour).
inline void compute_deidrj(const System& s, const cplx* dulist, const cplx* ylist, double* dedr) {
  const long n = s.natoms, np = long(s.natoms) * s.nnbor;
  for (long p = 0; p < np; ++p) {
    double d[3] = {0, 0, 0};
    if (s.jatom[p] >= 0) deidrj(s.t, dulist + p, np, ylist + p / s.nnbor, n, d);
    for (int k = 0; k < 3; ++k) dedr[k * np + p] = d[k];
  }
}

// duarray and deidrj fused, as TestSNAP's GPU version does: dU is contracted
// with Y as it is made, per (atom, neighbour); no dulist.
inline void compute_fused_deidrj(const System& s, const cplx* ylist, double* dedr) {
  const Tables& t = s.t;
  const long n = s.natoms, np = long(s.natoms) * s.nnbor;
  const int ls = layer_size(t.twojmax);
  std::vector<cplx> u0(ls), u1(ls), du0(3 * ls), du1(3 * ls);
  for (long p = 0; p < np; ++p) {
    double d[3] = {0, 0, 0};
    if (s.jatom[p] >= 0) {
      CKD c;
    cayley_klein_d(s.p, s.rij[3 * p], s.rij[3 * p + 1], s.rij[3 * p + 2], c);
      cplx *up = u0.data(), *uc = u1.data(), *dup = du0.data(), *duc = du1.data();
      for (int j = 0; j <= t.twojmax; ++j) {
        for (int e = 0; e < layer_half_size(j); ++e)
          fused_dedr_term(t, du_element(t, c, j, e, up, dup, uc, duc, ls), ylist + p / s.nnbor, n, d);
        std::swap(up, uc);
        std::swap(dup, duc);
      }
    }
    for (int k = 0; k < 3; ++k) dedr[k * np + p] = d[k];
  }
}

// f_i += dE_i/dr_ij, f_j -= dE_i/dr_ij.
inline void accumulate_forces(const System& s, const double* dedr, double* force) {
  const long np = long(s.natoms) * s.nnbor;
  std::fill(force, force + 3L * s.natoms, 0.0);
  for (long p = 0; p < np; ++p) {
    const int j = s.jatom[p];
    if (j < 0) continue;
    const long i = p / s.nnbor;
    for (int k = 0; k < 3; ++k) {
      force[3 * i + k] += dedr[k * np + p];
      force[3 * j + k] -= dedr[k * np + p];
    }
  }
}

// B_i and E_i = beta_0 + beta . B_i from Utot.
inline void compute_bi_energy(const System& s, const cplx* ulisttot, double* blist, double* energy) {
  const long n = s.natoms;
  for (long i = 0; i < n; ++i) {
    double e = s.beta[0];
    for (int jjb = 0; jjb < s.t.idxb_max; ++jjb) {
      const double b = bi_element(s.t, jjb, ulisttot + i, n);
      blist[jjb * n + i] = b;
      e += s.beta[1 + jjb] * b;
    }
    energy[i] = e;
  }
}

}  // namespace serial

struct State {
  std::vector<cplx> ulisttot, ylist, dulist;
  std::vector<double> dedr, blist, energy, force;
};

// A host system with its tables and arrays: the reference of one problem.
class Reference {
 public:
  Reference(const Potential& pot, const Problem& pr) : pot_(pot), pr_(pr), ts_(pot.p.twojmax, pot.p.wself) {
    if (int(pot.beta.size()) != ts_.idxb_max + 1) throw std::invalid_argument("snap: coefficient count");
    sys_ = System{pot_.p, ts_.view(), pr_.natoms, pr_.nnbor, pr_.rij.data(), pr_.jatom.data(), pot_.beta.data()};
    const Tables& t = sys_.t;
    const long n = pr.natoms, np = pr.npairs();
    s_.ulisttot.assign(t.idxu_max * n, cplx{0, 0});
    s_.ylist.assign(t.idxuh_max * n, cplx{0, 0});
    s_.dulist.assign(3L * t.idxuh_max * np, cplx{0, 0});
    s_.dedr.assign(3 * np, 0.0);
    s_.blist.assign(t.idxb_max * n, 0.0);
    s_.energy.assign(n, 0.0);
    s_.force.assign(3 * n, 0.0);
  }
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  const System& system() const { return sys_; }
  const Tables& tables() const { return sys_.t; }
  const TableSet& table_set() const { return ts_; }
  const State& state() const { return s_; }

  void compute_ui() { serial::compute_ui(sys_, s_.ulisttot.data()); }
  void compute_yi() { serial::compute_yi(sys_, s_.ulisttot.data(), s_.ylist.data()); }
  void compute_duarray() { serial::compute_duarray(sys_, s_.dulist.data()); }
  void compute_deidrj() { serial::compute_deidrj(sys_, s_.dulist.data(), s_.ylist.data(), s_.dedr.data()); }
  void accumulate_forces() { serial::accumulate_forces(sys_, s_.dedr.data(), s_.force.data()); }
  // One TestSNAP step: forces from positions.
  void step() {
    compute_ui();
    compute_yi();
    compute_duarray();
    compute_deidrj();
    accumulate_forces();
  }
  // Bispectrum and per-atom energies (needs compute_ui first).
  void compute_bi_energy() {
    serial::compute_bi_energy(sys_, s_.ulisttot.data(), s_.blist.data(), s_.energy.data());
  }
  double total_energy() const {
    double e = 0.0;
    for (double v : s_.energy) e += v;
    return e;
  }

 private:
  Potential pot_;
  const Problem& pr_;
  TableSet ts_;
  System sys_;
  State s_;
};

// Bispectrum and energy of one isolated neighbourhood (rows of rij), for
// checks that move neighbours around.
inline std::vector<double> neighbourhood_bispectrum(const Potential& pot, const std::vector<double>& rij,
                                                    double* energy) {
  Problem pr;
  pr.natoms = 1;
  pr.nnbor = int(rij.size() / 3);
  pr.rij = rij;
  pr.jatom.assign(pr.nnbor, 0);
  Reference ref(pot, pr);
  ref.compute_ui();
  ref.compute_bi_energy();
  if (energy) *energy = ref.state().energy[0];
  return ref.state().blist;
}

}  // namespace snap

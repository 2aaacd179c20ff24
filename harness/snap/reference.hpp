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

#include <cstring>
#include <vector>

#include "problem.hpp"
#include "snap.hpp"
#include "tables.hpp"

namespace snap {

struct State {
  std::vector<cplx> ulisttot, ylist, dulist;
  std::vector<double> dedr, blist, energy, force;
};

class Reference {
 public:
  Reference(const Potential& pot, const Problem& pr) : pot_(pot), pr_(pr), ts_(pot.p.twojmax, pot.p.wself) {
    t_ = ts_.view();
    if (int(pot.beta.size()) != t_.idxb_max + 1) throw std::invalid_argument("snap: coefficient count");
    const long n = pr.natoms, np = pr.npairs();
    s_.ulisttot.assign(t_.idxu_max * n, cplx{0, 0});
    s_.ylist.assign(t_.idxuh_max * n, cplx{0, 0});
    s_.dulist.assign(3L * t_.idxuh_max * np, cplx{0, 0});
    s_.dedr.assign(3 * np, 0.0);
    s_.blist.assign(t_.idxb_max * n, 0.0);
    s_.energy.assign(n, 0.0);
    s_.force.assign(3 * n, 0.0);
    const int ls = layer_size(pot.p.twojmax);
    u0_.resize(ls);
    u1_.resize(ls);
    du0_.resize(3 * ls);
    du1_.resize(3 * ls);
  }

  const Tables& tables() const { return t_; }
  const TableSet& table_set() const { return ts_; }
  const State& state() const { return s_; }

  // Utot_i = wself I + sum_j wj fc(r_ij) U(r_ij): one work item per
  // (atom, neighbour) and element of layer j, layers in order.
  void compute_ui() {
    const long n = pr_.natoms;
    for (int jju = 0; jju < t_.idxu_max; ++jju)
      for (long i = 0; i < n; ++i) s_.ulisttot[jju * n + i] = cplx{t_.utot_init[jju], 0.0};
    for (long i = 0; i < n; ++i)
      for (int nb = 0; nb < pr_.nnbor; ++nb) {
        const long p = i * pr_.nnbor + nb;
        if (pr_.jatom[p] < 0) continue;
        const CK c = cayley_klein(pot_.p, pr_.rij[3 * p], pr_.rij[3 * p + 1], pr_.rij[3 * p + 2]);
        cplx* prev = u0_.data();
        cplx* cur = u1_.data();
        for (int j = 0; j <= t_.twojmax; ++j) {
          for (int e = 0; e < layer_half_size(j); ++e) {
            const UElem o = ui_element(t_, c, j, e, prev, cur);
            add(s_.ulisttot[o.jju * n + i], c.sfac, o.v);
            if (o.jjm >= 0) add(s_.ulisttot[o.jjm * n + i], c.sfac, o.vm);
          }
          std::swap(prev, cur);
        }
      }
  }

  // Y_i = dE_i/dUtot_i: one work item per (atom, Z element).
  void compute_yi() {
    const long n = pr_.natoms;
    std::fill(s_.ylist.begin(), s_.ylist.end(), cplx{0, 0});
    const double* beta = pot_.beta.data() + 1;
    for (long i = 0; i < n; ++i)
      for (int jjz = 0; jjz < t_.idxz_max; ++jjz) {
        const YElem y = yi_element(t_, jjz, s_.ulisttot.data() + i, n, beta);
        add(s_.ylist[y.jjuh * n + i], 1.0, y.v);
      }
  }

  // d(wj fc U)/dr_ij for the half layout: one work item per (atom,
  // neighbour) and element of layer j, layers in order.
  void compute_duarray() {
    const long np = pr_.npairs();
    const int ls = layer_size(t_.twojmax);
    for (long p = 0; p < np; ++p) {
      if (pr_.jatom[p] < 0) {
        for (int q = 0; q < 3 * t_.idxuh_max; ++q) s_.dulist[q * np + p] = cplx{0, 0};
        continue;
      }
      const CKD c = cayley_klein_d(pot_.p, pr_.rij[3 * p], pr_.rij[3 * p + 1], pr_.rij[3 * p + 2]);
      cplx *up = u0_.data(), *uc = u1_.data(), *dup = du0_.data(), *duc = du1_.data();
      for (int j = 0; j <= t_.twojmax; ++j) {
        for (int e = 0; e < layer_half_size(j); ++e) {
          const DUElem o = du_element(t_, c, j, e, up, dup, uc, duc, ls);
          for (int k = 0; k < 3; ++k) s_.dulist[(o.jjuh * 3L + k) * np + p] = o.du[k];
        }
        std::swap(up, uc);
        std::swap(dup, duc);
      }
    }
  }

  // dE_i/dr_ij: one work item per (atom, neighbour).
  void compute_deidrj() {
    const long n = pr_.natoms, np = pr_.npairs();
    for (long p = 0; p < np; ++p) {
      double d[3] = {0, 0, 0};
      if (pr_.jatom[p] >= 0) deidrj(t_, s_.dulist.data() + p, np, s_.ylist.data() + p / pr_.nnbor, n, d);
      for (int k = 0; k < 3; ++k) s_.dedr[k * np + p] = d[k];
    }
  }

  // f_i += dE_i/dr_ij, f_j -= dE_i/dr_ij.
  void accumulate_forces() {
    std::fill(s_.force.begin(), s_.force.end(), 0.0);
    const long np = pr_.npairs();
    for (long p = 0; p < np; ++p) {
      const int j = pr_.jatom[p];
      if (j < 0) continue;
      const long i = p / pr_.nnbor;
      for (int k = 0; k < 3; ++k) {
        s_.force[3 * i + k] += s_.dedr[k * np + p];
        s_.force[3 * j + k] -= s_.dedr[k * np + p];
      }
    }
  }

  // One TestSNAP step: forces from positions.
  void step() {
    compute_ui();
    compute_yi();
    compute_duarray();
    compute_deidrj();
    accumulate_forces();
  }

  // B_i and E_i = beta_0 + beta . B_i (needs compute_ui first).
  void compute_bi_energy() {
    const long n = pr_.natoms;
    for (long i = 0; i < n; ++i) {
      double e = pot_.beta[0];
      for (int jjb = 0; jjb < t_.idxb_max; ++jjb) {
        const double b = bi_element(t_, jjb, s_.ulisttot.data() + i, n);
        s_.blist[jjb * n + i] = b;
        e += pot_.beta[1 + jjb] * b;
      }
      s_.energy[i] = e;
    }
  }

  double total_energy() const {
    double e = 0.0;
    for (double v : s_.energy) e += v;
    return e;
  }

 private:
  static void add(cplx& a, double s, const cplx& b) {
    a.re += s * b.re;
    a.im += s * b.im;
  }

  Potential pot_;
  const Problem& pr_;
  TableSet ts_;
  Tables t_;
  State s_;
  std::vector<cplx> u0_, u1_, du0_, du1_;
};

// Bispectrum and energy of one isolated neighbourhood (rows of rij, each
// inside rcut), for checks that move neighbours around.
inline std::vector<double> neighbourhood_bispectrum(const Potential& pot, const TableSet& ts,
                                                    const std::vector<double>& rij, double* energy) {
  const Tables t = ts.view();
  std::vector<cplx> utot(t.idxu_max), a(layer_size(t.twojmax)), b(layer_size(t.twojmax));
  for (int jju = 0; jju < t.idxu_max; ++jju) utot[jju] = cplx{t.utot_init[jju], 0.0};
  for (size_t q = 0; q + 2 < rij.size(); q += 3) {
    const CK c = cayley_klein(pot.p, rij[q], rij[q + 1], rij[q + 2]);
    cplx *prev = a.data(), *cur = b.data();
    for (int j = 0; j <= t.twojmax; ++j) {
      for (int e = 0; e < layer_half_size(j); ++e) {
        const UElem o = ui_element(t, c, j, e, prev, cur);
        utot[o.jju].re += c.sfac * o.v.re;
        utot[o.jju].im += c.sfac * o.v.im;
        if (o.jjm >= 0) {
          utot[o.jjm].re += c.sfac * o.vm.re;
          utot[o.jjm].im += c.sfac * o.vm.im;
        }
      }
      std::swap(prev, cur);
    }
  }
  std::vector<double> bl(t.idxb_max);
  double e = pot.beta[0];
  for (int jjb = 0; jjb < t.idxb_max; ++jjb) {
    bl[jjb] = bi_element(t, jjb, utot.data(), 1);
    e += pot.beta[1 + jjb] * bl[jjb];
  }
  if (energy) *energy = e;
  return bl;
}

}  // namespace snap

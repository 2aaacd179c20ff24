// Host-side construction of SNAP's index tables and Clebsch-Gordan
// coefficients (snap::Tables). Built once per twojmax on the host; a device
// backend copies each vector to the device and fills a Tables with those
// pointers (TableSet::view gives the host one).
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "snap.hpp"

namespace snap {

// Clebsch-Gordan coefficient <j1/2 m1, j2/2 m2 | j/2 m> by Racah's formula,
// with doubled angular momenta j1, j2, j and doubled projections m1, m2, m.
inline double clebsch_gordan(int j1, int m1, int j2, int m2, int j, int m) {
  if (m1 + m2 != m) return 0.0;
  if (j < std::abs(j1 - j2) || j > j1 + j2 || ((j1 + j2 + j) & 1)) return 0.0;
  if (std::abs(m1) > j1 || std::abs(m2) > j2 || std::abs(m) > j) return 0.0;
  auto fact = [](int n) {
    double f = 1.0;
    for (int i = 2; i <= n; ++i) f *= i;
    return f;
  };
  // Halved quantities (all integers for an allowed coupling).
  const int a = (j1 + j2 - j) / 2, b = (j1 - j2 + j) / 2, c = (-j1 + j2 + j) / 2, d = (j1 + j2 + j) / 2 + 1;
  const double tri = std::sqrt(fact(a) * fact(b) * fact(c) / fact(d));
  const double mf = std::sqrt(fact((j1 + m1) / 2) * fact((j1 - m1) / 2) * fact((j2 + m2) / 2) * fact((j2 - m2) / 2) *
                              fact((j + m) / 2) * fact((j - m) / 2));
  double sum = 0.0;
  for (int k = 0; k <= a; ++k) {
    const int t1 = (j1 - m1) / 2 - k, t2 = (j2 + m2) / 2 - k;
    const int t3 = (j - j2 + m1) / 2 + k, t4 = (j - j1 - m2) / 2 + k;
    if (t1 < 0 || t2 < 0 || t3 < 0 || t4 < 0) continue;
    const double den = fact(k) * fact(a - k) * fact(t1) * fact(t2) * fact(t3) * fact(t4);
    sum += ((k & 1) ? -1.0 : 1.0) / den;
  }
  return std::sqrt(j + 1.0) * tri * mf * sum;
}

// Number of bispectrum components for twojmax (j2 <= j1 <= j): 55 for 8.
inline int bispectrum_count(int twojmax) {
  int n = 0;
  for (int j1 = 0; j1 <= twojmax; ++j1)
    for (int j2 = 0; j2 <= j1; ++j2)
      for (int j = j1 - j2; j <= std::min(twojmax, j1 + j2); j += 2)
        if (j >= j1) ++n;
  return n;
}

class TableSet {
 public:
  TableSet(int twojmax, double wself) : twojmax_(twojmax) {
    if (twojmax < 0 || twojmax > 40) throw std::invalid_argument("snap: twojmax out of range");
    const int n = twojmax + 1;
    // U layouts.
    idxu_block.resize(n);
    idxuh_block.resize(n);
    int nu = 0, nuh = 0;
    for (int j = 0; j <= twojmax; ++j) {
      idxu_block[j] = nu;
      idxuh_block[j] = nuh;
      nu += layer_size(j);
      nuh += layer_half_size(j);
    }
    idxu_max = nu;
    idxuh_max = nuh;
    utot_init.assign(nu, 0.0);
    for (int j = 0; j <= twojmax; ++j)
      for (int mb = 0; mb <= j; ++mb) utot_init[idxu_block[j] + mb * (j + 1) + mb] = wself;
    uh_weight.assign(nuh, 0.0);
    for (int j = 0; j <= twojmax; ++j)
      for (int mb = 0; 2 * mb <= j; ++mb)
        for (int ma = 0; ma <= j; ++ma) {
          double w = 2.0;
          if (2 * mb == j) w = ma < mb ? 2.0 : (ma == mb ? 1.0 : 0.0);
          uh_weight[idxuh_block[j] + mb * (j + 1) + ma] = w;
        }
    rootpq.assign(n * n, 0.0);
    for (int p = 1; p <= twojmax; ++p)
      for (int q = 1; q <= twojmax; ++q) rootpq[p * n + q] = std::sqrt(double(p) / q);

    // Clebsch-Gordan blocks for j2 <= j1, j = |j1-j2|..min(twojmax, j1+j2) step 2.
    cg_block.assign(n * n * n, -1);
    for (int j1 = 0; j1 <= twojmax; ++j1)
      for (int j2 = 0; j2 <= j1; ++j2)
        for (int j = j1 - j2; j <= std::min(twojmax, j1 + j2); j += 2) {
          cg_block[(j1 * n + j2) * n + j] = int(cglist.size());
          for (int m1 = 0; m1 <= j1; ++m1)
            for (int m2 = 0; m2 <= j2; ++m2) {
              const int aa2 = 2 * m1 - j1, bb2 = 2 * m2 - j2, cc2 = aa2 + bb2;
              cglist.push_back(clebsch_gordan(j1, aa2, j2, bb2, j, cc2));
            }
        }
    idxcg_max = int(cglist.size());

    // Bispectrum components.
    b_block.assign(n * n * n, -1);
    for (int j1 = 0; j1 <= twojmax; ++j1)
      for (int j2 = 0; j2 <= j1; ++j2)
        for (int j = j1 - j2; j <= std::min(twojmax, j1 + j2); j += 2)
          if (j >= j1) {
            b_block[(j1 * n + j2) * n + j] = int(idxb.size());
            idxb.push_back(IdxB{j1, j2, j, -1});
          }
    idxb_max = int(idxb.size());

    // Z elements.
    z_block.assign(n * n * n, -1);
    for (int j1 = 0; j1 <= twojmax; ++j1)
      for (int j2 = 0; j2 <= j1; ++j2)
        for (int j = j1 - j2; j <= std::min(twojmax, j1 + j2); j += 2) {
          z_block[(j1 * n + j2) * n + j] = int(idxz.size());
          for (int mb = 0; 2 * mb <= j; ++mb)
            for (int ma = 0; ma <= j; ++ma) {
              IdxZ z{};
              z.j1 = j1;
              z.j2 = j2;
              z.j = j;
              // ma1 + ma2 = ma + (j1 + j2 - j)/2 with 0 <= ma1 <= j1, 0 <= ma2 <= j2.
              z.ma1min = std::max(0, (2 * ma - j - j2 + j1) / 2);
              z.ma2max = (2 * ma - j - (2 * z.ma1min - j1) + j2) / 2;
              z.na = std::min(j1, (2 * ma - j + j2 + j1) / 2) - z.ma1min + 1;
              z.mb1min = std::max(0, (2 * mb - j - j2 + j1) / 2);
              z.mb2max = (2 * mb - j - (2 * z.mb1min - j1) + j2) / 2;
              z.nb = std::min(j1, (2 * mb - j + j2 + j1) / 2) - z.mb1min + 1;
              z.cg = cg_block[(j1 * n + j2) * n + j];
              z.jju = idxu_block[j] + mb * (j + 1) + ma;
              z.jjuh = idxuh_block[j] + mb * (j + 1) + ma;
              // dE/dUtot^j collects every B that Z^j_{j1 j2} enters: B_{j1 j2 j}
              // itself when j >= j1, else the component of the sorted triple,
              // with multiplicity for repeated j's and the (j1+1)/(j+1) of
              // B_{j1 j2 j} = (j1+1)/(j+1) B_{j j2 j1} (unnormalised B).
              double f = 1.0;
              int jjb;
              if (j >= j1) {
                jjb = b_block[(j1 * n + j2) * n + j];
                if (j1 == j) f = (j2 == j) ? 3.0 : 2.0;
              } else if (j >= j2) {
                jjb = b_block[(j * n + j2) * n + j1];
                if (j2 == j) f = 2.0;
              } else {
                jjb = b_block[(j2 * n + j) * n + j1];
              }
              if (j1 > j) f *= (j1 + 1) / (j + 1.0);
              if (jjb < 0) throw std::logic_error("snap: no bispectrum component for a Z element");
              z.jjb = jjb;
              z.bfac = f;
              idxz.push_back(z);
            }
        }
    idxz_max = int(idxz.size());
    for (IdxB& b : idxb) b.jjz = z_block[(b.j1 * n + b.j2) * n + b.j];
  }

  Tables view() const {
    Tables t;
    t.twojmax = twojmax_;
    t.idxu_max = idxu_max;
    t.idxuh_max = idxuh_max;
    t.idxz_max = idxz_max;
    t.idxb_max = idxb_max;
    t.idxcg_max = idxcg_max;
    t.idxu_block = idxu_block.data();
    t.idxuh_block = idxuh_block.data();
    t.idxz = idxz.data();
    t.idxb = idxb.data();
    t.cglist = cglist.data();
    t.rootpq = rootpq.data();
    t.uh_weight = uh_weight.data();
    t.utot_init = utot_init.data();
    return t;
  }

  int twojmax() const { return twojmax_; }

  int idxu_max = 0, idxuh_max = 0, idxz_max = 0, idxb_max = 0, idxcg_max = 0;
  std::vector<int> idxu_block, idxuh_block;
  std::vector<IdxZ> idxz;
  std::vector<IdxB> idxb;
  std::vector<double> cglist, rootpq, uh_weight, utot_init;
  // Host-only lookups, [(j1*(twojmax+1) + j2)*(twojmax+1) + j], -1 where none.
  std::vector<int> cg_block, b_block, z_block;

 private:
  int twojmax_;
};

}  // namespace snap

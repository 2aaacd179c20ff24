// SNAP (Thompson et al., J. Comput. Phys. 285 (2015) 316-330) in the structure
// of the TestSNAP proxy: the per-work-item functions that a kernel body calls.
//
// Everything here is device-callable (PM_HD, OpenMP declare target): plain
// structs and raw pointers, no allocation, no std containers. The index tables
// they read (Tables) are built once on the host (tables.hpp) and copied to the
// device as they are. The serial float64 reference (reference.hpp) is written
// with these same functions; docs/testsnap.md documents the data layout.
//
// Notation. Angular momenta are doubled integers: j = 2J in 0..twojmax, and
// m indices run ma, mb = 0..j (m = ma - j/2). A neighbour at r = (x, y, z),
// |r| < rcut, maps to a point on the 3-sphere with polar angle
// theta0 = rfac0 * pi * (r - rmin0) / (rcut - rmin0); its Cayley-Klein
// parameters are a = (z0 - i z) / r0, b = (y - i x) / r0 with z0 = r cot(theta0),
// r0 = sqrt(r^2 + z0^2). The hyperspherical harmonics U^j[mb][ma] (Wigner
// matrices of that rotation) follow layer by layer from U^{j-1}:
//   U^j[mb][ma] = sqrt((j-ma)/(j-mb)) conj(a) U^{j-1}[mb][ma]
//               - sqrt(ma/(j-mb))     conj(b) U^{j-1}[mb][ma-1]
// for rows 2*mb <= j; the other rows follow from the symmetry
//   U^j[j-mb][j-ma] = (-1)^(ma-mb) conj(U^j[mb][ma]).
// The density of atom i is Utot^j = wself I + sum_neighbours fc(r) wj U^j(r).
// Z^j_{j1 j2} = (Utot^{j1} x Utot^{j2}) coupled to j with Clebsch-Gordan
// coefficients, B_{j1 j2 j} = sum_{ma,mb} Re(conj(Utot^j) Z^j_{j1 j2}), the
// energy E_i = beta_0 + sum_k beta_k B_k. Forces use the adjoint Y^j =
// dE_i/dUtot^j (a beta-weighted sum of Z's, compute_yi), so that
// dE_i/dr_ij = 2 sum_{half of j,ma,mb} Re(conj(dU^j/dr_ij) Y^j) (compute_deidrj).
#pragma once

#include <cmath>

#ifndef PM_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PM_HD __host__ __device__
#else
#define PM_HD
#endif
#endif

#if defined(_OPENMP) && !defined(__CUDACC__)
#pragma omp declare target
#endif

namespace snap {

constexpr double kPi = 3.14159265358979323846;

// A complex number as two doubles (16 bytes, as Kokkos::complex<double>).
struct cplx {
  double re, im;
};

// The potential's parameters (LAMMPS .snapparam names). One element:
// rcut = rcutfac * (radelem + radelem).
struct Params {
  int twojmax;
  double rcutfac, rfac0, rmin0, radelem, wj, wself;
  int switchflag;
  PM_HD double rcut() const { return rcutfac * 2.0 * radelem; }
};

// One Z element, TestSNAP's idxz: Z^j_{j1 j2}[mb][ma] for 2*mb <= j, a double
// sum over mb1 (nb terms, from mb1min with mb2 = mb2max descending) and ma1
// (na terms, from ma1min with ma2 = ma2max descending). cg is the offset of the
// (j1, j2, j) block in cglist (entries m1*(j2+1)+m2); jju the full U index of
// (j, mb, ma), jjuh its index in the half (Y, dU) layout; jjb the bispectrum
// component whose coefficient weights this Z in Y, bfac that weight's factor.
struct IdxZ {
  int j1, j2, j, ma1min, ma2max, na, mb1min, mb2max, nb;
  int cg, jju, jjuh, jjb;
  double bfac;
};

// One bispectrum component B_{j1 j2 j} (j2 <= j1 <= j); jjz is the first Z
// element of the (j1, j2, j) block.
struct IdxB {
  int j1, j2, j, jjz;
};

// The index tables, as pointers into host or device copies (tables.hpp).
//   idxu_block[j]  start of layer j in the full U layout: (j+1)^2 entries,
//                  row-major [mb][ma]; idxu_max entries in all.
//   idxuh_block[j] start of layer j in the half layout: rows 2*mb <= j only,
//                  (j/2+1)*(j+1) entries [mb][ma]; idxuh_max in all.
//   uh_weight[jjuh] weight of a half-layout entry in sum over the full layer
//                  of Re(conj(U) V) for U, V with the U symmetry: 2 for rows
//                  2*mb < j, and in the middle row (j even, mb = j/2) 2 for
//                  ma < mb, 1 for ma = mb, 0 for ma > mb.
//   utot_init[jju] wself on the diagonal (ma == mb), else 0.
//   rootpq[p*(twojmax+1)+q] = sqrt(p/q).
struct Tables {
  int twojmax, idxu_max, idxuh_max, idxz_max, idxb_max, idxcg_max;
  const int* idxu_block;
  const int* idxuh_block;
  const IdxZ* idxz;
  const IdxB* idxb;
  const double* cglist;
  const double* rootpq;
  const double* uh_weight;
  const double* utot_init;
};

// What a kernel sees of one SNAP system (host or device pointers): the
// potential, the tables, the neighbour list (problem.hpp's layout: pair
// p = i*nnbor + n, rij[3p..3p+2] = x_j - x_i, jatom[p] = j or -1 for an empty
// slot) and the coefficients beta[0] (constant), beta[1..idxb_max].
struct System {
  Params p;
  Tables t;
  int natoms, nnbor;
  const double* rij;
  const int* jatom;
  const double* beta;
};

PM_HD inline double rootpq(const Tables& t, int p, int q) { return t.rootpq[p * (t.twojmax + 1) + q]; }

// Elements of layer j that the recursion computes: rows 2*mb <= j.
PM_HD inline int layer_half_size(int j) { return (j / 2 + 1) * (j + 1); }
// Entries of a full layer j, and a scratch layer buffer for twojmax.
PM_HD inline int layer_size(int j) { return (j + 1) * (j + 1); }

// Smooth cutoff fc(r) and its derivative (switchflag 1: cosine switch).
PM_HD inline double sfac(const Params& p, double r) {
  if (p.switchflag == 0) return 1.0;
  if (r <= p.rmin0) return 1.0;
  const double rcut = p.rcut();
  if (r > rcut) return 0.0;
  const double s = kPi / (rcut - p.rmin0);
  return 0.5 * (std::cos((r - p.rmin0) * s) + 1.0);
}
PM_HD inline double dsfac(const Params& p, double r) {
  if (p.switchflag == 0) return 0.0;
  if (r <= p.rmin0) return 0.0;
  const double rcut = p.rcut();
  if (r > rcut) return 0.0;
  const double s = kPi / (rcut - p.rmin0);
  return -0.5 * std::sin((r - p.rmin0) * s) * s;
}

// Cayley-Klein parameters of one neighbour and its weight wj*fc(r): what
// compute_ui needs per (atom, neighbour).
struct CK {
  double a_r, a_i, b_r, b_i, sfac;
};

// The results are written through c (in a kernel: the team's scratch), not
// returned: LLVM before 18 turns a returned struct into a device-heap
// allocation per call (malloc and free in every thread; docs/testsnap.md).
PM_HD inline void cayley_klein(const Params& p, double x, double y, double z, CK& c) {
  const double r = std::sqrt(x * x + y * y + z * z);
  const double rscale0 = p.rfac0 * kPi / (p.rcut() - p.rmin0);
  const double theta0 = (r - p.rmin0) * rscale0;
  const double z0 = r / std::tan(theta0);
  const double r0inv = 1.0 / std::sqrt(r * r + z0 * z0);
  c.a_r = r0inv * z0;
  c.a_i = -r0inv * z;
  c.b_r = r0inv * y;
  c.b_i = -r0inv * x;
  c.sfac = p.wj * sfac(p, r);
}

// The same with the derivatives of a and b along x, y, z, the unit vector and
// d(wj fc)/dr: what compute_duarray needs per (atom, neighbour).
struct CKD {
  double a_r, a_i, b_r, b_i;
  double da_r[3], da_i[3], db_r[3], db_i[3];
  double u[3];
  double sfac, dsfac;
};

PM_HD inline void cayley_klein_d(const Params& p, double x, double y, double z, CKD& c) {
  const double rsq = x * x + y * y + z * z;
  const double r = std::sqrt(rsq);
  const double rscale0 = p.rfac0 * kPi / (p.rcut() - p.rmin0);
  const double theta0 = (r - p.rmin0) * rscale0;
  const double z0 = r / std::tan(theta0);
  // z0 = r cot(theta0): dz0/dr = cot(theta0) - r rscale0 / sin^2(theta0).
  const double dz0dr = z0 / r - (r * rscale0) * (rsq + z0 * z0) / rsq;
  const double r0inv = 1.0 / std::sqrt(rsq + z0 * z0);
  const double dr0invdr = -r0inv * r0inv * r0inv * (r + z0 * dz0dr);
  c.a_r = r0inv * z0;
  c.a_i = -r0inv * z;
  c.b_r = r0inv * y;
  c.b_i = -r0inv * x;
  const double rinv = 1.0 / r;
  c.u[0] = x * rinv;
  c.u[1] = y * rinv;
  c.u[2] = z * rinv;
  for (int k = 0; k < 3; ++k) {
    const double dr0inv = dr0invdr * c.u[k];
    const double dz0 = dz0dr * c.u[k];
    c.da_r[k] = dz0 * r0inv + z0 * dr0inv;
    c.da_i[k] = -z * dr0inv;
    c.db_r[k] = y * dr0inv;
    c.db_i[k] = -x * dr0inv;
  }
  c.da_i[2] += -r0inv;
  c.db_i[0] += -r0inv;
  c.db_r[1] += r0inv;
  c.sfac = p.wj * sfac(p, r);
  c.dsfac = p.wj * dsfac(p, r);
}

// conj(a) * u and its pieces.
PM_HD inline cplx conj_mul(double a_r, double a_i, cplx u) {
  return cplx{a_r * u.re + a_i * u.im, a_r * u.im - a_i * u.re};
}

// Result of one ui work item: the U element jju (and its mirror jjm, or -1),
// to be added times CK::sfac into Utot (atomically where atoms are shared).
struct UElem {
  int jju, jjm;
  cplx v, vm;
};

// compute_ui work item: element e (0 <= e < layer_half_size(j); mb = e/(j+1),
// ma = e%(j+1)) of layer j of one neighbour's U, from layer j-1 in prev (row
// length j). Writes the element and its mirror into cur (row length j+1).
// Layer j needs all of layer j-1: a team barrier between layers.
PM_HD inline UElem ui_element(const Tables& t, const CK& c, int j, int e, const cplx* prev, cplx* cur) {
  UElem o;
  o.jjm = -1;
  o.vm = cplx{0.0, 0.0};
  if (j == 0) {
    cur[0] = cplx{1.0, 0.0};
    o.jju = 0;
    o.v = cur[0];
    return o;
  }
  const int mb = e / (j + 1), ma = e % (j + 1);
  cplx u{0.0, 0.0};
  if (ma < j) {
    const double rp = rootpq(t, j - ma, j - mb);
    const cplx w = conj_mul(c.a_r, c.a_i, prev[mb * j + ma]);
    u.re += rp * w.re;
    u.im += rp * w.im;
  }
  if (ma > 0) {
    const double rp = rootpq(t, ma, j - mb);
    const cplx w = conj_mul(c.b_r, c.b_i, prev[mb * j + ma - 1]);
    u.re -= rp * w.re;
    u.im -= rp * w.im;
  }
  cur[e] = u;
  o.jju = t.idxu_block[j] + e;
  o.v = u;
  if (2 * mb < j) {
    const double s = ((ma - mb) & 1) ? -1.0 : 1.0;
    const int m = (j - mb) * (j + 1) + (j - ma);
    cur[m] = cplx{s * u.re, -s * u.im};
    o.jjm = t.idxu_block[j] + m;
    o.vm = cur[m];
  }
  return o;
}

// Z^j_{j1 j2}[mb][ma] of element jjz from one atom's Utot (entry jju at
// utot[jju * stride]). compute_yi's inner work and the bispectrum's.
PM_HD inline cplx zi_element(const Tables& t, int jjz, const cplx* utot, long stride) {
  const IdxZ& z = t.idxz[jjz];
  const double* cg = t.cglist + z.cg;
  int jju1 = t.idxu_block[z.j1] + (z.j1 + 1) * z.mb1min;
  int jju2 = t.idxu_block[z.j2] + (z.j2 + 1) * z.mb2max;
  int icgb = z.mb1min * (z.j2 + 1) + z.mb2max;
  cplx sum{0.0, 0.0};
  for (int ib = 0; ib < z.nb; ++ib) {
    double sa_r = 0.0, sa_i = 0.0;
    int ma1 = z.ma1min, ma2 = z.ma2max;
    int icga = z.ma1min * (z.j2 + 1) + z.ma2max;
    for (int ia = 0; ia < z.na; ++ia) {
      const cplx u1 = utot[(long)(jju1 + ma1) * stride];
      const cplx u2 = utot[(long)(jju2 + ma2) * stride];
      sa_r += cg[icga] * (u1.re * u2.re - u1.im * u2.im);
      sa_i += cg[icga] * (u1.re * u2.im + u1.im * u2.re);
      ++ma1;
      --ma2;
      icga += z.j2;
    }
    sum.re += cg[icgb] * sa_r;
    sum.im += cg[icgb] * sa_i;
    jju1 += z.j1 + 1;
    jju2 -= z.j2 + 1;
    icgb += z.j2;
  }
  return sum;
}

// Result of one yi work item: add v into Y at half index jjuh (atomically:
// several Z elements land on one Y entry).
struct YElem {
  int jjuh;
  cplx v;
};

// compute_yi work item (atom, jjz): beta holds the bispectrum coefficients
// beta_1.. (without the constant beta_0).
PM_HD inline YElem yi_element(const Tables& t, int jjz, const cplx* utot, long stride, const double* beta) {
  const IdxZ& z = t.idxz[jjz];
  const cplx zz = zi_element(t, jjz, utot, stride);
  const double b = z.bfac * beta[z.jjb];
  return YElem{z.jjuh, cplx{b * zz.re, b * zz.im}};
}

// Bispectrum component jjb of one atom: sum over the Z block of the U
// symmetry-weighted Re(conj(Utot) Z).
PM_HD inline double bi_element(const Tables& t, int jjb, const cplx* utot, long stride) {
  const IdxB& b = t.idxb[jjb];
  const int n = layer_half_size(b.j);
  double sum = 0.0;
  for (int e = 0; e < n; ++e) {
    const double w = t.uh_weight[t.idxuh_block[b.j] + e];
    if (w == 0.0) continue;
    const cplx u = utot[(long)(t.idxu_block[b.j] + e) * stride];
    const cplx z = zi_element(t, b.jjz + e, utot, stride);
    sum += w * (u.re * z.re + u.im * z.im);
  }
  return sum;
}

// Result of one duarray work item: wj d(fc U^j[mb][ma])/dr_k at half index
// jjuh, k = x, y, z.
struct DUElem {
  int jjuh;
  cplx du[3];
};

// compute_duarray work item: element e of layer j of one neighbour's U and
// dU/dr, from layer j-1 (uprev, duprev with component k at duprev[k*ls + i],
// row length j), written with their mirrors into ucur, ducur (row length j+1).
// ls is the component stride of the du layer buffers (>= layer_size(twojmax)).
PM_HD inline DUElem du_element(const Tables& t, const CKD& c, int j, int e, const cplx* uprev, const cplx* duprev,
                               cplx* ucur, cplx* ducur, int ls) {
  DUElem o;
  o.jjuh = t.idxuh_block[j] + e;
  cplx u{0.0, 0.0};
  cplx du[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
  if (j == 0) {
    u = cplx{1.0, 0.0};
  } else {
    const int mb = e / (j + 1), ma = e % (j + 1);
    if (ma < j) {
      const double rp = rootpq(t, j - ma, j - mb);
      const int i = mb * j + ma;
      const cplx up = uprev[i];
      const cplx w = conj_mul(c.a_r, c.a_i, up);
      u.re += rp * w.re;
      u.im += rp * w.im;
      for (int k = 0; k < 3; ++k) {
        const cplx d1 = conj_mul(c.da_r[k], c.da_i[k], up);
        const cplx d2 = conj_mul(c.a_r, c.a_i, duprev[k * ls + i]);
        du[k].re += rp * (d1.re + d2.re);
        du[k].im += rp * (d1.im + d2.im);
      }
    }
    if (ma > 0) {
      const double rp = rootpq(t, ma, j - mb);
      const int i = mb * j + ma - 1;
      const cplx up = uprev[i];
      const cplx w = conj_mul(c.b_r, c.b_i, up);
      u.re -= rp * w.re;
      u.im -= rp * w.im;
      for (int k = 0; k < 3; ++k) {
        const cplx d1 = conj_mul(c.db_r[k], c.db_i[k], up);
        const cplx d2 = conj_mul(c.b_r, c.b_i, duprev[k * ls + i]);
        du[k].re -= rp * (d1.re + d2.re);
        du[k].im -= rp * (d1.im + d2.im);
      }
    }
    if (2 * mb < j) {
      const double s = ((ma - mb) & 1) ? -1.0 : 1.0;
      const int m = (j - mb) * (j + 1) + (j - ma);
      ucur[m] = cplx{s * u.re, -s * u.im};
      for (int k = 0; k < 3; ++k) ducur[k * ls + m] = cplx{s * du[k].re, -s * du[k].im};
    }
  }
  ucur[e] = u;
  for (int k = 0; k < 3; ++k) {
    ducur[k * ls + e] = du[k];
    // d(wj fc U)/dr_k = wj fc' u_k U + wj fc dU/dr_k
    o.du[k].re = c.dsfac * u.re * c.u[k] + c.sfac * du[k].re;
    o.du[k].im = c.dsfac * u.im * c.u[k] + c.sfac * du[k].im;
  }
  return o;
}

// One term of compute_deidrj: the contribution of half entry jjuh to
// dE_i/dr_ij (k = x, y, z). dU at du[(jjuh*3 + k) * dstride], Y at
// y[jjuh * ystride].
PM_HD inline void deidrj_term(const Tables& t, int jjuh, const cplx* du, long dstride, const cplx* y, long ystride,
                              double dedr[3]) {
  const double w = t.uh_weight[jjuh];
  const cplx yy = y[(long)jjuh * ystride];
  for (int k = 0; k < 3; ++k) {
    const cplx d = du[(long)(jjuh * 3 + k) * dstride];
    dedr[k] += w * (d.re * yy.re + d.im * yy.im);
  }
}

// TestSNAP's fused duarray + deidrj (no dulist in memory): the contribution
// of one du_element result to dE_i/dr_ij, with Y at y[jjuh * ystride].
PM_HD inline void fused_dedr_term(const Tables& t, const DUElem& o, const cplx* y, long ystride, double dedr[3]) {
  const double w = t.uh_weight[o.jjuh];
  const cplx yy = y[(long)o.jjuh * ystride];
  for (int k = 0; k < 3; ++k) dedr[k] += w * (o.du[k].re * yy.re + o.du[k].im * yy.im);
}

// compute_deidrj work item (atom i, neighbour j): dE_i/dr_ij, r_ij = x_j - x_i.
// The force on i gains +dedr, the force on j -dedr.
PM_HD inline void deidrj(const Tables& t, const cplx* du, long dstride, const cplx* y, long ystride, double dedr[3]) {
  dedr[0] = dedr[1] = dedr[2] = 0.0;
  for (int jjuh = 0; jjuh < t.idxuh_max; ++jjuh) deidrj_term(t, jjuh, du, dstride, y, ystride, dedr);
}

}  // namespace snap

#if defined(_OPENMP) && !defined(__CUDACC__)
#pragma omp end declare target
#endif

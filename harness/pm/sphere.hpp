// HOMMEXX's element geometry and its sphere operators' float64 references
// (paper 004's application; docs/hommexx.md). Host code only: the geometry
// fills input arrays (init: {sphere: <field>}), the references run on the
// host copies.
//
// Layouts are HOMMEXX's (components/homme/src/share/cxx/SphereOperators.hpp
// in E3SM), levels fastest, with NUM_LEV plain doubles (a GPU build's
// VECTOR_SIZE = 1):
//   dvv                 [NP][NP]              dvv[j][k] = l_k'(x_j) on [-1, 1]
//   d, dinv             [elem][2][2][NP][NP]  d[r][c]: component c (east,
//                                             north) of the tangent along
//                                             reference direction r (x, y)
//   metdet, spheremp    [elem][NP][NP]
//   scalar fields       [elem][NP][NP][NUM_LEV]
//   vector fields       [elem][2][NP][NP][NUM_LEV]
// A point (i, j) of an element is row i (y) and column j (x): d/dx sums
// dvv[j][k] * f[i][k], d/dy sums dvv[i][k] * f[k][j], as HOMMEXX does.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace pm::sphere {

constexpr int kNp = 4;  // HOMMEXX's NP: "fixed at 4 by the application scientists" (004)

// Gauss-Lobatto-Legendre nodes and weights of kNp points on [-1, 1]: the
// ends and the roots of P'_{n}, n = kNp - 1 (Newton from Chebyshev-Lobatto
// guesses), weights 2 / (n (n + 1) P_n(x)^2).
struct Gll {
  std::array<double, kNp> x, w, pn;  // pn: P_n at the nodes
};

inline void legendre(int n, double x, double* p, double* dp) {  // P_n(x) and P_n'(x)
  double p0 = 1, p1 = x;
  for (int k = 2; k <= n; ++k) {
    const double pk = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
    p0 = p1;
    p1 = pk;
  }
  *p = n == 0 ? 1 : p1;
  *dp = n == 0 ? 0 : n * (x * p1 - p0) / (x * x - 1);  // interior points only
}

inline Gll gll() {
  const int n = kNp - 1;
  Gll g;
  for (int i = 0; i < kNp; ++i) {
    double x = -std::cos(M_PI * i / n);
    if (i > 0 && i < n) {
      for (int it = 0; it < 100; ++it) {  // Newton on q = (1 - x^2) P_n'(x) = n (P_{n-1} - x P_n)
        double p, dp, pm1, dpm1;
        legendre(n, x, &p, &dp);
        legendre(n - 1, x, &pm1, &dpm1);
        const double q = n * (pm1 - x * p);
        const double dq = -n * (n + 1) * p;  // d/dx[(1 - x^2) P_n'] = -n (n + 1) P_n
        const double step = q / dq;
        x -= step;
        if (std::fabs(step) < 1e-16) break;
      }
    }
    double p, dp;
    legendre(n, x, &p, &dp);
    g.x[i] = x;
    g.pn[i] = p;
    g.w[i] = 2.0 / (n * (n + 1) * p * p);
  }
  return g;
}

// dvv[j][k] = l_k'(x_j), the GLL differentiation matrix.
inline std::array<double, kNp * kNp> dvv() {
  const Gll g = gll();
  const int n = kNp - 1;
  std::array<double, kNp * kNp> d{};
  for (int j = 0; j < kNp; ++j)
    for (int k = 0; k < kNp; ++k) {
      if (j != k)
        d[j * kNp + k] = g.pn[j] / (g.pn[k] * (g.x[j] - g.x[k]));
      else if (j == 0)
        d[j * kNp + k] = -n * (n + 1) / 4.0;
      else if (j == n)
        d[j * kNp + k] = n * (n + 1) / 4.0;
    }
  return d;
}

using Vec3 = std::array<double, 3>;

// The metric terms of one point: d[r][c], its inverse, |det d|, and the
// point on the unit sphere (for checks).
struct Metric {
  double d[2][2], dinv[2][2], det;
  Vec3 p;
};

inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// Element e of an equiangular cubed sphere with ne x ne elements per face,
// ne the smallest with 6 ne^2 >= num_elem (the first num_elem elements, face
// by face). The cube is turned by a fixed rotation so that no GLL point is a
// pole, where east and north are undefined (HOMME treats the poles apart).
inline Metric metric(int64_t num_elem, int64_t e, int i, int j) {
  static const Vec3 normal[6] = {{1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  static const Vec3 xaxis[6] = {{0, 1, 0}, {-1, 0, 0}, {0, -1, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}};
  static const Vec3 yaxis[6] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {-1, 0, 0}, {1, 0, 0}};  // x cross y = normal
  int64_t ne = 1;
  while (6 * ne * ne < num_elem) ++ne;
  const int face = static_cast<int>(e / (ne * ne));
  const int64_t ex = e % (ne * ne) % ne, ey = e % (ne * ne) / ne;
  const double width = M_PI / 2 / ne;  // of an element, in the face's angles
  const Gll g = gll();
  const double alpha = -M_PI / 4 + width * (ex + (1 + g.x[j]) / 2);
  const double beta = -M_PI / 4 + width * (ey + (1 + g.x[i]) / 2);
  const double X = std::tan(alpha), Y = std::tan(beta);
  Vec3 q;
  for (int c = 0; c < 3; ++c) q[c] = normal[face][c] + X * xaxis[face][c] + Y * yaxis[face][c];
  const double len = std::sqrt(dot(q, q));
  Vec3 p;
  for (int c = 0; c < 3; ++c) p[c] = q[c] / len;
  // Tangents d p / d(reference coordinate): (axis - p (p . axis)) / |q|,
  // times d tan / d angle = 1 + tan^2, times d angle / d ref = width / 2.
  Vec3 t[2];
  const double sx = (1 + X * X) * width / 2 / len, sy = (1 + Y * Y) * width / 2 / len;
  const double px = dot(p, xaxis[face]), py = dot(p, yaxis[face]);
  for (int c = 0; c < 3; ++c) {
    t[0][c] = (xaxis[face][c] - p[c] * px) * sx;
    t[1][c] = (yaxis[face][c] - p[c] * py) * sy;
  }
  // The fixed rotation: 0.3 rad about x, then 0.2 rad about y.
  const auto turn = [](Vec3 v) {
    const double a = 0.3, b = 0.2;
    const Vec3 u = {v[0], std::cos(a) * v[1] - std::sin(a) * v[2], std::sin(a) * v[1] + std::cos(a) * v[2]};
    return Vec3{std::cos(b) * u[0] + std::sin(b) * u[2], u[1], -std::sin(b) * u[0] + std::cos(b) * u[2]};
  };
  p = turn(p);
  t[0] = turn(t[0]);
  t[1] = turn(t[1]);
  Vec3 east = cross(Vec3{0, 0, 1}, p);
  const double el = std::sqrt(dot(east, east));
  for (double& c : east) c /= el;
  const Vec3 north = cross(p, east);
  Metric m;
  for (int r = 0; r < 2; ++r) {
    m.d[r][0] = dot(t[r], east);
    m.d[r][1] = dot(t[r], north);
  }
  const double det = m.d[0][0] * m.d[1][1] - m.d[0][1] * m.d[1][0];
  m.dinv[0][0] = m.d[1][1] / det;
  m.dinv[0][1] = -m.d[0][1] / det;
  m.dinv[1][0] = -m.d[1][0] / det;
  m.dinv[1][1] = m.d[0][0] / det;
  m.det = std::fabs(det);
  m.p = p;
  return m;
}

[[noreturn]] inline void fail(const char* what, const char* field, int64_t n) {
  std::fprintf(stderr, "pm::sphere::field(\"%s\", %lld): %s\n", field, static_cast<long long>(n), what);
  std::exit(2);
}

// The values of a geometry field for an array of n elements; the number of
// mesh elements follows from n and the field's layout.
inline std::vector<double> field(const char* name, int64_t n) {
  const bool tensor = !std::strcmp(name, "d") || !std::strcmp(name, "dinv") || !std::strcmp(name, "metinv");
  const bool scalar = !std::strcmp(name, "metdet") || !std::strcmp(name, "rmetdet") || !std::strcmp(name, "spheremp");
  std::vector<double> v(static_cast<size_t>(n));
  if (!std::strcmp(name, "dvv")) {
    if (n != kNp * kNp) fail("dvv has NP * NP entries", name, n);
    const auto d = dvv();
    std::copy(d.begin(), d.end(), v.begin());
    return v;
  }
  if (!std::strcmp(name, "mp")) {  // the reference element's mass: w_i w_j
    if (n != kNp * kNp) fail("mp has NP * NP entries", name, n);
    const Gll g = gll();
    for (int i = 0; i < kNp; ++i)
      for (int j = 0; j < kNp; ++j) v[i * kNp + j] = g.w[i] * g.w[j];
    return v;
  }
  if (!tensor && !scalar) fail("unknown field", name, n);
  const int64_t per = tensor ? 4 * kNp * kNp : kNp * kNp;
  if (n % per) fail(tensor ? "not a multiple of 2 * 2 * NP * NP" : "not a multiple of NP * NP", name, n);
  const int64_t num_elem = n / per;
  const Gll g = gll();
  for (int64_t e = 0; e < num_elem; ++e)
    for (int i = 0; i < kNp; ++i)
      for (int j = 0; j < kNp; ++j) {
        const Metric m = metric(num_elem, e, i, j);
        const int64_t p = i * kNp + j;
        if (!std::strcmp(name, "metinv")) {
          // the inverse of the metric g_rs = d_r . d_s: dinv^T dinv (symmetric)
          for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 2; ++c)
              v[e * per + (r * 2 + c) * kNp * kNp + p] = m.dinv[0][r] * m.dinv[0][c] + m.dinv[1][r] * m.dinv[1][c];
        } else if (tensor) {
          const double(&t)[2][2] = name[1] ? m.dinv : m.d;
          for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 2; ++c) v[e * per + (r * 2 + c) * kNp * kNp + p] = t[r][c];
        } else if (!std::strcmp(name, "metdet")) {
          v[e * per + p] = m.det;
        } else if (!std::strcmp(name, "rmetdet")) {
          v[e * per + p] = 1.0 / m.det;
        } else {
          v[e * per + p] = g.w[i] * g.w[j] * m.det;
        }
      }
  return v;
}

// The float64 references: the operators' formulas as plain loops, the
// summation order HOMMEXX's (over k, then the products' terms).
namespace ref {

inline int64_t at(int64_t e, int i, int j, int64_t k, int64_t nlev) { return ((e * kNp + i) * kNp + j) * nlev + k; }
inline int64_t vat(int64_t e, int c, int i, int j, int64_t k, int64_t nlev) {
  return (((e * 2 + c) * kNp + i) * kNp + j) * nlev + k;
}
inline int64_t mat(int64_t e, int r, int c, int i, int j) { return (((e * 2 + r) * 2 + c) * kNp + i) * kNp + j; }
inline int64_t pat(int64_t e, int i, int j) { return (e * kNp + i) * kNp + j; }

// grad = dinv (rrearth d/dx, rrearth d/dy) of a scalar field.
inline void gradient_sphere(int64_t num_elem, int64_t nlev, const double* dvv, const double* dinv, double rrearth,
                            const double* s, double* grad) {
  for (int64_t e = 0; e < num_elem; ++e)
    for (int i = 0; i < kNp; ++i)
      for (int j = 0; j < kNp; ++j)
        for (int64_t k = 0; k < nlev; ++k) {
          double dx = 0, dy = 0;
          for (int l = 0; l < kNp; ++l) {
            dx += dvv[j * kNp + l] * s[at(e, i, l, k, nlev)];
            dy += dvv[i * kNp + l] * s[at(e, l, j, k, nlev)];
          }
          dx *= rrearth;
          dy *= rrearth;
          for (int h = 0; h < 2; ++h)
            grad[vat(e, h, i, j, k, nlev)] = dinv[mat(e, h, 0, i, j)] * dx + dinv[mat(e, h, 1, i, j)] * dy;
        }
}

// div = (d/dx gv0 + d/dy gv1) rrearth / metdet, gv = metdet dinv^T v (the
// contravariant components times metdet).
inline void divergence_sphere(int64_t num_elem, int64_t nlev, const double* dvv, const double* dinv,
                              const double* metdet, double rrearth, const double* v, double* div) {
  std::vector<double> gv(2 * kNp * kNp);
  for (int64_t e = 0; e < num_elem; ++e)
    for (int64_t k = 0; k < nlev; ++k) {
      for (int i = 0; i < kNp; ++i)
        for (int j = 0; j < kNp; ++j) {
          const double v0 = v[vat(e, 0, i, j, k, nlev)], v1 = v[vat(e, 1, i, j, k, nlev)];
          for (int c = 0; c < 2; ++c)
            gv[(c * kNp + i) * kNp + j] = (dinv[mat(e, 0, c, i, j)] * v0 + dinv[mat(e, 1, c, i, j)] * v1) * metdet[pat(e, i, j)];
        }
      for (int i = 0; i < kNp; ++i)
        for (int j = 0; j < kNp; ++j) {
          double dudx = 0, dvdy = 0;
          for (int l = 0; l < kNp; ++l) {
            dudx += dvv[j * kNp + l] * gv[(0 * kNp + i) * kNp + l];
            dvdy += dvv[i * kNp + l] * gv[(1 * kNp + l) * kNp + j];
          }
          div[at(e, i, j, k, nlev)] = (dudx + dvdy) * (1.0 / metdet[pat(e, i, j)] * rrearth);
        }
    }
}

// vort = (d/dx vcov1 - d/dy vcov0) rrearth / metdet, vcov = d v (the
// covariant components).
inline void vorticity_sphere(int64_t num_elem, int64_t nlev, const double* dvv, const double* d, const double* metdet,
                             double rrearth, const double* v, double* vort) {
  std::vector<double> vcov(2 * kNp * kNp);
  for (int64_t e = 0; e < num_elem; ++e)
    for (int64_t k = 0; k < nlev; ++k) {
      for (int i = 0; i < kNp; ++i)
        for (int j = 0; j < kNp; ++j) {
          const double v0 = v[vat(e, 0, i, j, k, nlev)], v1 = v[vat(e, 1, i, j, k, nlev)];
          for (int r = 0; r < 2; ++r) vcov[(r * kNp + i) * kNp + j] = d[mat(e, r, 0, i, j)] * v0 + d[mat(e, r, 1, i, j)] * v1;
        }
      for (int i = 0; i < kNp; ++i)
        for (int j = 0; j < kNp; ++j) {
          double dudy = 0, dvdx = 0;
          for (int l = 0; l < kNp; ++l) {
            dvdx += dvv[j * kNp + l] * vcov[(1 * kNp + i) * kNp + l];
            dudy += dvv[i * kNp + l] * vcov[(0 * kNp + l) * kNp + j];
          }
          vort[at(e, i, j, k, nlev)] = (dvdx - dudy) * (1.0 / metdet[pat(e, i, j)] * rrearth);
        }
    }
}

// HOMMEXX's laplace_simple: divergence_sphere_wk(gradient_sphere(f)), the
// weak divergence -sum_l (spheremp dvv^T) of the gradient's contravariant
// components (dinv^T grad), times rrearth.
inline void laplace_simple(int64_t num_elem, int64_t nlev, const double* dvv, const double* dinv, const double* spheremp,
                           double rrearth, const double* f, double* lap) {
  std::vector<double> grad(static_cast<size_t>(2 * kNp * kNp * nlev)), c(2 * kNp * kNp);
  for (int64_t e = 0; e < num_elem; ++e) {
    gradient_sphere(1, nlev, dvv, dinv + mat(e, 0, 0, 0, 0), rrearth, f + at(e, 0, 0, 0, nlev), grad.data());
    for (int64_t k = 0; k < nlev; ++k) {
      for (int i = 0; i < kNp; ++i)
        for (int j = 0; j < kNp; ++j) {
          const double g0 = grad[vat(0, 0, i, j, k, nlev)], g1 = grad[vat(0, 1, i, j, k, nlev)];
          for (int h = 0; h < 2; ++h)
            c[(h * kNp + i) * kNp + j] = dinv[mat(e, 0, h, i, j)] * g0 + dinv[mat(e, 1, h, i, j)] * g1;
        }
      for (int n = 0; n < kNp; ++n)
        for (int m = 0; m < kNp; ++m) {
          double dd = 0;
          for (int l = 0; l < kNp; ++l)
            dd -= (spheremp[pat(e, n, l)] * c[(0 * kNp + n) * kNp + l] * dvv[l * kNp + m] +
                   spheremp[pat(e, l, m)] * c[(1 * kNp + l) * kNp + m] * dvv[l * kNp + n]) *
                  rrearth;
          lap[at(e, n, m, k, nlev)] = dd;
        }
    }
  }
}

// HOMMEXX's vlaplace_sphere_wk_contra: the weak vector laplacian of a
// vector field (east, north), grad(div v) - curl(curl v) in weak form plus
// the term that keeps rigid rotation undamped, in HOMMEXX's order:
// div = divergence_sphere(v), times nu_ratio when nu_ratio > 0 and not 1;
// gcc = grad_sphere_wk_testcov(div); vort = vorticity_sphere(v);
// gcc -= curl_sphere_wk_testcov(vort) (curl_sphere_wk_testcov_update with
// alpha -1, beta 1); lap = 2 spheremp v rrearth^2 + gcc. mp is the
// reference element's mass (w_i w_j), metinv the inverse metric.
inline void vlaplace_wk_contra(int64_t num_elem, int64_t nlev, const double* dvv, const double* mp, const double* d,
                               const double* dinv, const double* metinv, const double* metdet,
                               const double* spheremp, double rrearth, double nu_ratio, const double* v,
                               double* lap) {
  const size_t n1 = static_cast<size_t>(kNp * kNp * nlev);
  std::vector<double> div(n1), vort(n1), gcc(2 * n1);
  const auto s = [&](int i, int j, int64_t k) { return (i * kNp + j) * nlev + k; };
  const auto w = [&](int c, int i, int j, int64_t k) { return ((c * kNp + i) * kNp + j) * nlev + k; };
  for (int64_t e = 0; e < num_elem; ++e) {
    const double* const ve = v + vat(e, 0, 0, 0, 0, nlev);
    divergence_sphere(1, nlev, dvv, dinv + mat(e, 0, 0, 0, 0), metdet + pat(e, 0, 0), rrearth, ve, div.data());
    if (nu_ratio > 0 && nu_ratio != 1.0)
      for (double& x : div) x *= nu_ratio;
    for (int n = 0; n < kNp; ++n)
      for (int m = 0; m < kNp; ++m)
        for (int64_t k = 0; k < nlev; ++k) {
          const double md = metdet[pat(e, n, m)];
          double b0 = 0, b1 = 0;
          for (int j = 0; j < kNp; ++j) {
            const double mpnj = mp[n * kNp + j], mpjm = mp[j * kNp + m];
            const double snj = div[s(n, j, k)], sjm = div[s(j, m, k)];
            const double djm = dvv[j * kNp + m], djn = dvv[j * kNp + n];
            b0 -= (mpnj * metinv[mat(e, 0, 0, n, m)] * md * snj * djm + mpjm * metinv[mat(e, 0, 1, n, m)] * md * sjm * djn);
            b1 -= (mpnj * metinv[mat(e, 1, 0, n, m)] * md * snj * djm + mpjm * metinv[mat(e, 1, 1, n, m)] * md * sjm * djn);
          }
          for (int c = 0; c < 2; ++c) gcc[w(c, n, m, k)] = (d[mat(e, 0, c, n, m)] * b0 + d[mat(e, 1, c, n, m)] * b1) * rrearth;
        }
    vorticity_sphere(1, nlev, dvv, d + mat(e, 0, 0, 0, 0), metdet + pat(e, 0, 0), rrearth, ve, vort.data());
    for (int n = 0; n < kNp; ++n)
      for (int m = 0; m < kNp; ++m)
        for (int64_t k = 0; k < nlev; ++k) {
          double sb0 = 0, sb1 = 0;
          for (int j = 0; j < kNp; ++j) {
            sb0 -= mp[j * kNp + m] * vort[s(j, m, k)] * dvv[j * kNp + n];
            sb1 += mp[n * kNp + j] * vort[s(n, j, k)] * dvv[j * kNp + m];
          }
          for (int c = 0; c < 2; ++c)
            gcc[w(c, n, m, k)] -= (d[mat(e, 0, c, n, m)] * sb0 + d[mat(e, 1, c, n, m)] * sb1) * rrearth;
        }
    const double re2 = rrearth * rrearth;
    for (int i = 0; i < kNp; ++i)
      for (int j = 0; j < kNp; ++j)
        for (int64_t k = 0; k < nlev; ++k)
          for (int c = 0; c < 2; ++c)
            lap[vat(e, c, i, j, k, nlev)] = 2.0 * spheremp[pat(e, i, j)] * ve[w(c, i, j, k)] * re2 + gcc[w(c, i, j, k)];
  }
}

}  // namespace ref
}  // namespace pm::sphere

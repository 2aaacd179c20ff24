// Checks of HOMMEXX's element geometry and operator references
// (harness/pm/sphere.hpp) against calculus on the unit sphere; run by
// internal/render's TestSphereGeometry. Prints "PASS|FAIL <check> value=..."
// lines.
#include <cmath>
#include <cstdio>
#include <vector>

#include "pm/sphere.hpp"

namespace s = pm::sphere;

static int failures = 0;
static void report(const char* check, double value, double bound) {
  const bool ok = value <= bound;
  failures += !ok;
  std::printf("%s %s value=%.3g bound=%.3g\n", ok ? "PASS" : "FAIL", check, value, bound);
}

int main() {
  constexpr int np = s::kNp;
  const auto dvv = s::dvv();
  // dvv differentiates polynomials of degree < NP exactly.
  const s::Gll g = s::gll();
  double poly = 0;
  for (int deg = 0; deg < np; ++deg)
    for (int j = 0; j < np; ++j) {
      double d = 0;
      for (int k = 0; k < np; ++k) d += dvv[j * np + k] * std::pow(g.x[k], deg);
      poly = std::fmax(poly, std::fabs(d - (deg ? deg * std::pow(g.x[j], deg - 1) : 0.0)));
    }
  report("dvv_polynomials", poly, 1e-13);
  report("gll_node", std::fabs(g.x[2] - 1 / std::sqrt(5.0)), 1e-15);

  // The elements of ne = 8 cover the sphere: spheremp sums to 4 pi; d dinv = I.
  const int64_t ne = 8, nelem = 6 * ne * ne, pts = nelem * np * np;
  const auto mp = s::field("spheremp", pts), d = s::field("d", 4 * pts), di = s::field("dinv", 4 * pts),
             det = s::field("metdet", pts);
  double area = 0, ident = 0, cond = 0;
  for (double w : mp) area += w;
  for (int64_t e = 0; e < nelem; ++e)
    for (int p = 0; p < np * np; ++p) {
      const auto at = [&](const std::vector<double>& t, int r, int c) { return t[(e * 4 + r * 2 + c) * np * np + p]; };
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          const double x = at(d, r, 0) * at(di, 0, c) + at(d, r, 1) * at(di, 1, c);
          ident = std::fmax(ident, std::fabs(x - (r == c)));
        }
      const double fro = std::sqrt(at(d, 0, 0) * at(d, 0, 0) + at(d, 0, 1) * at(d, 0, 1) + at(d, 1, 0) * at(d, 1, 0) +
                                   at(d, 1, 1) * at(d, 1, 1));
      cond = std::fmax(cond, fro * fro / (2 * det[e * np * np + p]));  // >= 1, 1 for a conformal square
    }
  report("area_4pi", std::fabs(area - 4 * M_PI) / (4 * M_PI), 1e-6);
  report("d_dinv_identity", ident, 1e-14);
  report("d_conditioning", cond, 2.0);

  // metinv is the inverse of the metric g_rs = d_r . d_s (metinv g = I);
  // mp, the reference element's mass, sums to 4 (the square [-1, 1]^2).
  const auto mi = s::field("metinv", 4 * pts), rmp = s::field("mp", np * np);
  double metid = 0, msum = 0;
  for (int64_t e = 0; e < nelem; ++e)
    for (int p = 0; p < np * np; ++p) {
      const auto at = [&](const std::vector<double>& t, int r, int c) { return t[(e * 4 + r * 2 + c) * np * np + p]; };
      const auto g = [&](int r, int c) { return at(d, r, 0) * at(d, c, 0) + at(d, r, 1) * at(d, c, 1); };
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          const double x = at(mi, r, 0) * g(0, c) + at(mi, r, 1) * g(1, c);
          metid = std::fmax(metid, std::fabs(x - (r == c)));
        }
    }
  for (double w : rmp) msum += w;
  report("metinv_metric_identity", metid, 1e-13);
  report("mp_sum_4", std::fabs(msum - 4), 1e-14);

  // f = z on the unit sphere: grad f = (0, cos lat) in (east, north),
  // div grad f = -2 z, vort grad f = 0 (exactly: d and dinv meet as the
  // operators expect); the weak laplacian sums to zero over the sphere (the
  // integral of a divergence). The errors of the degree-3 elements fall as
  // the elements shrink: about 8x (gradient) and 4x (divergence of it) from
  // ne = 8 to 16.
  double grad8 = 0, div8 = 0;
  for (const int64_t n : {8, 16}) {
    const int64_t elems = 6 * n * n, points = elems * np * np;
    const auto emp = s::field("spheremp", points), edi = s::field("dinv", 4 * points),
               ed = s::field("d", 4 * points), edet = s::field("metdet", points);
    std::vector<double> f(points), grad(2 * points), div(points), vort(points), lap(points);
    for (int64_t e = 0; e < elems; ++e)
      for (int i = 0; i < np; ++i)
        for (int j = 0; j < np; ++j) f[(e * np + i) * np + j] = s::metric(elems, e, i, j).p[2];
    s::ref::gradient_sphere(elems, 1, dvv.data(), edi.data(), 1.0, f.data(), grad.data());
    s::ref::divergence_sphere(elems, 1, dvv.data(), edi.data(), edet.data(), 1.0, grad.data(), div.data());
    s::ref::vorticity_sphere(elems, 1, dvv.data(), ed.data(), edet.data(), 1.0, grad.data(), vort.data());
    s::ref::laplace_simple(elems, 1, dvv.data(), edi.data(), emp.data(), 1.0, f.data(), lap.data());
    double egrad = 0, ediv = 0, evort = 0, lsum = 0, lmax = 0;
    for (int64_t e = 0; e < elems; ++e)
      for (int i = 0; i < np; ++i)
        for (int j = 0; j < np; ++j) {
          const int64_t p = (e * np + i) * np + j;
          const auto m = s::metric(elems, e, i, j);
          const double coslat = std::sqrt(1 - m.p[2] * m.p[2]);
          egrad = std::fmax(egrad, std::fmax(std::fabs(grad[(e * 2) * np * np + i * np + j]),
                                             std::fabs(grad[(e * 2 + 1) * np * np + i * np + j] - coslat)));
          ediv = std::fmax(ediv, std::fabs(div[p] + 2 * m.p[2]));
          evort = std::fmax(evort, std::fabs(vort[p]));
          lsum += lap[p];
          lmax = std::fmax(lmax, std::fabs(lap[p]));
        }
    if (n == 8) {
      report("gradient_of_z_ne8", egrad, 1e-3);
      report("divergence_of_gradient_ne8", ediv, 0.1);
      grad8 = egrad;
      div8 = ediv;
    } else {
      report("gradient_of_z_converges_6_over_ratio", 6 / (grad8 / egrad), 1);
      report("divergence_of_gradient_converges_3_over_ratio", 3 / (div8 / ediv), 1);
    }
    report("vorticity_of_gradient", evort, 1e-11);
    report("weak_laplace_integral", std::fabs(lsum) / lmax, 1e-9);
  }
  return failures ? 1 : 0;
}

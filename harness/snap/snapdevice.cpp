// A TestSNAP step on an OpenMP target device, flat: one device thread per
// (atom, neighbour) for ui, duarray and deidrj, per (atom, Z element) for yi,
// layers in thread-private buffers, atomics where work items share an entry.
// It checks that the per-work-item functions (snap.hpp) and the device copy
// of the tables (pm_snap.hpp) work on a device, stage by stage against the
// serial reference; the measured variants are the generated TestSNAP cells
// (docs/testsnap.md). Without offload it runs on the host (internal/testsnap).
//
//   snapdevice [cells] [steps]    cells^3 bcc W cells (10: 2000 atoms), twojmax 8
// Prints "PASS|FAIL device ..." with the largest relative error per stage and
// the seconds per stage over the steps. Exit status 1 on a failure.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pm/device_omptarget.hpp"
#include "pm/harness.hpp"
#include "snap/pm_snap.hpp"

namespace {

constexpr int kMaxTwojmax = 8;
constexpr int kLayer = (kMaxTwojmax + 1) * (kMaxTwojmax + 1);

void ui(const snap::System s, snap::cplx* utot) {
  const long n = s.natoms, np = long(s.natoms) * s.nnbor, nu = s.t.idxu_max;
  const int dev = pm::device::id();
#pragma omp target teams distribute parallel for is_device_ptr(utot) device(dev)
  for (long q = 0; q < nu * n; ++q) utot[q] = snap::cplx{s.t.utot_init[q / n], 0.0};
#pragma omp target teams distribute parallel for is_device_ptr(utot) device(dev)
  for (long p = 0; p < np; ++p) {
    if (s.jatom[p] < 0) continue;
    const long i = p / s.nnbor;
    snap::CK c;
    snap::cayley_klein(s.p, s.rij[3 * p], s.rij[3 * p + 1], s.rij[3 * p + 2], c);
    snap::cplx a[kLayer], b[kLayer];
    snap::cplx *prev = a, *cur = b;
    for (int j = 0; j <= s.t.twojmax; ++j) {
      for (int e = 0; e < snap::layer_half_size(j); ++e) {
        const snap::UElem o = snap::ui_element(s.t, c, j, e, prev, cur);
        double* d = &utot[o.jju * n + i].re;
#pragma omp atomic
        d[0] += c.sfac * o.v.re;
#pragma omp atomic
        d[1] += c.sfac * o.v.im;
        if (o.jjm >= 0) {
          double* m = &utot[o.jjm * n + i].re;
#pragma omp atomic
          m[0] += c.sfac * o.vm.re;
#pragma omp atomic
          m[1] += c.sfac * o.vm.im;
        }
      }
      snap::cplx* t = prev;
      prev = cur;
      cur = t;
    }
  }
}

void yi(const snap::System s, const snap::cplx* utot, snap::cplx* ylist) {
  const long n = s.natoms, nz = s.t.idxz_max, nuh = s.t.idxuh_max;
  const int dev = pm::device::id();
#pragma omp target teams distribute parallel for is_device_ptr(ylist) device(dev)
  for (long q = 0; q < nuh * n; ++q) ylist[q] = snap::cplx{0.0, 0.0};
#pragma omp target teams distribute parallel for collapse(2) is_device_ptr(utot, ylist) device(dev)
  for (long jjz = 0; jjz < nz; ++jjz)
    for (long i = 0; i < n; ++i) {
      const snap::YElem y = snap::yi_element(s.t, int(jjz), utot + i, n, s.beta + 1);
      double* d = &ylist[y.jjuh * n + i].re;
#pragma omp atomic
      d[0] += y.v.re;
#pragma omp atomic
      d[1] += y.v.im;
    }
}

void duarray(const snap::System s, snap::cplx* dulist) {
  const long np = long(s.natoms) * s.nnbor;
  const int nuh = s.t.idxuh_max;
  const int dev = pm::device::id();
#pragma omp target teams distribute parallel for is_device_ptr(dulist) device(dev)
  for (long p = 0; p < np; ++p) {
    if (s.jatom[p] < 0) {
      for (int q = 0; q < 3 * nuh; ++q) dulist[q * np + p] = snap::cplx{0.0, 0.0};
      continue;
    }
    snap::CKD c;
    snap::cayley_klein_d(s.p, s.rij[3 * p], s.rij[3 * p + 1], s.rij[3 * p + 2], c);
    snap::cplx u0[kLayer], u1[kLayer], d0[3 * kLayer], d1[3 * kLayer];
    snap::cplx *up = u0, *uc = u1, *dup = d0, *duc = d1;
    for (int j = 0; j <= s.t.twojmax; ++j) {
      for (int e = 0; e < snap::layer_half_size(j); ++e) {
        const snap::DUElem o = snap::du_element(s.t, c, j, e, up, dup, uc, duc, kLayer);
        for (int k = 0; k < 3; ++k) dulist[(o.jjuh * 3L + k) * np + p] = o.du[k];
      }
      snap::cplx* t = up;
      up = uc;
      uc = t;
      t = dup;
      dup = duc;
      duc = t;
    }
  }
}

void deidrj_forces(const snap::System s, const snap::cplx* dulist, const snap::cplx* ylist, double* dedr,
                   double* force) {
  const long n = s.natoms, np = long(s.natoms) * s.nnbor;
  const int dev = pm::device::id();
#pragma omp target teams distribute parallel for is_device_ptr(force) device(dev)
  for (long q = 0; q < 3 * n; ++q) force[q] = 0.0;
#pragma omp target teams distribute parallel for is_device_ptr(dulist, ylist, dedr, force) device(dev)
  for (long p = 0; p < np; ++p) {
    double d[3] = {0.0, 0.0, 0.0};
    const int j = s.jatom[p];
    const long i = p / s.nnbor;
    if (j >= 0) snap::deidrj(s.t, dulist + p, np, ylist + i, n, d);
    for (int k = 0; k < 3; ++k) {
      dedr[k * np + p] = d[k];
      if (j < 0) continue;
#pragma omp atomic
      force[3 * i + k] += d[k];
#pragma omp atomic
      force[3 * j + k] -= d[k];
    }
  }
}

double rel(const std::vector<double>& got, const double* ref, size_t n) { return pm::compare(got.data(), ref, static_cast<int64_t>(n)).err; }

template <class T>
std::vector<double> back(const T* dev, size_t doubles) {
  std::vector<double> h(doubles);
  pm::device::to_host(h.data(), dev, doubles * sizeof(double));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const int cells = argc > 1 ? std::atoi(argv[1]) : 1;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 1;
  const snap::Potential pot = snap::w2940_2j8();
  if (pot.p.twojmax > kMaxTwojmax) pm::die("twojmax too large", nullptr);
  pm::SnapSystem sys("S", pot, pm::snap_bcc_w(cells, pot));
  const snap::System h = sys.ref(), d = sys.dev();

  const std::vector<double> ru = sys.stage("ulisttot"), ry = sys.stage("ylist"), rdu = sys.stage("dulist");
  const std::vector<double> rdedr = sys.stage("dedr"), rf = sys.stage("force");

  auto alloc = [](int64_t doubles) {
    void* p = pm::device::alloc(doubles * sizeof(double));
    pm::device::poison(p, doubles * sizeof(double));
    return p;
  };
  auto* u = static_cast<snap::cplx*>(alloc(sys.ulisttot_doubles()));
  auto* y = static_cast<snap::cplx*>(alloc(sys.ylist_doubles()));
  auto* du = static_cast<snap::cplx*>(alloc(sys.dulist_doubles()));
  auto* dedr = static_cast<double*>(alloc(sys.dedr_doubles()));
  auto* f = static_cast<double*>(alloc(sys.force_doubles()));

  double t[4] = {0, 0, 0, 0};
  for (int s = 0; s < steps; ++s) {
    pm::device::Timer tm;
    tm.start();
    ui(d, u);
    t[0] += tm.stop();
    tm.start();
    yi(d, u, y);
    t[1] += tm.stop();
    tm.start();
    duarray(d, du);
    t[2] += tm.stop();
    tm.start();
    deidrj_forces(d, du, y, dedr, f);
    t[3] += tm.stop();
  }
  const double e[5] = {
      rel(back(u, sys.ulisttot_doubles()), ru.data(), sys.ulisttot_doubles()),
      rel(back(y, sys.ylist_doubles()), ry.data(), sys.ylist_doubles()),
      rel(back(du, sys.dulist_doubles()), rdu.data(), sys.dulist_doubles()),
      rel(back(dedr, sys.dedr_doubles()), rdedr.data(), sys.dedr_doubles()),
      rel(back(f, sys.force_doubles()), rf.data(), sys.force_doubles()),
  };
  std::string label = pm::device::name();  // one field: spaces become '_'
  for (char& ch : label)
    if (ch == ' ') ch = '_';
  bool ok = true;
  for (double v : e) ok = ok && v < 1e-12;
  std::printf(
      "%s device %s atoms=%lld nnbor=%d steps=%d err_ui=%.3g err_yi=%.3g err_duarray=%.3g err_deidrj=%.3g "
      "err_force=%.3g s_ui=%.4g s_yi=%.4g s_duarray=%.4g s_deidrj_forces=%.4g gflop_ui=%.4g gflop_yi=%.4g "
      "gflop_duarray=%.4g gflop_deidrj=%.4g mbyte_ui=%.4g mbyte_yi=%.4g mbyte_duarray=%.4g mbyte_deidrj=%.4g\n",
      ok ? "PASS" : "FAIL", label.c_str(), (long long)sys.natoms(), h.nnbor, steps, e[0], e[1], e[2], e[3], e[4],
      t[0], t[1], t[2], t[3], 1e-9 * sys.flops("ui"), 1e-9 * sys.flops("yi"), 1e-9 * sys.flops("duarray"),
      1e-9 * sys.flops("deidrj"), 1e-6 * sys.bytes("ui"), 1e-6 * sys.bytes("yi"), 1e-6 * sys.bytes("duarray"),
      1e-6 * sys.bytes("deidrj"));
  for (void* p : {(void*)u, (void*)y, (void*)du, (void*)dedr, (void*)f}) pm::device::release(p);
  return ok ? 0 : 1;
}

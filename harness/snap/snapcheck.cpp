// Checks of the SNAP reference (harness/snap) that do not trust it, and a
// serial timing of TestSNAP's step. Built and run by internal/testsnap.
//
//   snapcheck check <testdata dir>   LAMMPS agreement (every <name>.dump there),
//                                    forces = -grad E by finite differences,
//                                    rotation invariance of B, the paper problem
//   snapcheck dump <file.dump> [prefix]   our SNAP against a LAMMPS dump's energies,
//                                    forces and bispectra (potential <prefix>.snapparam
//                                    and .snapcoeff, default PM_SNAP_POTENTIAL or the
//                                    dump's path less its extension; PM_SNAP_TIMESTEP)
//   snapcheck bench [cells] [steps] [twojmax]   per-kernel time and grind time
//
// Output: one line per check, "PASS|FAIL <check> [label] key=value ... [# why]". Exit status 1
// if any check failed, 3 for an input it cannot use (its positioned errors on
// stderr), 2 for other errors.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lammps_dump.hpp"
#include "problem.hpp"
#include "reference.hpp"

namespace {

int failures = 0;

void report(bool ok, const std::string& line) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", line.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Largest |a-b| and largest |a-b| / max(|b|): the error relative to the
// scale of the reference quantity.
struct Diff {
  double abs = 0, scale = 0;
  long at = -1;  // the atom id of the largest error
  void add(double ours, double ref, long id = -1) {
    const double e = std::fabs(ours - ref);
    if (e > abs || at < 0) at = id;
    abs = std::max(abs, e);
    scale = std::max(scale, std::fabs(ref));
  }
  double rel() const { return scale > 0 ? abs / scale : abs; }
  std::string str(const char* name) const {
    std::string s = std::string(name) + "_maxabs=" + fmt("%.3g", abs) + " " + name + "_maxrel=" + fmt("%.3g", rel());
    if (at > 0) s += " " + std::string(name) + "_worst_id=" + std::to_string(at);
    return s;
  }
};

// (a) Agreement with LAMMPS's pair_style snap and compute sna/atom on a
// LAMMPS dump: what the dump has of per-atom energies, forces and bispectra.
// Prints each quantity's largest error and the atom id where it is.
void check_dump(const std::string& label, const std::string& dump, const std::string& prefix) {
  const snap::UserConfig u = snap::load_user_config(dump, prefix);
  const snap::DumpFrame& d = u.frame;
  if (!d.note.empty()) std::fprintf(stderr, "snapcheck: %s\n", d.note.c_str());
  const snap::Potential& pot = u.pot;
  snap::Problem pr = snap::user_problem(u);
  snap::Reference ref(pot, pr);
  ref.step();
  ref.compute_bi_energy();
  const snap::State& s = ref.state();
  const long n = pr.natoms;
  std::string head = "lammps " + label + " atoms=" + std::to_string(n) + " nnbor=" + std::to_string(pr.nnbor) +
                     " twojmax=" + std::to_string(pot.p.twojmax) + " timestep=" + std::to_string(d.timestep);
  if (d.f.empty() && d.energy.empty() && d.nb == 0) {
    report(false, head + " # nothing to compare: the dump has no fx fy fz, no energy column and no bispectrum");
    return;
  }
  if (d.nb != 0 && d.nb != ref.tables().idxb_max) {
    report(false, head + " bispectrum_columns=" + std::to_string(d.nb) + " # " + d.bispectrum_column + " has " +
                      std::to_string(d.nb) + " columns, twojmax " + std::to_string(pot.p.twojmax) + " has " +
                      std::to_string(ref.tables().idxb_max) + " components");
    return;
  }
  Diff de, df, db, detot;
  double etot = 0, etot_ref = 0;
  for (long i = 0; i < n; ++i) {
    const long id = d.id[i];
    if (!d.energy.empty()) {
      de.add(s.energy[i], d.energy[i], id);
      etot += s.energy[i];
      etot_ref += d.energy[i];
    }
    if (!d.f.empty())
      for (int k = 0; k < 3; ++k) df.add(s.force[3 * i + k], d.f[3 * i + k], id);
    for (int q = 0; q < d.nb; ++q) db.add(s.blist[q * n + i], d.b[i * d.nb + q], id);
  }
  std::string values;
  bool ok = true;
  auto part = [&](bool have, const char* name, const Diff& x) {
    if (!have) return;
    values += " " + x.str(name);
    ok = ok && x.rel() < 1e-12;
  };
  if (!d.energy.empty()) detot.add(etot, etot_ref, 0);
  part(!d.energy.empty(), "etotal", detot);
  part(!d.energy.empty(), "energy", de);
  part(!d.f.empty(), "force", df);
  part(d.nb > 0, "bispectrum", db);
  report(ok, head + values);
}

double total_energy(const snap::Potential& pot, snap::Problem pr) {
  snap::build_neighbours(pr, pot.p.rcut());
  snap::Reference ref(pot, pr);
  ref.compute_ui();
  ref.compute_bi_energy();
  return ref.total_energy();
}

// (b) Forces (the Y/adjoint path: ui, yi, duarray, deidrj) equal minus the
// central finite difference of the total energy (the B path).
void check_fd(const std::string& label, const snap::Potential& pot, int cells, double disp, uint64_t seed) {
  snap::Problem pr = snap::bcc_lattice(cells, snap::kLatticeW, disp, seed);
  snap::Problem nl = pr;
  snap::build_neighbours(nl, pot.p.rcut());
  snap::Reference ref(pot, nl);
  ref.step();
  const std::vector<double> f = ref.state().force;
  const double h = 1e-5;
  Diff d;
  for (int i = 0; i < pr.natoms; ++i)
    for (int k = 0; k < 3; ++k) {
      snap::Problem a = pr, b = pr;
      a.x[3 * i + k] += h;
      b.x[3 * i + k] -= h;
      const double fd = -(total_energy(pot, a) - total_energy(pot, b)) / (2 * h);
      d.add(f[3 * i + k], fd);
    }
  report(d.abs < 1e-6 && d.rel() < 1e-6, "fd " + label + " atoms=" + std::to_string(pr.natoms) +
                                             " nnbor=" + std::to_string(nl.nnbor) + " h=1e-05 " + d.str("force"));
}

// A random rotation matrix (uniform unit quaternion).
void random_rotation(snap::SplitMix& rng, double R[9]) {
  const double u1 = rng.next(), u2 = rng.next(), u3 = rng.next();
  const double q0 = std::sqrt(1 - u1) * std::sin(2 * M_PI * u2), q1 = std::sqrt(1 - u1) * std::cos(2 * M_PI * u2);
  const double q2 = std::sqrt(u1) * std::sin(2 * M_PI * u3), q3 = std::sqrt(u1) * std::cos(2 * M_PI * u3);
  const double w = q0, x = q1, y = q2, z = q3;
  const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                       2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                       2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
  for (int q = 0; q < 9; ++q) R[q] = m[q];
}

// (c) B is unchanged by a rotation of the neighbourhood (and changes when
// the neighbourhood is deformed, so that the check can fail).
void check_rotation(const std::string& label, const snap::Potential& pot, const std::vector<double>& rij,
                    uint64_t seed) {
  double e0 = 0, e1 = 0;
  const std::vector<double> b0 = snap::neighbourhood_bispectrum(pot, rij, &e0);
  snap::SplitMix rng(seed);
  Diff d, dd;
  double de = 0;
  for (int trial = 0; trial < 4; ++trial) {
    double R[9];
    random_rotation(rng, R);
    std::vector<double> r(rij.size()), s(rij.size());
    for (size_t q = 0; q + 2 < rij.size(); q += 3)
      for (int k = 0; k < 3; ++k) {
        r[q + k] = R[3 * k] * rij[q] + R[3 * k + 1] * rij[q + 1] + R[3 * k + 2] * rij[q + 2];
        // A deformation: the same rotation with one axis stretched by 1%.
        s[q + k] = r[q + k] * (k == 0 ? 1.01 : 1.0);
      }
    const std::vector<double> b1 = snap::neighbourhood_bispectrum(pot, r, &e1);
    const std::vector<double> b2 = snap::neighbourhood_bispectrum(pot, s, nullptr);
    for (size_t q = 0; q < b0.size(); ++q) {
      d.add(b1[q], b0[q]);
      dd.add(b2[q], b0[q]);
    }
    de = std::max(de, std::fabs(e1 - e0));
  }
  report(d.rel() < 1e-12 && de < 1e-11 && dd.rel() > 1e-6,
         "rotation " + label + " neighbours=" + std::to_string(rij.size() / 3) + " rotations=4 " + d.str("bispectrum") +
             " energy_maxabs=" + fmt("%.3g", de) + " deformed_bispectrum_maxrel=" + fmt("%.3g", dd.rel()));
}

// The fused duarray+deidrj gives the same dE/dr as the two kernels.
void check_fused() {
  const snap::Potential pot = snap::w2940_2j8();
  snap::Problem pr = snap::bcc_lattice(2, snap::kLatticeW, 0.2, 51);
  snap::build_neighbours(pr, pot.p.rcut());
  snap::Reference ref(pot, pr);
  ref.step();
  std::vector<double> fused(ref.state().dedr.size());
  snap::serial::compute_fused_deidrj(ref.system(), ref.state().ylist.data(), fused.data());
  Diff d;
  for (size_t q = 0; q < fused.size(); ++q) d.add(fused[q], ref.state().dedr[q]);
  report(d.rel() < 1e-13, "fused_deidrj atoms=" + std::to_string(pr.natoms) + " " + d.str("dedr"));
}

void check_paper_problem() {
  const snap::Potential pot = snap::w2940_2j8();
  const snap::Problem pr = snap::paper_problem(pot.p);
  int lo = 1 << 30, hi = 0;
  for (int i = 0; i < pr.natoms; ++i) {
    int c = 0;
    for (int nb = 0; nb < pr.nnbor; ++nb) c += pr.jatom[long(i) * pr.nnbor + nb] >= 0;
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  snap::Reference ref(pot, pr);
  ref.step();
  double fsum[3] = {0, 0, 0}, fmax = 0;
  for (int i = 0; i < pr.natoms; ++i)
    for (int k = 0; k < 3; ++k) {
      fsum[k] += ref.state().force[3 * i + k];
      fmax = std::max(fmax, std::fabs(ref.state().force[3 * i + k]));
    }
  const double fnet = std::sqrt(fsum[0] * fsum[0] + fsum[1] * fsum[1] + fsum[2] * fsum[2]);
  report(pr.natoms == 2000 && lo == 26 && hi == 26 && fnet < 1e-10 && fmax > 1e-3 && std::isfinite(fmax),
         "paper_problem atoms=" + std::to_string(pr.natoms) + " neighbours_min=" + std::to_string(lo) +
             " neighbours_max=" + std::to_string(hi) + " net_force=" + fmt("%.3g", fnet) +
             " max_force=" + fmt("%.4g", fmax));
}

int run_checks(const std::string& dir) {
  // (a) every LAMMPS reference in dir.
  std::vector<std::string> names;
  if (DIR* dp = opendir(dir.c_str())) {
    while (dirent* e = readdir(dp)) {
      const std::string f = e->d_name;
      if (f.size() > 5 && f.substr(f.size() - 5) == ".dump") names.push_back(f.substr(0, f.size() - 5));
    }
    closedir(dp);
  }
  std::sort(names.begin(), names.end());
  // (internal/testsnap requires them; without any, no lammps lines.)
  for (const auto& n : names) check_dump(n, dir + "/" + n + ".dump", dir + "/" + n);
  // (b) finite differences: 2J8 W on the CI cell and on 16 atoms displaced
  // enough for pairs near the cutoff; an odd twojmax.
  check_fd("w2j8_c1", snap::w2940_2j8(), 1, 0.05, 11);
  check_fd("w2j8_c2_d020", snap::w2940_2j8(), 2, 0.20, 12);
  check_fd("w2j5_c1", snap::w_like(5), 1, 0.15, 13);
  // (c) rotations: a lattice neighbourhood and a random one.
  {
    const snap::Potential pot = snap::w2940_2j8();
    snap::Problem pr = snap::bcc_lattice(2, snap::kLatticeW, 0.1, 21);
    snap::build_neighbours(pr, pot.p.rcut());
    std::vector<double> rij;
    for (int nb = 0; nb < pr.nnbor; ++nb)
      if (pr.jatom[nb] >= 0) rij.insert(rij.end(), {pr.rij[3 * nb], pr.rij[3 * nb + 1], pr.rij[3 * nb + 2]});
    check_rotation("w2j8_lattice", pot, rij, 31);
    snap::SplitMix rng(41);
    std::vector<double> rnd;
    while (rnd.size() < 3 * 20) {
      double v[3];
      for (double& c : v) c = (2 * rng.next() - 1) * pot.p.rcut();
      const double r = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      if (r > 1.5 && r < pot.p.rcut()) rnd.insert(rnd.end(), v, v + 3);
    }
    check_rotation("w2j8_random", pot, rnd, 32);
    check_rotation("w2j7_random", snap::w_like(7), rnd, 33);
  }
  check_fused();
  check_paper_problem();
  return failures ? 1 : 0;
}

// Serial per-kernel times for `steps` steps and the grind time.
int run_bench(int cells, int steps, int twojmax) {
  using clk = std::chrono::steady_clock;
  const snap::Potential pot = snap::w_like(twojmax);
  snap::Problem pr = snap::bcc_lattice(cells, snap::kLatticeW, 0.05, 2024);
  snap::build_neighbours(pr, pot.p.rcut());
  snap::Reference ref(pot, pr);
  double t[5] = {0, 0, 0, 0, 0};
  for (int s = 0; s < steps; ++s) {
    auto a = clk::now();
    ref.compute_ui();
    auto b = clk::now();
    ref.compute_yi();
    auto c = clk::now();
    ref.compute_duarray();
    auto d = clk::now();
    ref.compute_deidrj();
    auto e = clk::now();
    ref.accumulate_forces();
    auto f = clk::now();
    t[0] += std::chrono::duration<double>(b - a).count();
    t[1] += std::chrono::duration<double>(c - b).count();
    t[2] += std::chrono::duration<double>(d - c).count();
    t[3] += std::chrono::duration<double>(e - d).count();
    t[4] += std::chrono::duration<double>(f - e).count();
  }
  const double total = t[0] + t[1] + t[2] + t[3] + t[4];
  const snap::Tables& tb = ref.tables();
  std::printf("bench atoms=%d nnbor=%d twojmax=%d steps=%d idxu_max=%d idxuh_max=%d idxz_max=%d idxb_max=%d\n",
              pr.natoms, pr.nnbor, twojmax, steps, tb.idxu_max, tb.idxuh_max, tb.idxz_max, tb.idxb_max);
  const char* names[5] = {"compute_ui", "compute_yi", "compute_duarray", "compute_deidrj", "forces"};
  for (int k = 0; k < 5; ++k) std::printf("kernel %s seconds=%.4f\n", names[k], t[k]);
  std::printf("grind ms_per_atom_step=%.6g total_seconds=%.4f\n", 1e3 * total / (double(steps) * pr.natoms), total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "check" && argc == 3) return run_checks(argv[2]);
    if (mode == "dump" && (argc == 3 || argc == 4)) {
      check_dump(argv[2], argv[2], argc == 4 ? argv[3] : "");
      return failures ? 1 : 0;
    }
    if (mode == "bench")
      return run_bench(argc > 2 ? std::atoi(argv[2]) : 10, argc > 3 ? std::atoi(argv[3]) : 1,
                       argc > 4 ? std::atoi(argv[4]) : 8);
  } catch (const snap::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "snapcheck: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: snapcheck check <testdata dir> | snapcheck dump <file.dump> [potential prefix] | snapcheck bench "
               "[cells] [steps] [twojmax]\n");
  return 2;
}

// A SNAP system as a harness buffer: the problem, potential and index tables
// built on the host, copied to the device once, seen by kernels as a
// snap::System of device pointers and by the reference as one of host
// pointers (as pm::CsrArray does for CSR matrices). Include a pm device
// header and pm/harness.hpp first.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "snap/lammps_dump.hpp"
#include "snap/problem.hpp"
#include "snap/reference.hpp"
#include "snap/snap.hpp"
#include "snap/tables.hpp"

namespace pm {

class SnapSystem : public Buffer {
 public:
  SnapSystem(const char* name, snap::Potential pot, snap::Problem pr)
      : Buffer(name), pot_(std::move(pot)), pr_(std::move(pr)), ts_(pot_.p.twojmax, pot_.p.wself) {
    host_ = snap::System{pot_.p, ts_.view(), pr_.natoms, pr_.nnbor, pr_.rij.data(), pr_.jatom.data(), pot_.beta.data()};
    dev_ = host_;
    snap::Tables& t = dev_.t;
    t.idxu_block = upload(ts_.idxu_block);
    t.idxuh_block = upload(ts_.idxuh_block);
    t.idxz = upload(ts_.idxz);
    t.idxb = upload(ts_.idxb);
    t.cglist = upload(ts_.cglist);
    t.rootpq = upload(ts_.rootpq);
    t.uh_weight = upload(ts_.uh_weight);
    t.utot_init = upload(ts_.utot_init);
    dev_.rij = upload(pr_.rij);
    dev_.jatom = upload(pr_.jatom);
    dev_.beta = upload(pot_.beta);
  }
  ~SnapSystem() override {
    for (void* p : owned_) device::release(p);
  }
  SnapSystem(const SnapSystem&) = delete;
  SnapSystem& operator=(const SnapSystem&) = delete;

  // A user's configuration (snap_input): the potential and problem it gives.
  SnapSystem(const char* name, std::pair<snap::Potential, snap::Problem> in)
      : SnapSystem(name, std::move(in.first), std::move(in.second)) {}

  const snap::System& ref() const { return host_; }
  // The reference cache keys on the configuration, not only on the size.
  uint64_t digest_inputs(uint64_t h) const override {
    h = digest(pr_.rij.data(), pr_.rij.size() * sizeof(double), h);
    h = digest(pr_.jatom.data(), pr_.jatom.size() * sizeof(int), h);
    return digest(pot_.beta.data(), pot_.beta.size() * sizeof(double), h);
  }
  const snap::System& dev() const { return dev_; }
  const snap::Problem& problem() const { return pr_; }
  void restore() override {}  // read-only
  size_t bytes() const override { return bytes_; }
  // The tables are read-only: the first and the last runs read each back and
  // compare it with its host copy.
  void check(Check& c) override {
    if (!c.inputs) return;
    for (const Table& t : tables_) {
      std::vector<unsigned char> back(t.bytes);
      device::to_host(back.data(), t.dev, t.bytes);
      if (std::memcmp(back.data(), t.host, t.bytes) != 0) c.fail(name() + ": a table changed by the kernel");
    }
  }

  // The reference value of a stage's output, as doubles (a cplx is two):
  // "utot_init" (wself I), "ulisttot" (compute_ui), "ylist" (compute_yi), "dulist"
  // (compute_duarray), "dedr" (compute_deidrj), "force". An input of a
  // kernel measured alone (snap_yi reads ulisttot) is filled from it.
  std::vector<double> stage(const std::string& name) const {
    const snap::System& h = host_;
    if (name == "utot_init") {  // wself I, what compute_ui starts from
      std::vector<double> d(ulisttot_doubles(), 0.0);
      for (int jju = 0; jju < h.t.idxu_max; ++jju)
        for (int64_t i = 0; i < natoms(); ++i) d[2 * (jju * natoms() + i)] = ts_.utot_init[jju];
      return d;
    }
    std::vector<snap::cplx> u(ulisttot_doubles() / 2), y, du;
    std::vector<double> dedr, f;
    snap::serial::compute_ui(h, u.data());
    if (name == "ulisttot") return as_doubles(u);
    y.resize(ylist_doubles() / 2);
    snap::serial::compute_yi(h, u.data(), y.data());
    if (name == "ylist") return as_doubles(y);
    du.resize(dulist_doubles() / 2);
    snap::serial::compute_duarray(h, du.data());
    if (name == "dulist") return as_doubles(du);
    dedr.resize(dedr_doubles());
    snap::serial::compute_deidrj(h, du.data(), y.data(), dedr.data());
    if (name == "dedr") return dedr;
    f.resize(force_doubles());
    snap::serial::accumulate_forces(h, dedr.data(), f.data());
    if (name == "force") return f;
    die("unknown SNAP stage ", name.c_str());
  }

  // Work of one call of a stage, for a record's flops and bytes. Flops count
  // the floating-point operations of the per-work-item functions, exactly
  // over the tables (ui and duarray: per pair and element, 10 per recursion
  // term for U and 54 more for dU, plus the weighted outputs; yi: per atom and
  // Z element nb*(10 na + 4) + 5; deidrj: 15 per pair and half entry, plus 6
  // for the forces). Bytes count each array a stage reads or writes once
  // (atomics and table reads not counted), as a lower bound of the traffic.
  double flops(const std::string& name) const {
    const snap::Tables& t = host_.t;
    const double pairs = double(npairs()), atoms = double(natoms());
    double per = 0;
    if (name == "ui" || name == "duarray") {
      for (int j = 1; j <= t.twojmax; ++j)
        for (int e = 0; e < snap::layer_half_size(j); ++e) {
          const int mb = e / (j + 1), ma = e % (j + 1);
          const int terms = (ma < j) + (ma > 0);
          if (name == "ui")
            per += 10.0 * terms + (2 * mb < j ? 8.0 : 4.0);
          else
            per += 64.0 * terms + 24.0;
        }
      return pairs * per;
    }
    if (name == "yi") {
      for (int jjz = 0; jjz < t.idxz_max; ++jjz) per += t.idxz[jjz].nb * (10.0 * t.idxz[jjz].na + 4.0) + 5.0;
      return atoms * per;
    }
    if (name == "deidrj") return pairs * (15.0 * t.idxuh_max + 6.0);
    die("unknown SNAP stage ", name.c_str());
  }
  double bytes(const std::string& name) const {
    const double c = 16.0, pairs = double(npairs()), atoms = double(natoms());
    const snap::Tables& t = host_.t;
    const double nb = 24.0 * pairs + 4.0 * pairs;  // rij, jatom
    if (name == "ui") return nb + c * t.idxu_max * atoms;
    if (name == "yi") return c * t.idxu_max * atoms + c * t.idxuh_max * atoms;
    if (name == "duarray") return nb + c * 3.0 * t.idxuh_max * pairs;
    if (name == "deidrj") return 4.0 * pairs + c * 3.0 * t.idxuh_max * pairs + c * t.idxuh_max * atoms + 24.0 * pairs + 24.0 * atoms;
    die("unknown SNAP stage ", name.c_str());
  }

  // Extents of the arrays a step uses, in doubles (a cplx is two).
  int64_t natoms() const { return pr_.natoms; }
  int64_t npairs() const { return pr_.npairs(); }
  int64_t ulisttot_doubles() const { return 2LL * ts_.idxu_max * pr_.natoms; }
  int64_t ylist_doubles() const { return 2LL * ts_.idxuh_max * pr_.natoms; }
  int64_t dulist_doubles() const { return 2LL * 3 * ts_.idxuh_max * pr_.npairs(); }
  int64_t dedr_doubles() const { return 3LL * pr_.npairs(); }
  int64_t force_doubles() const { return 3LL * pr_.natoms; }

 private:
  template <class T>
  const T* upload(const std::vector<T>& v) {
    const size_t bytes = v.size() * sizeof(T);
    T* d = static_cast<T*>(device::alloc(bytes));
    if (!d) die("device allocation failed for a SNAP table", nullptr);
    device::to_device(d, v.data(), bytes);
    owned_.push_back(d);
    tables_.push_back({d, v.data(), bytes});
    bytes_ += bytes;
    return d;
  }

  static std::vector<double> as_doubles(const std::vector<snap::cplx>& v) {
    std::vector<double> d(2 * v.size());
    for (size_t q = 0; q < v.size(); ++q) {
      d[2 * q] = v[q].re;
      d[2 * q + 1] = v[q].im;
    }
    return d;
  }

  snap::Potential pot_;
  snap::Problem pr_;
  snap::TableSet ts_;
  snap::System host_{}, dev_{};
  std::vector<void*> owned_;
  struct Table {
    const void* dev;
    const void* host;
    size_t bytes;
  };
  std::vector<Table> tables_;
  size_t bytes_ = 0;
};

// The TestSNAP problems by size: cells^3 bcc W cells (10 = the paper's
// 2000 atoms with 26 neighbours each, 1 = the CI cell of 2 atoms), the 2J8 W
// potential at twojmax 8, a W-like one otherwise.
inline snap::Problem snap_bcc_w(int64_t cells, const snap::Potential& pot) {
  snap::Problem pr = snap::bcc_lattice(static_cast<int>(cells), snap::kLatticeW, 0.05, 2024);
  snap::build_neighbours(pr, pot.p.rcut());
  return pr;
}

// The configuration a TestSNAP program measures: PM_SNAP_DUMP's (a LAMMPS
// dump, with the potential PM_SNAP_POTENTIAL or beside it, docs/inputs.md),
// whatever the size, else cells^3 bcc W cells with the 2J8 W potential. A
// dump it cannot use ends the program with its positioned errors.
inline std::pair<snap::Potential, snap::Problem> snap_input(int64_t cells) {
  const char* dump = std::getenv("PM_SNAP_DUMP");
  if (!dump || !*dump) {
    const snap::Potential pot = snap::w2940_2j8();
    return {pot, snap_bcc_w(cells, pot)};
  }
  try {
    snap::UserConfig u = snap::load_user_config(dump);
    if (!u.frame.note.empty()) std::fprintf(stderr, "portmatrix harness: %s\n", u.frame.note.c_str());
    snap::Problem pr = snap::user_problem(u);
    user_input() = std::string(dump) + "@" + std::to_string(u.frame.timestep) + " (" + u.potential_prefix + ")";
    return {std::move(u.pot), std::move(pr)};
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    die("PM_SNAP_DUMP: cannot use ", dump);
  }
}

}  // namespace pm

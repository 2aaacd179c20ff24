// A reader of LAMMPS text dumps (`dump custom`, docs/inputs.md): the atoms,
// the periodic box (orthogonal, or triclinic with xy xz yz) and, when the
// dump has them, forces, per-atom energies and a per-atom bispectrum, for
// the SNAP checks (snapcheck dump) and the TestSNAP benchmarks on a user's
// configuration (PM_SNAP_DUMP, pm::snap_input). Host only.
//
// Columns in any order: id, type, positions as x y z, xu yu zu, xs ys zs or
// xsu ysu zsu; fx fy fz; an energy column (a compute or variable named like
// an energy: c_pe, c_energy, c_eatom, v_energy, ...); one per-atom array
// c_NAME[1] .. c_NAME[n] as the bispectrum (c_sna[*] of compute sna/atom).
// Everything else is ignored. A dump it cannot use fails with every problem
// found, each as "file:line: what is wrong".
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "input_error.hpp"
#include "problem.hpp"

namespace snap {

// One timestep of a dump.
struct DumpFrame {
  std::string file;
  long timestep = 0;
  int frames = 0;          // timesteps in the file
  std::string note;        // what the reader chose (several timesteps), "" when nothing
  int natoms = 0;
  bool triclinic = false;
  double lo[3] = {0, 0, 0}, len[3] = {0, 0, 0}, tilt[3] = {0, 0, 0};  // tilt: xy xz yz
  std::vector<long> id;
  std::vector<double> x;       // [3*natoms] Cartesian
  std::vector<double> f;       // [3*natoms], empty without fx fy fz
  std::vector<double> energy;  // [natoms], empty without an energy column
  std::string energy_column, bispectrum_column, position_columns;
  int nb = 0;
  std::vector<double> b;  // [natoms*nb]

  // The configuration as a SNAP problem (positions relative to the box's
  // origin); neighbours are built by the caller for its cutoff.
  Problem problem() const {
    Problem pr;
    pr.natoms = natoms;
    for (int k = 0; k < 3; ++k) {
      pr.box[k] = len[k];
      pr.tilt[k] = tilt[k];
    }
    pr.x.resize(x.size());
    for (size_t q = 0; q < x.size(); ++q) pr.x[q] = x[q] - lo[q % 3];
    return pr;
  }
};

namespace dump_detail {

// A per-atom energy: a compute's or variable's column named like one.
inline bool energy_like(const std::string& c) {
  if (c.rfind("c_", 0) != 0 && c.rfind("v_", 0) != 0) return false;
  std::string n = c.substr(2);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return n == "pe" || n.find("energ") != std::string::npos || n.find("eng") != std::string::npos ||
         n.find("eatom") != std::string::npos || n.rfind("pe_", 0) == 0 || n.rfind("pe/", 0) == 0;
}

// "c_sna[12]" -> ("c_sna", 12); false for anything else.
inline bool array_column(const std::string& c, std::string* name, long* k) {
  const size_t open = c.find('[');
  if (open == std::string::npos || open < 3 || c.back() != ']' || (c[0] != 'c' && c[0] != 'f' && c[0] != 'v') ||
      c[1] != '_')
    return false;
  *name = c.substr(0, open);
  return parse_integer(c.substr(open + 1, c.size() - open - 2), k) && *k >= 1;
}

struct Line {
  long no;
  std::string text;
};

}  // namespace dump_detail

// Reads timestep `want` of a LAMMPS text dump (want < 0: the first one).
inline DumpFrame read_lammps_dump(const std::string& path, long want = -1) {
  using dump_detail::Line;
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  InputErrors errs(path);
  std::vector<Line> lines;
  {
    std::string s;
    long no = 0;
    while (std::getline(in, s)) {
      ++no;
      if (!s.empty() && s.back() == '\r') s.pop_back();
      lines.push_back({no, s});
    }
  }
  // Frames start at "ITEM: TIMESTEP".
  std::vector<size_t> starts;
  for (size_t q = 0; q < lines.size(); ++q)
    if (lines[q].text.rfind("ITEM: TIMESTEP", 0) == 0) starts.push_back(q);
  // Before the first frame: comment lines only (a provenance header).
  for (size_t q = 0; q < lines.size() && (starts.empty() || q < starts[0]); ++q) {
    const std::string& t = lines[q].text;
    if (!split_fields(t).empty() && t[t.find_first_not_of(" \t")] != '#') {
      errs.add(lines[q].no, "expected ITEM: TIMESTEP, found \"" + t.substr(0, 40) + "\"");
      break;
    }
  }
  if (starts.empty() && !errs.any())
    errs.add(lines.empty() ? 1 : lines[0].no,
             "not a LAMMPS text dump: no \"ITEM: TIMESTEP\" line (write one with dump custom ... id x y z)");
  errs.raise();
  DumpFrame d;
  d.file = path;
  d.frames = int(starts.size());
  std::vector<long> steps;
  size_t chosen = std::string::npos;
  for (size_t s = 0; s < starts.size(); ++s) {
    const size_t q = starts[s] + 1;
    long ts = 0;
    if (q >= lines.size() || !parse_integer(split_fields(lines[q].text).empty() ? "" : split_fields(lines[q].text)[0], &ts)) {
      errs.add(q < lines.size() ? lines[q].no : lines[starts[s]].no, "ITEM: TIMESTEP is not followed by an integer");
      continue;
    }
    steps.push_back(ts);
    if (chosen == std::string::npos && (want < 0 || ts == want)) {
      chosen = s;
      d.timestep = ts;
    }
  }
  errs.raise();
  if (chosen == std::string::npos) {
    std::string have;
    for (long t : steps) have += (have.empty() ? "" : ", ") + std::to_string(t);
    errs.add(lines[starts[0]].no, "no timestep " + std::to_string(want) + " (the dump has " + have + ")");
    errs.raise();
  }
  if (starts.size() > 1) {
    std::string have;
    for (size_t s = 0; s < steps.size() && s < 6; ++s) have += (s ? ", " : "") + std::to_string(steps[s]);
    if (steps.size() > 6) have += ", ...";
    d.note = path + ": " + std::to_string(starts.size()) + " timesteps (" + have + "); using " +
             (want < 0 ? "the first, " : "") + "timestep " + std::to_string(d.timestep) +
             (want < 0 ? " (PM_SNAP_TIMESTEP names another)" : "");
  }
  const size_t begin = starts[chosen], end = chosen + 1 < starts.size() ? starts[chosen + 1] : lines.size();

  long natoms = -1, natoms_line = 0, box_line = 0;
  bool have_box = false;
  for (size_t q = begin + 2; q < end; ++q) {
    const Line& l = lines[q];
    if (l.text.rfind("ITEM:", 0) != 0) {
      errs.add(l.no, "expected an ITEM: line, found \"" + l.text.substr(0, 40) + "\"");
      break;
    }
    const std::vector<std::string> item = split_fields(l.text.substr(5));
    const std::string head = item.empty() ? "" : item[0];
    if (l.text.rfind("ITEM: NUMBER OF ATOMS", 0) == 0) {
      natoms_line = l.no;
      const std::vector<std::string> v = q + 1 < end ? split_fields(lines[q + 1].text) : std::vector<std::string>{};
      if (v.size() != 1 || !parse_integer(v[0], &natoms) || natoms < 0) {
        errs.add(q + 1 < end ? lines[q + 1].no : l.no, "ITEM: NUMBER OF ATOMS is not followed by a count");
        natoms = -1;
      } else if (natoms == 0) {
        errs.add(lines[q + 1].no, "no atoms (NUMBER OF ATOMS is 0)");
      } else if (natoms > 100000000) {
        errs.add(lines[q + 1].no, "NUMBER OF ATOMS " + std::to_string(natoms) + " is beyond what this reader takes");
        natoms = -1;
      }
      ++q;
    } else if (l.text.rfind("ITEM: BOX BOUNDS", 0) == 0) {
      box_line = l.no;
      std::vector<std::string> f = split_fields(l.text.substr(16));
      d.triclinic = f.size() >= 3 && f[0] == "xy" && f[1] == "xz" && f[2] == "yz";
      if (d.triclinic) f.erase(f.begin(), f.begin() + 3);
      if (f.size() != 3) {
        errs.add(l.no, "BOX BOUNDS needs three boundary flags (pp pp pp)" +
                           std::string(d.triclinic ? "" : ", after xy xz yz for a triclinic box"));
      } else {
        for (int k = 0; k < 3; ++k)
          if (f[k] != "pp")
            errs.add(l.no, std::string("boundary ") + "xyz"[k] + " is \"" + f[k] +
                               "\": SNAP here needs a periodic box (pp pp pp)");
      }
      double bound[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
      const size_t want_fields = d.triclinic ? 3 : 2;
      bool ok = true;
      for (int k = 0; k < 3; ++k) {
        if (q + 1 + k >= end || lines[q + 1 + k].text.rfind("ITEM:", 0) == 0) {
          errs.add(q + 1 + k < end ? lines[q + 1 + k].no : l.no, "BOX BOUNDS needs three lines of bounds");
          ok = false;
          break;
        }
        const Line& b = lines[q + 1 + k];
        const std::vector<std::string> v = split_fields(b.text);
        if (v.size() != want_fields) {
          errs.add(b.no, std::to_string(v.size()) + " fields, a " + (d.triclinic ? "triclinic" : "orthogonal") +
                             " box has " + std::to_string(want_fields) + " per line (lo hi" +
                             (d.triclinic ? " tilt)" : ")"));
          ok = false;
          continue;
        }
        for (size_t c = 0; c < v.size(); ++c)
          if (!parse_number(v[c], &bound[k][c])) {
            errs.add(b.no, "\"" + v[c] + "\" is not a number");
            ok = false;
          }
      }
      q += 3;
      if (!ok) continue;
      // Triclinic dumps give the bounding box; LAMMPS's dump docs give the
      // way back to the box's own lo and hi.
      if (d.triclinic) {
        const double xy = bound[0][2], xz = bound[1][2], yz = bound[2][2];
        d.tilt[0] = xy;
        d.tilt[1] = xz;
        d.tilt[2] = yz;
        bound[0][0] -= std::min({0.0, xy, xz, xy + xz});
        bound[0][1] -= std::max({0.0, xy, xz, xy + xz});
        bound[1][0] -= std::min(0.0, yz);
        bound[1][1] -= std::max(0.0, yz);
      }
      for (int k = 0; k < 3; ++k) {
        d.lo[k] = bound[k][0];
        d.len[k] = bound[k][1] - bound[k][0];
        if (!(d.len[k] > 0)) errs.add(lines[q - 2 + k].no, std::string("the box is empty along ") + "xyz"[k]);
      }
      have_box = true;
    } else if (l.text.rfind("ITEM: ATOMS", 0) == 0) {
      if (!d.x.empty() || !d.position_columns.empty()) {
        errs.add(l.no, "ITEM: ATOMS again in timestep " + std::to_string(d.timestep));
        break;
      }
      const std::vector<std::string> cols = split_fields(l.text.substr(11));
      if (natoms < 0) errs.add(l.no, "no ITEM: NUMBER OF ATOMS before ITEM: ATOMS");
      if (!have_box && !box_line) errs.add(l.no, "no ITEM: BOX BOUNDS before ITEM: ATOMS");
      std::map<std::string, int> at;
      for (size_t c = 0; c < cols.size(); ++c) {
        if (at.count(cols[c])) errs.add(l.no, "column " + cols[c] + " appears twice");
        at[cols[c]] = int(c);
      }
      // Positions: the first complete set.
      const char* sets[4][3] = {{"x", "y", "z"}, {"xu", "yu", "zu"}, {"xs", "ys", "zs"}, {"xsu", "ysu", "zsu"}};
      int pos[3] = {-1, -1, -1};
      bool scaled = false;
      for (int s = 0; s < 4 && pos[0] < 0; ++s) {
        int n = 0;
        for (int k = 0; k < 3; ++k) n += at.count(sets[s][k]) > 0;
        if (n == 3) {
          for (int k = 0; k < 3; ++k) pos[k] = at[sets[s][k]];
          scaled = s >= 2;
          d.position_columns = std::string(sets[s][0]) + " " + sets[s][1] + " " + sets[s][2];
        } else if (n > 0) {
          std::string miss;
          for (int k = 0; k < 3; ++k)
            if (!at.count(sets[s][k])) miss += (miss.empty() ? "" : ", ") + std::string(sets[s][k]);
          errs.add(l.no, "positions " + std::string(sets[s][0]) + " " + sets[s][1] + " " + sets[s][2] +
                             " incomplete: no column " + miss);
        }
      }
      if (pos[0] < 0)
        errs.add(l.no, "no positions: the ATOMS columns need x y z, xu yu zu, xs ys zs or xsu ysu zsu (have: " +
                           l.text.substr(std::min<size_t>(l.text.size(), 12)) + ")");
      int force[3] = {-1, -1, -1};
      {
        const char* fn[3] = {"fx", "fy", "fz"};
        int n = 0;
        for (int k = 0; k < 3; ++k) n += at.count(fn[k]) > 0;
        if (n == 3)
          for (int k = 0; k < 3; ++k) force[k] = at[fn[k]];
        else if (n > 0)
          errs.add(l.no, "forces incomplete: fx fy fz go together");
      }
      // Energy: the one energy-like scalar column; bispectrum: the one array.
      int ecol = -1;
      std::map<std::string, std::vector<std::pair<long, int>>> arrays;
      std::vector<std::string> energies;
      for (size_t c = 0; c < cols.size(); ++c) {
        std::string name;
        long k = 0;
        if (dump_detail::array_column(cols[c], &name, &k))
          arrays[name].push_back({k, int(c)});
        else if (dump_detail::energy_like(cols[c]))
          energies.push_back(cols[c]);
      }
      if (energies.size() == 1) {
        ecol = at[energies[0]];
        d.energy_column = energies[0];
      } else if (energies.size() > 1) {
        std::string all;
        for (const std::string& e : energies) all += (all.empty() ? "" : ", ") + e;
        errs.add(l.no, "several columns could be the per-atom energy (" + all + "): keep one in the dump");
      }
      std::vector<int> bcols;
      if (!arrays.empty()) {
        auto pick = arrays.end();
        if (arrays.size() == 1) pick = arrays.begin();
        for (auto it = arrays.begin(); it != arrays.end() && pick == arrays.end(); ++it)
          if (it->first.find("sna") != std::string::npos || it->first.find("bisp") != std::string::npos) pick = it;
        if (pick == arrays.end()) {
          errs.add(l.no, "several per-atom arrays and none named like a bispectrum (c_sna[*])");
        } else {
          std::vector<std::pair<long, int>> v = pick->second;
          std::sort(v.begin(), v.end());
          for (size_t k = 0; k < v.size(); ++k)
            if (v[k].first != long(k) + 1) {
              errs.add(l.no, pick->first + "[" + std::to_string(k + 1) + "] is missing (its columns must run from 1)");
              break;
            }
          for (const auto& e : v) bcols.push_back(e.second);
          d.bispectrum_column = pick->first;
          d.nb = int(bcols.size());
        }
      }
      const int idcol = at.count("id") ? at["id"] : -1;
      // Atom lines: up to the next ITEM or the frame's end.
      size_t r = q + 1;
      long rows = 0;
      std::map<long, long> seen;
      const bool counting = natoms > 0;
      if (counting) {  // what the file can hold, not what its count says
        const size_t n = std::min<size_t>(size_t(natoms), end - q);
        d.x.reserve(3 * n);
        if (force[0] >= 0) d.f.reserve(3 * n);
      }
      for (; r < end && lines[r].text.rfind("ITEM:", 0) != 0; ++r) {
        const Line& a = lines[r];
        const std::vector<std::string> v = split_fields(a.text);
        if (v.empty()) continue;
        ++rows;
        if (counting && rows > natoms) continue;
        if (v.size() != cols.size()) {
          errs.add(a.no, std::to_string(v.size()) + " fields, ITEM: ATOMS (line " + std::to_string(l.no) + ") names " +
                             std::to_string(cols.size()));
          continue;
        }
        std::vector<double> num(v.size(), 0.0);
        bool ok = true;
        auto need = [&](int c) {
          if (c < 0 || !ok) return;
          if (!parse_number(v[c], &num[c])) {
            errs.add(a.no, "column " + cols[c] + " (field " + std::to_string(c + 1) + "): \"" + v[c].substr(0, 30) +
                               "\" is not a number");
            ok = false;
          }
        };
        for (int k = 0; k < 3; ++k) {
          need(pos[k]);
          need(force[k]);
        }
        need(ecol);
        for (int c : bcols) need(c);
        long id = rows;
        if (idcol >= 0 && ok) {
          if (!parse_integer(v[idcol], &id)) {
            errs.add(a.no, "column id: \"" + v[idcol].substr(0, 30) + "\" is not an integer");
            ok = false;
          } else if (seen.count(id)) {
            errs.add(a.no, "atom id " + std::to_string(id) + " again (first on line " + std::to_string(seen[id]) + ")");
            ok = false;
          } else {
            seen[id] = a.no;
          }
        }
        if (!ok || pos[0] < 0) continue;
        double p[3] = {num[pos[0]], num[pos[1]], num[pos[2]]};
        if (scaled) {  // fractions of the box's edges
          const double s[3] = {p[0], p[1], p[2]};
          p[0] = d.lo[0] + s[0] * d.len[0] + s[1] * d.tilt[0] + s[2] * d.tilt[1];
          p[1] = d.lo[1] + s[1] * d.len[1] + s[2] * d.tilt[2];
          p[2] = d.lo[2] + s[2] * d.len[2];
        }
        d.id.push_back(id);
        d.x.insert(d.x.end(), p, p + 3);
        if (force[0] >= 0)
          for (int k = 0; k < 3; ++k) d.f.push_back(num[force[k]]);
        if (ecol >= 0) d.energy.push_back(num[ecol]);
        for (int c : bcols) d.b.push_back(num[c]);
      }
      if (natoms >= 0 && rows != natoms)
        errs.add(r < end ? lines[r].no : lines[r - 1].no,
                 std::to_string(rows) + " atom lines, NUMBER OF ATOMS (line " + std::to_string(natoms_line) + ") says " +
                     std::to_string(natoms));
      if (natoms > 0) d.natoms = int(natoms);
      q = r - 1;
    } else {
      // Another item (UNITS, TIME, ...): its value lines are skipped.
      (void)head;
      while (q + 1 < end && lines[q + 1].text.rfind("ITEM:", 0) != 0) ++q;
    }
  }
  if (d.x.empty() && !errs.any())
    errs.add(lines[begin].no, "timestep " + std::to_string(d.timestep) + " has no ITEM: ATOMS section");
  errs.raise();
  return d;
}

// A user's configuration and potential: the dump's timestep (PM_SNAP_TIMESTEP,
// else the first) and the potential <prefix>.snapparam / .snapcoeff, prefix
// PM_SNAP_POTENTIAL or else the dump's path without its extension.
struct UserConfig {
  DumpFrame frame;
  Potential pot;
  std::string potential_prefix;
};

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

inline UserConfig load_user_config(const std::string& dump, std::string prefix = "") {
  long want = -1;
  const std::string ts = env_or("PM_SNAP_TIMESTEP", "");
  if (!ts.empty() && !parse_integer(ts, &want)) throw InputError("PM_SNAP_TIMESTEP: \"" + ts + "\" is not an integer");
  UserConfig u;
  if (prefix.empty()) prefix = env_or("PM_SNAP_POTENTIAL", "");
  if (prefix.empty()) {
    const size_t slash = dump.find_last_of('/'), dot = dump.find_last_of('.');
    prefix = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dump.substr(0, dot) : dump;
  }
  u.potential_prefix = prefix;
  std::ifstream probe(prefix + ".snapcoeff");
  if (!probe)
    throw InputError(dump + ": no potential: " + prefix + ".snapcoeff is not there (PM_SNAP_POTENTIAL=<prefix> names " +
                     "<prefix>.snapcoeff and <prefix>.snapparam)");
  u.pot = read_lammps_potential(prefix + ".snapparam", prefix + ".snapcoeff");
  u.frame = read_lammps_dump(dump, want);
  return u;
}

// The frame's problem with its neighbours for the potential's cutoff.
inline Problem user_problem(const UserConfig& u) {
  Problem pr = u.frame.problem();
  try {
    build_neighbours(pr, u.pot.p.rcut());
  } catch (const InputError& e) {
    throw InputError(u.frame.file + ": " + e.what());
  }
  return pr;
}

}  // namespace snap

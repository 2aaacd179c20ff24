// portmatrix harness: run-time tunables. A generated program reads its
// launch parameters (team size, vector length, rows per team, max_teams, ...)
// through tune() each time a kernel is called, so one process measures many
// configurations over the same data: Run::measure sets the current one
// (--config, --configs). --defaults gives values of the tunables no
// configuration names (the machine model's launch defaults, docs/machines.md).
// docs/tuning.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace pm {

// Tunables: a generated program reads its launch parameters through tune()
// each time a kernel is called, so one process measures many configurations
// over the same data (measure() sets the current configuration).
struct Tuning {
  const std::vector<std::pair<std::string, int64_t>>* config = nullptr;  // null: the generated values
  // --defaults: what tune() returns for a name config does not hold, in
  // place of the generated value.
  const std::vector<std::pair<std::string, int64_t>>* defaults = nullptr;
  std::vector<std::string> read;  // the names tune() was asked for under config or defaults
  // --team-shared-limit: a team launch with more level-0 scratch dies
  // (pm::check_team_scratch), on the host too, where no device limits it
  // (a test checks the tuner's scratch_bytes against the program so).
  int64_t team_shared_limit = 0;
};
inline Tuning& tuning() {
  static Tuning t;
  return t;
}

// tune returns the current configuration's value of name, else its
// default (--defaults), else generated. Tunables are positive, but for one
// generated as 0, whose 0 is the layer's own choice (range_teams: one wave;
// range_num_teams: no clause); a 0 for any other dies as --config's parse
// does for a negative value.
inline int64_t tune(const char* name, int64_t generated) {
  Tuning& t = tuning();
  if (!t.config && !t.defaults) return generated;
  if (std::find(t.read.begin(), t.read.end(), name) == t.read.end()) t.read.emplace_back(name);
  for (const auto* set : {t.config, t.defaults})
    if (set)
      for (const auto& kv : *set)
        if (kv.first == name) {
          if (kv.second == 0 && generated != 0) {
            std::fprintf(stderr, "portmatrix harness: %s: tunables are positive: %s=0\n",
                         set == t.config ? "--config" : "--defaults", name);
            std::exit(2);
          }
          return kv.second;
        }
  return generated;
}

// The num_teams and thread_limit clauses of a plain OpenMP range reduction
// (kk-omp, omp-raw, omp-lambda, omp-class): the run-time tunables
// range_num_teams and range_thread_limit, both given or both 0 (no clause,
// the as-published launch; variants/tuning.yaml's constraint). One alone is
// not a launch the program makes: it dies rather than measure another.
struct RangeClauses {
  int num_teams, thread_limit;
  bool given() const { return num_teams > 0; }
};
inline RangeClauses range_clauses() {
  const RangeClauses c{static_cast<int>(tune("range_num_teams", 0)), static_cast<int>(tune("range_thread_limit", 0))};
  if ((c.num_teams > 0) != (c.thread_limit > 0)) {
    std::fprintf(stderr, "portmatrix: range_num_teams=%d and range_thread_limit=%d: give both or neither\n", c.num_teams,
                 c.thread_limit);
    std::exit(2);
  }
  return c;
}

}  // namespace pm

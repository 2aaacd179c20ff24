// Positioned, collected errors of a user's input file ("file:line: what is
// wrong", every problem found) and the number parsing the readers share
// (lammps_dump.hpp, problem.hpp's potential reader). Host only.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace snap {

// An input file that cannot be used; what() holds one "file:line: ..." line
// per problem.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Positioned errors of one file, collected and thrown together.
class InputErrors {
 public:
  explicit InputErrors(std::string file) : file_(std::move(file)) {}
  void add(long line, const std::string& msg) {
    if (list_.size() < kMax) list_.push_back(file_ + ":" + std::to_string(line) + ": " + msg);
    ++count_;
  }
  bool any() const { return count_ > 0; }
  void raise() const {
    if (!any()) return;
    std::string all;
    for (const std::string& e : list_) all += (all.empty() ? "" : "\n") + e;
    if (count_ > kMax) all += "\n" + file_ + ": " + std::to_string(count_ - kMax) + " more problems";
    throw InputError(all);
  }

 private:
  static constexpr size_t kMax = 20;
  std::string file_;
  std::vector<std::string> list_;
  size_t count_ = 0;
};

// The whole text of a number, or false (strtod alone accepts "1.5abc").
inline bool parse_number(const std::string& s, double* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(*v) && errno != ERANGE;
}

inline bool parse_integer(const std::string& s, long* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtol(s.c_str(), &end, 10);
  return end == s.c_str() + s.size() && errno != ERANGE;
}

inline std::vector<std::string> split_fields(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> f;
  std::string s;
  while (ss >> s) f.push_back(s);
  return f;
}

}  // namespace snap

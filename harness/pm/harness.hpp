// portmatrix harness: the one protocol every generated program follows.
//
// Include a device header first (device_host.hpp, device_omptarget.hpp or
// device_cuda.hpp); it defines pm::device. Then per size:
//   1. arrays are initialised on the host with deterministic, non-trivial data,
//      the float64 reference runs on host copies, inputs go to the device once;
//      every device array has a guard zone before and after its data, filled
//      with a sentinel (a signalling NaN; a huge index as int64);
//   2. before every run, inputs are restored on the device and outputs poisoned
//      (all-ones bytes, a NaN), so a variant that writes nothing fails; then,
//      when on, the L2 (last-level cache) is flushed;
//   3. a first run, warm-ups and timed repetitions (device-synchronised) follow;
//      after EVERY run, outside the timed region, each output is compared with
//      the reference (NaN and Inf always fail) and every guard zone is checked.
//      The first and last runs copy outputs back and compare them on the host,
//      which must agree exactly with the device's comparison; the runs between
//      compare on the device, against a device copy of the reference (the host
//      reports the index of a failure). On the first and last runs the
//      read-only inputs are compared with their initial data (on the device,
//      with the device's initial copy, where they live there);
//   4. one JSON line goes to stdout: times, both byte counts, flops, the
//      verdict over all runs and the first failure.
// A failed verification is data (exit 0); only harness errors exit non-zero.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <unistd.h>
#include <cfloat>
#include <cstdarg>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <complex>  // float64 references may use std::complex (LCALS COUPLE)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "csr.hpp"
#include "matrix_market.hpp"
#include "tune.hpp"
#include "parallel.hpp"

namespace pm {

// Machine epsilon (2^-52); tolerance expressions are written in units of it.
constexpr double kEps = DBL_EPSILON;

enum class Flush { kAuto, kOn, kOff };

struct Options {
  std::vector<int64_t> sizes;
  int reps = 10;
  int warmup = 2;
  uint64_t seed = 20231;
  int64_t stream_bytes = 0;  // >0: also measure the device's STREAM copy, triad and dot
  Flush flush = Flush::kAuto;
  std::string cell;
  std::string toolchain;
  std::string cuda_sched = "auto";  // how the host waits for an NVIDIA GPU under OpenMP offload: auto, runtime
  std::string ref_cache;   // a folder the programs of one run share float64 references in ("": none)
  double rep_seconds = 0;  // >0: timed reps bounded to about this many seconds of calls, at least kMinReps
  // A composite kernel's last run, which times its sections (--sections
  // on|off): off in a tuning, which compares whole calls.
  bool sections = true;
  // The device comparisons (pm::device::diff, same) also where the host could
  // read the data: how the tests run them without a GPU.
  bool device_checks = false;
  // Tunable configurations (--config k=v,..., repeatable, or --configs FILE):
  // measure() runs its protocol once per configuration over the same data.
  // Empty: one measurement with the values the program was generated with.
  std::vector<std::vector<std::pair<std::string, int64_t>>> configs;
  // --defaults k=v,...: the values of tunables no configuration names, in
  // place of the generated ones (the machine model's launch defaults, the
  // papers' "as published" launch); records name them as "defaults".
  std::vector<std::pair<std::string, int64_t>> defaults;
};

// The fewest timed reps a time bound leaves (a measurement's interval needs
// several).
constexpr int kMinReps = 3;

// csr_input's argument for a kernel that needs a symmetric positive definite
// matrix (CG-Solve).
constexpr bool kNeedsSPD = true;

// The user's file a program measured instead of its generated data
// (PM_SNAP_DUMP, PM_MATRIX; docs/inputs.md): its records name it as "input".
inline std::string& user_input() {
  static std::string s;
  return s;
}

[[noreturn]] inline void die(const char* msg, const char* arg) {
  std::fprintf(stderr, "portmatrix harness: %s%s\n", msg, arg ? arg : "");
  std::exit(2);
}

inline int64_t parse_int(const char* s, const char* flag) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (!end || *end != '\0' || end == s) die("bad integer for ", flag);
  return v;
}

// parse_config reads "name=value,name=value" (a configuration of tunables;
// flag is the option it came with, for messages).
inline std::vector<std::pair<std::string, int64_t>> parse_config(const std::string& text,
                                                                 const char* flag = "--config") {
  const std::string f = flag;
  std::vector<std::pair<std::string, int64_t>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string kv = text.substr(start, comma - start);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) die((f + " wants name=value pairs, not ").c_str(), kv.c_str());
    const std::string name = kv.substr(0, eq);
    for (const auto& have : out)
      if (have.first == name) die((f + " names a tunable twice: ").c_str(), name.c_str());
    const int64_t v = parse_int(kv.substr(eq + 1).c_str(), flag);
    // 0 passes here: it is a value only of a tunable generated as 0 (pm::tune checks).
    if (v < 0) die((f + ": tunables are positive: ").c_str(), kv.c_str());
    out.emplace_back(name, v);
    start = comma + 1;
  }
  if (out.empty()) die((f + " is empty").c_str(), nullptr);
  return out;
}

// parse reads --size N (repeatable, or a comma list), --reps, --warmup, --seed,
// --stream-bytes, --flush-l2 auto|on|off, --cuda-sched auto|runtime (device_omptarget.hpp),
// --cell, --toolchain, --ref-cache DIR, --sections on|off,
// --rep-seconds S, --device-checks, --config k=v,... (repeatable),
// --configs FILE (a configuration per line, # comments), --defaults
// k=v,... (once) and --team-shared-limit BYTES. Without --size the default
// sizes apply.
// What --cuda-sched set (device::cuda_sched): "auto", or "" where nothing
// was set (the runtime's choice, or no NVIDIA GPU under OpenMP offload);
// records carry it as cuda_sched.
inline std::string& cuda_sched_set() {
  static std::string s;
  return s;
}

inline Options parse(int argc, char** argv, std::vector<int64_t> default_sizes) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) die("missing value for ", argv[i]);
      return argv[++i];
    };
    if (a == "--size") {
      std::string list = value();
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        o.sizes.push_back(parse_int(list.substr(start, comma - start).c_str(), "--size"));
        start = comma + 1;
      }
    } else if (a == "--reps") {
      o.reps = static_cast<int>(parse_int(value(), "--reps"));
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(parse_int(value(), "--warmup"));
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(parse_int(value(), "--seed"));
    } else if (a == "--stream-bytes") {
      o.stream_bytes = parse_int(value(), "--stream-bytes");
    } else if (a == "--flush-l2") {
      const std::string v = value();
      if (v == "auto")
        o.flush = Flush::kAuto;
      else if (v == "on" || v == "1")
        o.flush = Flush::kOn;
      else if (v == "off" || v == "0")
        o.flush = Flush::kOff;
      else
        die("--flush-l2 takes auto, on or off, not ", v.c_str());
    } else if (a == "--sections") {
      const std::string v = value();
      if (v != "on" && v != "off") die("--sections takes on or off, not ", v.c_str());
      o.sections = v == "on";
    } else if (a == "--cuda-sched") {
      o.cuda_sched = value();
      if (o.cuda_sched != "auto" && o.cuda_sched != "runtime")
        die("--cuda-sched takes auto or runtime, not ", o.cuda_sched.c_str());
    } else if (a == "--cell") {
      o.cell = value();
    } else if (a == "--toolchain") {
      o.toolchain = value();
    } else if (a == "--ref-cache") {
      o.ref_cache = value();
    } else if (a == "--config") {
      o.configs.push_back(parse_config(value()));
    } else if (a == "--defaults") {
      if (!o.defaults.empty()) die("--defaults given twice", nullptr);
      o.defaults = parse_config(value(), "--defaults");
    } else if (a == "--configs") {
      const char* path = value();
      FILE* f = std::fopen(path, "r");
      if (!f) die("--configs: cannot open ", path);
      char line[4096];
      while (std::fgets(line, sizeof line, f)) {
        std::string l(line);
        while (!l.empty() && (l.back() == '\n' || l.back() == '\r' || l.back() == ' ')) l.pop_back();
        if (l.empty() || l[0] == '#') continue;
        o.configs.push_back(parse_config(l));
      }
      std::fclose(f);
      if (o.configs.empty()) die("--configs: no configuration in ", path);
    } else if (a == "--team-shared-limit") {
      tuning().team_shared_limit = parse_int(value(), "--team-shared-limit");
      if (tuning().team_shared_limit <= 0) die("--team-shared-limit takes a positive number of bytes", nullptr);
    } else if (a == "--device-checks") {
      o.device_checks = true;
    } else if (a == "--rep-seconds") {
      const char* v = value();
      char* end = nullptr;
      o.rep_seconds = std::strtod(v, &end);
      if (!end || *end != '\0' || end == v || !(o.rep_seconds >= 0) || !std::isfinite(o.rep_seconds))
        die("--rep-seconds takes a number of seconds, not ", v);
    } else {
      die("unknown flag ", argv[i]);
    }
  }
  if (o.sizes.empty()) o.sizes = default_sizes;
  if (o.reps < 1) die("--reps must be at least 1", nullptr);
  if (o.warmup < 0) die("--warmup must not be negative", nullptr);
  for (int64_t s : o.sizes)
    if (s < 1) die("sizes must be positive", nullptr);
  // Before any device call: the offload runtime starts with the first.
  cuda_sched_set() = device::cuda_sched(o.cuda_sched);
  return o;
}

// Deterministic data: splitmix64 keyed by seed, array and element.
inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline double uniform(uint64_t key, uint64_t i) { return (mix(key ^ mix(i)) >> 11) * 0x1.0p-53; }
inline uint64_t key_of(uint64_t seed, const char* name) {
  uint64_t h = seed * 0x100000001B3ull;
  for (const char* c = name; *c; ++c) h = mix(h ^ static_cast<unsigned char>(*c));
  return h;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Seconds since an arbitrary start (the host's steady clock).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

enum Intent { kIn, kOut, kInOut, kScratch };

// digest hashes bytes in fixed 4 MiB blocks (in parallel, combined in order:
// the same value on any number of threads), to key cached references by the
// inputs they were computed from.
inline uint64_t digest(const void* data, size_t bytes, uint64_t h);

// ---------------------------------------------------------------------------
// Seconds spent copying data to the device in this process (a record's
// upload_s is its share).
inline double& upload_seconds() {
  static double s = 0;
  return s;
}
inline void upload_timed(void* dev, const void* host, size_t bytes) {
  const double t = now_s();
  device::to_device(dev, host, bytes);
  upload_seconds() += now_s() - t;
}

// ---------------------------------------------------------------------------
// Guarded device memory: kGuardBytes before and after the data, filled with a
// sentinel whose 64-bit words read as a signalling NaN (a double) or a huge
// index (an int64), so that reading a guard also spoils the result.
constexpr size_t kGuardBytes = 4096;
constexpr uint64_t kSentinel = 0x7FF4DEADBEEF5A5Aull;

inline const std::vector<uint64_t>& sentinel_block() {
  static const std::vector<uint64_t> s(kGuardBytes / sizeof(uint64_t), kSentinel);
  return s;
}

class Guarded {
 public:
  Guarded() = default;
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  ~Guarded() {
    if (base_) device::release(base_);
  }
  void allocate(size_t bytes, const char* name) {
    bytes_ = bytes;
    base_ = static_cast<char*>(device::alloc(bytes + 2 * kGuardBytes));
    if (!base_) die("device allocation failed for ", name);
    device::to_device(base_, sentinel_block().data(), kGuardBytes);
    device::to_device(base_ + kGuardBytes + bytes, sentinel_block().data(), kGuardBytes);
  }
  void* data() const { return base_ + kGuardBytes; }
  size_t bytes() const { return bytes_; }
  // damage returns "" when both guard zones hold the sentinel, else which changed.
  std::string damage() const {
    const bool before = changed(base_), after = changed(base_ + kGuardBytes + bytes_);
    if (before && after) return "writes before the start and past the end (both guard zones changed)";
    if (before) return "writes before the start (guard zone before the data changed)";
    if (after) return "writes past the end (guard zone after the data changed)";
    return "";
  }

 private:
  static bool changed(const char* dev) {
    uint64_t got[kGuardBytes / sizeof(uint64_t)];
    device::to_host(got, dev, kGuardBytes);
    return std::memcmp(got, sentinel_block().data(), kGuardBytes) != 0;
  }
  char* base_ = nullptr;
  size_t bytes_ = 0;
};

// A host view of device data: the device memory itself where the host can
// read it, else a copy in one staging buffer the process shares (pinned where
// the device has it; checks run one at a time), grown when a larger read comes.
class HostView {
 public:
  const void* read(const void* dev, size_t bytes) {
    if (device::host_accessible()) return dev;
    Stage& s = stage();
    if (bytes > s.capacity || !s.data) {
      if (s.data) device::host_release(s.data);
      s.capacity = bytes ? bytes : 64;
      s.data = device::host_alloc(s.capacity);
      if (!s.data) die("host staging allocation failed", nullptr);
    }
    device::to_host(s.data, dev, bytes);
    return s.data;
  }

 private:
  // Never released: the process ends with it (a static's destructor would run
  // after the device runtime may have shut down).
  struct Stage {
    void* data = nullptr;
    size_t capacity = 0;
  };
  static Stage& stage() {
    static Stage s;
    return s;
  }
};

// Comparison of one array with the reference: normwise relative error
// max|got-ref| / max|ref|, and the non-finite values of got. Large arrays are
// compared by several host threads (a 1e8-double output after every run).
struct Compare {
  double err = 0;          // NaN when got holds a NaN or Inf
  int64_t nonfinite = 0;   // how many
  int64_t first_bad = -1;  // first non-finite index
  int64_t worst = -1;      // index of the largest |got-ref|
  double num = 0, den = 0;
};
template <class T>
Compare compare_range(const T* got, const T* ref, int64_t lo, int64_t hi) {
  Compare c;
  for (int64_t i = lo; i < hi; ++i) {
    const double g = static_cast<double>(got[i]), r = static_cast<double>(ref[i]);
    if (!(std::fabs(g) <= DBL_MAX)) {
      if (c.nonfinite++ == 0) c.first_bad = i;
      continue;
    }
    const double d = std::fabs(g - r);
    if (d > c.num) {
      c.num = d;
      c.worst = i;
    }
    c.den = std::max(c.den, std::fabs(r));
  }
  return c;
}
template <class T>
Compare compare(const T* got, const T* ref, int64_t n) {
  Compare c;
  const std::vector<Compare> parts =
      parallel_map(n, [&](int64_t lo, int64_t hi) { return compare_range(got, ref, lo, hi); });
  for (const Compare& p : parts) {  // in index order: the first non-finite stays first
    if (p.nonfinite && c.nonfinite == 0) c.first_bad = p.first_bad;
    c.nonfinite += p.nonfinite;
    if (p.num > c.num) {
      c.num = p.num;
      c.worst = p.worst;
    }
    c.den = std::max(c.den, p.den);
  }
  c.err = c.nonfinite ? std::numeric_limits<double>::quiet_NaN() : (c.den > 0 ? c.num / c.den : c.num);
  return c;
}

// A Check collects what one run did wrong.
struct Check {
  double tolerance = 0;
  // The last run compares outputs on the host too (and the device's
  // comparison with the host's); the first and the last compare read-only
  // data with its initial copy. Every run compares outputs on the device
  // where the data lives there.
  bool full = false;
  bool inputs = false;
  bool on_device = false;  // compare with pm::device::diff and same
  double err = 0;     // largest relative error of the run's outputs; NaN: not finite
  std::string failure;
  void fail(const std::string& what) {
    if (failure.empty()) failure = what;
  }
  void error(double e) {
    if (!(e == e) || !(err == err))
      err = std::numeric_limits<double>::quiet_NaN();
    else
      err = std::max(err, e);
  }
};

class Buffer {
 public:
  explicit Buffer(std::string name) : name_(std::move(name)) {}
  virtual ~Buffer() = default;
  virtual void restore() = 0;         // inputs back, outputs poisoned
  virtual void check(Check& c) = 0;   // after a run
  virtual size_t bytes() const = 0;   // data bytes on the device (the working set)
  // For cached references: the hash of the initial data the reference reads,
  // and the reference's copy of a checked output (nullptr: none).
  virtual uint64_t digest_inputs(uint64_t h) const { return h; }
  virtual void* checked_ref(size_t* bytes) {
    *bytes = 0;
    return nullptr;
  }
  virtual void reset_ref() {}  // the reference's copy back to its initial data
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

class Run;

template <class T>
class Array : public Buffer {
 public:
  Array(Run& run, const char* name, int64_t n, Intent intent);
  ~Array() override {
    if (pristine_) device::release(pristine_);
    if (ref_dev_) device::release(ref_dev_);
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  void fill_random(uint64_t seed, double lo, double hi) {
    const uint64_t key = key_of(seed, name().c_str());
    T* h = host_.data();  // first touch in the filling threads
    parallel_parts(n_, [&](int64_t a, int64_t b) {
      for (int64_t i = a; i < b; ++i) h[i] = static_cast<T>(lo + (hi - lo) * uniform(key, i));
    });
    upload();
  }
  void fill_zero() {
    host_.fill(T(0));
    upload();
  }
  // Element i is f(i): data a kernel's description computes (an index list).
  template <class F>
  void fill_with(F f) {
    for (int64_t i = 0; i < n_; ++i) host_[i] = static_cast<T>(f(i));
    upload();
  }
  // Values computed on the host (a SNAP reference stage, snap/pm_snap.hpp).
  void fill_values(const std::vector<double>& v) {
    if (static_cast<int64_t>(v.size()) != n_) die("fill_values: wrong number of values for ", name().c_str());
    for (int64_t i = 0; i < n_; ++i) host_[i] = static_cast<T>(v[i]);
    upload();
  }
  // The host copy the reference reads and writes: an input's own initial data
  // (a reference that wrote it would fail the input check), else a copy.
  T* ref() { return intent_ == kIn ? host_.data() : ref_.data(); }
  T* dev() { return static_cast<T*>(mem_.data()); }
  int64_t size() const { return n_; }
  size_t bytes() const override { return mem_.bytes(); }
  uint64_t digest_inputs(uint64_t h) const override {
    return intent_ == kIn || intent_ == kInOut ? digest(host_.data(), mem_.bytes(), h) : h;
  }
  void* checked_ref(size_t* bytes) override {
    if (intent_ != kOut && intent_ != kInOut) return nullptr;
    *bytes = mem_.bytes();
    return ref_.data();
  }
  void reset_ref() override {
    if (intent_ == kInOut) ref_.copy_from(host_);
    if (intent_ == kOut) ref_.fill(T(0));
  }

  void restore() override {
    if (intent_ == kOut || !pristine_)
      device::poison(dev(), mem_.bytes());
    else
      device::copy(dev(), pristine_, mem_.bytes());
  }
  void check(Check& c) override {
    const std::string guard = mem_.damage();
    if (!guard.empty()) c.fail(name() + ": " + guard);
    const bool output = intent_ == kOut || intent_ == kInOut;
    if (output) check_output(c);
    else if (intent_ == kIn && c.inputs) {
      // Where the data lives on the device, its initial copy there is the
      // witness (no copy back); the host finds the index of a change.
      if (!c.on_device || !device::same(dev(), pristine_, mem_.bytes())) {
        const T* got = static_cast<const T*>(view_.read(dev(), mem_.bytes()));
        if (!same_bytes(got, host_.data(), mem_.bytes())) {
          int64_t i = 0;
          while (i < n_ && std::memcmp(&got[i], &host_[i], sizeof(T)) == 0) ++i;
          c.fail(format("%s: input changed by the kernel (first at index %" PRId64 ")", name().c_str(), i));
        }
      }
    }
  }

  // Outputs are double (compare and device::diff read doubles); an int64
  // array is an input (an index list), so its instantiation has no output.
  void check_output(Check& c) {
    if constexpr (!std::is_same_v<T, double>) {
      c.fail(name() + ": only double arrays are checked as outputs");
    } else {
      Compare k;
      if (!c.on_device) {
        k = compare(static_cast<const T*>(view_.read(dev(), mem_.bytes())), ref_.data(), n_);
      } else {
        // On the device: max|got-ref|, max|ref| and the non-finite count are
        // exact, so the host's comparison of a full check must agree.
        double d[3];
        device::diff(dev(), ref_dev(), n_, d);
        const double err = d[2] > 0 ? std::numeric_limits<double>::quiet_NaN() : (d[1] > 0 ? d[0] / d[1] : d[0]);
        if (c.full || !(err <= c.tolerance)) {  // the host says where
          k = compare(static_cast<const T*>(view_.read(dev(), mem_.bytes())), ref_.data(), n_);
          if (k.num != d[0] || k.den != d[1] || k.nonfinite != static_cast<int64_t>(d[2]))
            c.fail(format("%s: the device comparison (%.17g, %.17g, %.0f) disagrees with the host's (%.17g, %.17g, "
                          "%" PRId64 "): a harness bug",
                          name().c_str(), d[0], d[1], d[2], k.num, k.den, k.nonfinite));
        } else {
          k.err = err;
        }
      }
      c.error(k.err);
      if (k.nonfinite)
        c.fail(format("%s holds %" PRId64 " NaN/Inf values of %" PRId64 " (first at index %" PRId64 "): not written?",
                      name().c_str(), k.nonfinite, n_, k.first_bad));
      else if (!(k.err <= c.tolerance))
        c.fail(format("%s: error %.3g above tolerance %.3g (largest difference at index %" PRId64 ")",
                      name().c_str(), k.err, c.tolerance, k.worst));
    }
  }

 private:
  void upload() {
    if (intent_ != kIn) ref_.copy_from(host_);
    upload_timed(dev(), host_.data(), mem_.bytes());
    if (!pristine_) pristine_ = static_cast<T*>(device::alloc(mem_.bytes()));
    if (!pristine_) die("device allocation failed for the initial copy of ", name().c_str());
    device::copy(pristine_, dev(), mem_.bytes());
  }

  // The reference's output on the device, for the device comparison: copied
  // once, at the first check (the reference is complete by then).
  const T* ref_dev() {
    if (!ref_dev_) {
      ref_dev_ = static_cast<T*>(device::alloc(mem_.bytes()));
      if (!ref_dev_) die("device allocation failed for the reference copy of ", name().c_str());
      upload_timed(ref_dev_, ref_.data(), mem_.bytes());
    }
    return ref_dev_;
  }

  int64_t n_;
  Intent intent_;
  HostArray<T> host_, ref_;
  Guarded mem_;
  HostView view_;
  T* pristine_ = nullptr;  // device copy of the initial data, for restore() and the input check
  T* ref_dev_ = nullptr;
};

// A CSR matrix on the device, guarded; the reference reads the host copy.
// Read-only: a full check compares each part with its initial copy, on the
// device where it lives there.
class CsrArray : public Buffer {
 public:
  CsrArray(Run& run, const char* name, CsrHost m);
  ~CsrArray() override {
    for (void* p : pristine_)
      if (p) device::release(p);
  }
  Csr ref() const { return host_.view(); }
  Csr dev() const {
    return Csr{host_.nrows, host_.nnz(), static_cast<const int64_t*>(row_ptr_.data()),
               static_cast<const int64_t*>(col_idx_.data()), static_cast<const double*>(values_.data())};
  }
  void restore() override {}  // read-only
  size_t bytes() const override { return row_ptr_.bytes() + col_idx_.bytes() + values_.bytes(); }
  uint64_t digest_inputs(uint64_t h) const override {
    h = digest(host_.row_ptr.data(), host_.row_ptr.size() * sizeof(int64_t), h);
    h = digest(host_.col_idx.data(), host_.col_idx.size() * sizeof(int64_t), h);
    return digest(host_.values.data(), host_.values.size() * sizeof(double), h);
  }
  void check(Check& c) override {
    part(c, "row_ptr", row_ptr_, host_.row_ptr.data(), pristine_[0]);
    part(c, "col_idx", col_idx_, host_.col_idx.data(), pristine_[1]);
    part(c, "values", values_, host_.values.data(), pristine_[2]);
  }

 private:
  template <class T>
  void upload(Guarded& g, const HostArray<T>& v, const char* what, void** pristine, bool on_device) {
    const size_t bytes = static_cast<size_t>(v.size()) * sizeof(T);
    g.allocate(bytes, what);
    upload_timed(g.data(), v.data(), bytes);
    if (!on_device) return;
    *pristine = device::alloc(bytes);
    if (!*pristine) die("device allocation failed for the initial copy of ", what);
    device::copy(*pristine, g.data(), bytes);
  }
  void part(Check& c, const char* what, Guarded& g, const void* initial, const void* pristine) {
    const std::string guard = g.damage();
    if (!guard.empty()) c.fail(name() + "." + what + ": " + guard);
    if (!c.inputs) return;
    const bool same = c.on_device && pristine ? device::same(g.data(), pristine, g.bytes())
                               : same_bytes(view_.read(g.data(), g.bytes()), initial, g.bytes());
    if (!same) c.fail(name() + "." + what + ": input changed by the kernel");
  }
  CsrHost host_;
  Guarded row_ptr_, col_idx_, values_;
  void* pristine_[3] = {nullptr, nullptr, nullptr};
  HostView view_;
};

// ---------------------------------------------------------------------------
// L2 flush: a pass over a buffer of device::flush_bytes() (at least twice
// the last-level cache) between the restore of the data and the timed call,
// so that a rep finds none of its arrays in the cache; a GPU's reads it
// (leaving no dirty line for the timed call to write back), the host's
// writes it (device::flush_by, the record's flush_by). auto: on for a GPU (the
// restore itself leaves the last L2-size of the arrays resident at any size;
// the flush costs tens of microseconds), on for the host when the working set
// fits in the flush size (the flush costs milliseconds there).
inline bool flush_wanted(Flush f, double working_set) {
  switch (f) {
    case Flush::kOn:
      return true;
    case Flush::kOff:
      return false;
    default:
      return device::is_gpu() || working_set <= static_cast<double>(device::flush_bytes());
  }
}

// Sections time the kernels a composite (CG-Solve) calls, in one extra
// untimed-for-the-record run: each call is synchronised and timed.
struct SectionStat {
  int64_t calls = 0;
  double seconds = 0, bytes = 0, bytes_min = 0;
};
inline std::map<std::string, SectionStat>& sections() {
  static std::map<std::string, SectionStat> s;
  return s;
}
inline bool& sections_on() {
  static bool on = false;
  return on;
}
// One timer for all sections, made on first use in the sections run: a
// Section outside it creates nothing (no CUDA events in timed regions).
inline device::Timer& section_timer() {
  static device::Timer t;
  return t;
}
class Section {
 public:
  Section(const char* name, double bytes, double bytes_min) : name_(name), bytes_(bytes), bytes_min_(bytes_min) {
    if (sections_on()) section_timer().start();
  }
  ~Section() {
    if (!sections_on()) return;
    SectionStat& s = sections()[name_];
    s.seconds += section_timer().stop();
    s.calls++;
    s.bytes += bytes_;
    s.bytes_min += bytes_min_;
  }

 private:
  const char* name_;
  double bytes_, bytes_min_;
};

inline void json_string(const std::string& s) {
  std::putchar('"');
  for (char c : s) {
    if (c == '"' || c == '\\') std::putchar('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      std::printf("\\u%04x", c);
      continue;
    }
    std::putchar(c);
  }
  std::putchar('"');
}

// host_threads appends the context scheduling the harness set for an
// NVIDIA GPU under OpenMP offload (cuda_sched, --cuda-sched) and, to a
// record of code that ran on the host (host
// programs and the OpenMP target fallback), the threads it ran with and how
// they were bound: OpenMP's thread count and proc-bind policy (1 and "none"
// without OpenMP), OMP_PLACES as set, and the CPUs the process may run on,
// so that threads > cpus shows an oversubscribed run.
inline void host_threads() {
  if (!cuda_sched_set().empty()) std::printf(",\"cuda_sched\":\"%s\"", cuda_sched_set().c_str());
  if (device::is_gpu()) return;
  int threads = 1;
  const char* bind = "none";
#ifdef _OPENMP
  threads = omp_get_max_threads();
  switch (omp_get_proc_bind()) {
    case omp_proc_bind_false: bind = "false"; break;
    case omp_proc_bind_true: bind = "true"; break;
    case omp_proc_bind_close: bind = "close"; break;
    case omp_proc_bind_spread: bind = "spread"; break;
    default: bind = "primary"; break;  // omp_proc_bind_master, renamed primary in OpenMP 5.1
  }
#endif
  std::printf(",\"threads\":%d,\"bind\":\"%s\"", threads, bind);
  const char* places = std::getenv("OMP_PLACES");
  if (places && *places) {
    std::printf(",\"places\":");
    json_string(places);
  }
  // With places, libgomp binds the initial thread to the first place before
  // main, so its affinity shows one core: the process's CPUs are then the
  // places' (which libgomp builds from the mask it started with).
  cpu_set_t set;
  CPU_ZERO(&set);
  bool known = false;
#ifdef _OPENMP
  for (int p = 0; p < omp_get_num_places(); ++p) {
    int ids[CPU_SETSIZE];
    const int n = omp_get_place_num_procs(p);
    if (n <= 0 || n > CPU_SETSIZE) continue;
    omp_get_place_proc_ids(p, ids);
    for (int k = 0; k < n; ++k)
      if (ids[k] >= 0 && ids[k] < CPU_SETSIZE) CPU_SET(ids[k], &set);
    known = true;
  }
#endif
  if (!known) known = sched_getaffinity(0, sizeof set, &set) == 0;
  if (known) std::printf(",\"cpus\":%d", CPU_COUNT(&set));
}

inline void json_number(double v, const char* fmt) {
  if (std::isfinite(v))
    std::printf(fmt, v);
  else
    std::printf("null");
}

// clock_fields appends the clock of a record's times_s (device::kClock:
// "host", docs/results-format.md) and, where the device has events (CUDA,
// HIP), the event intervals of the same reps: the clock of older folders,
// kept so that a run measures how far the two differ.
inline void clock_fields(const std::vector<double>& events) {
  std::printf(",\"clock\":\"%s\"", device::kClock);
  if (events.empty()) return;
  std::printf(",\"event_times_s\":[");
  for (size_t i = 0; i < events.size(); ++i) std::printf("%s%.9g", i ? "," : "", events[i]);
  std::printf("],\"event_median_s\":%.9g,\"event_min_s\":%.9g", median(events),
              *std::min_element(events.begin(), events.end()));
}

inline uint64_t digest(const void* data, size_t bytes, uint64_t h) {
  constexpr size_t kBlock = size_t(4) << 20;
  const size_t blocks = (bytes + kBlock - 1) / kBlock;
  std::vector<uint64_t> part(blocks);
  const char* p = static_cast<const char*>(data);
  parallel_parts(static_cast<int64_t>(blocks) << 20, [&](int64_t lo, int64_t hi) {
    for (size_t b = static_cast<size_t>(lo >> 20); b < static_cast<size_t>(hi >> 20); ++b) {
      const size_t end = std::min(bytes, (b + 1) * kBlock);
      uint64_t x = mix(b);
      size_t i = b * kBlock;
      for (; i + 8 <= end; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        x = mix(x ^ w);
      }
      for (; i < end; ++i) x = mix(x ^ static_cast<unsigned char>(p[i]));
      part[b] = x;
    }
  });
  h = mix(h ^ bytes);
  for (uint64_t x : part) h = mix(h ^ x);
  return h;
}

// A float64 reference shared by the programs of one run (--ref-cache DIR):
// the first program of a (kernel, size, toolchain) to compute a slow one
// saves its checked outputs and result, keyed by the reference's rendered
// code (the generator's key), the seed, and a hash of every input it read;
// later programs load it when all of these match, else compute their own.
class RefCache {
 public:
  RefCache(const Options& opt, const char* kernel, int64_t size, const char* key, uint64_t inputs)
      : inputs_(inputs) {
    if (opt.ref_cache.empty()) return;
    uint64_t h = mix(opt.seed);
    for (const std::string& part : {std::string(kernel), std::to_string(size), opt.toolchain, std::string(key)})
      h = digest(part.data(), part.size(), h);
    path_ = format("%s/%s-%" PRId64 "-%016" PRIx64 ".ref", opt.ref_cache.c_str(), kernel, size, h);
  }
  // load fills the outputs' references and the result from the file when it
  // matches (inputs, and a hash of what it holds); false, with every
  // reference copy as it was, when there is none or it does not match.
  bool load(const std::vector<Buffer*>& buffers, double* result) {
    if (path_.empty()) return false;
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return false;
    uint64_t magic = 0, inputs = 0, count = 0, sum = 0;
    double r = 0;
    bool ok = read(f, &magic, 8) && magic == kMagic && read(f, &inputs, 8) && inputs == inputs_ && read(f, &sum, 8) &&
              read(f, &r, 8) && read(f, &count, 8) && count == outputs(buffers);
    bool touched = false;
    for (Buffer* b : buffers) {
      size_t bytes = 0;
      void* dst = b->checked_ref(&bytes);
      if (!ok || !dst) continue;
      uint64_t stored = 0;
      ok = read(f, &stored, 8) && stored == bytes;
      touched = touched || ok;
      ok = ok && read(f, dst, bytes);
    }
    std::fclose(f);
    ok = ok && contents(buffers, r) == sum;
    if (!ok && touched)
      for (Buffer* b : buffers) b->reset_ref();
    if (ok) *result = r;
    return ok;
  }
  void save(const std::vector<Buffer*>& buffers, double result) {
    if (path_.empty()) return;
    const std::string tmp = format("%s.%d.tmp", path_.c_str(), static_cast<int>(getpid()));
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return;  // a cache that cannot be written only costs time
    const uint64_t count = outputs(buffers), sum = contents(buffers, result);
    bool ok = std::fwrite(&kMagic, 8, 1, f) == 1 && std::fwrite(&inputs_, 8, 1, f) == 1 &&
              std::fwrite(&sum, 8, 1, f) == 1 && std::fwrite(&result, 8, 1, f) == 1 && std::fwrite(&count, 8, 1, f) == 1;
    for (Buffer* b : buffers) {
      size_t bytes = 0;
      const void* src = b->checked_ref(&bytes);
      if (!ok || !src) continue;
      const uint64_t n = bytes;
      ok = std::fwrite(&n, 8, 1, f) == 1 && (bytes == 0 || std::fwrite(src, bytes, 1, f) == 1);
    }
    ok = std::fclose(f) == 0 && ok;
    if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) std::remove(tmp.c_str());
  }

 private:
  static constexpr uint64_t kMagic = 0x3146455244524D50ull;  // "PMRDREF1"
  static bool read(std::FILE* f, void* dst, size_t bytes) { return bytes == 0 || std::fread(dst, bytes, 1, f) == 1; }
  static uint64_t contents(const std::vector<Buffer*>& buffers, double result) {
    uint64_t h = digest(&result, sizeof result, kMagic);
    for (Buffer* b : buffers) {
      size_t bytes = 0;
      if (const void* p = b->checked_ref(&bytes)) h = digest(p, bytes, h);
    }
    return h;
  }
  static uint64_t outputs(const std::vector<Buffer*>& buffers) {
    uint64_t n = 0;
    for (Buffer* b : buffers) {
      size_t bytes = 0;
      if (b->checked_ref(&bytes)) ++n;
    }
    return n;
  }
  uint64_t inputs_;
  std::string path_;
};

// References slower than this are saved for the run's other programs.
constexpr double kRefCacheSeconds = 0.25;

class Run {
 public:
  Run(const Options& opt, const char* kernel, int64_t size)
      : opt_(opt), kernel_(kernel), size_(size), created_(now_s()), uploaded_(upload_seconds()) {}
  void add(Buffer* b) { buffers_.push_back(b); }
  bool checks_on_device() const { return opt_.device_checks || !device::host_accessible(); }
  void work(double bytes, double bytes_min, double flops) {
    bytes_ = bytes;
    bytes_min_ = bytes_min;
    flops_ = flops;
  }
  // result registers a scalar the kernel returns, with its reference value.
  void result(double* got, double ref) {
    if (!std::isfinite(ref)) die("the reference result is not finite: a harness or description bug", nullptr);
    result_ = got;
    result_ref_ = ref;
  }
  // composite marks a kernel that calls others: a last run times each of
  // them (its sections), unless --sections off.
  void composite() { composite_ = opt_.sections; }

  // csr_input returns make(size), or the same matrix another program of the
  // run made (--ref-cache; a deterministic generator named generator): a
  // miniFE matrix of gigabytes is generated once per run, then mapped.
  // PM_MATRIX (a Matrix Market file, docs/inputs.md) replaces the generated
  // matrix at every size; needs_spd (kNeedsSPD: CG-Solve) refuses one that
  // is not symmetric or has a diagonal entry <= 0.
  CsrHost csr_input(const char* generator, int64_t size, CsrHost (*make)(int64_t), bool needs_spd = false) {
    if (const char* mtx = std::getenv("PM_MATRIX"); mtx && *mtx) return user_matrix(mtx, needs_spd);
    if (opt_.ref_cache.empty()) return make(size);
    const std::string path = format("%s/%s-%" PRId64 ".csr", opt_.ref_cache.c_str(), generator, size);
    CsrHost m;
    if (csr_load(path, &m)) return m;
    m = make(size);
    csr_save(path, m);  // a cache that cannot be written only costs time
    return m;
  }

  static CsrHost user_matrix(const char* path, bool needs_spd) {
    MatrixInfo info;
    CsrHost m;
    try {
      m = read_matrix_market(path, &info);
    } catch (const MatrixError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      die("PM_MATRIX: cannot use ", path);
    }
    if (needs_spd && !info.symmetric)
      die("PM_MATRIX: CG-Solve needs a symmetric positive definite matrix; not symmetric: ", path);
    if (needs_spd && !info.positive_diagonal)
      die("PM_MATRIX: CG-Solve needs a symmetric positive definite matrix; a diagonal entry is missing or <= 0: ", path);
    user_input() = format("%s (%" PRId64 " rows, %" PRId64 " non-zeros, %s %s)", path, m.nrows, m.nnz(),
                          info.field.c_str(), info.symmetry.c_str());
    return m;
  }

  // reference runs the float64 reference f (which returns the kernel's
  // result, or 0) on the host copies, or loads what another program of the
  // run computed from the same inputs (--ref-cache). key names the
  // reference's code.
  template <class F>
  double reference(const char* key, F f) {
    const double start = now_s();
    uint64_t inputs = mix(0x5EED);
    if (!opt_.ref_cache.empty())
      for (Buffer* b : buffers_) inputs = b->digest_inputs(inputs);
    RefCache cache(opt_, kernel_.c_str(), size_, key, inputs);
    double value = 0;
    if (cache.load(buffers_, &value)) {
      ref_cached_ = true;
    } else {
      value = f();
      if (now_s() - start >= kRefCacheSeconds) cache.save(buffers_, value);
    }
    reference_s_ = now_s() - start;
    return value;
  }

  // measure runs the protocol over call and prints the record. Every run is
  // checked after it ends; only the call itself is timed.
  // With --config, the protocol and its record repeat for each
  // configuration over the same data; the record names its configuration.
  template <class F>
  void measure(F call, double tolerance) {
    if (!(tolerance > 0) || !std::isfinite(tolerance)) die("the tolerance must be positive and finite", nullptr);
    tolerance_ = tolerance;
    for (Buffer* b : buffers_) working_set_ += static_cast<double>(b->bytes());
    flush_ = flush_wanted(opt_.flush, working_set_);
    // --defaults: values of the tunables no configuration names.
    if (!opt_.defaults.empty()) tuning().defaults = &opt_.defaults;
    if (opt_.configs.empty()) {
      tuning().read.clear();
      protocol(call);
      emit(nullptr);
      tuning().defaults = nullptr;
      return;
    }
    for (const auto& config : opt_.configs) {
      tuning().config = &config;
      tuning().read.clear();
      protocol(call);
      all_read(config, "--config");
      emit(&config);
      tuning().config = nullptr;
      // The next configuration starts a measurement of its own.
      times_.clear();
      event_times_.clear();
      runs_ = failed_ = 0;
      max_err_ = 0;
      nonfinite_ = false;
      first_failure_.clear();
      check_s_ = 0;
    }
    tuning().defaults = nullptr;
  }

 private:
  // all_read dies when set names a tunable the program never read: a
  // misspelt name would otherwise measure the generated value unnoticed.
  // --defaults is not held to it: the run passes a strategy's model defaults
  // (names checked where variants/strategies.yaml is loaded) to each of its
  // programs, and a program may not read one (a team launch with team
  // scratch takes its teams by occupancy, not max_teams); the record names
  // only the defaults the program read.
  static void all_read(const std::vector<std::pair<std::string, int64_t>>& set, const char* flag) {
    const auto& read = tuning().read;
    for (const auto& kv : set)
      if (std::find(read.begin(), read.end(), kv.first) == read.end()) {
        std::string known;
        for (const auto& r : read) known += (known.empty() ? "" : ", ") + r;
        die(format("%s: %s is no run-time tunable of this program (it reads: %s)", flag, kv.first.c_str(),
                   known.empty() ? "none" : known.c_str())
                .c_str(),
            nullptr);
      }
  }

  template <class F>
  void protocol(F call) {
    reps_ = opt_.reps;
    warmup_ = opt_.warmup;
    int total = 1 + warmup_ + reps_ + (composite_ ? 1 : 0);
    device::Timer timer;  // made before the loop: nothing is created in a timed region
    const double start = now_s();
    // Data, uploads and the reference are paid once per process: the first
    // record says what they cost, the records of later configurations 0.
    setup_s_ = measured_ ? 0 : start - created_;
    upload_s_ = measured_ ? 0 : upload_seconds() - uploaded_;
    if (measured_) reference_s_ = 0;
    measured_ = true;
    for (int r = 0; r < total; ++r) {
      const bool timed = r > warmup_ && r <= warmup_ + reps_;
      const bool sectioned = composite_ && r == total - 1;
      prepare();
      if (sectioned) {
        sections().clear();
        sections_on() = true;
      }
      if (timed) {
        timer.start();
        call();
        times_.push_back(timer.stop());
        if (device::kHasEvents) event_times_.push_back(timer.event_s());
      } else {
        const double called = now_s();
        call();
        device::sync();
        // --rep-seconds: a first run that alone takes that long has warmed
        // up (what a call sets up once is a small part of it): no warm-ups.
        // The last untimed run sizes the timed ones.
        const double each = now_s() - called;
        if (r == 0 && opt_.rep_seconds > 0 && each >= opt_.rep_seconds) warmup_ = 0;
        if (r == warmup_ && opt_.rep_seconds > 0) {
          const int fit = each > 0 ? static_cast<int>(std::min(opt_.rep_seconds / each, 1e6)) : opt_.reps;
          reps_ = std::max(std::min(opt_.reps, kMinReps), std::min(opt_.reps, fit));
        }
        total = 1 + warmup_ + reps_ + (composite_ ? 1 : 0);
      }
      sections_on() = false;
      const double checking = now_s();
      check(r, total);
      check_s_ += now_s() - checking;
    }
    measure_s_ = now_s() - start;
  }

  void prepare() {
    for (Buffer* b : buffers_) b->restore();
    if (result_) *result_ = std::numeric_limits<double>::quiet_NaN();
    device::sync();
    if (flush_) device::flush();
  }
  std::string phase(int r) const {
    if (r == 0) return "first run";
    if (r <= warmup_) return format("warm-up %d", r);
    if (r <= warmup_ + reps_) return format("timed rep %d", r - warmup_);
    return "sections run";
  }
  void check(int r, int total) {
    Check c;
    c.tolerance = tolerance_;
    c.full = r == total - 1;
    c.inputs = r == 0 || c.full;
    c.on_device = checks_on_device();
    for (Buffer* b : buffers_) b->check(c);
    if (result_) {
      const double got = *result_;
      if (!std::isfinite(got)) {
        c.error(std::numeric_limits<double>::quiet_NaN());
        c.fail("the result is NaN/Inf: not computed?");
      } else {
        const double d = std::fabs(got - result_ref_);
        const double e = result_ref_ != 0 ? d / std::fabs(result_ref_) : d;
        c.error(e);
        if (!(e <= tolerance_)) c.fail(format("the result: error %.3g above tolerance %.3g", e, tolerance_));
      }
    }
    runs_++;
    if (c.err == c.err) {
      max_err_ = std::max(max_err_, c.err);
    } else {
      nonfinite_ = true;
    }
    if (!c.failure.empty()) {
      if (failed_++ == 0) first_failure_ = format("run %d of %d (%s): ", r + 1, total, phase(r).c_str()) + c.failure;
    }
  }
  void emit(const std::vector<std::pair<std::string, int64_t>>* config) {
    const double med = median(times_);
    const double mn = *std::min_element(times_.begin(), times_.end());
    const bool ok = failed_ == 0;
    std::printf("{\"kind\":\"kernel\",\"cell\":");
    json_string(opt_.cell);
    std::printf(",\"toolchain\":");
    json_string(opt_.toolchain);
    std::printf(",\"kernel\":");
    json_string(kernel_);
    std::printf(",\"device\":");
    json_string(device::name());
    host_threads();
    if (!user_input().empty()) {
      std::printf(",\"input\":");
      json_string(user_input());
    }
    std::printf(",\"size\":%" PRId64 ",\"reps\":%d,\"warmup\":%d,\"seed\":%" PRIu64 ",\"times_s\":[", size_, reps_,
                warmup_, opt_.seed);
    for (size_t i = 0; i < times_.size(); ++i) std::printf("%s%.9g", i ? "," : "", times_[i]);
    std::printf("],\"median_s\":%.9g,\"min_s\":%.9g", med, mn);
    clock_fields(event_times_);
    std::printf(",\"bytes\":%.17g,\"bytes_min\":%.17g,\"flops\":%.17g", bytes_, bytes_min_, flops_);
    std::printf(",\"gbps\":%.6g,\"gbps_min\":%.6g,\"gflops\":%.6g", bytes_ / med * 1e-9, bytes_min_ / med * 1e-9,
                flops_ / med * 1e-9);
    std::printf(",\"working_set_bytes\":%.17g,\"flush_l2\":%s,\"flush_bytes\":%.17g", working_set_,
                flush_ ? "true" : "false", static_cast<double>(device::flush_bytes()));
    if (flush_) std::printf(",\"flush_by\":\"%s\"", device::flush_by());
    std::printf(",\"verified\":%s,\"runs_checked\":%d,\"runs_failed\":%d,\"max_rel_err\":", ok ? "true" : "false",
                runs_, failed_);
    json_number(nonfinite_ ? NAN : max_err_, "%.6g");
    std::printf(",\"tolerance\":%.6g", tolerance_);
    // Where the process's time went: data and reference before the first run,
    // all runs with their checks, the checks alone.
    std::printf(",\"setup_s\":%.4g,\"measure_s\":%.4g,\"check_s\":%.4g", setup_s_, measure_s_, check_s_);
    // Of the setup, the reference (computed, or loaded from --ref-cache).
    std::printf(",\"reference_s\":%.4g,\"reference_cached\":%s", reference_s_, ref_cached_ ? "true" : "false");
    // Of the setup, the copies of data to the device.
    std::printf(",\"upload_s\":%.4g", upload_s_);
    if (composite_) {
      std::printf(",\"sections\":{");
      bool first = true;
      for (const auto& kv : sections()) {
        std::printf("%s", first ? "" : ",");
        first = false;
        json_string(kv.first);
        std::printf(":{\"calls\":%" PRId64 ",\"seconds\":%.9g,\"bytes\":%.17g,\"bytes_min\":%.17g}", kv.second.calls,
                    kv.second.seconds, kv.second.bytes, kv.second.bytes_min);
      }
      std::printf("}");
    }
    if (config) {
      std::printf(",\"config\":{");
      for (size_t i = 0; i < config->size(); ++i) {
        std::printf("%s", i ? "," : "");
        json_string((*config)[i].first);
        std::printf(":%" PRId64, (*config)[i].second);
      }
      std::printf("}");
    }
    // The defaults in effect: those the program read and no configuration replaced.
    bool first_default = true;
    const auto& read = tuning().read;
    for (const auto& kv : opt_.defaults) {
      if (std::find(read.begin(), read.end(), kv.first) == read.end()) continue;
      bool replaced = false;
      if (config)
        for (const auto& c : *config) replaced = replaced || c.first == kv.first;
      if (replaced) continue;
      std::printf("%s", first_default ? ",\"defaults\":{" : ",");
      first_default = false;
      json_string(kv.first);
      std::printf(":%" PRId64, kv.second);
    }
    if (!first_default) std::printf("}");
    std::printf(",\"error\":");
    json_string(ok ? "" : format("verification failed in %d of %d runs; first: ", failed_, runs_) + first_failure_);
    std::printf("}\n");
    std::fflush(stdout);
  }

  const Options& opt_;
  std::string kernel_;
  int64_t size_;
  std::vector<Buffer*> buffers_;
  std::vector<double> times_;
  std::vector<double> event_times_;  // the same reps' CUDA-event intervals (device::kHasEvents)
  double bytes_ = 0, bytes_min_ = 0, flops_ = 0, tolerance_ = 0, max_err_ = 0, working_set_ = 0;
  bool nonfinite_ = false, flush_ = false;
  int runs_ = 0, failed_ = 0;
  std::string first_failure_;
  double* result_ = nullptr;
  double result_ref_ = 0;
  bool composite_ = false;
  double created_ = 0, uploaded_ = 0, setup_s_ = 0, upload_s_ = 0, measure_s_ = 0, check_s_ = 0, reference_s_ = 0;
  bool ref_cached_ = false, measured_ = false;
  int reps_ = 0, warmup_ = 0;
};

template <class T>
Array<T>::Array(Run& run, const char* name, int64_t n, Intent intent)
    : Buffer(name), n_(n), intent_(intent), host_(intent == kOut ? 0 : n), ref_(intent == kIn ? 0 : n) {
  if (intent == kOut) ref_.fill(T(0));  // what a reference leaves unwritten reads as zero
  mem_.allocate(static_cast<size_t>(n) * sizeof(T), name);
  run.add(this);
}

inline CsrArray::CsrArray(Run& run, const char* name, CsrHost m) : Buffer(name), host_(std::move(m)) {
  const bool on_device = run.checks_on_device();
  upload(row_ptr_, host_.row_ptr, "row_ptr", &pristine_[0], on_device);
  upload(col_idx_, host_.col_idx, "col_idx", &pristine_[1], on_device);
  upload(values_, host_.values, "values", &pristine_[2], on_device);
  run.add(this);
}

// ---------------------------------------------------------------------------
// STREAM, BabelStream's method: the device's own copy (c = a), triad (b = a +
// s*c) and dot (sum a*b) kernels over arrays well past the caches, each run
// kStreamRuns times (BabelStream's default num_times), every run timed like
// the kernels (device::Timer: the host clock, CUDA's events beside it), the
// best run the bandwidth (gbps_best; gbps is the median's, as elsewhere),
// checked once at the end. No cache flush: an array of at least four times
// the caches leaves little of it cached for the next op to find, as in
// BabelStream, and a flush would leave dirty lines for the op to write back.
// Bytes: copy 2, triad 3, dot 2 arrays. One "stream" record per op; the
// runtime's own device-to-device copy follows as a "copy" record.
constexpr int kStreamRuns = 100;
constexpr int kStreamMinRuns = 5;
constexpr int64_t kStreamGpuElements = int64_t(1) << 25;  // BabelStream's default array length

// stream_elements is the length of each STREAM array: what --stream-bytes
// asks (two arrays' worth), raised to four times the device's caches (on a
// host to at most 256 MiB an array: sysconf reports the socket's L3 on large
// AMD parts, whose cores each cache in their own 32 MiB slice, and 512 MiB on
// a 2-core virtual machine whose cores share a fraction of it, where three
// arrays of 1 GiB took about 20 s to fill and measure) and, on a GPU, to
// BabelStream's 2^25 doubles; lowered where the device says how much memory
// is free, so that the three arrays take at most half of it.
constexpr int64_t kStreamHostRaise = int64_t(1) << 28;
inline int64_t stream_elements(int64_t stream_bytes) {
  const int64_t word = static_cast<int64_t>(sizeof(double));
  int64_t n = stream_bytes / 2 / word;
  int64_t raise = 4 * static_cast<int64_t>(device::cache_bytes());
  if (!device::is_gpu()) raise = std::min(raise, kStreamHostRaise);
  n = std::max(n, raise / word);
  if (device::is_gpu()) n = std::max(n, kStreamGpuElements);
  const int64_t avail = static_cast<int64_t>(device::free_bytes());  // 0: not known
  if (avail > 0) n = std::min(n, avail / 6 / word);
  return n;
}

inline void stream_record(const Options& opt, const char* op, double bytes, int64_t array_bytes,
                          const std::vector<double>& t, const std::vector<double>& events,
                          const std::string& error) {
  const double med = median(t), best = *std::min_element(t.begin(), t.end());
  std::printf("{\"kind\":\"stream\",\"op\":\"%s\",\"cell\":", op);
  json_string(opt.cell);
  std::printf(",\"toolchain\":");
  json_string(opt.toolchain);
  std::printf(",\"device\":");
  json_string(device::name());
  host_threads();
  std::printf(",\"method\":\"babelstream\",\"array_bytes\":%" PRId64 ",\"reps\":%d", array_bytes,
              static_cast<int>(t.size()));
  std::printf(",\"bytes\":%.17g,\"times_s\":[", bytes);
  for (size_t i = 0; i < t.size(); ++i) std::printf("%s%.9g", i ? "," : "", t[i]);
  std::printf("],\"median_s\":%.9g,\"min_s\":%.9g", med, best);
  clock_fields(events);
  std::printf(",\"gbps\":%.6g,\"gbps_best\":%.6g,\"flush_l2\":false,\"verified\":%s,\"error\":",
              bytes / med * 1e-9, bytes / best * 1e-9, error.empty() ? "true" : "false");
  json_string(error);
  std::printf("}\n");
  std::fflush(stdout);
}

inline void stream(const Options& opt) {
  if (opt.stream_bytes <= 0) return;
  const int64_t n = stream_elements(opt.stream_bytes);
  if (n < 1) die("--stream-bytes is too small", nullptr);
  const size_t bytes = static_cast<size_t>(n) * sizeof(double);
  // a is only read, so every rep computes the same values: c = a, b = a + s*c.
  const double kA = 0.1, kScalar = 0.4;
  // Off a GPU the arrays are host memory, gigabytes where the caches are
  // large: on huge pages (host_pages), filled (first touched) and checked in
  // place, in parallel.
  const bool in_place = !device::is_gpu();
  auto make = [&] { return static_cast<double*>(in_place ? host_pages(bytes) : device::dmem::alloc(bytes)); };
  auto drop = [&](double* p) { in_place ? std::free(p) : device::dmem::release(p); };
  double* a = make();
  double* b = make();
  double* c = make();
  if (!a || !b || !c) die("device allocation failed for the stream arrays", nullptr);
  if (in_place) {
    uint64_t nan = ~uint64_t(0);
    double poison_value;
    std::memcpy(&poison_value, &nan, sizeof poison_value);
    parallel_parts(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        a[i] = kA;
        b[i] = poison_value;
        c[i] = poison_value;
      }
    });
  } else {
    std::vector<double> h(n, kA);
    device::dmem::to_device(a, h.data(), bytes);
    device::dmem::poison(b, bytes);
    device::dmem::poison(c, bytes);
  }
  // One untimed call of each first: what an op sets up once (buffers,
  // module loading) stays out of the timings.
  device::stream_copy(c, a, n);
  device::stream_triad(b, a, c, kScalar, n);
  double dot = device::stream_dot(a, b, n);
  device::sync();
  device::Timer timer;
  std::vector<double> tc, tt, td, ec, et, ed;
  // kStreamRuns runs of the three ops in turn (BabelStream's order); a slow
  // device stops after kStreamMinRuns once the runs took 3 x --rep-seconds
  // (default 2 s each op), as a host with gigabytes of arrays does.
  const double budget = 3 * (opt.rep_seconds > 0 ? opt.rep_seconds : 2.0);
  double spent = 0;
  for (int i = 0; i < kStreamRuns && !(i >= kStreamMinRuns && spent >= budget); ++i) {
    timer.start();
    device::stream_copy(c, a, n);
    tc.push_back(timer.stop());
    ec.push_back(timer.event_s());
    timer.start();
    device::stream_triad(b, a, c, kScalar, n);
    tt.push_back(timer.stop());
    et.push_back(timer.event_s());
    timer.start();
    dot = device::stream_dot(a, b, n);
    td.push_back(timer.stop());
    ed.push_back(timer.event_s());
    spent += tc.back() + tt.back() + td.back();
  }
  if (!device::kHasEvents) {
    ec.clear();
    et.clear();
    ed.clear();
  }
  std::string xc, xt, xd;
  {
    const double want_b = kA + kScalar * kA;
    // first_off is the first index of x off want by more than tol (n: none).
    auto first_off = [n](const double* x, double want, double tol) {
      const auto firsts = parallel_map(n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          if (!(std::fabs(x[i] - want) <= tol)) return i;
        return n;
      });
      return *std::min_element(firsts.begin(), firsts.end());
    };
    std::vector<double> h(in_place ? 0 : n);
    const double* hc = c;
    if (!in_place) {
      device::dmem::to_host(h.data(), c, bytes);
      hc = h.data();
    }
    if (const int64_t i = first_off(hc, kA, 0); i < n) xc = format("c[%" PRId64 "] = %.17g, want %.17g", i, hc[i], kA);
    const double* hb = b;
    if (!in_place) {
      device::dmem::to_host(h.data(), b, bytes);
      hb = h.data();
    }
    // an FMA may round once instead of twice
    if (const int64_t i = first_off(hb, want_b, 2 * kEps * want_b); i < n)
      xt = format("b[%" PRId64 "] = %.17g, want %.17g", i, hb[i], want_b);
    const double want = static_cast<double>(n) * kA * want_b;  // n equal terms: |error| <= n*eps relative
    if (!(std::fabs(dot - want) <= (n + 2.0) * kEps * want)) xd = format("dot = %.17g, want %.17g", dot, want);
  }
  const int64_t ab = static_cast<int64_t>(bytes);
  stream_record(opt, "copy", 2.0 * bytes, ab, tc, ec, xc);
  stream_record(opt, "triad", 3.0 * bytes, ab, tt, et, xt);
  stream_record(opt, "dot", 2.0 * bytes, ab, td, ed, xd);

  // The runtime's device-to-device copy (cudaMemcpy, omp_target_memcpy, memcpy).
  std::vector<double> t;
  for (int i = 0; i < opt.warmup + opt.reps; ++i) {
    timer.start();
    device::dmem::copy(c, a, bytes);
    const double s = timer.stop();
    if (i >= opt.warmup) t.push_back(s);
  }
  drop(a);
  drop(b);
  drop(c);
  const double med = median(t);
  std::printf("{\"kind\":\"copy\",\"cell\":");
  json_string(opt.cell);
  std::printf(",\"toolchain\":");
  json_string(opt.toolchain);
  std::printf(",\"device\":");
  json_string(device::name());
  host_threads();
  std::printf(",\"clock\":\"%s\"", device::kClock);
  std::printf(",\"bytes\":%.17g,\"median_s\":%.9g,\"gbps\":%.6g}\n", 2.0 * bytes, med, 2.0 * bytes / med * 1e-9);
  std::fflush(stdout);
}

// finish ends the program once its records are out, without the runtimes'
// teardown at exit (offload images, device contexts: time nothing reads,
// paid once per program). PM_FULL_EXIT=1 keeps it, for tools that write
// at exit (nsys, LIBOMPTARGET_PROFILE).
inline int finish() {
  std::fflush(stdout);
  std::fflush(stderr);
  const char* full = std::getenv("PM_FULL_EXIT");
  if (!full || std::string(full) != "1") std::_Exit(0);
  return 0;
}

}  // namespace pm

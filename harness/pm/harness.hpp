// portmatrix harness: the one protocol every generated program follows.
//
// Include a device header first (device_host.hpp, device_omptarget.hpp or
// device_cuda.hpp); it defines pm::device. Then per size:
//   1. arrays are initialised on the host with deterministic, non-trivial data,
//      the float64 reference runs on host copies, inputs go to the device once;
//   2. before every run, inputs are restored on the device and outputs poisoned
//      (all-ones bytes, a NaN), so a variant that writes nothing fails;
//   3. a first run is verified, then warm-up runs, then timed repetitions
//      (device-synchronised), and the last repetition is verified again;
//   4. one JSON line goes to stdout: times, bytes, flops, verification.
// A failed verification is data (exit 0); only harness errors exit non-zero.
#pragma once
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "csr.hpp"

namespace pm {

struct Options {
  std::vector<int64_t> sizes;
  int reps = 10;
  int warmup = 2;
  uint64_t seed = 20231;
  int64_t copy_bytes = 0;  // >0: also measure the device's own copy bandwidth
  std::string cell;
  std::string toolchain;
};

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

// parse reads --size N (repeatable, or a comma list), --reps, --warmup, --seed,
// --copy-bytes, --cell and --toolchain. Without --size the defaults apply.
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
    } else if (a == "--copy-bytes") {
      o.copy_bytes = parse_int(value(), "--copy-bytes");
    } else if (a == "--cell") {
      o.cell = value();
    } else if (a == "--toolchain") {
      o.toolchain = value();
    } else {
      die("unknown flag ", argv[i]);
    }
  }
  if (o.sizes.empty()) o.sizes = default_sizes;
  if (o.reps < 1) die("--reps must be at least 1", nullptr);
  if (o.warmup < 0) die("--warmup must not be negative", nullptr);
  for (int64_t s : o.sizes)
    if (s < 1) die("sizes must be positive", nullptr);
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

enum Intent { kIn, kOut, kInOut, kScratch };

// max |got-ref| / max |ref| over the array; NaN when got holds a NaN.
inline double rel_error(const double* got, const double* ref, int64_t n) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(got[i] - ref[i]);
    if (!(d == d)) return std::numeric_limits<double>::quiet_NaN();
    num = std::max(num, d);
    den = std::max(den, std::fabs(ref[i]));
  }
  return den > 0 ? num / den : num;
}

class Buffer {
 public:
  explicit Buffer(std::string name) : name_(std::move(name)) {}
  virtual ~Buffer() = default;
  virtual void restore() = 0;                 // inputs back, outputs poisoned
  virtual bool checked() const { return false; }
  virtual double error() { return 0; }        // against the reference
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
    device::release(dev_);
    if (pristine_) device::release(pristine_);
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  void fill_random(uint64_t seed, double lo, double hi) {
    const uint64_t key = key_of(seed, name().c_str());
    for (int64_t i = 0; i < n_; ++i) host_[i] = static_cast<T>(lo + (hi - lo) * uniform(key, i));
    upload();
  }
  void fill_zero() {
    std::fill(host_.begin(), host_.end(), T(0));
    upload();
  }
  // Values computed on the host (a SNAP reference stage, snap/pm_snap.hpp).
  void fill_values(const std::vector<double>& v) {
    if (static_cast<int64_t>(v.size()) != n_) die("fill_values: wrong number of values for ", name().c_str());
    for (int64_t i = 0; i < n_; ++i) host_[i] = static_cast<T>(v[i]);
    upload();
  }
  T* ref() { return ref_.data(); }  // host copy the reference reads and writes
  T* dev() { return dev_; }
  int64_t size() const { return n_; }

  void restore() override {
    const size_t bytes = n_ * sizeof(T);
    if (intent_ == kOut)
      device::poison(dev_, bytes);
    else
      device::copy(dev_, pristine_, bytes);
  }
  bool checked() const override { return intent_ == kOut || intent_ == kInOut; }
  double error() override {
    std::vector<T> got(n_);
    device::to_host(got.data(), dev_, n_ * sizeof(T));
    std::vector<double> g(got.begin(), got.end()), r(ref_.begin(), ref_.end());
    return rel_error(g.data(), r.data(), n_);
  }

 private:
  void upload() {
    ref_ = host_;
    const size_t bytes = n_ * sizeof(T);
    device::to_device(dev_, host_.data(), bytes);
    if (!pristine_) pristine_ = static_cast<T*>(device::alloc(bytes));
    device::copy(pristine_, dev_, bytes);
  }

  int64_t n_;
  Intent intent_;
  std::vector<T> host_, ref_;
  T* dev_ = nullptr;
  T* pristine_ = nullptr;  // device copy of the initial data, for restore()
};

// A CSR matrix on the device; the reference reads the host copy.
class CsrArray : public Buffer {
 public:
  CsrArray(const char* name, CsrHost m) : Buffer(name), host_(std::move(m)) {
    row_ptr_ = upload(host_.row_ptr);
    col_idx_ = upload(host_.col_idx);
    values_ = upload(host_.values);
  }
  ~CsrArray() override {
    device::release(row_ptr_);
    device::release(col_idx_);
    device::release(values_);
  }
  Csr ref() const { return host_.view(); }
  Csr dev() const {
    return Csr{host_.nrows, static_cast<int64_t>(host_.values.size()), row_ptr_, col_idx_, values_};
  }
  void restore() override {}  // read-only

 private:
  template <class T>
  static T* upload(const std::vector<T>& v) {
    T* p = static_cast<T*>(device::alloc(v.size() * sizeof(T)));
    device::to_device(p, v.data(), v.size() * sizeof(T));
    return p;
  }
  CsrHost host_;
  int64_t* row_ptr_ = nullptr;
  int64_t* col_idx_ = nullptr;
  double* values_ = nullptr;
};

// Sections time the kernels a composite (CG-Solve) calls, in one extra
// untimed-for-the-record run: each call is synchronised and timed.
struct SectionStat {
  int64_t calls = 0;
  double seconds = 0, bytes = 0;
};
inline std::map<std::string, SectionStat>& sections() {
  static std::map<std::string, SectionStat> s;
  return s;
}
inline bool& sections_on() {
  static bool on = false;
  return on;
}
class Section {
 public:
  Section(const char* name, double bytes) : name_(name), bytes_(bytes) {
    if (sections_on()) timer_.start();
  }
  ~Section() {
    if (!sections_on()) return;
    SectionStat& s = sections()[name_];
    s.seconds += timer_.stop();
    s.calls++;
    s.bytes += bytes_;
  }

 private:
  const char* name_;
  double bytes_;
  device::Timer timer_;
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

class Run {
 public:
  Run(const Options& opt, const char* kernel, int64_t size) : opt_(opt), kernel_(kernel), size_(size) {}
  void add(Buffer* b) { buffers_.push_back(b); }
  void work(double bytes, double flops) {
    bytes_ = bytes;
    flops_ = flops;
  }
  // result registers a scalar the kernel returns, with its reference value.
  void result(double* got, double ref) {
    result_ = got;
    result_ref_ = ref;
  }
  void composite() { composite_ = true; }

  // measure runs the protocol over call and prints the record.
  template <class F>
  void measure(F call, double tolerance) {
    tolerance_ = tolerance;
    prepare();
    call();
    device::sync();
    double err = error();
    for (int i = 0; i < opt_.warmup; ++i) {
      prepare();
      call();
      device::sync();
    }
    device::Timer timer;
    for (int i = 0; i < opt_.reps; ++i) {
      prepare();
      timer.start();
      call();
      times_.push_back(timer.stop());
    }
    err = std::max(err, error());
    if (!(err == err)) err = std::numeric_limits<double>::infinity();
    max_err_ = err;
    if (composite_) {
      prepare();
      sections().clear();
      sections_on() = true;
      call();
      device::sync();
      sections_on() = false;
    }
    emit();
  }

 private:
  void prepare() {
    for (Buffer* b : buffers_) b->restore();
    if (result_) *result_ = std::numeric_limits<double>::quiet_NaN();
    device::sync();
  }
  double error() {
    double err = 0;
    for (Buffer* b : buffers_) {
      if (!b->checked()) continue;
      const double e = b->error();
      if (!(e == e)) return e;
      err = std::max(err, e);
    }
    if (result_) {
      const double d = std::fabs(*result_ - result_ref_);
      if (!(d == d)) return d;
      err = std::max(err, result_ref_ != 0 ? d / std::fabs(result_ref_) : d);
    }
    return err;
  }
  void emit() {
    const double med = median(times_);
    const double mn = *std::min_element(times_.begin(), times_.end());
    const bool ok = max_err_ <= tolerance_;
    std::printf("{\"kind\":\"kernel\",\"cell\":");
    json_string(opt_.cell);
    std::printf(",\"toolchain\":");
    json_string(opt_.toolchain);
    std::printf(",\"kernel\":");
    json_string(kernel_);
    std::printf(",\"device\":");
    json_string(device::name());
    std::printf(",\"size\":%" PRId64 ",\"reps\":%d,\"warmup\":%d,\"seed\":%" PRIu64 ",\"times_s\":[", size_, opt_.reps,
                opt_.warmup, opt_.seed);
    for (size_t i = 0; i < times_.size(); ++i) std::printf("%s%.9g", i ? "," : "", times_[i]);
    std::printf("],\"median_s\":%.9g,\"min_s\":%.9g,\"bytes\":%.17g,\"flops\":%.17g", med, mn, bytes_, flops_);
    std::printf(",\"gbps\":%.6g,\"gflops\":%.6g", bytes_ / med * 1e-9, flops_ / med * 1e-9);
    std::printf(",\"verified\":%s,\"max_rel_err\":", ok ? "true" : "false");
    if (std::isinf(max_err_))
      std::printf("null");
    else
      std::printf("%.6g", max_err_);
    std::printf(",\"tolerance\":%.6g", tolerance_);
    if (composite_) {
      std::printf(",\"sections\":{");
      bool first = true;
      for (const auto& kv : sections()) {
        std::printf("%s", first ? "" : ",");
        first = false;
        json_string(kv.first);
        std::printf(":{\"calls\":%" PRId64 ",\"seconds\":%.9g,\"bytes\":%.17g}", kv.second.calls, kv.second.seconds,
                    kv.second.bytes);
      }
      std::printf("}");
    }
    std::printf(",\"error\":");
    json_string(ok ? "" : (std::isinf(max_err_) ? "verification failed: output holds NaN (not written?)"
                                                : "verification failed: error above tolerance"));
    std::printf("}\n");
    std::fflush(stdout);
  }

  const Options& opt_;
  std::string kernel_;
  int64_t size_;
  std::vector<Buffer*> buffers_;
  std::vector<double> times_;
  double bytes_ = 0, flops_ = 0, tolerance_ = 0, max_err_ = 0;
  double* result_ = nullptr;
  double result_ref_ = 0;
  bool composite_ = false;
};

template <class T>
Array<T>::Array(Run& run, const char* name, int64_t n, Intent intent)
    : Buffer(name), n_(n), intent_(intent), host_(n), ref_(n) {
  dev_ = static_cast<T*>(device::alloc(n * sizeof(T)));
  if (!dev_) die("device allocation failed for ", name);
  run.add(this);
}

// copy_bandwidth measures the device's own copy (device to device) and prints
// a "copy" record; bytes counts read plus write.
inline void copy_bandwidth(const Options& opt) {
  if (opt.copy_bytes <= 0) return;
  const size_t half = static_cast<size_t>(opt.copy_bytes) / 2;
  void* a = device::alloc(half);
  void* b = device::alloc(half);
  device::poison(a, half);
  device::Timer timer;
  std::vector<double> t;
  for (int i = 0; i < opt.warmup + opt.reps; ++i) {
    timer.start();
    device::copy(b, a, half);
    const double s = timer.stop();
    if (i >= opt.warmup) t.push_back(s);
  }
  device::release(a);
  device::release(b);
  const double med = median(t);
  std::printf("{\"kind\":\"copy\",\"cell\":");
  json_string(opt.cell);
  std::printf(",\"toolchain\":");
  json_string(opt.toolchain);
  std::printf(",\"device\":");
  json_string(device::name());
  std::printf(",\"bytes\":%.17g,\"median_s\":%.9g,\"gbps\":%.6g}\n", 2.0 * half, med, 2.0 * half / med * 1e-9);
  std::fflush(stdout);
}

}  // namespace pm

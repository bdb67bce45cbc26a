// Shared pieces of the benchmark programs: the option parser, the clock,
// core pinning, a bounded spin-wait helper and the result printer.
//
// Every benchmark accepts the same core options, so the driver script can
// pass one command line to each program:
//   --iters N     timed iterations per measurement
//   --warmup N    untimed iterations before each measurement
//   --min-size B, --max-size B   range of message sizes (bytes)
//   --window W    messages per window in message-rate tests
//   --csv         machine-readable output: impl,test,size,value,unit
//   --pin         pin rank r to the r-th CPU this process may run on
//   --max-time S  end a measurement early once its timed part has lasted S
//                 seconds (the figure then covers the iterations done)
//   --stat median|mean   figure per measurement (see timed_loop)
//   --timeout S   give up (abort) if one wait lasts longer than S seconds
// and may add options of its own through `extra_option`.
//
// Output: configuration lines start with "# " (ignored by CSV readers); a
// result is one table row or one CSV line, printed as soon as it is known.
// Only the caller decides which rank prints.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// ---- clock --------------------------------------------------------------------

inline double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// The settle channel of the ping-pong programs (--settle): one counter in
// a shared-memory file of the two ranks of one host (named after their
// common parent, the launcher), which rank 1 bumps after each reply it
// sends. Rank 0 waits for it in uncounted_settle, outside any library
// call, before it polls for the reply: its first poll then finds the reply,
// and callgrind, which leaves uncounted_settle out of the count (compare
// instructions --settle), counts the library's work per round trip without
// the idle polls whose number depends on how the ranks were scheduled.
class settle_channel {
 public:
  settle_channel() = default;
  settle_channel(const settle_channel&) = delete;
  settle_channel& operator=(const settle_channel&) = delete;
  ~settle_channel() {
    if (counter_) munmap(counter_, sizeof(*counter_));
    if (!name_.empty()) shm_unlink(name_.c_str());
  }
  // Opens the channel (both ranks; the file is created by whichever comes
  // first and starts at zero). Exits with a message when it cannot.
  void open() {
    name_ = "/lci-bench-settle-" + std::to_string(static_cast<long>(getppid()));
    const int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(*counter_)) != 0) fail("shm_open/ftruncate");
    void* p = mmap(nullptr, sizeof(*counter_), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) fail("mmap");
    counter_ = static_cast<std::atomic<uint64_t>*>(p);
  }
  bool is_open() const { return counter_ != nullptr; }
  // Rank 1: reply n (from 1) has been sent.
  void replied(uint64_t n) {
    if (counter_) counter_->store(n, std::memory_order_release);
  }
  std::atomic<uint64_t>* counter() { return counter_; }

 private:
  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "benchmark: --settle: %s failed: %s\n", what, std::strerror(errno));
    std::exit(2);
  }
  std::string name_;
  std::atomic<uint64_t>* counter_ = nullptr;
};

// Rank 0: waits until rank 1 has sent reply n (at most timeout_s seconds).
// Its name is the one callgrind's --toggle-collect leaves out of the count:
// keep it out of line and keep the name.
[[gnu::noinline]] inline void uncounted_settle(settle_channel& ch, uint64_t n, double timeout_s) {
  if (!ch.is_open()) return;
  const double deadline = now_s() + timeout_s;
  for (unsigned k = 1; ch.counter()->load(std::memory_order_acquire) < n; ++k) {
    if ((k & 1023) == 0 && now_s() > deadline) {
      std::fprintf(stderr, "benchmark: timed out after %.1f s waiting for reply %llu (--settle)\n",
                   timeout_s, static_cast<unsigned long long>(n));
      std::_Exit(3);
    }
  }
}

// ---- options ------------------------------------------------------------------

struct options {
  long iters = 10000;
  long warmup = 1000;
  size_t min_size = 8;
  size_t max_size = 0;  // 0: the program's natural maximum
  int window = 64;
  bool csv = false;
  bool pin = false;
  double max_time_s = 0.5;
  bool median = true;  // --stat median|mean
  double timeout_s = 30.0;
  // Ping-pong: rank 0 polls for each reply only once rank 1 has sent it
  // (settle_channel).
  bool settle = false;
};

// A program-specific option. `arg` is nullptr for a flag without a value.
// `set` receives the value (or nullptr for a flag) and returns false if the
// value is malformed.
struct extra_option {
  const char* name;  // with the leading "--"
  const char* arg;   // e.g. "KIND", or nullptr for a flag
  const char* help;
  std::function<bool(const char*)> set;
};

[[noreturn]] inline void die(const char* program, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  std::exit(2);
}

namespace detail {

inline bool parse_long(const char* s, long lo, long hi, long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

inline bool parse_double(const char* s, double lo, double hi, double* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s, &end);
  if (errno || *end || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

// `d` holds the program's defaults (the options before parsing).
inline void print_usage(FILE* f, const char* program, const char* description, const options& d,
                        const std::vector<extra_option>& extra) {
  std::fprintf(f, "Usage: lcrun -n 2 %s [options]\n\n%s\n\nOptions:\n", program, description);
  auto line = [f](const char* name, const char* arg, const std::string& help) {
    std::string left = std::string("  ") + name + (arg ? std::string(" ") + arg : "");
    std::fprintf(f, "%-24s %s\n", left.c_str(), help.c_str());
  };
  // " (default V)", V printed like the user would type it.
  auto def = [](double v) {
    char buf[48];
    std::snprintf(buf, sizeof(buf), " (default %.15g)", v);
    return std::string(buf);
  };
  line("--help", nullptr, "print this help and exit");
  line("--iters", "N", "timed iterations per measurement" + def(d.iters));
  line("--warmup", "N", "untimed iterations before each measurement" + def(d.warmup));
  line("--min-size", "BYTES", "smallest message size" + def(d.min_size));
  line("--max-size", "BYTES",
       d.max_size ? "largest message size" + def(d.max_size)
                  : "largest message size (default: the medium size)");
  line("--window", "W", "messages per window (message-rate, bandwidth tests)" + def(d.window));
  line("--csv", nullptr, "print results as CSV lines impl,test,size,value,unit");
  line("--pin", nullptr, "pin rank r to the r-th CPU of the allowed set");
  line("--max-time", "SECONDS", "time budget of one measurement" + def(d.max_time_s));
  line("--stat", "median|mean",
       d.median ? "per-batch median (default) or overall mean"
                : "per-batch median or overall mean (default)");
  line("--timeout", "SECONDS", "abort if a single wait exceeds this" + def(d.timeout_s));
  line("--settle", nullptr,
       "ping-pong on one host: rank 0 polls for each reply only once rank 1 has sent it "
       "(instruction counts without idle polls)");
  for (const extra_option& o : extra) line(o.name, o.arg, o.help);
}

}  // namespace detail

// Parses argv into `opts` and the extra options. Prints the usage (every
// option, with its default) and exits 0 on --help; prints a message and exits
// 2 on a bad value, and the message and the usage on an unknown option.
inline void parse_options(int argc, char** argv, const char* description, options& opts,
                          const std::vector<extra_option>& extra = {}) {
  const options defaults = opts;  // what --help reports
  const char* program = argc > 0 ? argv[0] : "benchmark";
  if (const char* slash = std::strrchr(program, '/')) program = slash + 1;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    const char* inline_value = nullptr;
    std::string::size_type eq = flag.find('=');
    if (flag.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      inline_value = argv[i] + eq + 1;
      flag.resize(eq);
    }
    // Fetches the option's value: "--opt=value" or "--opt value".
    auto value = [&]() -> const char* {
      if (inline_value) return inline_value;
      if (i + 1 >= argc) die(program, "option " + flag + " needs a value (see --help)");
      return argv[++i];
    };
    auto bad = [&](const char* v, const char* what) {
      die(program,
          "bad value '" + std::string(v ? v : "") + "' for " + flag + ": expected " + what);
    };
    long n = 0;
    if (flag == "--help" || flag == "-h") {
      detail::print_usage(stdout, program, description, defaults, extra);
      std::exit(0);
    } else if (flag == "--iters") {
      const char* v = value();
      if (!detail::parse_long(v, 1, 1000000000L, &n)) bad(v, "an integer in [1, 1e9]");
      opts.iters = n;
    } else if (flag == "--warmup") {
      const char* v = value();
      if (!detail::parse_long(v, 0, 1000000000L, &n)) bad(v, "an integer in [0, 1e9]");
      opts.warmup = n;
    } else if (flag == "--min-size") {
      const char* v = value();
      if (!detail::parse_long(v, 0, 1L << 30, &n)) bad(v, "a size in bytes");
      opts.min_size = static_cast<size_t>(n);
    } else if (flag == "--max-size") {
      const char* v = value();
      if (!detail::parse_long(v, 1, 1L << 30, &n)) bad(v, "a size in bytes");
      opts.max_size = static_cast<size_t>(n);
    } else if (flag == "--window") {
      const char* v = value();
      if (!detail::parse_long(v, 1, 4096, &n)) bad(v, "an integer in [1, 4096]");
      opts.window = static_cast<int>(n);
    } else if (flag == "--max-time") {
      const char* v = value();
      if (!detail::parse_double(v, 0.0, 86400.0, &opts.max_time_s)) bad(v, "seconds");
    } else if (flag == "--stat") {
      const char* v = value();
      if (std::strcmp(v, "median") == 0)
        opts.median = true;
      else if (std::strcmp(v, "mean") == 0)
        opts.median = false;
      else
        bad(v, "median or mean");
    } else if (flag == "--timeout") {
      const char* v = value();
      if (!detail::parse_double(v, 0.001, 86400.0, &opts.timeout_s)) bad(v, "seconds");
    } else if (flag == "--settle") {
      opts.settle = true;
    } else if (flag == "--csv") {
      opts.csv = true;
    } else if (flag == "--pin") {
      opts.pin = true;
    } else {
      bool known = false;
      for (const extra_option& o : extra) {
        if (flag != o.name) continue;
        known = true;
        const char* v = o.arg ? value() : nullptr;
        if (!o.set(v)) bad(v, o.arg ? o.arg : "no value");
        break;
      }
      if (!known) {
        // The usage follows the message, on stderr: exit status 2 as for
        // any other bad command line.
        std::fflush(stdout);
        std::fprintf(stderr, "%s: unknown option '%s'\n\n", program, flag.c_str());
        detail::print_usage(stderr, program, description, defaults, extra);
        std::exit(2);
      }
    }
  }
  if (opts.max_size && opts.min_size > opts.max_size)
    die(program, "--min-size is larger than --max-size");
}

// ---- pinning ------------------------------------------------------------------

// Pins the calling process to the (index mod n)-th CPU of its allowed set.
// Returns the CPU, or -1 (with a warning) if pinning failed.
inline int pin_to_cpu(int index) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    std::perror("sched_getaffinity");
    return -1;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.empty()) return -1;
  if (static_cast<size_t>(index) >= cpus.size())
    std::fprintf(stderr,
                 "benchmark: warning: only %zu CPUs allowed, so rank %d shares one with a lower "
                 "rank; busy-polling ranks on one CPU wait for the scheduler on every message\n",
                 cpus.size(), index);
  const int cpu = cpus[static_cast<size_t>(index) % cpus.size()];
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    std::perror("sched_setaffinity");
    return -1;
  }
  return cpu;
}

// ---- bounded waiting ----------------------------------------------------------

// Spins on `step` (which polls and returns true when the awaited event has
// happened) for at most `timeout_s` seconds; reads the clock only every 4096
// steps so the check stays off the critical path. Aborts the program with
// `what` in the message on timeout: a benchmark that hangs is a bug.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

template <typename Step>
inline void spin_until(Step&& step, double timeout_s, const char* what) {
  if (step()) return;
  const double deadline = now_s() + timeout_s;
  for (;;) {
    for (int i = 0; i < 4096; ++i) {
      if (step()) return;
      // A pause between empty polls keeps a polling receiver from starving
      // the sender on a provider lock they share (shm); LCI and raw alike.
      cpu_pause();
    }
    if (now_s() > deadline) {
      std::fflush(stdout);
      std::fprintf(stderr, "benchmark: timed out after %.1f s waiting for %s\n", timeout_s, what);
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
}

// Like spin_until, but yields the CPU after every 64 empty polls: the
// waiting loop of the thread-scaling message-rate tests, which run more
// threads than cores (a thread spinning out its time slice would keep the
// thread it waits for off the CPU). Used by the LCI, raw and MPI programs.
template <typename Step>
inline void poll_until(Step&& step, double timeout_s, const char* what) {
  if (step()) return;
  const double deadline = now_s() + timeout_s;
  for (unsigned n = 1;; ++n) {
    if (step()) return;
    cpu_pause();
    if ((n & 63) == 0) {
      sched_yield();
      if ((n & 4095) == 0 && now_s() > deadline) {
        std::fflush(stdout);
        std::fprintf(stderr, "benchmark: timed out after %.1f s waiting for %s\n", timeout_s,
                     what);
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }
}

// ---- timed loop ---------------------------------------------------------------

// Times a measurement and decides when it ends. Only the rank that times
// (rank 0) uses it; it tells its peer which iteration is the last in the
// message itself, so both stop after the same iteration.
//
// A measurement runs `warmup` untimed iterations, then at most `iters` timed
// ones, and ends early once the timed part has lasted `max_time_s` (the
// warm-up likewise ends early after max_time_s / 2). The
// clock is read once per batch of `batch` iterations (a power of two), so it
// stays off the critical path; the batch times give the robust figure:
//   median  the median over full batches of the time per iteration: a
//           batch during which the OS ran something else on our core (a busy
//           2-core machine) does not move it;
//   mean    total timed time / timed iterations.
class timed_loop {
 public:
  timed_loop(long warmup, long iters, double max_time_s, long batch)
      : warmup_(warmup),
        iters_(iters),
        total_(warmup + iters),
        batch_(batch),
        max_time_s_(max_time_s) {
    batches_.reserve(static_cast<size_t>(iters / batch + 2));
  }

  // Upper bound of the iteration count (the loop bound for both ranks).
  long total() const { return total_; }

  // Call before iteration i (0-based, warm-up included). Returns true if i
  // must be the last iteration.
  bool next_is_last(long i) {
    if (i < warmup_) {
      // The warm-up gets at most half the time budget.
      if (i == 0) {
        t0_ = now_s();
      } else if ((i & (batch_ - 1)) == 0 && now_s() - t0_ > max_time_s_ / 2) {
        warmup_ = i;
        iters_ = std::min(iters_, total_ - i);
      }
      if (i < warmup_) return false;
    }
    const long ti = i - warmup_;
    if (ti == 0) {
      t0_ = mark_ = now_s();
    } else if ((ti & (batch_ - 1)) == 0) {
      const double t = now_s();
      batches_.push_back(t - mark_);
      mark_ = t;
      if (t - t0_ > max_time_s_) return true;
    }
    return i + 1 >= warmup_ + iters_;
  }

  // Call once the last iteration (index `last`) has completed.
  void finish(long last) {
    end_ = now_s();
    timed_ = last + 1 - warmup_;
  }

  long timed() const { return timed_; }

  // Seconds per timed iteration, by the median over batches or the mean.
  double per_iteration(bool median) {
    if (!median || batches_.empty()) return (end_ - t0_) / static_cast<double>(timed_);
    std::vector<double> sorted = batches_;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double mid = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    return mid / static_cast<double>(batch_);
  }

 private:
  long warmup_, iters_;
  const long total_, batch_;
  const double max_time_s_;
  double t0_ = 0, mark_ = 0, end_ = 0;
  long timed_ = 0;
  std::vector<double> batches_;  // seconds per full batch, in order
};

// ---- sizes --------------------------------------------------------------------

// Powers of `factor` (2 or 4 ...) from min to max, plus max itself if it is
// not one of them.
inline std::vector<size_t> size_ladder(size_t min_size, size_t max_size, size_t factor = 2) {
  std::vector<size_t> sizes;
  size_t s = 1;
  while (s < min_size) s *= factor;
  for (; s <= max_size; s *= factor) sizes.push_back(s);
  if (min_size <= max_size && (sizes.empty() || sizes.back() != max_size))
    sizes.push_back(max_size);
  return sizes;
}

// ---- results ------------------------------------------------------------------

// `v` with `digits` decimals, for configuration lines.
inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// Prints results as an aligned table or as CSV lines "impl,test,size,value,unit".
class printer {
 public:
  printer(const char* impl, bool csv) : impl_(impl), csv_(csv) {}

  // A configuration line ("# key: value"), printed in both modes.
  void config(const char* key, const std::string& value) const {
    std::printf("# %-14s %s\n", (std::string(key) + ":").c_str(), value.c_str());
  }

  // Notes a measurement that its time budget ended early (a comment line).
  void capped(const char* test, size_t size, long done, long planned) const {
    std::printf("# capped:       %s %zu: %ld of %ld iterations within --max-time\n", test, size,
                done, planned);
  }

  void row(const char* test, size_t size, double value, const char* unit) {
    if (csv_) {
      std::printf("%s,%s,%zu,%.4f,%s\n", impl_, test, size, value, unit);
    } else {
      if (!header_done_) {
        std::printf("%-6s %-8s %10s %14s  %s\n", "impl", "test", "size", "value", "unit");
        header_done_ = true;
      }
      std::printf("%-6s %-8s %10zu %14.4f  %s\n", impl_, test, size, value, unit);
    }
    std::fflush(stdout);
  }

 private:
  const char* impl_;
  bool csv_;
  bool header_done_ = false;
};

// ---- thread-scaling message rate ---------------------------------------------

// Thread counts 1, 2, 4, ... up to max (plus max if it is not a power of
// two), or the comma list given with --threads.
inline std::vector<int> thread_ladder(int max_threads) {
  std::vector<int> out;
  for (int t = 1; t <= max_threads; t *= 2) out.push_back(t);
  if (out.back() != max_threads) out.push_back(max_threads);
  return out;
}

inline bool parse_int_list(const char* v, int lo, int hi, std::vector<int>* out) {
  out->clear();
  std::string s = v ? v : "";
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    long n = 0;
    if (!detail::parse_long(s.substr(pos, comma - pos).c_str(), lo, hi, &n)) return false;
    out->push_back(static_cast<int>(n));
    pos = comma + 1;
  }
  return !out->empty();
}

// A reusable barrier for the threads of one process. `idle` runs while a
// thread waits (e.g. progress on a shared device) and must not block.
class spin_barrier {
 public:
  explicit spin_barrier(int n) : n_(n) {}
  template <typename Idle>
  void wait(Idle&& idle) {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      arrived_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    while (gen_.load(std::memory_order_acquire) == gen) {
      idle();
      cpu_pause();
      sched_yield();  // oversubscribed runs: let the missing threads run
    }
  }
  void wait() {
    wait([] {});
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> gen_{0};
};

// What one sending thread measured: timed messages and its timed interval.
struct thread_rate {
  long messages = 0;
  double start = 0, end = 0;
};

// Total rate (million messages/s): all timed messages over the span from the
// earliest start to the latest end.
inline double total_rate(const std::vector<thread_rate>& r) {
  long n = 0;
  double s = 1e300, e = 0;
  for (const thread_rate& x : r) {
    n += x.messages;
    s = std::min(s, x.start);
    e = std::max(e, x.end);
  }
  return e > s ? static_cast<double>(n) / (e - s) / 1e6 : 0.0;
}

// Rate results: a table, or CSV lines
//   impl,test,mode,size,threads,total_mmsgs,per_thread_mmsgs
class rate_printer {
 public:
  rate_printer(const char* impl, bool csv) : impl_(impl), csv_(csv) {}
  void row(const char* test, const std::string& mode, size_t size, int threads, double total) {
    const double per = total / threads;
    if (csv_) {
      std::printf("%s,%s,%s,%zu,%d,%.4f,%.4f\n", impl_, test, mode.c_str(), size, threads, total,
                  per);
    } else {
      if (!header_done_) {
        std::printf("%-5s %-8s %-18s %8s %7s %14s %16s\n", "impl", "test", "mode", "size",
                    "threads", "total Mmsg/s", "per-thread Mmsg/s");
        header_done_ = true;
      }
      std::printf("%-5s %-8s %-18s %8zu %7d %14.4f %16.4f\n", impl_, test, mode.c_str(), size,
                  threads, total, per);
    }
    std::fflush(stdout);
  }

 private:
  const char* impl_;
  bool csv_;
  bool header_done_ = false;
};

}  // namespace bench

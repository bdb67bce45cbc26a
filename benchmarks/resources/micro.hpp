// micro: what the single-process component benchmarks share (reg_cache_bench
// and resources/bench_*): their command line and a timed run on T threads.
//
// Every such program takes
//   --iters N     operations per thread and measurement
//   --threads T   threads of the multi-threaded measurements (default 2)
//   --csv         CSV lines <impl>,test,size,value,unit (bench::printer)
//   --no-pin      do not pin thread i to the i-th allowed CPU
//   --help
// and prints ns per operation per thread. A run is bounded by --iters: no
// measurement waits on anything but its own threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../common.hpp"
#include "lci.h"

namespace micro {

struct config {
  long iters = 1000000;
  int threads = 2;
  bool csv = false;
  bool pin = true;
};

// Parses the command line; `description` heads --help (after the usage
// line), `defaults` gives the default of --iters. Exits 0 after --help and
// 2 on a bad option.
inline config parse(int argc, char** argv, const char* program, const char* description,
                    config defaults = {}) {
  config c = defaults;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> long {
      if (i + 1 >= argc) bench::die(program, a + " needs a value");
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end || v < 1) bench::die(program, "bad value for " + a);
      return v;
    };
    if (a == "--help" || a == "-h") {
      std::printf(
          "Usage: %s [options]\n\n%s\n\nOptions:\n"
          "  --iters N      operations per thread and measurement (default %ld)\n"
          "  --threads T    threads of the multi-threaded measurements (default %d)\n"
          "  --csv          print CSV lines impl,test,size,value,unit\n"
          "  --no-pin       do not pin thread i to the i-th allowed CPU\n"
          "  --help         print this help\n",
          program, description, defaults.iters, defaults.threads);
      std::exit(0);
    } else if (a == "--iters") {
      c.iters = value();
    } else if (a == "--threads") {
      c.threads = static_cast<int>(std::min(value(), 64L));
    } else if (a == "--csv") {
      c.csv = true;
    } else if (a == "--no-pin") {
      c.pin = false;
    } else {
      bench::die(program, "unknown option '" + a + "' (see --help)");
    }
  }
  return c;
}

// Runs body(thread index, operations) on n threads that start together:
// once untimed with a tenth of the operations (warm-up), then `reps` timed
// rounds of `ops`. Returns the median over rounds of the slowest thread's
// seconds (the machine may be shared: a median ignores a disturbed round).
template <typename Body>
double run_threads(int n, bool pin, long ops, Body&& body, int reps = 5) {
  std::atomic<int> ready{0};
  std::vector<std::vector<double>> seconds(static_cast<size_t>(reps),
                                           std::vector<double>(static_cast<size_t>(n)));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      if (pin) bench::pin_to_cpu(t);
      body(t, std::max<long>(1, ops / 10));
      for (int r = 0; r < reps; ++r) {
        // Round r starts once all threads arrived: ready reaches n * (r + 1).
        ready.fetch_add(1);
        while (ready.load() < n * (r + 1)) bench::cpu_pause();
        const double t0 = bench::now_s();
        body(t, ops);
        seconds[static_cast<size_t>(r)][static_cast<size_t>(t)] = bench::now_s() - t0;
      }
    });
  for (std::thread& th : threads) th.join();
  std::vector<double> slowest;
  for (const std::vector<double>& round : seconds)
    slowest.push_back(*std::max_element(round.begin(), round.end()));
  std::sort(slowest.begin(), slowest.end());
  return slowest[slowest.size() / 2];
}

// A completed request carrying `i` as its tag (what completion objects pass).
inline LCI_request_t request(long i) {
  LCI_request_t r{};
  r.flag = LCI_OK;
  r.tag = static_cast<LCI_tag_t>(i);
  return r;
}

// Nanoseconds per operation of a run of `ops` operations per thread.
inline double ns_per_op(double seconds, long ops) {
  return seconds * 1e9 / static_cast<double>(ops);
}

// A component benchmark (resources/bench_*): its parsed command line, its
// configuration lines (printed by the constructor) and its result rows.
class program {
 public:
  // `tag` is the impl column of the rows; `impl` and `operation` (what one
  // timed operation is) go into the configuration lines.
  program(int argc, char** argv, const char* name, const char* description, const char* tag,
          const std::string& impl, const std::string& operation, config defaults = {})
      : cfg(parse(argc, argv, name, description, defaults)), out_(tag, cfg.csv) {
    out_.config("impl", impl);
    out_.config("operations", std::to_string(cfg.iters) + " " + operation +
                                  " per thread and measurement; median of 5 rounds");
    out_.config("pinning", cfg.pin ? "thread i on the i-th allowed CPU" : "off");
    out_.config("units", "ns per " + operation + ", per thread (slowest thread)");
  }

  // Times body(thread, calls) on `threads` threads (run_threads) and prints
  // the row `test` (1 thread) or `test_<T>t` with ns per operation, one call
  // being `per_call` operations.
  template <typename Body>
  void measure(const std::string& test, size_t size, int threads, long calls, long per_call,
               Body&& body) {
    const double s = run_threads(threads, cfg.pin, calls, body);
    const std::string name = threads == 1 ? test : test + "_" + std::to_string(threads) + "t";
    out_.row(name.c_str(), size, ns_per_op(s, calls * per_call), "ns/op");
  }

  // 1, then --threads if that is more.
  std::vector<int> thread_counts() const {
    return cfg.threads > 1 ? std::vector<int>{1, cfg.threads} : std::vector<int>{1};
  }

  const config cfg;

 private:
  bench::printer out_;
};

}  // namespace micro

// reg_cache_bench: cost of the registration cache behind LCI_SEGMENT_ALL
// (lci::reg_cache, lci/mem/reg_cache.hpp), without any network: the
// register callback returns a dummy handle, so a miss costs the cache's own
// work only. One operation = acquire() + release(); figures in ns per
// operation, per thread (a thread's time / its operations):
//   hit            the same 64 KiB buffer every time (the thread's own hint);
//   hit_subrange   random sub-ranges (1 B .. 1 MiB) of one registered 64 MiB
//                  region: each is contained in the region, so it is a hit;
//   hit_index      16 buffers in turn, more than a thread remembers (8), so
//                  most lookups go to the shared index under its lock;
//   miss           a new page every time (dummy registration, index insert;
//                  one round over at most ~7400 pages, not the median of 5);
// with 2 threads:
//   hit_shared     both threads acquire the same region (one use counter);
//   hit_private    each thread its own region;
//   hit_subrange   both threads, random sub-ranges of one region.
//
// Run: reg_cache_bench [--iters N] [--threads T] [--csv] [--no-pin]
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "lci/mem/reg_cache.hpp"

namespace {

struct config {
  long iters = 1000000;
  int threads = 2;
  bool csv = false;
  bool pin = true;
};

void usage(FILE* f) {
  std::fprintf(f,
               "Usage: reg_cache_bench [options]\n\n"
               "Times lci::reg_cache acquire+release (the LCI_SEGMENT_ALL registration cache)\n"
               "with a dummy register callback: hits on one buffer, on sub-ranges of a region,\n"
               "through the shared index, misses; 1 and T threads. Prints ns per operation\n"
               "(median of 5 rounds after a warm-up).\n\n"
               "Options:\n"
               "  --iters N      operations per thread and measurement (default 1000000)\n"
               "  --threads T    threads of the multi-threaded measurements (default 2)\n"
               "  --csv          print CSV lines regcache,test,bytes,value,unit\n"
               "  --no-pin       do not pin thread i to the i-th allowed CPU\n"
               "  --help         print this help\n");
}

config parse(int argc, char** argv) {
  config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> long {
      if (i + 1 >= argc) bench::die("reg_cache_bench", a + " needs a value");
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end || v < 1) bench::die("reg_cache_bench", "bad value for " + a);
      return v;
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
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
      bench::die("reg_cache_bench", "unknown option '" + a + "' (see --help)");
    }
  }
  return c;
}

// A fake NIC: a handle is a counter (never null); deregistration is free.
std::atomic<uintptr_t> g_handles{1};

lci::reg_cache make_cache() {
  return lci::reg_cache(
      [](void*, size_t) -> void* {
        return reinterpret_cast<void*>(g_handles.fetch_add(1, std::memory_order_relaxed));
      },
      [](void*) {});
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

// Random [offset, offset+length) pairs inside a region of `region` bytes.
struct subranges {
  std::vector<size_t> offset, length;
  subranges(size_t region, size_t max_len, unsigned seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 4096; ++i) {
      const size_t len = 1 + rng() % max_len;
      length.push_back(len);
      offset.push_back(rng() % (region - len));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const config cfg = parse(argc, argv);
  const long n = cfg.iters;
  bench::printer out("regcache", cfg.csv);
  out.config("impl", "lci::reg_cache with a dummy register callback (no network)");
  out.config("operations", std::to_string(n) + " acquire+release per thread and measurement");
  out.config("pinning", cfg.pin ? "thread i on the i-th allowed CPU" : "off");
  out.config("units", "ns per acquire+release, per thread (slowest thread)");

  constexpr size_t region_bytes = 64 << 20;
  constexpr size_t buffer_bytes = 64 << 10;
  // Address space only: the cache never touches the memory.
  auto* region = static_cast<char*>(
      mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (region == MAP_FAILED) bench::die("reg_cache_bench", "mmap failed");
  auto ns_per_op = [n](double s) { return s * 1e9 / static_cast<double>(n); };
  const subranges ranges(region_bytes, 1 << 20, 42);

  {
    lci::reg_cache cache = make_cache();
    // The region stays registered (one use held) for the sub-range tests.
    lci::reg_region* whole = cache.acquire(region, region_bytes);

    double s = run_threads(1, cfg.pin, n, [&](int, long ops) {
      for (long i = 0; i < ops; ++i) cache.release(cache.acquire(region, buffer_bytes));
    });
    out.row("hit", buffer_bytes, ns_per_op(s), "ns/op");

    s = run_threads(1, cfg.pin, n, [&](int, long ops) {
      for (long i = 0; i < ops; ++i) {
        const size_t k = static_cast<size_t>(i) & 4095;
        cache.release(cache.acquire(region + ranges.offset[k], ranges.length[k]));
      }
    });
    out.row("hit_subrange", 1 << 20, ns_per_op(s), "ns/op");

    // 16 separate registrations (one page apart, not adjacent to merge).
    // They lie outside `whole`: a second mapping.
    constexpr int nbuf = 16;
    const size_t page = 4096, stride = 2 * page;
    auto* bufs = static_cast<char*>(
        mmap(nullptr, nbuf * stride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (bufs == MAP_FAILED) bench::die("reg_cache_bench", "mmap failed");
    for (int b = 0; b < nbuf; ++b) cache.release(cache.acquire(bufs + b * stride, page));
    s = run_threads(1, cfg.pin, n, [&](int, long ops) {
      for (long i = 0; i < ops; ++i) cache.release(cache.acquire(bufs + (i % nbuf) * stride, page));
    });
    out.row("hit_index", page, ns_per_op(s), "ns/op");

    if (cfg.threads > 1) {
      const int t = cfg.threads;
      s = run_threads(t, cfg.pin, n, [&](int, long ops) {
        for (long i = 0; i < ops; ++i) cache.release(cache.acquire(region, buffer_bytes));
      });
      out.row(("hit_shared_" + std::to_string(t) + "t").c_str(), buffer_bytes, ns_per_op(s),
              "ns/op");
      s = run_threads(t, cfg.pin, n, [&](int th, long ops) {
        char* mine = bufs + th % nbuf * stride;
        for (long i = 0; i < ops; ++i) cache.release(cache.acquire(mine, page));
      });
      out.row(("hit_private_" + std::to_string(t) + "t").c_str(), page, ns_per_op(s), "ns/op");
      s = run_threads(t, cfg.pin, n, [&](int th, long ops) {
        for (long i = 0; i < ops; ++i) {
          const size_t k = (static_cast<size_t>(i) + static_cast<size_t>(th) * 977) & 4095;
          cache.release(cache.acquire(region + ranges.offset[k], ranges.length[k]));
        }
      });
      out.row(("hit_subrange_" + std::to_string(t) + "t").c_str(), 1 << 20, ns_per_op(s), "ns/op");
    }
    cache.release(whole);
    munmap(bufs, nbuf * stride);
  }

  {
    // Misses: every page of fresh address space once, in order; pages two
    // apart so that no registration overlaps another (they never merge).
    lci::reg_cache cache = make_cache();
    const long pages = std::min<long>(n, static_cast<long>(region_bytes / 8192) * 10 / 11);
    long next = 0;  // the first page not registered yet (warm-up included)
    const double s = run_threads(
        1, cfg.pin, pages,
        [&](int, long ops) {
          for (long i = 0; i < ops; ++i, ++next)
            cache.release(cache.acquire(region + static_cast<size_t>(next) * 8192, 4096));
        },
        1);
    out.row("miss", 4096, s * 1e9 / static_cast<double>(pages), "ns/op");
    const lci::reg_cache::stats st = cache.get_stats();
    out.config("miss test", std::to_string(st.misses) + " misses, " + std::to_string(st.hits) +
                                " hits, index of " + std::to_string(next) + " regions at the end");
  }
  munmap(region, region_bytes);
  return 0;
}

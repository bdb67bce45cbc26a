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
#include "resources/micro.hpp"

namespace {

// A fake NIC: a handle is a counter (never null); deregistration is free.
std::atomic<uintptr_t> g_handles{1};

lci::reg_cache make_cache() {
  return lci::reg_cache(
      [](void*, size_t) -> void* {
        return reinterpret_cast<void*>(g_handles.fetch_add(1, std::memory_order_relaxed));
      },
      [](void*) {});
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
  const micro::config cfg = micro::parse(
      argc, argv, "reg_cache_bench",
      "Times lci::reg_cache acquire+release (the LCI_SEGMENT_ALL registration cache)\n"
      "with a dummy register callback: hits on one buffer, on sub-ranges of a region,\n"
      "through the shared index, misses; 1 and T threads. Prints ns per operation\n"
      "(median of 5 rounds after a warm-up).");
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

    double s = micro::run_threads(1, cfg.pin, n, [&](int, long ops) {
      for (long i = 0; i < ops; ++i) cache.release(cache.acquire(region, buffer_bytes));
    });
    out.row("hit", buffer_bytes, ns_per_op(s), "ns/op");

    s = micro::run_threads(1, cfg.pin, n, [&](int, long ops) {
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
    s = micro::run_threads(1, cfg.pin, n, [&](int, long ops) {
      for (long i = 0; i < ops; ++i) cache.release(cache.acquire(bufs + (i % nbuf) * stride, page));
    });
    out.row("hit_index", page, ns_per_op(s), "ns/op");

    if (cfg.threads > 1) {
      const int t = cfg.threads;
      s = micro::run_threads(t, cfg.pin, n, [&](int, long ops) {
        for (long i = 0; i < ops; ++i) cache.release(cache.acquire(region, buffer_bytes));
      });
      out.row(("hit_shared_" + std::to_string(t) + "t").c_str(), buffer_bytes, ns_per_op(s),
              "ns/op");
      s = micro::run_threads(t, cfg.pin, n, [&](int th, long ops) {
        char* mine = bufs + th % nbuf * stride;
        for (long i = 0; i < ops; ++i) cache.release(cache.acquire(mine, page));
      });
      out.row(("hit_private_" + std::to_string(t) + "t").c_str(), page, ns_per_op(s), "ns/op");
      s = micro::run_threads(t, cfg.pin, n, [&](int th, long ops) {
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
    const double s = micro::run_threads(
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

// bench_packet_pool: cost of lci::packet_pool (lci/mem/packet_pool.hpp), the
// device's pool of registered packets, on its own: one pool of the default
// packet count and size over untouched address space (the pool never
// touches packets). One operation = get() + put(); figures in ns per
// operation, per thread:
//   get_put        one packet out and back: the thread's own cache only;
//   burst_64       64 gets, then 64 puts: more than a cache holds (32), so
//                  refills and flushes go through the shared stack;
// with T threads (each on its own cache of the one pool):
//   get_put_Tt, burst_64_Tt   the same, all threads at once.
//
// Run: bench_packet_pool [--iters N] [--threads T] [--csv] [--no-pin]
#include <sys/mman.h>

#include <algorithm>
#include <string>

#include "lci.h"
#include "lci/mem/packet_pool.hpp"
#include "micro.hpp"

namespace {

constexpr int burst = 64;

// `rounds` times: `n` gets, then the n packets back.
void get_put(lci::packet_pool& pool, long rounds, int n) {
  void* held[burst];
  for (long i = 0; i < rounds; ++i) {
    for (int k = 0; k < n; ++k) {
      held[k] = pool.get();
      if (held[k] == nullptr) bench::die("bench_packet_pool", "the pool ran dry");
    }
    for (int k = n - 1; k >= 0; --k) pool.put(held[k]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const size_t packet = LCI_PACKET_SIZE_DEFAULT, count = LCI_SERVER_NUM_PKTS_DEFAULT;
  micro::program p(argc, argv, "bench_packet_pool",
                   "Times lci::packet_pool get()+put() (the device's packet pool) with the\n"
                   "default packet count and size: one packet at a time and bursts of 64, on 1\n"
                   "and T threads. Prints ns per get+put (median of 5 rounds after a warm-up).",
                   "pool",
                   "lci::packet_pool, " + std::to_string(count) + " packets of " +
                       std::to_string(packet) + " B",
                   "get+put");
  void* slab = mmap(nullptr, packet * count, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slab == MAP_FAILED) bench::die("bench_packet_pool", "mmap failed");
  {
    lci::packet_pool pool(slab, packet, count);
    const long n = p.cfg.iters, bursts = std::max<long>(1, n / burst);
    for (int t : p.thread_counts()) {
      p.measure("get_put", packet, t, n, 1, [&](int, long ops) { get_put(pool, ops, 1); });
      p.measure("burst_64", packet, t, bursts, burst,
                [&](int, long ops) { get_put(pool, ops, burst); });
    }
    if (pool.available() != count)
      bench::die("bench_packet_pool", "packets went missing: " +
                                          std::to_string(pool.available()) + " of " +
                                          std::to_string(count) + " are back");
  }
  munmap(slab, packet * count);
  return 0;
}

// bench_comp_sync: cost of lci::comp_sync (lci/comp/sync.hpp), the
// synchronizer behind LCI_sync_create, on its own. Figures in ns per
// signal, per thread:
//   signal_test        threshold 1: signal, then a test() that consumes it;
//   signal_test_64     threshold 64: 64 signals, then one test() that copies
//                      the 64 requests out;
// with 2 threads or more:
//   handoff_Tt         threshold 1: thread 0 signals, thread 1 test()s until
//                      it has it and lets thread 0 signal again (a progress
//                      thread completing a receive for a waiting thread);
//                      other threads, if any, idle; per handoff;
//   shared_64_Tt       threshold 64 x T: every thread signals 64 times, then
//                      thread 0 test()s and releases the next round.
//
// Run: bench_comp_sync [--iters N] [--threads T] [--csv] [--no-pin]
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "lci.h"
#include "lci/comp/sync.hpp"
#include "micro.hpp"

namespace {

constexpr int batch = 64;

// `rounds` times: k signals, then the test that consumes them.
void signal_test(lci::comp_sync& s, long rounds, LCI_request_t* out) {
  const int k = s.threshold();
  for (long i = 0; i < rounds; ++i) {
    for (int j = 0; j < k; ++j) s.signal(micro::request(j));
    if (!s.test(out)) bench::die("bench_comp_sync", "not triggered after its threshold");
  }
}

// Rounds of the multi-threaded tests: a signaller may start round r + 1 once
// `done` has reached r + 1 (the previous trigger was consumed).
struct rounds {
  alignas(64) std::atomic<long> done{0};
};

}  // namespace

int main(int argc, char** argv) {
  micro::program p(argc, argv, "bench_comp_sync",
                   "Times lci::comp_sync (the synchronizer of LCI_sync_create): signal+test at\n"
                   "threshold 1 and 64, a handoff from one thread to another, and T threads\n"
                   "signalling one synchronizer. Prints ns per signal (median of 5 rounds after\n"
                   "a warm-up).",
                   "sync", "lci::comp_sync", "signal (+ its share of the test)",
                   micro::config{200000});
  const long n = p.cfg.iters, batches = std::max<long>(1, n / batch);
  {
    lci::comp_sync one(1);
    LCI_request_t r;
    p.measure("signal_test", 1, 1, n, 1, [&](int, long ops) { signal_test(one, ops, &r); });
  }
  {
    lci::comp_sync many(batch);
    std::vector<LCI_request_t> r(batch);
    p.measure("signal_test_64", batch, 1, batches, batch,
              [&](int, long ops) { signal_test(many, ops, r.data()); });
  }
  if (p.cfg.threads > 1) {
    const int t = p.cfg.threads;
    {
      lci::comp_sync one(1);
      rounds rd;
      p.measure("handoff", 1, t, n, 1, [&](int th, long ops) {
        if (th > 1) return;
        const long base = rd.done.load();  // every thread starts a call at the same count
        LCI_request_t r;
        for (long i = 0; i < ops; ++i) {
          if (th == 0) {
            while (rd.done.load(std::memory_order_acquire) != base + i) bench::cpu_pause();
            one.signal(micro::request(i));
          } else {
            while (!one.test(&r)) bench::cpu_pause();
            rd.done.store(base + i + 1, std::memory_order_release);
          }
        }
      });
    }
    {
      lci::comp_sync shared(batch * t);
      std::vector<LCI_request_t> r(static_cast<size_t>(batch * t));
      rounds rd;
      p.measure("shared_64", static_cast<size_t>(batch * t), t, batches, batch,
                [&](int th, long ops) {
                  const long base = rd.done.load();
                  for (long i = 0; i < ops; ++i) {
                    while (rd.done.load(std::memory_order_acquire) != base + i) bench::cpu_pause();
                    for (int j = 0; j < batch; ++j) shared.signal(micro::request(j));
                    if (th != 0) continue;
                    while (!shared.test(r.data())) bench::cpu_pause();
                    rd.done.store(base + i + 1, std::memory_order_release);
                  }
                });
    }
  }
  return 0;
}

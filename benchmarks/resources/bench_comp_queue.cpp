// bench_comp_queue: cost of lci::comp_queue (lci/comp/queue.hpp), the
// completion queue behind LCI_queue_create, on its own: a queue of the
// default capacity (LCI_DEFAULT_QUEUE_LENGTH: 2 x the default packet count).
// One operation = one request pushed and popped; figures in ns per
// operation, per thread:
//   push_pop       push one, pop one (the queue stays empty);
//   burst_64       push 64, then pop_multiple(64);
// with 2 threads or more:
//   handoff_Tt     thread 0 pushes, threads 1 .. T-1 pop (retrying while the
//                  queue is full or empty): the progress thread and its
//                  consumers; the figure is per request of thread 0;
//   push_pop_Tt    every thread pushes one and pops one on the shared queue.
//
// Run: bench_comp_queue [--iters N] [--threads T] [--csv] [--no-pin]
#include <algorithm>
#include <string>

#include "lci.h"
#include "lci/comp/queue.hpp"
#include "micro.hpp"

namespace {

constexpr int burst = 64;

// Alone on the queue, a push or pop that fails is a bug. Shared, a pop may
// find the cell of another thread's push not yet published, and a push the
// cell it needs still claimed by a consumer that was descheduled before it
// released it (the queue reports full): both retry.
void push_pop(lci::comp_queue& q, long ops, bool shared) {
  LCI_request_t r;
  for (long i = 0; i < ops; ++i) {
    while (!q.push(micro::request(i))) {
      if (!shared) bench::die("bench_comp_queue", "the queue is full");
      bench::cpu_pause();
    }
    while (!q.pop(&r)) {
      if (!shared) bench::die("bench_comp_queue", "a pushed request could not be popped");
      bench::cpu_pause();
    }
  }
}

void push_pop_burst(lci::comp_queue& q, long rounds) {
  LCI_request_t r[burst];
  for (long i = 0; i < rounds; ++i) {
    for (int k = 0; k < burst; ++k)
      if (!q.push(micro::request(k))) bench::die("bench_comp_queue", "the queue is full");
    if (q.pop_multiple(burst, r) != burst)
      bench::die("bench_comp_queue", "pop_multiple fell short");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const size_t capacity = 2 * static_cast<size_t>(LCI_SERVER_NUM_PKTS_DEFAULT);
  micro::program p(argc, argv, "bench_comp_queue",
                   "Times lci::comp_queue (the completion queue of LCI_queue_create): push+pop,\n"
                   "bursts of 64, one producer handing to consumers, and all threads pushing and\n"
                   "popping, on 1 and T threads. Prints ns per request (median of 5 rounds after\n"
                   "a warm-up).",
                   "queue", "lci::comp_queue, capacity " + std::to_string(capacity), "push+pop");
  lci::comp_queue q(capacity);
  const long n = p.cfg.iters, bursts = std::max<long>(1, n / burst);
  p.measure("push_pop", 0, 1, n, 1, [&](int, long ops) { push_pop(q, ops, false); });
  p.measure("burst_64", 0, 1, bursts, burst, [&](int, long ops) { push_pop_burst(q, ops); });
  if (p.cfg.threads > 1) {
    const int t = p.cfg.threads;
    // Thread 0 pushes ops requests; the consumers pop them between them, so
    // that every round ends with the queue empty. Each consumer pops its
    // share: ops / (t - 1), the first ones one more for the remainder.
    p.measure("handoff", 0, t, n, 1, [&](int th, long ops) {
      if (th == 0) {
        for (long i = 0; i < ops; ++i)
          while (!q.push(micro::request(i))) bench::cpu_pause();
        return;
      }
      const long consumers = t - 1;
      const long mine = ops / consumers + (th - 1 < ops % consumers ? 1 : 0);
      LCI_request_t r;
      for (long i = 0; i < mine; ++i)
        while (!q.pop(&r)) bench::cpu_pause();
    });
    p.measure("push_pop", 0, t, n, 1, [&](int, long ops) { push_pop(q, ops, true); });
  }
  if (q.len() != 0) bench::die("bench_comp_queue", "requests left behind");
  return 0;
}

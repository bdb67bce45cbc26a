// Unit tests of the waiting policies (lci/wait/): parking and waking of OS
// threads, fibers and oneTBB tasks on comp_sync / comp_queue, without network
// or runtime. No timing is asserted; bounded loops give up after a deadline.
#include <doctest/doctest.h>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "lci.h"
#include "lci/comp/queue.hpp"
#include "lci/comp/signal.hpp"
#include "lci/comp/sync.hpp"
#include "lci/wait/fiber.hpp"
#include "lci/wait/parking.hpp"

namespace {

using steady = std::chrono::steady_clock;

LCI_request_t make_request(uintptr_t ctx) {
  LCI_request_t r{};
  r.flag = LCI_OK;
  r.rank = 0;
  r.tag = static_cast<LCI_tag_t>(ctx);
  r.type = LCI_IMMEDIATE;
  r.user_context = reinterpret_cast<void*>(ctx);
  return r;
}

uintptr_t ctx_of(const LCI_request_t& r) { return reinterpret_cast<uintptr_t>(r.user_context); }

// Waits (bounded) until some waiter is parked in the bucket of `key`.
bool wait_parked(const void* key, int n = 1) {
  const auto deadline = steady::now() + std::chrono::seconds(20);
  while (lci::detail::bucket_of(key).count.load() < static_cast<uint32_t>(n)) {
    if (steady::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The Debian/oneTBB binary switches the stacks of suspended tasks without
// telling ThreadSanitizer, which then crashes: TBB suspension is tested in the
// other builds only.
#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

struct policy_guard {
  explicit policy_guard(LCIX_wait_policy_t p) { lci::wait_policy_set(p); }
  ~policy_guard() { lci::wait_policy_set(LCIX_WAIT_THREADS); }
};

}  // namespace

TEST_CASE("threads: a sync waiter sleeps and is woken by a signal") {
  policy_guard g(LCIX_WAIT_THREADS);
  lci::comp_sync s(1);
  std::atomic<double> cpu{-1};
  LCI_request_t got{};
  std::thread waiter([&] {
    const double t0 = thread_cpu_seconds();
    s.wait(&got);
    cpu = thread_cpu_seconds() - t0;
  });
  const bool parked = wait_parked(&s);
  CHECK(parked);
  // Let the waiter sleep a while: a sleeping waiter costs (almost) no CPU.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  s.signal(make_request(42));
  waiter.join();
  CHECK(ctx_of(got) == 42);
  CHECK(cpu.load() < 0.15);  // a resource bound, not a timing
  CHECK(lci::detail::bucket_of(&s).count.load() == 0);
}

TEST_CASE("threads: a queue waiter and wait_multiple are woken by pushes") {
  policy_guard g(LCIX_WAIT_THREADS);
  lci::comp_queue q(16);
  LCI_request_t one{};
  LCI_request_t many[3];
  std::thread w1([&] { q.wait(&one); });
  REQUIRE(wait_parked(&q));
  lci::comp_signal(static_cast<lci::comp_base*>(&q), make_request(7));
  w1.join();
  CHECK(ctx_of(one) == 7);
  std::thread w3([&] { q.wait_multiple(3, many); });
  CHECK(wait_parked(&q));
  for (uintptr_t i = 0; i < 3; ++i) {
    q.push(make_request(10 + i));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  w3.join();
  for (uintptr_t i = 0; i < 3; ++i) CHECK(ctx_of(many[i]) == 10 + i);
}

TEST_CASE("threads: ping-pong stress has no lost wakeups") {
  policy_guard g(LCIX_WAIT_THREADS);
  constexpr int pairs = 3, rounds = 20000;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<lci::comp_sync>> ping, pong;
  for (int p = 0; p < pairs; ++p) {
    ping.emplace_back(new lci::comp_sync(1));
    pong.emplace_back(new lci::comp_sync(1));
  }
  for (int p = 0; p < pairs; ++p) {
    threads.emplace_back([&, p] {
      LCI_request_t r;
      for (int i = 0; i < rounds; ++i) {
        ping[p]->signal(make_request(static_cast<uintptr_t>(i)));
        pong[p]->wait(&r);
        if (ctx_of(r) != static_cast<uintptr_t>(i)) bad.fetch_add(1);
      }
    });
    threads.emplace_back([&, p] {
      LCI_request_t r;
      for (int i = 0; i < rounds; ++i) {
        ping[p]->wait(&r);
        if (ctx_of(r) != static_cast<uintptr_t>(i)) bad.fetch_add(1);
        pong[p]->signal(r);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(bad.load() == 0);
}

TEST_CASE("threads: many consumers wait on one queue, many producers push") {
  policy_guard g(LCIX_WAIT_THREADS);
  constexpr int producers = 2, consumers = 3, per_producer = 30000;
  lci::comp_queue q(256);
  std::atomic<uint64_t> sum{0};
  std::atomic<int> popped{0};
  std::vector<std::thread> threads;
  constexpr int total = producers * per_producer;
  // Each consumer takes a fixed share, so all of them finish.
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&, c] {
      const int share = total / consumers + (c < total % consumers ? 1 : 0);
      LCI_request_t r[4];
      for (int got = 0; got < share;) {
        if (c == 0 && share - got >= 4) {
          q.wait_multiple(4, r);
          for (auto& x : r) sum.fetch_add(ctx_of(x));
          got += 4;
        } else {
          q.wait(r);
          sum.fetch_add(ctx_of(r[0]));
          ++got;
        }
      }
      popped.fetch_add(share);
    });
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&] {
      for (int i = 1; i <= per_producer; ++i) {
        const LCI_request_t r = make_request(static_cast<uintptr_t>(i));
        while (!q.push(r)) std::this_thread::yield();
      }
    });
  for (auto& t : threads) t.join();
  CHECK(popped.load() == total);
  CHECK(sum.load() == static_cast<uint64_t>(producers) * per_producer * (per_producer + 1) / 2);
}

TEST_CASE("spin policy still works") {
  policy_guard g(LCIX_WAIT_SPIN);
  lci::comp_sync s(2);
  LCI_request_t out[2];
  std::thread t([&] {
    s.signal(make_request(1));
    s.signal(make_request(2));
  });
  s.wait(out);
  t.join();
  CHECK(ctx_of(out[0]) + ctx_of(out[1]) == 3);
}

namespace {
struct fiber_job {
  lci::comp_sync* sync;
  uintptr_t expect;
  std::atomic<int>* ok;
  std::atomic<int>* started;
  bool on_fiber = false;
};
void fiber_wait(void* p) {
  auto* j = static_cast<fiber_job*>(p);
  j->on_fiber = lci::current_fiber() != nullptr;
  j->started->fetch_add(1);
  LCI_request_t r;
  j->sync->wait(&r);
  if (ctx_of(r) == j->expect && j->on_fiber) j->ok->fetch_add(1);
}
}  // namespace

TEST_CASE("fibers: 10,000 fibers each wait on their own synchronizer") {
  policy_guard g(LCIX_WAIT_FIBERS);
  // ThreadSanitizer counts each live fiber as a thread (limit 8128).
  constexpr int n = under_tsan ? 4000 : 10000;
  std::vector<std::unique_ptr<lci::comp_sync>> syncs;
  std::vector<fiber_job> jobs(n);
  std::atomic<int> ok{0}, started{0};
  for (int i = 0; i < n; ++i) {
    syncs.emplace_back(new lci::comp_sync(1));
    jobs[i] = {syncs[i].get(), static_cast<uintptr_t>(1000 + i), &ok, &started};
  }
  {
    lci::fiber_pool pool(2);
    for (int i = 0; i < n; ++i) pool.spawn(fiber_wait, &jobs[i]);
    // Signal from another OS thread, in reverse order, while fibers are
    // still starting and parking: both "wake a parked fiber" and "already
    // triggered at the re-check" happen.
    std::thread signaller([&] {
      for (int i = n - 1; i >= 0; --i)
        syncs[i]->signal(make_request(static_cast<uintptr_t>(1000 + i)));
    });
    signaller.join();
    pool.join();
  }
  CHECK(started.load() == n);
  CHECK(ok.load() == n);
}

TEST_CASE("fibers: all fibers park before the signals come; yields interleave") {
  policy_guard g(LCIX_WAIT_FIBERS);
  constexpr int n = 2000;
  std::vector<std::unique_ptr<lci::comp_sync>> syncs;
  std::vector<fiber_job> jobs(n);
  std::atomic<int> ok{0}, started{0};
  for (int i = 0; i < n; ++i) {
    syncs.emplace_back(new lci::comp_sync(1));
    jobs[i] = {syncs[i].get(), static_cast<uintptr_t>(i), &ok, &started};
  }
  lci::fiber_pool pool(2);
  for (int i = 0; i < n; ++i) pool.spawn(fiber_wait, &jobs[i]);
  // Every fiber parks (the two workers are free again): count the nodes.
  uint32_t parked = 0;
  const auto deadline = steady::now() + std::chrono::seconds(30);
  do {
    parked = 0;
    for (auto& b : lci::detail::park_buckets) parked += b.count.load();
    if (parked < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (parked < n && steady::now() < deadline);
  CHECK(parked == n);
  for (int i = 0; i < n; ++i) syncs[i]->signal(make_request(static_cast<uintptr_t>(i)));
  pool.join();
  CHECK(ok.load() == n);
  // A fiber waiting on a queue, and LCIX-style yields.
  lci::comp_queue q(8);
  std::atomic<int> yields{0};
  struct qjob { lci::comp_queue* q; std::atomic<int>* yields; uintptr_t got; } qj{&q, &yields, 0};
  pool.spawn([](void* p) {
    auto* j = static_cast<qjob*>(p);
    LCI_request_t r;
    j->q->wait(&r);
    j->got = ctx_of(r);
  }, &qj);
  pool.spawn([](void* p) {
    auto* j = static_cast<qjob*>(p);
    for (int i = 0; i < 100; ++i) {
      lci::fiber_yield();
      j->yields->fetch_add(1);
    }
    j->q->push(make_request(77));  // a fiber wakes a fiber
  }, &qj);
  pool.join();
  CHECK(qj.got == 77);
  CHECK(yields.load() == 100);
}

TEST_CASE("fibers policy: a wait from a plain thread falls back to threads") {
  policy_guard g(LCIX_WAIT_FIBERS);
  lci::comp_sync s(1);
  LCI_request_t r;
  std::thread t([&] { s.wait(&r); });
  CHECK(wait_parked(&s));
  s.signal(make_request(5));
  t.join();
  CHECK(ctx_of(r) == 5);
}

TEST_CASE("tbb: 1,000 tasks each wait on their own synchronizer" * doctest::skip(under_tsan)) {
  policy_guard g(LCIX_WAIT_TBB);
  constexpr int n = 1000;
  std::vector<std::unique_ptr<lci::comp_sync>> syncs;
  for (int i = 0; i < n; ++i) syncs.emplace_back(new lci::comp_sync(1));
  std::atomic<int> ok{0}, started{0};
  tbb::task_arena arena(2);
  std::thread signaller([&] {
    // Wait (bounded) until at least some tasks run, then signal all.
    const auto deadline = steady::now() + std::chrono::seconds(20);
    while (started.load() < n / 2 && steady::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < n; ++i) syncs[i]->signal(make_request(static_cast<uintptr_t>(i)));
  });
  arena.execute([&] {
    tbb::task_group tg;
    for (int i = 0; i < n; ++i)
      tg.run([&, i] {
        started.fetch_add(1);
        LCI_request_t r;
        syncs[i]->wait(&r);
        if (ctx_of(r) == static_cast<uintptr_t>(i)) ok.fetch_add(1);
      });
    tg.wait();
  });
  signaller.join();
  CHECK(started.load() == n);
  CHECK(ok.load() == n);
}

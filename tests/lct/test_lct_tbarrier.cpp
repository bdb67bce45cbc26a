// LCT_tbarrier_*: no thread leaves round r before all arrived in round r;
// the barrier is reusable for many rounds; tickets number the rounds.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "lct.h"

TEST_CASE("many threads, many rounds, nobody passes early") {
  constexpr int nthreads = 10, rounds = 300;
  LCT_tbarrier_t b = LCT_tbarrier_alloc(nthreads);
  std::atomic<int> arrived[rounds];
  for (auto& a : arrived) a.store(0);
  std::atomic<int> early{0}, bad_ticket{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        arrived[r].fetch_add(1);
        if (t % 2 == 0) {
          LCT_tbarrier_arrive_and_wait(b);
        } else {
          const int64_t ticket = LCT_tbarrier_arrive(b);
          if (ticket != r) bad_ticket.fetch_add(1);
          LCT_tbarrier_wait(b, ticket);
          if (!LCT_tbarrier_test(b, ticket)) bad_ticket.fetch_add(1);
        }
        if (arrived[r].load() != nthreads) early.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(early.load() == 0);
  CHECK(bad_ticket.load() == 0);
  LCT_tbarrier_free(&b);
  CHECK(b == nullptr);
}

TEST_CASE("test is false until the last thread arrives") {
  LCT_tbarrier_t b = LCT_tbarrier_alloc(3);
  const int64_t t0 = LCT_tbarrier_arrive(b);
  const int64_t t1 = LCT_tbarrier_arrive(b);
  CHECK(t0 == 0);
  CHECK(t1 == 0);
  CHECK_FALSE(LCT_tbarrier_test(b, t0));
  std::thread last([&] { LCT_tbarrier_arrive_and_wait(b); });
  last.join();
  CHECK(LCT_tbarrier_test(b, t0));
  // The next round starts closed.
  const int64_t t2 = LCT_tbarrier_arrive(b);
  CHECK(t2 == 1);
  CHECK_FALSE(LCT_tbarrier_test(b, t2));
  LCT_tbarrier_free(&b);
}

TEST_CASE("a barrier of one never blocks") {
  LCT_tbarrier_t b = LCT_tbarrier_alloc(1);
  for (int i = 0; i < 5; ++i) LCT_tbarrier_arrive_and_wait(b);
  CHECK(LCT_tbarrier_test(b, 4));
  LCT_tbarrier_free(&b);
}

// LCT_queue_*: MPMC FIFOs; pop gives NULL when empty; 1.7.9's unbounded types
// grow, its array types warn once when pushed past their length.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "child.hpp"
#include "lct.h"

namespace {

const LCT_queue_type_t all_types[] = {
    LCT_QUEUE_ARRAY_ATOMIC_FAA, LCT_QUEUE_ARRAY_ATOMIC_CAS, LCT_QUEUE_ARRAY_ATOMIC_BASIC,
    LCT_QUEUE_ARRAY_ST,         LCT_QUEUE_ARRAY_MUTEX,      LCT_QUEUE_STD,
    LCT_QUEUE_STD_MUTEX,        LCT_QUEUE_MS,               LCT_QUEUE_LCRQ,
    LCT_QUEUE_LPRQ,             LCT_QUEUE_FAAARRAY,         LCT_QUEUE_LAZY_INDEX};

void* as_ptr(uintptr_t v) { return reinterpret_cast<void*>(v); }

}  // namespace

TEST_CASE("FIFO order in one thread, for every type") {
  for (LCT_queue_type_t type : all_types) {
    CAPTURE(static_cast<int>(type));
    LCT_queue_t q = LCT_queue_alloc(type, 7);
    CHECK(LCT_queue_pop(q) == nullptr);
    for (int round = 0; round < 5; ++round) {  // wraps around several times
      for (uintptr_t i = 1; i <= 7; ++i) LCT_queue_push(q, as_ptr(round * 100 + i));
      for (uintptr_t i = 1; i <= 7; ++i) CHECK(LCT_queue_pop(q) == as_ptr(round * 100 + i));
      CHECK(LCT_queue_pop(q) == nullptr);
    }
    LCT_queue_push(q, as_ptr(1));
    LCT_queue_push(q, as_ptr(2));
    CHECK(LCT_queue_pop(q) == as_ptr(1));
    LCT_queue_push(q, as_ptr(3));
    CHECK(LCT_queue_pop(q) == as_ptr(2));
    CHECK(LCT_queue_pop(q) == as_ptr(3));
    LCT_queue_free(&q);
    CHECK(q == nullptr);
  }
}

TEST_CASE("many producers and consumers: every value popped exactly once") {
  constexpr int producers = 4, consumers = 4, per_producer = 20000;
  constexpr int total = producers * per_producer;
  for (LCT_queue_type_t type : all_types) {
    CAPTURE(static_cast<int>(type));
    // Large enough that producers never overflow it even if consumers stall.
    LCT_queue_t q = LCT_queue_alloc(type, total);
    std::unique_ptr<std::atomic<int>[]> seen(new std::atomic<int>[total]);
    for (int i = 0; i < total; ++i) seen[i].store(0);
    std::atomic<int> popped{0};
    std::atomic<bool> order_ok{true};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
      threads.emplace_back([&, p] {
        for (int i = 0; i < per_producer; ++i)
          LCT_queue_push(q, as_ptr(static_cast<uintptr_t>(p * per_producer + i + 1)));
      });
    for (int c = 0; c < consumers; ++c)
      threads.emplace_back([&] {
        int last[producers];
        for (int& l : last) l = -1;
        while (popped.load(std::memory_order_relaxed) < total &&
               std::chrono::steady_clock::now() < deadline) {
          void* v = LCT_queue_pop(q);
          if (v == nullptr) continue;
          const int value = static_cast<int>(reinterpret_cast<uintptr_t>(v)) - 1;
          seen[value].fetch_add(1);
          // FIFO: one consumer sees each producer's values in order.
          const int p = value / per_producer;
          if (value % per_producer <= last[p]) order_ok.store(false);
          last[p] = value % per_producer;
          popped.fetch_add(1);
        }
      });
    for (auto& t : threads) t.join();
    CHECK(popped.load() == total);
    int wrong = 0;
    for (int i = 0; i < total; ++i) wrong += seen[i].load() != 1;
    CHECK(wrong == 0);
    CHECK(order_ok.load());
    CHECK(LCT_queue_pop(q) == nullptr);
    LCT_queue_free(&q);
  }
}

TEST_CASE("a small queue under contention (push waits by popping)") {
  for (LCT_queue_type_t type : {LCT_QUEUE_ARRAY_ATOMIC_FAA, LCT_QUEUE_STD_MUTEX}) {
    CAPTURE(static_cast<int>(type));
    constexpr int n = 4, per_thread = 20000;
    LCT_queue_t q = LCT_queue_alloc(type, n);
    // Each thread pushes only after it popped (or at start, with n slots
    // for n threads), so the queue is never full.
    for (int i = 0; i < n; ++i) LCT_queue_push(q, as_ptr(1));
    std::atomic<long> sum{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back([&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (int i = 0; i < per_thread && std::chrono::steady_clock::now() < deadline;) {
          void* v = LCT_queue_pop(q);
          if (v == nullptr) continue;
          sum.fetch_add(static_cast<long>(reinterpret_cast<uintptr_t>(v)));
          LCT_queue_push(q, as_ptr(1));
          ++i;
        }
      });
    for (auto& t : threads) t.join();
    CHECK(sum.load() == static_cast<long>(n) * per_thread);
    int left = 0;
    while (LCT_queue_pop(q) != nullptr) ++left;
    CHECK(left == n);
    LCT_queue_free(&q);
  }
}

TEST_CASE("1.7.9's unbounded types take more than their length, in order, silently") {
  for (LCT_queue_type_t type : {LCT_QUEUE_STD, LCT_QUEUE_STD_MUTEX, LCT_QUEUE_MS, LCT_QUEUE_LCRQ,
                                LCT_QUEUE_LPRQ, LCT_QUEUE_FAAARRAY, LCT_QUEUE_LAZY_INDEX}) {
    child_result r = run_in_child([type] {
      LCT_queue_t q = LCT_queue_alloc(type, 0);  // the length is ignored
      for (uintptr_t i = 1; i <= 1000; ++i) {
        LCT_queue_push(q, as_ptr(i));
        if (i % 3 == 0 && LCT_queue_pop(q) != as_ptr(i / 3)) _exit(3);
      }
      for (uintptr_t i = 334; i <= 1000; ++i)
        if (LCT_queue_pop(q) != as_ptr(i)) _exit(4);
      if (LCT_queue_pop(q) != nullptr) _exit(5);
      LCT_queue_free(&q);
    });
    INFO("type ", static_cast<int>(type), ", status ", r.status, ", output: ", r.output);
    CHECK(r.exited_with(0));
    CHECK(r.output.empty());
  }
}

TEST_CASE("an array queue pushed past its length warns once and keeps every value") {
  for (LCT_queue_type_t type : {LCT_QUEUE_ARRAY_ATOMIC_FAA, LCT_QUEUE_ARRAY_MUTEX}) {
    child_result r = run_in_child([type] {
      LCT_queue_t q = LCT_queue_alloc(type, 3);
      for (uintptr_t i = 1; i <= 5; ++i) LCT_queue_push(q, as_ptr(i));
      for (uintptr_t i = 1; i <= 5; ++i)
        if (LCT_queue_pop(q) != as_ptr(i)) _exit(3);
      if (LCT_queue_pop(q) != nullptr) _exit(4);
      LCT_queue_free(&q);
    });
    INFO("status ", r.status, ", output: ", r.output);
    CHECK(r.exited_with(0));
    CHECK(r.has("LCT_queue_push: queue full (length 3); it grows past its length (warned once)"));
  }
}

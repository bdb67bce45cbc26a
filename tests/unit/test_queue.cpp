// Unit tests of lci::comp_queue, the completion queue.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "lci.h"
#include "lci/comp/queue.hpp"
#include "lci/comp/signal.hpp"

namespace {

using steady = std::chrono::steady_clock;

LCI_request_t make_request(int rank, uint32_t tag) {
  LCI_request_t r{};
  r.flag = LCI_OK;
  r.rank = rank;
  r.tag = tag;
  r.type = LCI_MEDIUM;
  r.data.mbuffer.address = nullptr;
  r.data.mbuffer.length = tag ^ 0x5a5au;
  r.user_context = reinterpret_cast<void*>(static_cast<uintptr_t>(rank) * 1000003u + tag);
  return r;
}

bool request_intact(const LCI_request_t& r) {
  return r.flag == LCI_OK && r.type == LCI_MEDIUM && r.data.mbuffer.address == nullptr &&
         r.data.mbuffer.length == (r.tag ^ 0x5a5au) &&
         r.user_context ==
             reinterpret_cast<void*>(static_cast<uintptr_t>(r.rank) * 1000003u + r.tag);
}

}  // namespace

TEST_CASE("comp_queue: FIFO order, empty pop") {
  lci::comp_queue q(16);
  LCI_request_t r;
  CHECK_FALSE(q.pop(&r));
  for (uint32_t i = 0; i < 10; ++i) REQUIRE(q.push(make_request(1, i)));
  for (uint32_t i = 0; i < 10; ++i) {
    REQUIRE(q.pop(&r));
    CHECK(r.tag == i);
    CHECK(request_intact(r));
  }
  CHECK_FALSE(q.pop(&r));
}

TEST_CASE("comp_queue: capacity rounding and full queue") {
  SUBCASE("capacity 3 holds 4") {
    lci::comp_queue q(3);
    CHECK(q.capacity() == 4);
  }
  SUBCASE("capacity 1 holds at least 1") {
    lci::comp_queue q(1);
    CHECK(q.capacity() >= 1);
    CHECK(q.push(make_request(0, 0)));
  }
  SUBCASE("power of two kept") {
    lci::comp_queue q(64);
    CHECK(q.capacity() == 64);
  }
  SUBCASE("a length beyond the largest queue is refused, not rounded forever") {
    CHECK_THROWS_AS(lci::comp_queue(lci::comp_queue::max_capacity + 1), std::length_error);
    CHECK_THROWS_AS(lci::comp_queue(SIZE_MAX), std::length_error);
  }
  lci::comp_queue q(5);
  const size_t cap = q.capacity();
  REQUIRE(cap == 8);
  for (uint32_t i = 0; i < cap; ++i) REQUIRE(q.push(make_request(0, i)));
  CHECK_FALSE(q.push(make_request(0, 99)));
  CHECK(q.len() == cap);
  LCI_request_t r;
  REQUIRE(q.pop(&r));
  CHECK(r.tag == 0);
  CHECK(q.push(make_request(0, 100)));
  CHECK_FALSE(q.push(make_request(0, 101)));
  for (uint32_t i = 1; i < cap; ++i) {
    REQUIRE(q.pop(&r));
    CHECK(r.tag == i);
  }
  REQUIRE(q.pop(&r));
  CHECK(r.tag == 100);
  CHECK_FALSE(q.pop(&r));
}

TEST_CASE("comp_queue: wrap-around keeps FIFO order") {
  lci::comp_queue q(4);
  uint32_t next_push = 0, next_pop = 0;
  for (int round = 0; round < 1000; ++round) {
    const int n = 1 + round % 4;
    for (int i = 0; i < n; ++i) REQUIRE(q.push(make_request(2, next_push++)));
    for (int i = 0; i < n; ++i) {
      LCI_request_t r;
      REQUIRE(q.pop(&r));
      CHECK(r.tag == next_pop++);
    }
  }
  CHECK(q.len() == 0);
}

TEST_CASE("comp_queue: pop_multiple counts and order") {
  lci::comp_queue q(8);
  LCI_request_t out[16];
  CHECK(q.pop_multiple(4, out) == 0);
  for (uint32_t i = 0; i < 5; ++i) REQUIRE(q.push(make_request(3, i)));
  CHECK(q.pop_multiple(0, out) == 0);
  REQUIRE(q.pop_multiple(3, out) == 3);
  for (uint32_t i = 0; i < 3; ++i) CHECK(out[i].tag == i);
  REQUIRE(q.pop_multiple(16, out) == 2);
  CHECK(out[0].tag == 3);
  CHECK(out[1].tag == 4);
  CHECK(q.pop_multiple(16, out) == 0);
  // A full ring, taken across the wrap point in one call.
  for (uint32_t i = 0; i < 8; ++i) REQUIRE(q.push(make_request(3, 10 + i)));
  REQUIRE(q.pop_multiple(16, out) == 8);
  for (uint32_t i = 0; i < 8; ++i) CHECK(out[i].tag == 10 + i);
}

TEST_CASE("comp_queue: len") {
  lci::comp_queue q(8);
  CHECK(q.len() == 0);
  q.push(make_request(0, 1));
  q.push(make_request(0, 2));
  CHECK(q.len() == 2);
  LCI_request_t r;
  q.pop(&r);
  CHECK(q.len() == 1);
  q.pop(&r);
  CHECK(q.len() == 0);
}

TEST_CASE("comp_queue: wait and wait_multiple block until entries arrive") {
  lci::comp_queue q(8);
  std::atomic<bool> waiting{false};
  LCI_request_t one;
  LCI_request_t many[5];
  std::thread consumer([&] {
    waiting.store(true);
    q.wait(&one);
    q.wait_multiple(5, many);
  });
  while (!waiting.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  q.push(make_request(4, 0));
  for (uint32_t i = 1; i <= 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    q.push(make_request(4, i));
  }
  consumer.join();
  CHECK(one.tag == 0);
  for (uint32_t i = 0; i < 5; ++i) CHECK(many[i].tag == i + 1);
  CHECK(q.len() == 0);
  q.wait_multiple(0, many);  // returns at once
}

TEST_CASE("comp_queue: completion object header and comp_signal") {
  auto q = std::make_unique<lci::comp_queue>(4);
  LCI_comp_t handle = static_cast<lci::comp_base*>(q.get());
  CHECK(static_cast<void*>(q.get()) == handle);  // base at offset 0
  CHECK(lci::to_comp(handle)->magic == lci::comp_magic);
  CHECK(lci::to_comp(handle)->type == LCI_COMPLETION_QUEUE);
  CHECK(lci::comp_is_valid(handle, LCI_COMPLETION_QUEUE));
  CHECK_FALSE(lci::comp_is_valid(handle, LCI_COMPLETION_SYNC));
  lci::comp_signal(handle, make_request(5, 7));
  LCI_request_t r;
  REQUIRE(q->pop(&r));
  CHECK(r.rank == 5);
  CHECK(r.tag == 7);

  // The destructor clears the magic (inspected in storage we own).
  alignas(lci::comp_queue) unsigned char storage[sizeof(lci::comp_queue)];
  auto* placed = new (storage) lci::comp_queue(2);
  CHECK(placed->magic == lci::comp_magic);
  placed->~comp_queue();
  // Hide the storage's identity from the optimizer, which may otherwise treat
  // the bytes of a destroyed object as indeterminate.
  unsigned char* bytes = storage;
  asm volatile("" : "+r"(bytes) : : "memory");
  uint32_t magic_after;
  std::memcpy(&magic_after, bytes, sizeof magic_after);
  CHECK(magic_after == 0);
}

namespace {

// P producers push N numbered requests each (rank = producer, tag = sequence
// number); C consumers take them with pop, pop_multiple, wait or
// wait_multiple. Checks: every pushed request is popped exactly once, intact,
// and each consumer sees each producer's requests in increasing order.
void run_mpmc_stress(size_t capacity, int producers, int consumers, uint32_t per_producer) {
  lci::comp_queue q(capacity);
  const uint32_t pill_tag = 0xffffffffu;  // rank -1: tells a consumer to stop
  std::vector<std::unique_ptr<std::atomic<uint8_t>[]>> seen;
  for (int p = 0; p < producers; ++p) {
    seen.emplace_back(new std::atomic<uint8_t>[per_producer]);
    for (uint32_t i = 0; i < per_producer; ++i) seen[p][i].store(0, std::memory_order_relaxed);
  }
  std::vector<uint32_t> pushed(producers, 0);
  std::atomic<int> failures{0};
  std::atomic<int> consumers_done{0};
  const auto deadline = steady::now() + std::chrono::seconds(3);

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      uint32_t i = 0;
      for (; i < per_producer; ++i) {
        const LCI_request_t r = make_request(p, i);
        while (!q.push(r)) {
          if (steady::now() > deadline) goto out;
          std::this_thread::yield();
        }
        if (q.len() > q.capacity()) failures.fetch_add(1);
      }
    out:
      pushed[p] = i;
    });
  }
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      std::vector<int64_t> last(producers, -1);
      LCI_request_t batch[8];
      bool stop = false;
      while (!stop) {
        size_t n = 0;
        switch (c % 4) {
          case 0:
            q.wait(batch);
            n = 1;
            break;
          case 1:
            n = q.pop_multiple(8, batch);
            break;
          case 2:
            q.wait_multiple(3, batch);
            n = 3;
            break;
          default:
            n = q.pop(batch) ? 1 : 0;
            break;
        }
        if (n == 0) std::this_thread::yield();
        for (size_t k = 0; k < n; ++k) {
          const LCI_request_t& r = batch[k];
          if (r.rank == -1 && r.tag == pill_tag) {
            stop = true;
            continue;
          }
          if (r.rank < 0 || r.rank >= producers || r.tag >= per_producer || !request_intact(r) ||
              static_cast<int64_t>(r.tag) <= last[r.rank]) {
            failures.fetch_add(1);
            continue;
          }
          last[r.rank] = r.tag;
          seen[r.rank][r.tag].fetch_add(1, std::memory_order_relaxed);
        }
      }
      consumers_done.fetch_add(1);
    });
  }
  for (int p = 0; p < producers; ++p) threads[p].join();

  // Enough pills for every consumer to finish even if each takes its largest
  // batch of pills; stop pushing once all consumers are done.
  LCI_request_t pill{};
  pill.rank = -1;
  pill.tag = pill_tag;
  for (int k = 0; k < 8 * consumers && consumers_done.load() < consumers;) {
    if (q.push(pill))
      ++k;
    else
      std::this_thread::yield();
  }
  for (size_t t = producers; t < threads.size(); ++t) threads[t].join();

  // Only pills may be left.
  LCI_request_t r;
  while (q.pop(&r))
    if (r.rank != -1) failures.fetch_add(1);

  uint64_t total = 0;
  for (int p = 0; p < producers; ++p) {
    total += pushed[p];
    for (uint32_t i = 0; i < per_producer; ++i) {
      const uint8_t expect = i < pushed[p] ? 1 : 0;
      if (seen[p][i].load() != expect) failures.fetch_add(1);
    }
  }
  CHECK(failures.load() == 0);
  CHECK(total > 0);
  MESSAGE("capacity ", q.capacity(), ": ", total, " requests through ", producers,
          " producers and ", consumers, " consumers");
}

}  // namespace

TEST_CASE("comp_queue: stress, many producers and consumers") {
  SUBCASE("capacity 64") { run_mpmc_stress(64, 4, 4, 200000); }
  SUBCASE("capacity 2 (always full or empty)") { run_mpmc_stress(2, 3, 4, 50000); }
  SUBCASE("capacity 1024, one consumer") { run_mpmc_stress(1024, 4, 1, 100000); }
}

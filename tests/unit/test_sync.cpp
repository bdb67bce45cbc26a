// Unit tests of lci::comp_sync (synchronizer) and lci::comp_handler, and of
// comp_signal's dispatch to them.
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
#include "lci/comp/handler.hpp"
#include "lci/comp/signal.hpp"
#include "lci/comp/sync.hpp"

namespace {

using steady = std::chrono::steady_clock;

LCI_request_t make_request(int rank, uint32_t tag, uintptr_t ctx) {
  LCI_request_t r{};
  r.flag = LCI_OK;
  r.rank = rank;
  r.tag = tag;
  r.type = LCI_IMMEDIATE;
  std::memset(r.data.immediate.val, static_cast<int>(ctx & 0x7f), LCI_SHORT_SIZE);
  r.user_context = reinterpret_cast<void*>(ctx);
  return r;
}

uintptr_t ctx_of(const LCI_request_t& r) { return reinterpret_cast<uintptr_t>(r.user_context); }

}  // namespace

TEST_CASE("comp_sync: threshold 1") {
  lci::comp_sync s(1);
  CHECK(s.threshold() == 1);
  LCI_request_t out = make_request(-7, 7, 7);
  CHECK_FALSE(s.test(&out));
  CHECK(out.rank == -7);  // nothing written
  for (uint32_t round = 0; round < 5; ++round) {
    s.signal(make_request(1, round, 100 + round));
    REQUIRE(s.test(&out));
    CHECK(out.rank == 1);
    CHECK(out.tag == round);
    CHECK(ctx_of(out) == 100 + round);
    CHECK_FALSE(s.test(&out));
  }
}

TEST_CASE("comp_sync: threshold k is not triggered before k signals") {
  const int k = 5;
  lci::comp_sync s(k);
  CHECK(s.threshold() == k);
  LCI_request_t out[k];
  for (int i = 0; i < k; ++i) out[i] = make_request(-1, 0xdead, 0);
  for (int i = 0; i < k - 1; ++i) {
    s.signal(make_request(2, static_cast<uint32_t>(i), i));
    CHECK_FALSE(s.test(out));
  }
  for (int i = 0; i < k; ++i) CHECK(out[i].tag == 0xdead);  // untouched
  s.signal(make_request(2, k - 1, k - 1));
  REQUIRE(s.test(out));
  for (int i = 0; i < k; ++i) {
    CHECK(out[i].tag == static_cast<uint32_t>(i));  // signal order
    CHECK(ctx_of(out[i]) == static_cast<uintptr_t>(i));
    CHECK(out[i].data.immediate.val[LCI_SHORT_SIZE - 1] == static_cast<char>(i));
  }
  CHECK_FALSE(s.test(out));
}

TEST_CASE("comp_sync: reusable after reset; NULL drops the requests") {
  lci::comp_sync s(3);
  LCI_request_t out[3];
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 3; ++i) s.signal(make_request(round, 10 * round + i, i));
    if (round % 2 == 0) {
      REQUIRE(s.test(nullptr));
    } else {
      REQUIRE(s.test(out));
      for (int i = 0; i < 3; ++i) CHECK(out[i].tag == static_cast<uint32_t>(10 * round + i));
    }
    CHECK_FALSE(s.test(out));
  }
}

TEST_CASE("comp_sync: requests are returned verbatim (flag too)") {
  lci::comp_sync s(2);
  LCI_request_t a = make_request(3, 1, 1);
  a.flag = LCI_ERR_RETRY;
  a.type = LCI_LONG;
  a.data.lbuffer.segment = nullptr;
  a.data.lbuffer.address = &s;
  a.data.lbuffer.length = 12345;
  s.signal(a);
  s.signal(make_request(4, 2, 2));
  LCI_request_t out[2];
  REQUIRE(s.test(out));
  CHECK(out[0].flag == LCI_ERR_RETRY);
  CHECK(out[0].type == LCI_LONG);
  CHECK(out[0].data.lbuffer.address == &s);
  CHECK(out[0].data.lbuffer.length == 12345);
  CHECK(out[1].rank == 4);
}

TEST_CASE("comp_sync: wait blocks until the k-th signal") {
  lci::comp_sync s(4);
  std::atomic<bool> returned{false};
  LCI_request_t out[4];
  std::thread waiter([&] {
    s.wait(out);
    returned.store(true);
  });
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK_FALSE(returned.load());
    s.signal(make_request(5, i, i));
  }
  waiter.join();
  CHECK(returned.load());
  for (int i = 0; i < 4; ++i) CHECK(out[i].tag == static_cast<uint32_t>(i));
  CHECK_FALSE(s.test(nullptr));
}

TEST_CASE("comp_sync: one of several concurrent testers consumes a trigger") {
  for (int trial = 0; trial < 50; ++trial) {
    lci::comp_sync s(2);
    s.signal(make_request(0, 0, 0));
    std::atomic<int> ready{0};
    std::atomic<int> winners{0};
    const auto deadline = steady::now() + std::chrono::seconds(2);
    std::vector<std::thread> testers;
    for (int t = 0; t < 4; ++t)
      testers.emplace_back([&] {
        ready.fetch_add(1);
        LCI_request_t out[2];
        while (winners.load() == 0 && steady::now() < deadline)
          if (s.test(out)) winners.fetch_add(1);
        for (int i = 0; i < 20; ++i)  // the trigger is gone for everyone
          if (s.test(out)) winners.fetch_add(1);
      });
    while (ready.load() < 4) std::this_thread::yield();
    s.signal(make_request(0, 1, 1));
    for (auto& t : testers) t.join();
    CHECK(winners.load() == 1);
  }
}

TEST_CASE("comp_sync: header, comp_signal, destructor clears magic") {
  auto s = std::make_unique<lci::comp_sync>(2);
  LCI_comp_t handle = static_cast<lci::comp_base*>(s.get());
  CHECK(static_cast<void*>(s.get()) == handle);
  CHECK(lci::comp_is_valid(handle, LCI_COMPLETION_SYNC));
  lci::comp_signal(handle, make_request(1, 1, 1));
  CHECK_FALSE(s->test(nullptr));
  lci::comp_signal(handle, make_request(1, 2, 2));
  LCI_request_t out[2];
  REQUIRE(s->test(out));
  CHECK(out[0].tag == 1);
  CHECK(out[1].tag == 2);

  alignas(lci::comp_sync) unsigned char storage[sizeof(lci::comp_sync)];
  auto* placed = new (storage) lci::comp_sync(3);
  CHECK(placed->magic == lci::comp_magic);
  placed->~comp_sync();
  // Hide the storage's identity from the optimizer, which may otherwise treat
  // the bytes of a destroyed object as indeterminate.
  unsigned char* bytes = storage;
  asm volatile("" : "+r"(bytes) : : "memory");
  uint32_t magic_after;
  std::memcpy(&magic_after, bytes, sizeof magic_after);
  CHECK(magic_after == 0);
}

namespace {

std::atomic<int> handler_calls{0};
std::atomic<uint64_t> handler_tag_sum{0};
LCI_request_t handler_last;

void record_handler(LCI_request_t r) {
  handler_tag_sum.fetch_add(r.tag);
  if (handler_calls.fetch_add(1) == 0) handler_last = r;
}

}  // namespace

TEST_CASE("comp_handler: called with the request, directly and through comp_signal") {
  handler_calls = 0;
  handler_tag_sum = 0;
  lci::comp_handler h(record_handler);
  CHECK(h.type == LCI_COMPLETION_HANDLER);
  CHECK((h.function() == &record_handler));
  LCI_comp_t handle = static_cast<lci::comp_base*>(&h);
  CHECK(lci::comp_is_valid(handle, LCI_COMPLETION_HANDLER));
  h.signal(make_request(9, 42, 4242));
  CHECK(handler_calls.load() == 1);
  CHECK(handler_last.rank == 9);
  CHECK(handler_last.tag == 42);
  CHECK(ctx_of(handler_last) == 4242);
  lci::comp_signal(handle, make_request(9, 43, 0));
  CHECK(handler_calls.load() == 2);

  // Concurrent signallers: every call arrives.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < 1000; ++i) lci::comp_signal(handle, make_request(t, 1, i));
    });
  for (auto& t : threads) t.join();
  CHECK(handler_calls.load() == 2 + 4000);
  CHECK(handler_tag_sum.load() == 42 + 43 + 4000);
}

namespace {

// Rounds of k signals spread over S signaller threads (signal i of round r
// comes from thread (i + r) % S, with user_context = i), consumed by one
// thread calling wait() and one calling test(). The consumer that wins round
// r checks that it got exactly round r's k requests, each thread's in the
// order that thread sent them, then opens round r + 1.
void run_sync_stress(int k, int signallers, int max_rounds) {
  lci::comp_sync s(k);
  const uint32_t dummy_tag = 0xffffffffu;
  std::atomic<int> round{0};     // the round signallers may signal
  std::atomic<bool> stop{false}; // set before the last round is opened
  std::atomic<int> dummies_consumed{0};
  std::atomic<int> failures{0};
  const auto deadline = steady::now() + std::chrono::seconds(2);

  auto process = [&](const LCI_request_t* out) {
    if (out[0].tag == dummy_tag) {
      dummies_consumed.fetch_add(1);
      return;
    }
    const int r = round.load(std::memory_order_relaxed);
    std::vector<int64_t> last(signallers, -1);
    std::vector<char> seen(k, 0);
    for (int i = 0; i < k; ++i) {
      const LCI_request_t& q = out[i];
      const uintptr_t idx = ctx_of(q);
      if (q.tag != static_cast<uint32_t>(r) || q.rank < 0 || q.rank >= signallers ||
          idx >= static_cast<uintptr_t>(k) || seen[idx] ||
          static_cast<int>((idx + r) % signallers) != q.rank ||
          static_cast<int64_t>(idx) <= last[q.rank]) {
        failures.fetch_add(1);
        continue;
      }
      seen[idx] = 1;
      last[q.rank] = static_cast<int64_t>(idx);
    }
    if (r + 1 >= max_rounds || steady::now() > deadline)
      stop.store(true, std::memory_order_release);
    round.store(r + 1, std::memory_order_release);
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < signallers; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0;; ++r) {
        while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
        if (stop.load(std::memory_order_acquire)) break;
        for (int i = 0; i < k; ++i)
          if ((i + r) % signallers == t) s.signal(make_request(t, r, i));
      }
    });
  // The waiter leaves only on the dummy round that the main thread signals
  // after the last real round was consumed.
  std::thread waiter([&] {
    LCI_request_t* out = new LCI_request_t[k];
    for (;;) {
      s.wait(out);
      process(out);
      if (out[0].tag == dummy_tag) break;
    }
    delete[] out;
  });
  std::thread tester([&] {
    LCI_request_t* out = new LCI_request_t[k];
    lci::backoff b;
    while (!stop.load(std::memory_order_acquire)) {
      if (s.test(out)) {
        process(out);
        b.reset();
      } else {
        b.pause();
      }
    }
    delete[] out;
  });
  for (auto& t : threads) t.join();
  tester.join();  // it saw `stop`, set after the last real round's reset
  for (int i = 0; i < k; ++i) s.signal(make_request(0, dummy_tag, i));
  waiter.join();
  CHECK(failures.load() == 0);
  CHECK(round.load() >= 1);
  CHECK(dummies_consumed.load() == 1);
  CHECK_FALSE(s.test(nullptr));  // nothing lost, nothing pending
  MESSAGE("threshold ", k, ": ", round.load(), " rounds with ", signallers, " signallers");
}

}  // namespace

TEST_CASE("comp_sync: stress, many signallers over many rounds") {
  SUBCASE("k = 1") { run_sync_stress(1, 4, 50000); }
  SUBCASE("k = 7") { run_sync_stress(7, 4, 20000); }
  SUBCASE("k = 64") { run_sync_stress(64, 4, 5000); }
}

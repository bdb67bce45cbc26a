// Unit tests of lci::comp_registry, the table of completion objects a
// peer's message may name: internal objects are not in it, a lookup's
// reference keeps a freed object alive until released, and lookups racing
// with frees on other threads never touch freed memory (run under ASan and
// TSan).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "lci.h"
#include "lci/comp/handler.hpp"
#include "lci/comp/queue.hpp"
#include "lci/comp/registry.hpp"
#include "lci/comp/signal.hpp"
#include "lci/comp/sync.hpp"

namespace {

using steady = std::chrono::steady_clock;
namespace reg = lci::comp_registry;

std::atomic<long> g_handler_calls{0};
void count_call(LCI_request_t) { g_handler_calls.fetch_add(1, std::memory_order_relaxed); }

uint64_t handle_of(const lci::comp_base* c) { return reinterpret_cast<uint64_t>(c); }

LCI_request_t request(uint32_t tag) {
  LCI_request_t r{};
  r.flag = LCI_OK;
  r.rank = 0;
  r.tag = tag;
  r.type = LCI_MEDIUM;
  return r;
}

}  // namespace

// Objects the C API creates are added (LCI_handler_create, ...); LCI's
// internal ones (the collectives' handler, the barrier's synchronizer) are
// constructed the same way but never added.
TEST_CASE("comp_registry: added objects are found, others never") {
  lci::comp_handler app(count_call);
  reg::add(&app);
  lci::comp_handler internal_handler(count_call);
  lci::comp_sync internal_sync(1);
  lci::comp_base* c = reg::acquire(handle_of(&app));
  CHECK(c == &app);
  if (c) reg::release(c);
  CHECK(reg::acquire(handle_of(&internal_handler)) == nullptr);
  CHECK(reg::acquire(handle_of(&internal_sync)) == nullptr);
  CHECK(reg::acquire(0) == nullptr);
  CHECK(reg::acquire(handle_of(&app) + 16) == nullptr);
}

TEST_CASE("comp_registry: a reference keeps a freed object alive until released") {
  auto* q = new lci::comp_queue(8);
  reg::add(q);
  const uint64_t h = handle_of(q);
  lci::comp_base* held = reg::acquire(h);
  REQUIRE(held == q);
  // The program frees it (LCI_queue_free) between the arrival's lookup and
  // its signal: no later lookup finds it, but the held object stays usable.
  reg::retire(q);
  CHECK(reg::acquire(h) == nullptr);
  lci::comp_signal(held, request(5));
  CHECK(static_cast<lci::comp_queue*>(held)->len() == 1);
  // The last reference destroys it (LeakSanitizer reports it otherwise).
  reg::release(held);
  CHECK(reg::acquire(h) == nullptr);

  // With no reference held, retire destroys at once.
  auto* s = new lci::comp_sync(1);
  reg::add(s);
  const uint64_t hs = handle_of(s);
  reg::retire(s);
  CHECK(reg::acquire(hs) == nullptr);

  // comp_ref releases on scope exit, or hands the reference on.
  auto* hd = new lci::comp_handler(count_call);
  reg::add(hd);
  {
    lci::comp_ref ref;
    ref.reset(reg::acquire(handle_of(hd)));
    REQUIRE(ref.get() == hd);
    reg::retire(hd);
    const long before = g_handler_calls.load();
    lci::comp_signal(ref.get(), request(6));
    CHECK(g_handler_calls.load() == before + 1);
  }
}

// What an arrival does: look the handle up, signal what it found, release.
// Meanwhile the owner thread creates and frees objects at the same
// addresses over and over (the allocator reuses them). Before lookups took a
// reference, the signal could run on a freed object (ASan: heap-use-after-
// free; TSan: a race between the signal and the destructor).
TEST_CASE("comp_registry: lookups racing with frees never touch freed memory") {
  constexpr int lookup_threads = 2;
  constexpr int rounds = 5000;
  std::atomic<uint64_t> current{0};
  std::atomic<bool> stop{false};
  std::atomic<long> found{0}, bad{0};
  const auto deadline = steady::now() + std::chrono::seconds(20);
  std::vector<std::thread> lookups;
  for (int t = 0; t < lookup_threads; ++t)
    lookups.emplace_back([&] {
      uint32_t tag = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t h = current.load(std::memory_order_relaxed);
        if (!h) {
          std::this_thread::yield();
          continue;
        }
        lci::comp_ref ref;
        ref.reset(reg::acquire(h));
        if (!ref.get()) {
          std::this_thread::yield();
          continue;
        }
        lci::comp_base* c = ref.get();
        if (c->magic != lci::comp_magic) bad.fetch_add(1, std::memory_order_relaxed);
        // A queue of capacity 4 may fill: push without the fatal overflow path.
        if (c->type == LCI_COMPLETION_QUEUE)
          static_cast<lci::comp_queue*>(c)->push(request(++tag));
        else
          lci::comp_signal(c, request(++tag));
        found.fetch_add(1, std::memory_order_relaxed);
      }
    });
  int made = 0;
  for (; made < rounds && steady::now() < deadline; ++made) {
    lci::comp_base* c;
    if (made % 2)
      c = new lci::comp_queue(4);
    else
      c = new lci::comp_handler(count_call);
    reg::add(c);
    current.store(handle_of(c), std::memory_order_relaxed);
    for (int spin = 0; spin < 5; ++spin) std::this_thread::yield();
    current.store(0, std::memory_order_relaxed);
    reg::retire(c);
  }
  stop.store(true);
  for (auto& th : lookups) th.join();
  // The machine may be shared: the deadline bounds the run, and a few
  // hundred rounds still meet the lookups many times.
  CHECK(made >= 200);
  CHECK(bad.load() == 0);
  MESSAGE("rounds: " << made << ", lookups that found a live object: " << found.load());
}

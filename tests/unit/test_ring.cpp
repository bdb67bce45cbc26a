// Unit tests of lci::native::ring, the bounded multi-producer, single-consumer
// ring of the shared-memory transport, on private memory: order and
// exactly-once delivery, wrap-around of cells and of positions, the full
// ring, a producer stalled between reserve and publish, and the cells of a
// producer that died between the two, given back by the consumer.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "lci/backend/native/ring.hpp"

namespace {

using steady = std::chrono::steady_clock;
using lci::native::cell_head;
using lci::native::ring;

// What a test cell carries after its sequence word.
struct payload {
  uint32_t producer;
  uint64_t counter;
};

constexpr size_t k_cell_size = 64;
static_assert(sizeof(cell_head) + sizeof(payload) <= k_cell_size, "cell too small");

struct alignas(64) raw_line {
  char bytes[64];
};

// A ring and the memory under it: the tail on its own cache line, then n
// cells of k_cell_size bytes. `first` is the position the ring starts at,
// as if `first` cells had already gone through it (0: format()).
class test_ring {
 public:
  explicit test_ring(uint64_t n, uint64_t first = 0) : n_(n), lines_(1 + n * k_cell_size / 64) {
    tail_ = new (lines_[0].bytes) std::atomic<uint64_t>(0);
    cells_ = lines_[1].bytes;
    for (uint64_t i = 0; i < n; ++i) new (cells_ + i * k_cell_size) cell_head{};
    r_ = ring(tail_, cells_, k_cell_size, n);
    r_.format(first);
  }
  // The anonymous producers' (and the consumer's) view.
  ring& get() { return r_; }
  // The same ring as producer `id` sees it (each process has its own).
  ring as(uint32_t id) { return ring(tail_, cells_, k_cell_size, n_, id); }

 private:
  uint64_t n_;
  std::vector<raw_line> lines_;
  std::atomic<uint64_t>* tail_;
  char* cells_;
  ring r_;
};

payload* data_of(cell_head* c) { return reinterpret_cast<payload*>(c + 1); }

// Reserves, fills and publishes one cell; false if the ring was full.
bool post(ring& r, uint32_t producer, uint64_t counter, uint64_t* pos = nullptr) {
  const ring::slot s = r.reserve();
  if (!s.cell) return false;
  *data_of(s.cell) = payload{producer, counter};
  if (pos) *pos = s.pos;
  ring::publish(s);
  return true;
}

// Consumes the cell at *head if published; false if not.
bool take(ring& r, uint64_t* head, payload* out) {
  cell_head* c = r.peek(*head);
  if (!c) return false;
  *out = *data_of(c);
  r.release(*head);
  ++*head;
  return true;
}

}  // namespace

TEST_CASE("ring: empty, one cell, FIFO within a lap") {
  test_ring t(8);
  ring& r = t.get();
  CHECK(r.size() == 8);
  CHECK(r.cell_size() == k_cell_size);
  uint64_t head = 0;
  payload p;
  CHECK_FALSE(take(r, &head, &p));
  for (uint64_t i = 0; i < 5; ++i) {
    uint64_t pos = ~0ull;
    REQUIRE(post(r, 1, 100 + i, &pos));
    CHECK(pos == i);
  }
  for (uint64_t i = 0; i < 5; ++i) {
    REQUIRE(take(r, &head, &p));
    CHECK(p.producer == 1);
    CHECK(p.counter == 100 + i);
  }
  CHECK(head == 5);
  CHECK_FALSE(take(r, &head, &p));
}

TEST_CASE("ring: wrap-around over many laps") {
  for (uint64_t n : {uint64_t{4}, uint64_t{8}}) {
    // From position 0, from just below 2^32, 2^38 (where the positions in
    // the sequence words wrap) and 2^64 (where the counters wrap).
    for (uint64_t first : {uint64_t{0}, (uint64_t{1} << 32) - 3, (uint64_t{1} << 38) - 2 * n - 1,
                           ~uint64_t{0} - 2 * n - 1}) {
      CAPTURE(n);
      CAPTURE(first);
      test_ring t(n, first);
      ring& r = t.get();
      uint64_t head = first, next = 0, expect = 0;
      payload p;
      long failures = 0;
      // Batches of 1..n cells, 2000 laps in all.
      for (uint64_t round = 0; next < 2000 * n; ++round) {
        const uint64_t batch = 1 + round % n;
        for (uint64_t i = 0; i < batch; ++i) {
          uint64_t pos;
          if (!post(r, 0, next, &pos)) {
            ++failures;
            break;
          }
          if (pos != first + next) ++failures;
          ++next;
        }
        while (take(r, &head, &p)) {
          if (p.counter != expect) ++failures;
          ++expect;
        }
        if (expect != next) ++failures;
      }
      CHECK(failures == 0);
      CHECK(head == first + next);
    }
  }
}

TEST_CASE("ring: full ring refuses reserve until the consumer releases") {
  for (uint64_t n : {uint64_t{4}, uint64_t{8}}) {
    CAPTURE(n);
    test_ring t(n);
    ring& r = t.get();
    // n cells reserved and not yet published: full.
    std::vector<ring::slot> slots;
    for (uint64_t i = 0; i < n; ++i) {
      slots.push_back(r.reserve());
      REQUIRE(slots.back().cell != nullptr);
      CHECK(slots.back().pos == i);
    }
    CHECK(r.reserve().cell == nullptr);
    // Published but not consumed: still full.
    for (auto& s : slots) {
      *data_of(s.cell) = payload{2, s.pos};
      ring::publish(s);
    }
    CHECK(r.reserve().cell == nullptr);
    // Each release frees exactly one cell, for the next lap.
    uint64_t head = 0;
    payload p;
    for (int lap = 0; lap < 3; ++lap) {
      for (uint64_t i = 0; i < n; ++i) {
        REQUIRE(take(r, &head, &p));
        CHECK(p.counter == head - 1);
        uint64_t pos;
        REQUIRE(post(r, 2, head - 1 + n, &pos));
        CHECK(pos == head - 1 + n);
        CHECK(r.reserve().cell == nullptr);
      }
    }
  }
}

TEST_CASE("ring: a producer stalled between reserve and publish") {
  test_ring t(8);
  ring& r = t.get();
  std::atomic<bool> reserved{false}, go{false};
  std::atomic<uint64_t> stalled_pos{~0ull};
  std::thread stalled([&] {
    const ring::slot s = r.reserve();
    if (!s.cell) return;
    stalled_pos.store(s.pos);
    reserved.store(true);
    const auto until = steady::now() + std::chrono::seconds(30);
    while (!go.load() && steady::now() < until) std::this_thread::yield();
    *data_of(s.cell) = payload{9, 0};
    ring::publish(s);
  });
  {
    const auto until = steady::now() + std::chrono::seconds(30);
    while (!reserved.load() && steady::now() < until) std::this_thread::yield();
  }
  REQUIRE(reserved.load());
  REQUIRE(stalled_pos.load() == 0);
  // Later producers, on their own threads, publish positions 1..5 (in
  // whichever order they reserve them; each cell carries its position).
  std::vector<std::thread> later;
  std::atomic<int> refused{0};
  for (uint32_t i = 1; i <= 5; ++i)
    later.emplace_back([&, i] {
      const ring::slot s = r.reserve();
      if (!s.cell) {
        refused.fetch_add(1);
        return;
      }
      *data_of(s.cell) = payload{10 + i, s.pos};
      ring::publish(s);
    });
  for (auto& th : later) th.join();
  CHECK(refused.load() == 0);
  // Their cells are published, but the consumer reads in order: nothing
  // past the stalled cell.
  uint64_t head = 0;
  payload p;
  CHECK(r.peek(0) == nullptr);
  CHECK_FALSE(take(r, &head, &p));
  int published_later = 0;
  for (uint64_t pos = 1; pos <= 5; ++pos) published_later += r.peek(pos) != nullptr;
  CHECK(published_later == 5);
  // Two more fill the ring (positions 6, 7); the next one finds it full, as
  // the stalled cell keeps lap 1 from starting.
  CHECK(post(r, 16, 6));
  CHECK(post(r, 17, 7));
  CHECK(r.reserve().cell == nullptr);
  CHECK(head == 0);
  go.store(true);
  stalled.join();
  // Everything now comes out, in position order.
  std::vector<uint64_t> seen;
  const auto until = steady::now() + std::chrono::seconds(30);
  while (seen.size() < 8 && steady::now() < until)
    if (take(r, &head, &p)) seen.push_back(p.counter);
  REQUIRE(seen.size() == 8);
  for (uint64_t i = 0; i < 8; ++i) CHECK(seen[i] == i);
  CHECK_FALSE(take(r, &head, &p));
}

TEST_CASE("ring: many producers, one consumer, exactly once and in order per producer") {
  constexpr uint32_t producers = 4;
  constexpr uint64_t per_producer = 100000;
  // Small enough that producers often find it full and wrap many times.
  test_ring t(64);
  ring& r = t.get();
  const auto deadline = steady::now() + std::chrono::seconds(90);
  std::atomic<bool> start{false};
  std::atomic<long> timed_out{0};
  std::vector<std::thread> threads;
  for (uint32_t id = 0; id < producers; ++id)
    threads.emplace_back([&, id] {
      while (!start.load()) std::this_thread::yield();
      for (uint64_t i = 0; i < per_producer; ++i) {
        while (!post(r, id, i)) {
          if (steady::now() > deadline) {
            timed_out.fetch_add(1);
            return;
          }
          std::this_thread::yield();
        }
      }
    });
  start.store(true);
  uint64_t next[producers] = {};
  long bad_producer = 0, out_of_order = 0;
  uint64_t head = 0, received = 0;
  payload p;
  uint32_t idle = 0;
  while (received < producers * per_producer) {
    if (take(r, &head, &p)) {
      ++received;
      idle = 0;
      if (p.producer >= producers) {
        ++bad_producer;
        continue;
      }
      // In order per producer and each value once: the counter is exactly
      // the next one expected from that producer.
      if (p.counter != next[p.producer]) ++out_of_order;
      next[p.producer] = p.counter + 1;
      continue;
    }
    if (++idle % 1024 == 0) {
      if (steady::now() > deadline) break;
      std::this_thread::yield();
    }
  }
  for (auto& th : threads) th.join();
  CHECK(timed_out.load() == 0);
  CHECK(bad_producer == 0);
  CHECK(out_of_order == 0);
  CHECK(received == producers * per_producer);
  for (uint32_t id = 0; id < producers; ++id) CHECK(next[id] == per_producer);
  CHECK_FALSE(take(r, &head, &p));
  CHECK(head == producers * per_producer);
}

TEST_CASE("ring: a cell claimed by a producer that died is given back") {
  for (uint64_t first : {uint64_t{0}, (uint64_t{1} << 38) - 2}) {
    CAPTURE(first);
    test_ring t(8, first);
    ring dead = t.as(7), live = t.as(3);
    ring& r = t.get();
    // Producer 7 claims the first cell and dies before publishing it;
    // producer 3 fills the rest of the ring.
    const ring::slot lost = dead.reserve();
    REQUIRE(lost.cell != nullptr);
    CHECK(lost.pos == first);
    for (uint64_t i = 1; i < 8; ++i) CHECK(post(live, 3, i));
    CHECK(live.reserve().cell == nullptr);
    // The consumer sees who holds the cell; the published ones have no holder.
    uint64_t head = first;
    payload p;
    CHECK_FALSE(take(r, &head, &p));
    CHECK(r.holder(head) == 7);
    for (uint64_t i = 1; i < 8; ++i) CHECK(r.holder(first + i) == 0);
    CHECK(r.occupied() == 8);
    // Given back unread: everything behind it comes out in order, and the
    // ring takes a whole lap again.
    r.release(head++);
    for (uint64_t i = 1; i < 8; ++i) {
      REQUIRE(take(r, &head, &p));
      CHECK(p.counter == i);
    }
    CHECK(r.occupied() == 0);
    CHECK(r.holder(head) == 0);
    for (uint64_t i = 0; i < 8; ++i) CHECK(post(live, 3, 100 + i));
    CHECK(live.reserve().cell == nullptr);
    for (uint64_t i = 0; i < 8; ++i) {
      REQUIRE(take(r, &head, &p));
      CHECK(p.counter == 100 + i);
    }
    // An anonymous producer's claim names nobody.
    const ring::slot anonymous = r.reserve();
    REQUIRE(anonymous.cell != nullptr);
    CHECK(r.holder(anonymous.pos) == 0);
  }
}

TEST_CASE("ring: producers racing a dying one, the consumer giving back its cells") {
  // Three live producers post their counters; a fourth (id 9, two
  // threads) posts too, then claims a cell on each thread and never
  // publishes it. The first such cell the consumer meets "kills" id 9:
  // its threads stop where they are (a process killed in the middle of
  // its sends) and, once both have stopped, the consumer gives back every
  // cell id 9 holds. Every live counter arrives exactly once and in order,
  // id 9's threads' counters are each a prefix of what they posted. (The
  // consumer may also meet id 9's cell while a post of id 9 is merely under
  // way, and kill it there, with nothing to give back: the run is repeated
  // until one gives back a cell; from the fourth attempt on, the consumer
  // kills id 9 only once both its threads finished posting, so that a
  // slow machine, where it always met a post under way, still gives back.)
  long total_claims = 0;
  for (int attempt = 0; attempt < 10 && total_claims == 0; ++attempt) {
    CAPTURE(attempt);
    const bool kill_after_posts = attempt >= 3;
    constexpr uint32_t live_producers = 3;
    constexpr uint64_t per_producer = 50000;
    test_ring t(32);
    ring& r = t.get();
    const auto deadline = steady::now() + std::chrono::seconds(90);
    std::atomic<bool> start{false}, kill{false}, gone{false};
    std::atomic<long> timed_out{0}, claims{0};
    std::atomic<int> dying_threads{2}, done_posting{0};
    std::atomic<uint64_t> posted_by_dying[2] = {};
    std::vector<std::thread> threads;
    for (uint32_t id = 0; id < live_producers; ++id)
      threads.emplace_back([&, id] {
        ring mine = t.as(id + 1);
        while (!start.load()) std::this_thread::yield();
        for (uint64_t i = 0; i < per_producer; ++i)
          while (!post(mine, id, i)) {
            if (steady::now() > deadline) {
              timed_out.fetch_add(1);
              return;
            }
            std::this_thread::yield();
          }
      });
    for (int th = 0; th < 2; ++th)
      threads.emplace_back([&, th] {
        ring mine = t.as(9);
        while (!start.load()) std::this_thread::yield();
        bool stopped = false;
        for (uint64_t i = 0; i < 1000 + 500 * static_cast<uint64_t>(th) && !stopped; ++i) {
          while (!post(mine, live_producers + static_cast<uint32_t>(th), i)) {
            if (kill.load() || steady::now() > deadline) {
              stopped = true;
              break;
            }
            std::this_thread::yield();
          }
          if (!stopped) posted_by_dying[th].store(i + 1);
        }
        done_posting.fetch_add(1);
        // (Gated: no cell is claimed before both threads stopped posting,
        // so the consumer stuck at a claim never starves the other's post.)
        while (kill_after_posts && done_posting.load() < 2 && !kill.load() &&
               steady::now() < deadline)
          std::this_thread::yield();
        while (!stopped && !kill.load() && steady::now() < deadline) {
          if (mine.reserve().cell) {  // claimed, never published
            claims.fetch_add(1);
            break;
          }
          std::this_thread::yield();
        }
        if (dying_threads.fetch_sub(1) == 1) gone.store(true);
      });
    start.store(true);
    uint64_t next[live_producers + 2] = {};
    long bad = 0, out_of_order = 0, given_back = 0;
    uint64_t head = 0, live_received = 0;
    payload p;
    for (;;) {
      if (take(r, &head, &p)) {
        if (p.producer >= live_producers + 2) {
          ++bad;
          continue;
        }
        live_received += p.producer < live_producers;
        if (p.counter != next[p.producer]) ++out_of_order;
        next[p.producer] = p.counter + 1;
        continue;
      }
      if (r.holder(head) == 9 && (!kill_after_posts || done_posting.load() == 2)) {
        kill.store(true);
        if (gone.load()) {
          r.release(head++);
          ++given_back;
          continue;
        }
      } else if (live_received == live_producers * per_producer && gone.load() &&
                 r.peek(head) == nullptr && r.holder(head) == 0) {
        break;  // everything in
      }
      if (steady::now() > deadline) break;
      std::this_thread::yield();
    }
    for (auto& th : threads) th.join();
    CHECK(timed_out.load() == 0);
    CHECK(bad == 0);
    CHECK(out_of_order == 0);
    CHECK(given_back == claims.load());
    total_claims += claims.load();
    CHECK(live_received == live_producers * per_producer);
    for (uint32_t id = 0; id < live_producers; ++id) CHECK(next[id] == per_producer);
    for (int th = 0; th < 2; ++th) CHECK(next[live_producers + th] == posted_by_dying[th].load());
    CHECK_FALSE(take(r, &head, &p));
    CHECK(r.holder(head) == 0);
    CHECK(r.occupied() == 0);
    CHECK(post(r, 0, 0));  // the ring still takes cells
  }
  CHECK(total_claims >= 1);
}

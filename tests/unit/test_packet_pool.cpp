// Unit tests of lci::packet_pool.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "lci/mem/packet_pool.hpp"

namespace {

using steady = std::chrono::steady_clock;

struct slab {
  slab(size_t packet_size, size_t count)
      : bytes(new unsigned char[packet_size * count]), size(packet_size * count) {}
  void* data() const { return bytes.get(); }
  std::unique_ptr<unsigned char[]> bytes;
  size_t size;
};

// Gets every packet (must succeed `count` times), checks they are distinct
// packet starts of the slab, then checks the pool is empty and puts all back.
void check_all_packets(lci::packet_pool& pool, const slab& s, size_t packet_size) {
  std::set<void*> got;
  for (size_t i = 0; i < pool.capacity(); ++i) {
    void* p = pool.get();
    REQUIRE(p != nullptr);
    CHECK(pool.contains(p));
    CHECK(pool.packet_of(p) == p);
    CHECK((static_cast<unsigned char*>(p) - static_cast<unsigned char*>(s.data())) %
              packet_size ==
          0);
    got.insert(p);
  }
  CHECK(got.size() == pool.capacity());
  CHECK(pool.get() == nullptr);
  for (void* p : got) pool.put(p);
}

}  // namespace

TEST_CASE("packet_pool: get until empty, put back, get again") {
  const size_t size = 256, count = 40;
  slab s(size, count);
  lci::packet_pool pool(s.data(), size, count);
  CHECK(pool.capacity() == count);
  CHECK(pool.packet_size() == size);
  CHECK(pool.available() == count);
  std::vector<void*> got;
  std::set<void*> distinct;
  for (;;) {
    void* p = pool.get();
    if (p == nullptr) break;
    got.push_back(p);
    distinct.insert(p);
    REQUIRE(got.size() <= count);
  }
  CHECK(got.size() == count);
  CHECK(distinct.size() == count);
  CHECK(got[0] == s.data());  // the first get returns packet 0
  CHECK(pool.available() == 0);
  CHECK(pool.get() == nullptr);
  pool.put(got[7]);
  CHECK(pool.available() == 1);
  CHECK(pool.get() == got[7]);
  CHECK(pool.get() == nullptr);
  for (void* p : got) pool.put(p);
  CHECK(pool.available() == count);
  check_all_packets(pool, s, size);
}

TEST_CASE("packet_pool: contains and packet_of") {
  for (size_t size : {size_t{64}, size_t{96}, size_t{12288}}) {
    CAPTURE(size);
    const size_t count = 10;
    slab s(size, count);
    lci::packet_pool pool(s.data(), size, count);
    auto* base = static_cast<unsigned char*>(s.data());
    CHECK(pool.contains(base));
    CHECK(pool.contains(base + size * count - 1));
    CHECK_FALSE(pool.contains(base + size * count));
    CHECK_FALSE(pool.contains(base - 1));
    CHECK_FALSE(pool.contains(nullptr));
    int x;
    CHECK_FALSE(pool.contains(&x));
    for (size_t i = 0; i < count; ++i) {
      unsigned char* packet = base + i * size;
      CHECK(pool.packet_of(packet) == packet);
      CHECK(pool.packet_of(packet + 1) == packet);
      CHECK(pool.packet_of(packet + size / 2) == packet);
      CHECK(pool.packet_of(packet + size - 1) == packet);
    }
  }
}

TEST_CASE("packet_pool: a single packet") {
  slab s(128, 1);
  lci::packet_pool pool(s.data(), 128, 1);
  for (int i = 0; i < 100; ++i) {
    void* p = pool.get();
    REQUIRE(p == s.data());
    CHECK(pool.get() == nullptr);
    pool.put(p);
  }
}

TEST_CASE("packet_pool: packets cached by a live idle thread can be taken") {
  const size_t size = 64, count = 256;
  slab s(size, count);
  lci::packet_pool pool(s.data(), size, count);
  std::atomic<int> phase{0};
  std::thread owner([&] {
    std::vector<void*> held;
    while (void* p = pool.get()) held.push_back(p);
    if (held.size() != count) phase.store(-1);
    for (void* p : held) pool.put(p);  // fills this thread's cache
    phase.store(phase.load() == -1 ? -1 : 1);
    while (phase.load() != 2 && phase.load() != -1) std::this_thread::yield();
  });
  while (phase.load() == 0) std::this_thread::yield();
  REQUIRE(phase.load() == 1);
  CHECK(pool.available() == count);
  // The owner is idle and alive: all packets must be reachable from here.
  check_all_packets(pool, s, size);
  phase.store(2);
  owner.join();
  CHECK(pool.available() == count);
  check_all_packets(pool, s, size);
}

TEST_CASE("packet_pool: an exiting thread returns its cached packets") {
  const size_t size = 64, count = 512;
  slab s(size, count);
  lci::packet_pool pool(s.data(), size, count);
  std::thread t([&] {
    std::vector<void*> held;
    while (void* p = pool.get()) held.push_back(p);
    for (void* p : held) pool.put(p);
  });
  t.join();
  CHECK(pool.available() == count);
  check_all_packets(pool, s, size);
}

TEST_CASE("packet_pool: a destroyed pool's caches are abandoned, never touched") {
  const size_t size = 64, count = 128;
  slab s1(size, count), s2(size, count);
  // The second pool is built at the first one's address: stale thread state
  // must be told apart by id, not by address.
  std::optional<lci::packet_pool> pool;
  pool.emplace(s1.data(), size, count);
  std::atomic<int> phase{0};
  std::atomic<int> failures{0};
  std::thread user([&] {
    std::vector<void*> held;
    for (int i = 0; i < 20; ++i) held.push_back(pool->get());
    for (void* p : held) pool->put(p);  // leaves packets of s1 cached here
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
    held.clear();
    for (int i = 0; i < 20; ++i) {
      void* p = pool->get();
      if (p == nullptr || !pool->contains(p)) failures.fetch_add(1);
      held.push_back(p);
    }
    for (void* p : held)
      if (p != nullptr) pool->put(p);
    // Exit: the cache of the dead pool must be dropped, the live one flushed.
  });
  while (phase.load() != 1) std::this_thread::yield();
  pool.reset();
  pool.emplace(s2.data(), size, count);
  phase.store(2);
  user.join();
  CHECK(failures.load() == 0);
  CHECK(pool->available() == count);
  check_all_packets(*pool, s2, size);
}

TEST_CASE("packet_pool: more pools than a thread caches") {
  const size_t size = 64, count = 64;
  const int npools = 13;
  std::vector<std::unique_ptr<slab>> slabs;
  std::vector<std::unique_ptr<lci::packet_pool>> pools;
  for (int i = 0; i < npools; ++i) {
    slabs.push_back(std::make_unique<slab>(size, count));
    pools.push_back(std::make_unique<lci::packet_pool>(slabs.back()->data(), size, count));
  }
  std::atomic<int> failures{0};
  auto churn = [&] {
    for (int round = 0; round < 20; ++round)
      for (int i = 0; i < npools; ++i) {
        void* a = pools[i]->get();
        void* b = pools[i]->get();
        if (a == nullptr || b == nullptr || !pools[i]->contains(a) || !pools[i]->contains(b))
          failures.fetch_add(1);
        if (a) pools[i]->put(a);
        if (b) pools[i]->put(b);
      }
  };
  std::thread t1(churn), t2(churn);
  churn();
  t1.join();
  t2.join();
  CHECK(failures.load() == 0);
  // Destroy some pools while this thread still caches them; the rest must be
  // whole.
  for (int i = 0; i < npools; i += 3) pools[i].reset();
  auto touch = [&] {
    for (int i = 0; i < npools; ++i)
      if (pools[i]) {
        void* p = pools[i]->get();
        if (p == nullptr) failures.fetch_add(1);
        else pools[i]->put(p);
      }
  };
  std::thread t3(touch);
  t3.join();
  touch();
  CHECK(failures.load() == 0);
  for (int i = 0; i < npools; ++i)
    if (pools[i]) {
      CHECK(pools[i]->available() == count);
      check_all_packets(*pools[i], *slabs[i], size);
    }
}

namespace {

// Each thread holds up to `hold` packets at a time (usually close to that),
// getting and putting them in random order. A packet's first bytes are stamped with (thread, serial)
// after get and checked before put: two owners of one packet would clash
// (and ThreadSanitizer would report the race). A get() is retried until it
// succeeds; a thread that cannot get a packet for `starve` is a failure, as
// long as the holdings allow one to be free (threads * hold <= count).
void run_pool_stress(size_t count, size_t size, int nthreads, size_t hold) {
  slab s(size, count);
  lci::packet_pool pool(s.data(), size, count);
  std::atomic<int> failures{0};
  std::vector<uint64_t> gets(nthreads, 0);
  const auto deadline = steady::now() + std::chrono::seconds(2);
  // A lost packet starves a getter for good; a descheduled putter (or
  // holder) only for a moment, but under a sanitizer on a loaded machine a
  // moment can last seconds: the bound only separates the two.
  const auto starve = std::chrono::seconds(20);

  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(777 + t);
      std::vector<std::pair<void*, uint64_t>> held;
      uint64_t serial = 0;
      for (int iter = 0; iter < 1000000; ++iter) {
        if ((iter & 63) == 0 && steady::now() > deadline) break;
        // Mostly full hands: free packets are few and sit in other threads'
        // caches, so gets often have to take them from there.
        const bool want_get = held.empty() || (held.size() < hold && rng() % 8 != 0);
        if (want_get) {
          void* p = pool.get();
          if (p == nullptr) {
            const auto since = steady::now();
            lci::backoff b;
            while ((p = pool.get()) == nullptr && steady::now() - since < starve) b.pause();
            if (p == nullptr) {
              failures.fetch_add(1);  // starved
              break;
            }
          }
          if (!pool.contains(p) || pool.packet_of(p) != p) failures.fetch_add(1);
          const uint64_t stamp[2] = {static_cast<uint64_t>(t), ++serial};
          std::memcpy(p, stamp, sizeof stamp);
          held.emplace_back(p, serial);
          ++gets[t];
        } else {
          const size_t i = rng() % held.size();
          auto [p, ser] = held[i];
          held[i] = held.back();
          held.pop_back();
          uint64_t stamp[2];
          std::memcpy(stamp, p, sizeof stamp);
          if (stamp[0] != static_cast<uint64_t>(t) || stamp[1] != ser) failures.fetch_add(1);
          pool.put(p);
        }
      }
      for (auto& [p, ser] : held) pool.put(p);
    });
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  for (int t = 0; t < nthreads; ++t) {
    CAPTURE(t);
    CHECK(gets[t] > 0);
  }
  CHECK(pool.available() == count);
  check_all_packets(pool, s, size);
  uint64_t total = 0;
  for (auto g : gets) total += g;
  MESSAGE(count, " packets, ", nthreads, " threads holding up to ", hold, ": ", total, " gets");
}

}  // namespace

namespace {

// Packets get()'d by some threads and put() back by others, as when
// application threads allocate send buffers and the progress thread frees
// them: the putters' caches fill up while the getters' run dry, so getters
// depend on flushes and on taking packets from the putters' caches.
void run_handoff_stress(size_t count, int getters, int putters) {
  const size_t size = 64;
  slab s(size, count);
  lci::packet_pool pool(s.data(), size, count);
  std::mutex channel_mutex;
  std::vector<std::pair<void*, uint64_t>> channel;  // packet, stamp
  std::atomic<int> getters_done{0};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> handed{0};
  const auto deadline = steady::now() + std::chrono::seconds(2);
  // A lost packet starves a getter for good; a descheduled putter (or
  // holder) only for a moment, but under a sanitizer on a loaded machine a
  // moment can last seconds: the bound only separates the two.
  const auto starve = std::chrono::seconds(20);

  std::vector<std::thread> threads;
  for (int g = 0; g < getters; ++g)
    threads.emplace_back([&, g] {
      for (uint64_t serial = 1; serial <= 1000000; ++serial) {
        if ((serial & 63) == 0 && steady::now() > deadline) break;
        void* p = pool.get();
        if (p == nullptr) {
          const auto since = steady::now();
          lci::backoff b;
          while ((p = pool.get()) == nullptr && steady::now() - since < starve) b.pause();
          if (p == nullptr) {
            failures.fetch_add(1);
            break;
          }
        }
        const uint64_t stamp = (static_cast<uint64_t>(g) << 48) | serial;
        std::memcpy(p, &stamp, sizeof stamp);
        std::lock_guard<std::mutex> lock(channel_mutex);
        channel.emplace_back(p, stamp);
      }
      getters_done.fetch_add(1);
    });
  for (int t = 0; t < putters; ++t)
    threads.emplace_back([&] {
      std::vector<std::pair<void*, uint64_t>> batch;
      for (;;) {
        const bool last = getters_done.load() == getters;
        {
          std::lock_guard<std::mutex> lock(channel_mutex);
          const size_t n = std::min<size_t>(channel.size(), 16);
          batch.assign(channel.end() - n, channel.end());
          channel.resize(channel.size() - n);
        }
        if (batch.empty()) {
          if (last) break;
          std::this_thread::yield();
          continue;
        }
        for (auto& [p, stamp] : batch) {
          uint64_t seen;
          std::memcpy(&seen, p, sizeof seen);
          if (seen != stamp || !pool.contains(p)) failures.fetch_add(1);
          pool.put(p);
        }
        handed.fetch_add(batch.size(), std::memory_order_relaxed);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(handed.load() > 0);
  CHECK(pool.available() == count);
  check_all_packets(pool, s, size);
  MESSAGE(count, " packets, ", getters, " getters, ", putters, " putters: ", handed.load(),
          " handed over");
}

}  // namespace

TEST_CASE("packet_pool: stress, packets put back by other threads") {
  SUBCASE("8 packets, 2 getters, 2 putters") { run_handoff_stress(8, 2, 2); }
  SUBCASE("64 packets, 3 getters, 1 putter") { run_handoff_stress(64, 3, 1); }
  SUBCASE("1024 packets, 1 getter, 3 putters") { run_handoff_stress(1024, 1, 3); }
}

TEST_CASE("packet_pool: stress, many threads get and put") {
  SUBCASE("large pool") { run_pool_stress(4096, 64, 4, 64); }
  SUBCASE("pool barely larger than the holdings") { run_pool_stress(256, 64, 4, 60); }
  SUBCASE("free packets mostly in caches: constant stealing") { run_pool_stress(64, 64, 3, 20); }
  SUBCASE("small pool: 8 packets, 4 threads") { run_pool_stress(8, 64, 4, 2); }
  SUBCASE("small pool: 8 packets, 8 threads") { run_pool_stress(8, 64, 8, 1); }
}

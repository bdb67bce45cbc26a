// Unit tests of lci::reg_cache and the munmap/mremap/madvise hooks
// (lci::mem_hooks). No network: the register callback records the call and
// returns a counter-based handle.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lci/mem/mem_hooks.hpp"
#include "lci/mem/reg_cache.hpp"

namespace {

const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

uintptr_t as_int(const void* p) { return reinterpret_cast<uintptr_t>(p); }
char* as_ptr(uintptr_t v) { return reinterpret_cast<char*>(v); }

// A fake NIC: handle k (1, 2, ...) is the k-th registration. Records each
// registration's range and whether it is live; flags a deregistration of a
// handle that is not live (double or unknown deregistration).
struct fake_backend {
  static constexpr size_t max_handles = 1 << 20;
  std::unique_ptr<std::atomic<uint8_t>[]> live { new std::atomic<uint8_t>[ max_handles ]() };
  std::unique_ptr<uintptr_t[]> bases{new uintptr_t[max_handles]()};
  std::unique_ptr<size_t[]> lengths{new size_t[max_handles]()};
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> registrations{0};
  std::atomic<uint64_t> deregistrations{0};
  std::atomic<uint64_t> bad_deregistrations{0};
  std::atomic<uint64_t> unaligned{0};

  lci::reg_cache::register_fn reg() {
    return [this](void* addr, size_t len) -> void* {
      const uint64_t k = next.fetch_add(1) + 1;
      if (k >= max_handles) return nullptr;
      if (as_int(addr) % page != 0 || len % page != 0 || len == 0) unaligned++;
      bases[k] = as_int(addr);
      lengths[k] = len;
      live[k].store(1, std::memory_order_release);
      registrations++;
      return reinterpret_cast<void*>(k);
    };
  }
  lci::reg_cache::deregister_fn dereg() {
    return [this](void* h) {
      const auto k = reinterpret_cast<uintptr_t>(h);
      if (k == 0 || k >= max_handles || live[k].exchange(0) != 1) bad_deregistrations++;
      deregistrations++;
    };
  }
  bool is_live(void* h) const {
    const auto k = reinterpret_cast<uintptr_t>(h);
    return k > 0 && k < max_handles && live[k].load(std::memory_order_acquire) == 1;
  }
  uint64_t live_count() const { return registrations.load() - deregistrations.load(); }
};

// Page-aligned anonymous memory, unmapped at the end (through the hook).
struct mapping {
  explicit mapping(size_t pages) : len(pages * page) {
    p = static_cast<char*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
  }
  ~mapping() {
    if (p != nullptr) munmap(p, len);
  }
  mapping(const mapping&) = delete;
  mapping& operator=(const mapping&) = delete;
  char* p = nullptr;
  size_t len;
};

bool contains(const lci::reg_region* r, const void* addr, size_t len) {
  const uintptr_t b = lci::reg_cache::base(r);
  return b <= as_int(addr) &&
         as_int(addr) + std::max<size_t>(len, 1) <= b + lci::reg_cache::length(r);
}

}  // namespace

TEST_CASE("reg_cache: hit on the same range and on a sub-range") {
  fake_backend nic;
  mapping m(8);
  lci::reg_cache cache(nic.reg(), nic.dereg());

  lci::reg_region* r1 = cache.acquire(m.p + 100, 3 * page);
  REQUIRE(r1 != nullptr);
  CHECK(nic.registrations == 1);
  CHECK(lci::reg_cache::base(r1) == as_int(m.p));
  CHECK(lci::reg_cache::length(r1) == 4 * page);  // [p, p + 100 + 3 pages) rounded out
  CHECK(contains(r1, m.p + 100, 3 * page));
  CHECK(nic.bases[reinterpret_cast<uintptr_t>(lci::reg_cache::handle(r1))] == as_int(m.p));

  lci::reg_region* r2 = cache.acquire(m.p + 100, 3 * page);
  CHECK(r2 == r1);
  lci::reg_region* r3 = cache.acquire(m.p + page + 7, 10);  // sub-range
  CHECK(r3 == r1);
  CHECK(lci::reg_cache::base(r3) == lci::reg_cache::base(r1));
  CHECK(lci::reg_cache::handle(r3) == lci::reg_cache::handle(r1));
  CHECK(nic.registrations == 1);

  auto st = cache.get_stats();
  CHECK(st.misses == 1);
  CHECK(st.hits == 2);
  CHECK(st.registered_bytes == 4 * page);
  CHECK(st.invalidations == 0);

  cache.release(r1);
  cache.release(r2);
  cache.release(r3);
  // Released but cached: still registered, still a hit.
  CHECK(nic.deregistrations == 0);
  lci::reg_region* r4 = cache.acquire(m.p, page);
  CHECK(r4 == r1);
  cache.release(r4);
  CHECK(cache.get_stats().hits == 3);
}

TEST_CASE("reg_cache: zero length covers the address, or registers its page") {
  fake_backend nic;
  mapping m(4);
  lci::reg_cache cache(nic.reg(), nic.dereg());
  lci::reg_region* r = cache.acquire(m.p + page + 5, 0);
  REQUIRE(r != nullptr);
  CHECK(lci::reg_cache::base(r) == as_int(m.p + page));
  CHECK(lci::reg_cache::length(r) == page);
  lci::reg_region* r2 = cache.acquire(m.p + 2 * page - 1, 0);  // last byte of that page
  CHECK(r2 == r);
  lci::reg_region* big = cache.acquire(m.p, 4 * page);  // overlaps: merged, replaces r
  CHECK(big != r);
  lci::reg_region* r3 = cache.acquire(m.p + 3 * page, 0);
  CHECK(r3 == big);
  for (auto* x : {r, r2, big, r3}) cache.release(x);
  CHECK(nic.registrations == 2);
  CHECK(nic.deregistrations == 1);  // r, superseded, once unused
}

TEST_CASE("reg_cache: disjoint, overlapping and adjacent ranges") {
  fake_backend nic;
  mapping m(16);
  lci::reg_cache cache(nic.reg(), nic.dereg());

  SUBCASE("disjoint ranges miss") {
    lci::reg_region* a = cache.acquire(m.p, page);
    lci::reg_region* b = cache.acquire(m.p + 8 * page, page);
    CHECK(a != b);
    CHECK(lci::reg_cache::handle(a) != lci::reg_cache::handle(b));
    CHECK(nic.registrations == 2);
    CHECK(cache.get_stats().misses == 2);
    cache.release(a);
    cache.release(b);
  }

  SUBCASE("adjacent ranges are separate registrations, both kept") {
    lci::reg_region* a = cache.acquire(m.p, 2 * page);
    lci::reg_region* b = cache.acquire(m.p + 2 * page, 2 * page);
    CHECK(a != b);
    CHECK(lci::reg_cache::base(b) == as_int(m.p + 2 * page));
    CHECK(lci::reg_cache::length(b) == 2 * page);
    cache.release(a);
    cache.release(b);
    CHECK(cache.acquire(m.p + 10, 10) == a);
    CHECK(cache.acquire(m.p + 3 * page, 10) == b);
    cache.release(a);
    cache.release(b);
    CHECK(nic.registrations == 2);
    CHECK(nic.deregistrations == 0);
  }

  SUBCASE("an overlapping range is merged with what it overlaps") {
    lci::reg_region* a = cache.acquire(m.p, 2 * page);             // [0, 2)
    lci::reg_region* c = cache.acquire(m.p + 4 * page, 2 * page);  // [4, 6)
    lci::reg_region* b = cache.acquire(m.p + page, 4 * page);      // [1, 5): overlaps both
    REQUIRE(b != nullptr);
    CHECK(b != a);
    CHECK(b != c);
    CHECK(lci::reg_cache::base(b) == as_int(m.p));
    CHECK(lci::reg_cache::length(b) == 6 * page);  // [0, 6)
    CHECK(nic.registrations == 3);
    // a and c are still held: superseded but still registered.
    CHECK(nic.is_live(lci::reg_cache::handle(a)));
    CHECK(nic.is_live(lci::reg_cache::handle(c)));
    cache.release(a);
    CHECK(!nic.is_live(lci::reg_cache::handle(a)));
    CHECK(nic.is_live(lci::reg_cache::handle(c)));
    cache.release(c);
    CHECK(nic.deregistrations == 2);
    // Everything inside [0, 6) now hits the merged region.
    for (size_t off : {size_t{0}, page, 3 * page + 17, 5 * page}) {
      lci::reg_region* x = cache.acquire(m.p + off, page / 2);
      CHECK(x == b);
      cache.release(x);
    }
    cache.release(b);
    CHECK(nic.registrations == 3);
    // A range straddling the merged region's end extends it.
    lci::reg_region* d = cache.acquire(m.p + 5 * page, 3 * page);
    CHECK(lci::reg_cache::base(d) == as_int(m.p));
    CHECK(lci::reg_cache::length(d) == 8 * page);
    cache.release(d);
    CHECK(nic.deregistrations == 3);
  }
  CHECK(nic.bad_deregistrations == 0);
  CHECK(nic.unaligned == 0);
}

TEST_CASE("reg_cache: invalidate removes exactly the overlapping regions") {
  fake_backend nic;
  mapping m(16);
  lci::reg_cache cache(nic.reg(), nic.dereg());
  lci::reg_region* a = cache.acquire(m.p, page);                 // [0, 1)
  lci::reg_region* b = cache.acquire(m.p + 2 * page, page);      // [2, 3)
  lci::reg_region* c = cache.acquire(m.p + 4 * page, 2 * page);  // [4, 6)
  lci::reg_region* d = cache.acquire(m.p + 8 * page, page);      // [8, 9)
  void* ha = lci::reg_cache::handle(a);
  void* hb = lci::reg_cache::handle(b);
  void* hc = lci::reg_cache::handle(c);
  void* hd = lci::reg_cache::handle(d);
  for (auto* x : {a, b, c, d}) cache.release(x);

  cache.invalidate(m.p + 2 * page + 10, 1);  // one byte inside b
  CHECK(!nic.is_live(hb));
  CHECK(nic.is_live(ha));
  CHECK(nic.is_live(hc));
  CHECK(nic.is_live(hd));
  // Partial overlap: the last byte of page 3 and the first of page 4 (c).
  cache.invalidate(m.p + 4 * page - 1, 2);
  CHECK(!nic.is_live(hc));
  CHECK(nic.is_live(ha));
  CHECK(nic.is_live(hd));
  // A gap between regions touches none.
  cache.invalidate(m.p + 6 * page, 2 * page);
  CHECK(nic.is_live(ha));
  CHECK(nic.is_live(hd));
  CHECK(cache.get_stats().invalidations == 2);

  lci::reg_region* a2 = cache.acquire(m.p, page);
  CHECK(a2 == a);  // untouched: still a hit
  lci::reg_region* b2 = cache.acquire(m.p + 2 * page, page);
  CHECK(lci::reg_cache::handle(b2) != hb);  // invalidated: registered anew
  CHECK(nic.registrations == 5);
  cache.release(a2);
  cache.release(b2);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: an invalidated region in use stays registered until released") {
  fake_backend nic;
  mapping m(4);
  lci::reg_cache cache(nic.reg(), nic.dereg());
  lci::reg_region* r = cache.acquire(m.p, 2 * page);
  lci::reg_region* r_again = cache.acquire(m.p, page);
  CHECK(r_again == r);
  void* h = lci::reg_cache::handle(r);
  cache.invalidate(m.p, page);
  CHECK(nic.is_live(h));
  CHECK(nic.deregistrations == 0);
  // Later acquires miss and get a new registration.
  lci::reg_region* fresh = cache.acquire(m.p, 2 * page);
  CHECK(fresh != r);
  CHECK(lci::reg_cache::handle(fresh) != h);
  CHECK(nic.registrations == 2);
  // The old region's fields stay intact while held.
  CHECK(lci::reg_cache::base(r) == as_int(m.p));
  CHECK(lci::reg_cache::handle(r) == h);
  cache.release(r);
  CHECK(nic.is_live(h));
  cache.release(r_again);
  CHECK(!nic.is_live(h));
  CHECK(nic.deregistrations == 1);
  cache.release(fresh);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("mem_hooks: munmap, mremap and madvise behave like the real calls") {
  // Also before any cache exists.
  CHECK(lci::mem_hooks::active());
  char* p = static_cast<char*>(
      mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(p != MAP_FAILED);
  // Each call's result and errno are read before doctest runs (it may
  // change errno itself).
  struct outcome {
    long rc;
    int err;
  };
  auto call = [](auto&& f) {
    errno = 12345;
    const long rc = static_cast<long>(f());
    return outcome{rc, errno};
  };
  outcome o = call([&] { return madvise(p, page, MADV_DONTNEED); });
  CHECK(o.rc == 0);
  CHECK(o.err == 12345);  // untouched on success
  o = call([&] { return madvise(p, page, MADV_WILLNEED); });
  CHECK(o.rc == 0);
  CHECK(o.err == 12345);
  o = call([&] { return madvise(p + 1, page, MADV_DONTNEED); });
  CHECK(o.rc == -1);
  CHECK(o.err == EINVAL);
  o = call([&] { return munmap(p + 1, page); });  // unaligned
  CHECK(o.rc == -1);
  CHECK(o.err == EINVAL);
  o = call([&] { return munmap(p, 0); });
  CHECK(o.rc == -1);
  CHECK(o.err == EINVAL);
  void* q = nullptr;
  o = call([&] { return as_int(q = mremap(p, 4 * page, 2 * page, 0)); });  // shrink in place
  CHECK(q == p);
  CHECK(o.err == 12345);
  o = call([&] { return as_int(q = mremap(p + 1, page, page, 0)); });
  CHECK(q == MAP_FAILED);
  CHECK(o.err == EINVAL);
  o = call([&] { return as_int(q = mremap(p, 2 * page, page, MREMAP_FIXED, p + page)); });
  CHECK(q == MAP_FAILED);  // MREMAP_FIXED without MREMAP_MAYMOVE
  CHECK(o.err == EINVAL);
  o = call([&] { return munmap(p, 2 * page); });
  CHECK(o.rc == 0);
  CHECK(o.err == 12345);
}

TEST_CASE("reg_cache: memory unmapped and mapped again is registered anew") {
  fake_backend nic;
  lci::reg_cache cache(nic.reg(), nic.dereg());
  REQUIRE(lci::mem_hooks::active());
  const size_t len = 16 * page;

  SUBCASE("munmap of an unused region") {
    char* p = static_cast<char*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
    lci::reg_region* r = cache.acquire(p + 10, len - 20);
    void* h = lci::reg_cache::handle(r);
    cache.release(r);
    REQUIRE(munmap(p, len) == 0);  // reaches the hook: no direct call here
    CHECK(cache.get_stats().invalidations == 1);
    // The hook only queues the deregistration; the next operation does it.
    char* q = static_cast<char*>(
        mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(q != MAP_FAILED);
    MESSAGE("mapped again at the same address: ", std::string(q == p ? "yes" : "no"));
    lci::reg_region* r2 = cache.acquire(q + 10, len - 20);
    CHECK(!nic.is_live(h));
    CHECK(lci::reg_cache::handle(r2) != h);
    CHECK(nic.registrations == 2);
    CHECK(cache.get_stats().misses == 2);
    cache.release(r2);
    munmap(q, len);
  }

  SUBCASE("munmap of part of a region in use") {
    char* p = static_cast<char*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
    lci::reg_region* r = cache.acquire(p, len);
    void* h = lci::reg_cache::handle(r);
    REQUIRE(munmap(p + len - page, page) == 0);  // the last page only
    CHECK(nic.is_live(h));
    lci::reg_region* r2 = cache.acquire(p, page);  // still mapped, but must miss
    CHECK(r2 != r);
    CHECK(lci::reg_cache::length(r2) == page);
    cache.release(r);
    cache.collect();
    CHECK(!nic.is_live(h));
    cache.release(r2);
    munmap(p, len - page);
    cache.collect();
    CHECK(nic.live_count() == 0);
  }

  SUBCASE("mremap and madvise(MADV_DONTNEED)") {
    char* p = static_cast<char*>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
    cache.release(cache.acquire(p, len));
    char* q = static_cast<char*>(mremap(p, len, 2 * len, MREMAP_MAYMOVE));
    REQUIRE(q != MAP_FAILED);
    cache.collect();
    CHECK(nic.live_count() == 0);
    lci::reg_region* r = cache.acquire(q, 2 * len);
    CHECK(nic.registrations == 2);
    void* h = lci::reg_cache::handle(r);
    cache.release(r);
    CHECK(madvise(q + page, page, MADV_DONTNEED) == 0);
    cache.collect();
    CHECK(!nic.is_live(h));
    // Other advice does not invalidate.
    lci::reg_region* r2 = cache.acquire(q, 2 * len);
    CHECK(nic.registrations == 3);
    cache.release(r2);
    CHECK(madvise(q, 2 * len, MADV_WILLNEED) == 0);
    lci::reg_region* r3 = cache.acquire(q, len);
    CHECK(r3 == r2);
    cache.release(r3);
    munmap(q, 2 * len);
  }
  cache.collect();
  CHECK(nic.live_count() == 0);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: several caches, created and destroyed over time") {
  fake_backend nic;
  mapping m(8);
  std::vector<void*> handles;
  // More caches than a thread remembers, and a cache reconstructed at the
  // same address: a thread's hints for a destroyed cache are never used.
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<lci::reg_cache>> caches;
    for (int i = 0; i < 6; ++i)
      caches.push_back(std::make_unique<lci::reg_cache>(nic.reg(), nic.dereg()));
    for (int rep = 0; rep < 2; ++rep)
      for (auto& c : caches) {
        lci::reg_region* r = c->acquire(m.p, 2 * page);
        handles.push_back(lci::reg_cache::handle(r));
        c->release(r);
      }
    for (auto& c : caches) {
      auto st = c->get_stats();
      CHECK(st.misses == 1);
      CHECK(st.hits == 1);
    }
    // One munmap reaches every live cache.
    {
      mapping other(2);
      for (auto& c : caches) c->release(c->acquire(other.p, page));
    }
    for (auto& c : caches) CHECK(c->get_stats().invalidations == 1);
    caches.clear();  // destructors deregister everything
    CHECK(nic.live_count() == 0);
  }
  {
    auto c = std::make_unique<lci::reg_cache>(nic.reg(), nic.dereg());
    lci::reg_region* r = c->acquire(m.p, page);
    CHECK(c->get_stats().misses == 1);
    c->release(r);
  }
  CHECK(nic.live_count() == 0);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: many regions, inserted by several threads at once") {
  fake_backend nic;
  constexpr int nthreads = 4;
  constexpr int per_thread = 200;
  mapping m(2 * nthreads * per_thread);
  lci::reg_cache cache(nic.reg(), nic.dereg());
  std::atomic<int> failures{0};
  auto run = [&](int t) {
    for (int i = 0; i < per_thread; ++i) {
      char* p = m.p + 2 * (static_cast<size_t>(i) * nthreads + t) * page;  // every other page
      lci::reg_region* r = cache.acquire(p + 1, page - 2);
      if (r == nullptr || lci::reg_cache::base(r) != as_int(p) || lci::reg_cache::length(r) != page)
        failures++;
      cache.release(r);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) threads.emplace_back(run, t);
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(nic.registrations == nthreads * per_thread);
  // All still cached, found from another thread (its own hints are empty).
  std::thread([&] {
    for (int t = 0; t < nthreads; ++t) run(t);
  }).join();
  CHECK(failures == 0);
  CHECK(nic.registrations == nthreads * per_thread);
  auto st = cache.get_stats();
  CHECK(st.hits == nthreads * per_thread);
  CHECK(st.registered_bytes == nthreads * per_thread * page);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: capacity evicts unused regions") {
  fake_backend nic;
  mapping m(32);
  lci::reg_cache cache(nic.reg(), nic.dereg(), 4 * page);
  lci::reg_region* held = cache.acquire(m.p, 2 * page);
  for (int i = 1; i < 8; ++i) cache.release(cache.acquire(m.p + 4 * i * page, 2 * page));
  auto st = cache.get_stats();
  CHECK(st.evictions >= 5);
  CHECK(st.registered_bytes <= 4 * page);
  CHECK(nic.is_live(lci::reg_cache::handle(held)));
  lci::reg_region* again = cache.acquire(m.p, page);
  CHECK(again == held);
  cache.release(again);
  cache.release(held);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: a failing registration returns nullptr") {
  std::atomic<int> fail{1};
  mapping m(4);
  lci::reg_cache cache(
      [&](void*, size_t) -> void* { return fail.load() ? nullptr : reinterpret_cast<void*>(1); },
      [](void*) {});
  CHECK(cache.acquire(m.p, page) == nullptr);
  fail = 0;
  lci::reg_region* r = cache.acquire(m.p, page);
  REQUIRE(r != nullptr);
  cache.release(r);
}

TEST_CASE("reg_cache: races with the registration itself") {
  // The register callback runs without the cache's lock; these tests act from
  // inside it to hit each outcome deterministically.
  fake_backend nic;
  mapping m(8);
  auto base_reg = nic.reg();
  std::function<void(void*, size_t)> during = [](void*, size_t) {};
  lci::reg_cache cache(
      [&](void* addr, size_t len) {
        void* h = base_reg(addr, len);
        during(addr, len);
        return h;
      },
      nic.dereg());

  SUBCASE("unmapped once while registering: dropped, registered again, cached") {
    lci::reg_region* old = cache.acquire(m.p, 2 * page);  // merged into the next miss
    cache.release(old);
    int calls = 0;
    during = [&](void* addr, size_t len) {
      if (calls++ == 0) lci::mem_hooks::invalidate(addr, len);  // what a munmap does
    };
    lci::reg_region* r = cache.acquire(m.p + page, 2 * page);
    REQUIRE(r != nullptr);
    CHECK(calls == 2);
    // The retry registers the request alone, without merging.
    CHECK(lci::reg_cache::base(r) == as_int(m.p + page));
    CHECK(lci::reg_cache::length(r) == 2 * page);
    during = [](void*, size_t) {};
    lci::reg_region* again = cache.acquire(m.p + page, page);
    CHECK(again == r);
    cache.release(again);
    cache.release(r);
    cache.collect();
    CHECK(nic.live_count() == 1);
  }

  SUBCASE("unmapped on every attempt: handed out once, never cached") {
    during = [](void* addr, size_t len) { lci::mem_hooks::invalidate(addr, len); };
    lci::reg_region* r = cache.acquire(m.p, page);
    REQUIRE(r != nullptr);
    CHECK(contains(r, m.p, page));
    void* h = lci::reg_cache::handle(r);
    CHECK(nic.is_live(h));
    lci::reg_region* r2 = cache.acquire(m.p, page);  // not cached: a miss
    CHECK(r2 != r);
    CHECK(cache.get_stats().hits == 0);
    cache.release(r);
    CHECK(!nic.is_live(h));  // deregistered by its release
    cache.release(r2);
    CHECK(nic.live_count() == 0);
    CHECK(cache.get_stats().registered_bytes == 0);
  }

  SUBCASE("registered by someone else meanwhile: that registration wins") {
    lci::reg_region* inner = nullptr;
    bool nested = false;
    during = [&](void*, size_t) {
      if (nested) return;
      nested = true;
      inner = cache.acquire(m.p, page);  // no lock is held here
    };
    lci::reg_region* outer = cache.acquire(m.p, page);
    CHECK(outer == inner);
    CHECK(nic.registrations == 2);
    CHECK(nic.deregistrations == 1);  // the outer call's own registration
    CHECK(cache.get_stats().misses == 2);
    cache.release(outer);
    cache.release(inner);
    CHECK(nic.live_count() == 1);
  }
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: threads acquire and release while another invalidates") {
  fake_backend nic;
  constexpr int nbuf = 4;
  const size_t buf_pages = 16;
  mapping m(nbuf * (buf_pages + 2));
  std::vector<char*> bufs;
  for (int i = 0; i < nbuf; ++i) bufs.push_back(m.p + i * (buf_pages + 2) * page);
  const size_t churn_len = 4 * page;  // unmapped and mapped again through the hooks
  void* churn =
      mmap(nullptr, churn_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(churn != MAP_FAILED);
  auto cache = std::make_unique<lci::reg_cache>(nic.reg(), nic.dereg());

  const int nthreads = std::max(4u, std::min(8u, std::thread::hardware_concurrency()));
  constexpr int iters = 20000;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<uint64_t> acquires{0};
  // Workers go on past `iters` until the others have done some rounds (on a
  // machine with few cores they may not have been scheduled yet).
  std::atomic<int> invalidator_rounds{0}, unmapper_rounds{0};
  auto others_done = [&] {
    return invalidator_rounds.load(std::memory_order_relaxed) >= 500 &&
           unmapper_rounds.load(std::memory_order_relaxed) >= 50;
  };

  auto worker = [&](int t) {
    std::mt19937_64 rng(1234 + t);
    lci::reg_region* held[4] = {};
    void* held_h[4] = {};
    for (int i = 0; i < iters || !others_done(); ++i) {
      const int slot = static_cast<int>(rng() % 4);
      if (held[slot] != nullptr) {
        if (!nic.is_live(held_h[slot]) || lci::reg_cache::handle(held[slot]) != held_h[slot])
          failures++;
        cache->release(held[slot]);
        held[slot] = nullptr;
      }
      char* b = bufs[rng() % nbuf];
      const size_t off = rng() % (buf_pages * page);
      const size_t len = rng() % (buf_pages * page - off + 1);
      lci::reg_region* r = cache->acquire(b + off, len);
      acquires++;
      if (r == nullptr || !contains(r, b + off, len) || !nic.is_live(lci::reg_cache::handle(r))) {
        failures++;
        if (r == nullptr) continue;
      }
      const auto k = reinterpret_cast<uintptr_t>(lci::reg_cache::handle(r));
      if (nic.bases[k] != lci::reg_cache::base(r) || nic.lengths[k] != lci::reg_cache::length(r))
        failures++;
      held[slot] = r;
      held_h[slot] = lci::reg_cache::handle(r);
    }
    for (int s = 0; s < 4; ++s)
      if (held[s] != nullptr) cache->release(held[s]);
  };

  std::thread invalidator([&] {
    std::mt19937_64 rng(99);
    while (!stop.load(std::memory_order_relaxed)) {
      char* b = bufs[rng() % nbuf];
      const size_t off = rng() % (buf_pages * page);
      cache->invalidate(b + off, 1 + rng() % (4 * page));
      invalidator_rounds++;
      if (rng() % 8 == 0) std::this_thread::yield();
    }
  });
  std::thread unmapper([&] {
    // Hook path concurrently with everything else.
    while (!stop.load(std::memory_order_relaxed)) {
      if (munmap(churn, churn_len) != 0) failures++;
      churn = mmap(churn, churn_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (churn == MAP_FAILED) {
        failures++;
        break;
      }
      madvise(bufs[0], page, MADV_DONTNEED);  // overlaps a buffer in use: invalidates
      unmapper_rounds++;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  stop = true;
  invalidator.join();
  unmapper.join();
  if (churn != MAP_FAILED) munmap(churn, churn_len);

  CHECK(failures == 0);
  cache->collect();
  auto st = cache->get_stats();
  CHECK(st.hits + st.misses == acquires.load());
  MESSAGE("acquires ", acquires.load(), ": hits ", st.hits, ", misses ", st.misses,
          ", invalidations ", st.invalidations, ", registrations ", nic.registrations.load());
  CHECK(st.invalidations > 0);
  CHECK(st.registered_bytes == [&] {
    uint64_t sum = 0;
    for (uint64_t k = 1; k <= nic.next.load(); ++k)
      if (nic.live[k].load()) sum += nic.lengths[k];
    return sum;
  }());
  cache.reset();
  CHECK(nic.live_count() == 0);
  CHECK(nic.bad_deregistrations == 0);
  CHECK(nic.unaligned == 0);
}

TEST_CASE("reg_cache: hit cost (acquire + release, one thread)") {
  fake_backend nic;
  mapping m(4);
  lci::reg_cache cache(nic.reg(), nic.dereg());
  cache.release(cache.acquire(m.p, 4 * page));
  constexpr int iters = 1000000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    lci::reg_region* r = cache.acquire(m.p + (i & 1023), 1024);
    cache.release(r);
  }
  auto t1 = std::chrono::steady_clock::now();
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
  MESSAGE("reg_cache hit: ", ns, " ns per acquire+release");
  CHECK(nic.registrations == 1);
  CHECK(cache.get_stats().hits == iters);
}

// ---- what may be cached (C3), LCI_USE_DREG, bounds ------------------------

namespace {

// A NIC whose registrations pin pages, emulated: each registration records
// the stamp written at the start of its second page when it was made. Pinned
// pages keep what they held then; a registration "reaches" the program's
// buffer only if the buffer still holds the same stamp (a fresh stamp is
// written each time the buffer is allocated).
struct pinning_nic {
  std::vector<uint64_t> stamps{0};  // handle k -> stamp seen at registration
  std::mutex m;
  uint64_t live = 0, registrations = 0;
  lci::reg_cache::register_fn reg() {
    return [this](void* addr, size_t) -> void* {
      uint64_t stamp;
      memcpy(&stamp, static_cast<char*>(addr) + page, sizeof stamp);
      std::lock_guard<std::mutex> g(m);
      stamps.push_back(stamp);
      ++live;
      ++registrations;
      return reinterpret_cast<void*>(stamps.size() - 1);
    };
  }
  lci::reg_cache::deregister_fn dereg() {
    return [this](void*) {
      std::lock_guard<std::mutex> g(m);
      --live;
    };
  }
  uint64_t stamp_of(void* handle) {
    std::lock_guard<std::mutex> g(m);
    return stamps[reinterpret_cast<uintptr_t>(handle)];
  }
};

// Acquires the 64 MiB malloc-ed buffer, releases it, frees it, allocates
// again (glibc maps it again, usually at the same address, and its own
// munmap bypasses the hooks) and acquires again. Returns whether the second
// registration reaches the second buffer; *same_address tells whether the
// allocator did reuse the address (otherwise nothing was at stake).
// The stamp's place: the start of the buffer's second page.
uint64_t* stamp_in(void* buffer) {
  return reinterpret_cast<uint64_t*>((as_int(buffer) & ~(page - 1)) + page);
}

bool stale_scenario(lci::reg_cache& cache, pinning_nic& nic, bool* same_address) {
  const size_t len = size_t{64} << 20;
  auto* b1 = static_cast<uint64_t*>(malloc(len));
  REQUIRE(b1 != nullptr);
  *stamp_in(b1) = 0x1111;
  lci::reg_region* r1 = cache.acquire(b1, len);
  REQUIRE(r1 != nullptr);
  CHECK(nic.stamp_of(lci::reg_cache::handle(r1)) == 0x1111);
  cache.release(r1);
  free(b1);
  auto* b2 = static_cast<uint64_t*>(malloc(len));
  REQUIRE(b2 != nullptr);
  *stamp_in(b2) = 0x2222;
  *same_address = b2 == b1;
  lci::reg_region* r2 = cache.acquire(b2, len);
  REQUIRE(r2 != nullptr);
  const bool reaches = nic.stamp_of(lci::reg_cache::handle(r2)) == 0x2222;
  cache.release(r2);
  free(b2);
  return reaches;
}

}  // namespace

TEST_CASE("reg_cache: the caching decision") {
  // LCI_USE_DREG=0: never.
  CHECK_FALSE(lci::decide_caching(0, false, true).cache);
  CHECK_FALSE(lci::decide_caching(0, true, true).cache);
  // Pinning registrations: never, whatever LCI_USE_DREG says.
  CHECK_FALSE(lci::decide_caching(1, true, true).cache);
  // Without the hooks nothing would ever invalidate: never.
  CHECK_FALSE(lci::decide_caching(1, false, false).cache);
  // Registrations that do not pin, hooks in effect, LCI_USE_DREG=1: cached.
  CHECK(lci::decide_caching(1, false, true).cache);
  CHECK(std::string(lci::decide_caching(0, false, true).reason).find("LCI_USE_DREG=0") !=
        std::string::npos);
}

TEST_CASE("reg_cache: memory freed and allocated again at the same address (pinning backend)") {
  pinning_nic nic;
  SUBCASE("the configuration a device uses for a pinning backend") {
    const lci::caching_decision d = lci::decide_caching(1, true, lci::mem_hooks::active());
    lci::reg_cache::options opt;
    opt.cached = d.cache;
    lci::reg_cache cache(nic.reg(), nic.dereg(), opt);
    bool same = false;
    CHECK(stale_scenario(cache, nic, &same));
    MESSAGE("allocated again at the same address: ", std::string(same ? "yes" : "no"));
    CHECK(nic.registrations == 2);
    CHECK(nic.live == 0);  // nothing kept registered between uses
    const auto st = cache.get_stats();
    CHECK(st.hits == 0);
    CHECK(st.uncached == 2);
    CHECK(st.entries == 0);
  }
  SUBCASE("a caching cache would serve the stale registration (what the hooks miss)") {
    lci::reg_cache cache(nic.reg(), nic.dereg());
    bool same = false;
    const bool reaches = stale_scenario(cache, nic, &same);
    // Only meaningful when glibc put the second buffer where the first was.
    if (same) {
      CHECK_FALSE(reaches);
      CHECK(nic.registrations == 1);
    }
  }
}

TEST_CASE("reg_cache: per-use mode (LCI_USE_DREG=0) registers and deregisters every use") {
  fake_backend nic;
  mapping m(8);
  lci::reg_cache::options opt;
  opt.cached = lci::decide_caching(0, false, true).cache;
  lci::reg_cache cache(nic.reg(), nic.dereg(), opt);
  CHECK_FALSE(cache.cached());
  for (int i = 0; i < 10; ++i) {
    lci::reg_region* r = cache.acquire(m.p + 10, 3 * page);
    REQUIRE(r != nullptr);
    CHECK(contains(r, m.p + 10, 3 * page));
    CHECK(nic.live_count() == 1);
    lci::reg_region* r2 = cache.acquire(m.p + 10, 3 * page);  // same range, while in use
    CHECK(r2 != r);
    CHECK(lci::reg_cache::handle(r2) != lci::reg_cache::handle(r));
    cache.release(r2);
    cache.release(r);
    CHECK(nic.live_count() == 0);
  }
  const auto st = cache.get_stats();
  CHECK(st.hits == 0);
  CHECK(st.misses == 0);
  CHECK(st.uncached == 20);
  CHECK(st.entries == 0);
  CHECK(st.registered_bytes == 0);
  CHECK(nic.registrations == 20);
  CHECK(nic.unaligned == 0);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: the entry bound holds, least recently used leave first") {
  fake_backend nic;
  constexpr size_t bound = 8;
  mapping m(2 * 200 + 2);
  lci::reg_cache::options opt;
  opt.max_entries = bound;
  lci::reg_cache cache(nic.reg(), nic.dereg(), opt);
  char* hot = m.p;  // used between every two misses: never the least recent
  lci::reg_region* h = cache.acquire(hot, page);
  void* hot_handle = lci::reg_cache::handle(h);
  cache.release(h);
  size_t max_seen = 0;
  for (int i = 1; i <= 200; ++i) {
    cache.release(cache.acquire(m.p + 2 * i * page, page));  // every other page: no merging
    lci::reg_region* x = cache.acquire(hot, page);
    if (lci::reg_cache::handle(x) != hot_handle) FAIL_CHECK("the recently used region left");
    cache.release(x);
    max_seen = std::max<size_t>(max_seen, cache.get_stats().entries);
  }
  const auto st = cache.get_stats();
  CHECK(max_seen <= bound);
  CHECK(st.entries <= bound);
  CHECK(st.evictions >= 200 + 1 - bound);
  CHECK(nic.live_count() == st.entries);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: byte capacity evicts the least recently used, not the lowest address") {
  fake_backend nic;
  mapping m(64);
  lci::reg_cache cache(nic.reg(), nic.dereg(), 4 * page);
  // The lowest region is used between every two misses.
  lci::reg_region* h = cache.acquire(m.p, page);
  void* hot_handle = lci::reg_cache::handle(h);
  cache.release(h);
  for (int i = 1; i < 16; ++i) {
    cache.release(cache.acquire(m.p + 2 * i * page, page));
    lci::reg_region* x = cache.acquire(m.p, page);
    CHECK(lci::reg_cache::handle(x) == hot_handle);
    cache.release(x);
  }
  CHECK(cache.get_stats().registered_bytes <= 4 * page);
  CHECK(nic.bad_deregistrations == 0);
}

TEST_CASE("reg_cache: entry bound with regions in use and several threads") {
  fake_backend nic;
  constexpr size_t bound = 16;
  constexpr int nthreads = 4;
  mapping m(2 * 64 * nthreads);
  lci::reg_cache::options opt;
  opt.max_entries = bound;
  lci::reg_cache cache(nic.reg(), nic.dereg(), opt);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(99 + t);
      for (int i = 0; i < 5000; ++i) {
        char* p = m.p + 2 * (t * 64 + rng() % 64) * page;
        lci::reg_region* r = cache.acquire(p, page);
        if (r == nullptr || !contains(r, p, page) || !nic.is_live(lci::reg_cache::handle(r)))
          failures++;
        if (r != nullptr) cache.release(r);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  const auto st = cache.get_stats();
  CHECK(st.entries <= bound);
  CHECK(nic.live_count() == st.entries);
  CHECK(nic.bad_deregistrations == 0);
}

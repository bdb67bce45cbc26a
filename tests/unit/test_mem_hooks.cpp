// Unit tests of the munmap/mremap/madvise hooks' concurrency (lci::mem_hooks
// with a live lci::reg_cache): a hook re-entered from a signal handler on
// the same thread, a signal landing while the thread holds the cache's lock,
// and hooks on many threads while one thread stays inside a hook. Each test
// bounds itself: a watchdog alarm ends the process if a hook deadlocks.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "lci/mem/mem_hooks.hpp"
#include "lci/mem/reg_cache.hpp"

namespace {

const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// A NIC that needs nothing: handle k is the k-th registration.
struct counting_nic {
  std::atomic<uint64_t> next{0}, live{0};
  lci::reg_cache::register_fn reg() {
    return [this](void*, size_t) -> void* {
      live++;
      return reinterpret_cast<void*>(++next);
    };
  }
  lci::reg_cache::deregister_fn dereg() {
    return [this](void*) { live--; };
  }
};

char* map_pages(size_t n) {
  void* p = mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return static_cast<char*>(p);
}

// Ends the process (the test fails) if a deadlocked hook never returns.
struct watchdog {
  explicit watchdog(unsigned seconds) { alarm(seconds); }
  ~watchdog() { alarm(0); }
};

// ---- a hook re-entered from a signal handler ------------------------------

std::atomic<char*> g_trigger{nullptr};   // munmap of this page raises SIGUSR1 inside the hook
std::atomic<char*> g_victim{nullptr};    // the handler unmaps this page (cached)
std::atomic<int> g_handler_runs{0};

void on_sigusr1(int) {
  char* v = g_victim.exchange(nullptr);
  if (v != nullptr) munmap(v, page);  // a hook inside a hook, same thread
  g_handler_runs++;
}

void raise_inside_hook(void*, uintptr_t addr, size_t) noexcept {
  char* t = g_trigger.load();
  if (t != nullptr && addr == reinterpret_cast<uintptr_t>(t) && g_trigger.exchange(nullptr) == t)
    raise(SIGUSR1);
}

}  // namespace

TEST_CASE("mem_hooks: a signal handler unmaps while its thread is inside a hook") {
  watchdog w(60);
  counting_nic nic;
  lci::reg_cache cache(nic.reg(), nic.dereg());
  char* p = map_pages(4);
  // The handler's page is cached, so its invalidation reaches the cache's
  // lock as well as the registry.
  cache.release(cache.acquire(p + page, page));
  lci::mem_hooks::listener l;
  l.on_invalidate = &raise_inside_hook;
  lci::mem_hooks::add(&l);
  struct sigaction sa {}, old {};
  sa.sa_handler = &on_sigusr1;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &sa, &old) == 0);

  g_victim = p + page;
  g_trigger = p;
  CHECK(munmap(p, page) == 0);  // -> hook -> SIGUSR1 -> handler -> munmap -> hook
  CHECK(g_handler_runs == 1);
  CHECK(g_victim.load() == nullptr);
  cache.collect();
  CHECK(cache.get_stats().invalidations == 1);
  CHECK(nic.live == 0);

  sigaction(SIGUSR1, &old, nullptr);
  lci::mem_hooks::remove(&l);
  munmap(p + 2 * page, 2 * page);
}

// ---- a signal landing while the thread holds the cache's lock -------------

namespace {
std::atomic<char*> g_dontneed{nullptr};
std::atomic<uint64_t> g_dontneed_n{0};
std::atomic<int> g_signals{0};
void on_sigusr2(int) {
  char* base = g_dontneed.load();
  if (base != nullptr) {
    const uint64_t k = g_dontneed_n++ % 16;
    madvise(base + k * page, page, MADV_DONTNEED);  // invalidates a cached page
  }
  g_signals++;
}
}  // namespace

TEST_CASE("mem_hooks: signals whose handlers unmap cached pages, landing anywhere in the cache") {
  watchdog w(120);
  counting_nic nic;
  lci::reg_cache cache(nic.reg(), nic.dereg());
  char* p = map_pages(16);
  struct sigaction sa {}, old {};
  sa.sa_handler = &on_sigusr2;
  sigemptyset(&sa.sa_mask);
  REQUIRE(sigaction(SIGUSR2, &sa, &old) == 0);
  g_dontneed = p;

  // The worker misses every time (it invalidates each page after use), so
  // it spends much of its time inside the cache's locked sections.
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::atomic<long> rounds{0};
  std::thread worker([&] {
    for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      char* b = p + (i % 16) * page;
      lci::reg_region* r = cache.acquire(b, page);
      if (r == nullptr || lci::reg_cache::base(r) != reinterpret_cast<uintptr_t>(b)) bad++;
      if (r != nullptr) cache.release(r);
      cache.invalidate(b, page);  // the next round misses: more time under the lock
      rounds.store(i + 1, std::memory_order_relaxed);
    }
  });
  const pthread_t target = worker.native_handle();
  // A bounded number of signals, one at a time: each waits until its
  // handler ran (at most 10 s: a handler deadlocked in a hook never does).
  const int nsignals = 3000;
  for (int s = 0; s < nsignals; ++s) {
    pthread_kill(target, SIGUSR2);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (g_signals.load() <= s && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    if (g_signals.load() <= s) break;
  }
  const long before = rounds.load();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (rounds.load() < before + 100 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  CHECK(rounds.load() >= before + 100);  // still making progress
  stop = true;
  worker.join();
  g_dontneed = nullptr;
  sigaction(SIGUSR2, &old, nullptr);
  CHECK(bad == 0);
  CHECK(g_signals == nsignals);
  MESSAGE("rounds ", rounds.load(), ", invalidations ", cache.get_stats().invalidations);
  MESSAGE("hook invalidations queued because the lock was busy: ", cache.get_stats().deferred);
  munmap(p, 16 * page);
  cache.collect();
  CHECK(nic.live == 0);
}

// ---- hooks on many threads while one thread stays inside a hook -----------

namespace {
std::atomic<char*> g_stall{nullptr};     // munmap of this page stalls inside the hook
std::atomic<int> g_others_done{0};       // threads that finished all their unmaps
std::atomic<int> g_others_needed{0};
std::atomic<bool> g_stall_gave_up{false};
std::atomic<bool> g_stall_entered{false};
bool staller_entered() { return g_stall_entered.load(); }

void stall_inside_hook(void*, uintptr_t addr, size_t) noexcept {
  char* s = g_stall.load();
  if (s == nullptr || addr != reinterpret_cast<uintptr_t>(s) || g_stall.exchange(nullptr) != s)
    return;
  g_stall_entered = true;
  // Stay inside the hook until every other thread has done all its
  // unmaps; a hook that serializes threads on one lock never lets them.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (g_others_done.load() < g_others_needed.load()) {
    if (std::chrono::steady_clock::now() > deadline) {
      g_stall_gave_up = true;
      return;
    }
    std::this_thread::yield();
  }
}
}  // namespace

TEST_CASE("mem_hooks: munmap on many threads progresses while one thread is inside a hook") {
  watchdog w(120);
  counting_nic nic;
  lci::reg_cache cache(nic.reg(), nic.dereg());
  // Cached regions next to the threads' own mappings, so that their unmaps
  // also reach the cache.
  char* cached = map_pages(8);
  for (int i = 0; i < 8; ++i) cache.release(cache.acquire(cached + i * page, page));
  lci::mem_hooks::listener l;
  l.on_invalidate = &stall_inside_hook;
  lci::mem_hooks::add(&l);

  const int nthreads = 6;
  const int per_thread = 2000;
  g_others_needed = nthreads;
  char* stall_page = map_pages(1);
  std::thread staller([&] {
    g_stall = stall_page;
    munmap(stall_page, page);
  });
  // Wait (bounded) until the staller is inside the hook: its callback takes
  // the page out of g_stall.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!staller_entered() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  REQUIRE(staller_entered());

  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        void* q = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED) {
          bad++;
          continue;
        }
        if (madvise(q, page, MADV_DONTNEED) != 0) bad++;
        if (munmap(q, 2 * page) != 0) bad++;
        if (i % 256 == t) madvise(cached + (i % 8) * page, page, MADV_DONTNEED);
      }
      g_others_done++;
    });
  for (auto& th : threads) th.join();
  staller.join();
  CHECK(bad == 0);
  CHECK_FALSE(g_stall_gave_up.load());  // the others finished while it was inside
  lci::mem_hooks::remove(&l);
  munmap(cached, 8 * page);
  cache.collect();
  CHECK(nic.live == 0);
}

// ---- add/remove while hooks run --------------------------------------------

TEST_CASE("mem_hooks: caches come and go while other threads unmap") {
  watchdog w(120);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        void* q = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (q == MAP_FAILED || munmap(q, page) != 0) bad++;
      }
    });
  counting_nic nic;
  char* p = map_pages(4);
  for (int i = 0; i < 300; ++i) {
    auto c = std::make_unique<lci::reg_cache>(nic.reg(), nic.dereg());
    c->release(c->acquire(p + (i % 4) * page, page));
  }
  stop = true;
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
  CHECK(nic.live == 0);
  munmap(p, 4 * page);
}

// packet_pool: fixed-size packets carved from one slab that the caller owns
// (the device allocates the slab and registers it with the NIC).
//
// Layout:
//
//   slab_:  | packet 0 | packet 1 | ... | packet count-1 |   (caller's memory)
//
//   packet_pool                       thread T (pool_tls(): thread's state)
//   +---------------------------+     +------------------------------------+
//   | id_, slab_, sizes (r/o)   |     | ids[8]      pool id of each cache  |
//   +---------------------------+     | caches[8]   {lock, count, pool,    |
//   | shared_lock_, top_        |     |              packets[<= 32]}       |
//   | stack_[count] (free list) |     +------------------------------------+
//   +---------------------------+
//   | caches_mutex_, caches_    |  <- the caches of all threads attached to
//   +---------------------------+     this pool (for stealing)
//
// The pool never writes into packets: free packets are tracked by pointer,
// in the shared stack or in thread caches.
//
// Fast path: get()/put() touch only the calling thread's cache for this pool
// (found by scanning 8 ids): the owner try-locks the cache's own spin lock
// (uncontended: it shares no line with other threads), pops or pushes a
// pointer, unlocks. An empty cache refills and a full cache flushes `batch_`
// packets at once from/to the shared stack, under shared_lock_.
//
// Stealing: when both the cache and the shared stack are empty, get() walks
// caches_ (holding caches_mutex_), try-locks other threads' caches and moves
// their packets out. Hence: if a packet was put back (fewer than `count`
// packets are out), it is in the shared stack or in a cache listed in
// caches_, and a get() from any thread eventually finds it. (A single get()
// may still miss a packet in transit under another thread's lock; the caller
// returns LCI_ERR_RETRY and tries again.)
//
// Lifetimes: each pool has a unique 64-bit id, never reused; a global
// registry (under a mutex, touched only by pool construction/destruction,
// a thread's first use of a pool, and thread exit) lists the live pools.
// A thread's cache for a pool stays attached (listed in caches_) until the
// thread exits or reuses the slot for another pool; then, if the pool is
// still live, its packets go back to the shared stack and it is unlisted. A
// destroyed pool simply leaves the registry: caches that still carry its id
// are abandoned, never dereferenced (its packets belonged to the caller's
// slab anyway).
//
// Lock order: registry mutex -> caches_mutex_ -> a cache's lock ->
// shared_lock_. The fast path takes only the last two; thieves take
// caches_mutex_ first and then only try-lock caches.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "lci/util/spin.hpp"

namespace lci {

class packet_pool;

namespace detail {

inline constexpr int pool_tls_slots = 8;        // pools cached per thread
inline constexpr uint32_t pool_cache_max = 32;  // packets per cache

// One thread's cache for one pool. The owner thread takes `lock` with
// try_lock around each get/put; a thief (another thread's get() on the same
// pool, holding the pool's caches_mutex_) may take it too.
struct alignas(64) pool_cache {
  spin_lock lock;
  std::atomic<uint32_t> count{0};  // written under lock; atomic for available()
  packet_pool* pool = nullptr;
  void* packets[pool_cache_max] = {};
};

// One thread's caches, allocated at the thread's first use of any pool and
// freed by its exit hook. ids[i] is the id of the pool caches[i] belongs to
// (0: unused); only the owner thread reads or writes ids.
struct pool_thread_state {
  uint64_t ids[pool_tls_slots] = {};
  pool_cache caches[pool_tls_slots];
  unsigned next_victim = 0;
  bool exited = false;  // the exit hook ran: attach no more caches
};

// The thread's state is reached through one pointer in initial-exec TLS: a
// single %fs-relative load on the fast path instead of a __tls_get_addr call
// (the shared library's default model), and only 8 bytes of static TLS, so a
// program that dlopen()s liblci still finds room for it.
inline thread_local pool_thread_state* pool_tls_ptr __attribute__((tls_model("initial-exec"))) =
    nullptr;

// What a thread sees after its exit hook ran: no caches, attach refused.
// Shared by all exited threads, read-only for them; never destroyed.
inline pool_thread_state& exited_state() {
  static pool_thread_state* s = [] {
    auto* x = new pool_thread_state;
    x->exited = true;
    return x;
  }();
  return *s;
}

[[gnu::noinline, gnu::cold]] inline pool_thread_state& pool_tls_create() {
  pool_tls_ptr = new pool_thread_state;
  return *pool_tls_ptr;
}

inline pool_thread_state& pool_tls() {
  pool_thread_state* p = pool_tls_ptr;
  return __builtin_expect(p != nullptr, 1) ? *p : pool_tls_create();
}

struct pool_registry {
  std::mutex mutex;
  std::vector<packet_pool*> live;  // under mutex
  uint64_t next_id = 1;            // under mutex
};

// Never destroyed: detached threads may exit after static destructors ran.
inline pool_registry& registry() {
  static pool_registry* r = new pool_registry;
  return *r;
}

// Constructed by a thread's first attach; its destructor (at thread exit)
// returns the thread's cached packets to their pools if those still live.
struct pool_exit_hook {
  pool_exit_hook() = default;
  pool_exit_hook(const pool_exit_hook&) = delete;
  pool_exit_hook& operator=(const pool_exit_hook&) = delete;
  ~pool_exit_hook();
};

}  // namespace detail

class packet_pool {
 public:
  // All `count` packets of `packet_size` bytes at `slab` start free.
  packet_pool(void* slab, size_t packet_size, size_t count)
      : slab_(static_cast<char*>(slab)),
        packet_size_(packet_size),
        count_(count),
        cache_limit_(static_cast<uint32_t>(
            std::clamp<size_t>(count / 16, 1, detail::pool_cache_max))),
        batch_(std::max<uint32_t>(1, cache_limit_ / 2)),
        packet_shift_(shift_of(packet_size)),
        stack_(new void*[count]) {
    assert(slab != nullptr && packet_size > 0 && count > 0);
    // Reverse order: the first get() returns packet 0.
    for (size_t i = 0; i < count; ++i)
      stack_[i] = slab_ + (count - 1 - i) * packet_size_;
    top_.store(count, std::memory_order_relaxed);
    auto& reg = detail::registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    id_ = reg.next_id++;
    reg.live.push_back(this);
  }

  // Safe while other threads' caches still carry this pool's id: they are
  // abandoned. No thread may be inside get()/put() of this pool.
  ~packet_pool() {
    auto& reg = detail::registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    reg.live.erase(std::find(reg.live.begin(), reg.live.end(), this));
  }

  packet_pool(const packet_pool&) = delete;
  packet_pool& operator=(const packet_pool&) = delete;

  // A free packet, or nullptr when none could be found now.
  void* get() noexcept {
    detail::pool_cache* c = local_cache();
    // No cache (thread exiting), or a thief is in it: bypass it.
    if (c == nullptr || !c->lock.try_lock()) return get_slow();
    uint32_t n = c->count.load(std::memory_order_relaxed);
    if (n == 0) n = static_cast<uint32_t>(shared_pop(c->packets, batch_));
    if (n == 0) {
      c->lock.unlock();
      return steal();
    }
    void* p = c->packets[--n];
    c->count.store(n, std::memory_order_relaxed);
    c->lock.unlock();
    return p;
  }

  // Returns packet p (the start of a packet of this pool) to the pool.
  void put(void* p) noexcept {
    assert(contains(p) && packet_of(p) == p);
    detail::pool_cache* c = local_cache();
    if (c == nullptr || !c->lock.try_lock()) {
      shared_push(&p, 1);
      return;
    }
    uint32_t n = c->count.load(std::memory_order_relaxed);
    if (n == cache_limit_) {
      n -= batch_;
      shared_push(c->packets + n, batch_);
    }
    c->packets[n] = p;
    c->count.store(n + 1, std::memory_order_relaxed);
    c->lock.unlock();
  }

  // p points at any byte of the slab.
  bool contains(const void* p) const noexcept {
    const uintptr_t off = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(slab_);
    return off < count_ * packet_size_;  // unsigned: p below slab_ wraps high
  }

  // The start of the packet containing p (p inside the slab).
  void* packet_of(const void* p) const noexcept {
    assert(contains(p));
    size_t off = static_cast<size_t>(static_cast<const char*>(p) - slab_);
    off = packet_shift_ >= 0 ? (off >> packet_shift_) << packet_shift_
                             : off / packet_size_ * packet_size_;
    return slab_ + off;
  }

  size_t capacity() const noexcept { return count_; }
  size_t packet_size() const noexcept { return packet_size_; }

  // Free packets in the shared stack and the attached caches (approximate
  // while other threads work).
  size_t available() const {
    std::lock_guard<std::mutex> g(caches_mutex_);
    return available_locked();
  }
  // available(), for diagnostics that must not wait: false if the list of
  // caches stayed locked (try_lock_bounded).
  bool try_available(size_t& out) const {
    if (!try_lock_bounded(caches_mutex_)) return false;
    std::lock_guard<std::mutex> g(caches_mutex_, std::adopt_lock);
    out = available_locked();
    return true;
  }

 private:
  friend struct detail::pool_exit_hook;

  // Under caches_mutex_.
  size_t available_locked() const {
    size_t n = top_.load(std::memory_order_relaxed);
    for (const detail::pool_cache* c : caches_) n += c->count.load(std::memory_order_relaxed);
    return n;
  }

  static int shift_of(size_t size) noexcept {
    if (size == 0 || (size & (size - 1)) != 0) return -1;
    int s = 0;
    while ((size_t{1} << s) != size) ++s;
    return s;
  }

  // This thread's cache for this pool; attaches one on first use. nullptr
  // once the thread's exit hook ran (a thread_local destructor using a pool).
  // A pool's cache sits in its home slot (id mod slots: pools are numbered
  // in creation order, so a device's pools have distinct homes) unless
  // another live pool held that slot when this thread attached.
  detail::pool_cache* local_cache() noexcept {
    detail::pool_thread_state& st = detail::pool_tls();
    const size_t home = home_slot();
    if (__builtin_expect(st.ids[home] == id_, 1)) return &st.caches[home];
    return local_cache_elsewhere(st);
  }
  size_t home_slot() const noexcept {
    return static_cast<size_t>(id_ % detail::pool_tls_slots);
  }
  [[gnu::noinline]] detail::pool_cache* local_cache_elsewhere(
      detail::pool_thread_state& st) noexcept {
    for (int i = 0; i < detail::pool_tls_slots; ++i)
      if (st.ids[i] == id_) return &st.caches[i];
    return attach();
  }

  // Moves up to max packets from the shared stack to out; returns how many.
  // Out of line, as is shared_push: once per batch_ packets, and the fast
  // paths that call them then save no registers.
  [[gnu::noinline]] size_t shared_pop(void** out, size_t max) noexcept {
    // Unlocked peek: a stale 0 only makes this call miss packets put back
    // this instant (the caller retries), and keeps empty-pool get() from
    // hammering the lock.
    if (top_.load(std::memory_order_relaxed) == 0) return 0;
    shared_lock_.lock();
    const size_t top = top_.load(std::memory_order_relaxed);
    const size_t n = std::min(max, top);
    std::memcpy(out, stack_.get() + (top - n), n * sizeof(void*));
    top_.store(top - n, std::memory_order_relaxed);
    shared_lock_.unlock();
    return n;
  }

  [[gnu::noinline]] void shared_push(void* const* in, size_t n) noexcept {
    shared_lock_.lock();
    const size_t top = top_.load(std::memory_order_relaxed);
    assert(top + n <= count_ && "packet returned twice");
    std::memcpy(stack_.get() + top, in, n * sizeof(void*));
    top_.store(top + n, std::memory_order_relaxed);
    shared_lock_.unlock();
  }

  [[gnu::noinline]] void* get_slow() noexcept {
    void* p;
    if (shared_pop(&p, 1) == 1) return p;
    return steal();
  }

  // Takes the packets of some other cache of this pool: returns one, moves
  // the rest to the shared stack for everyone.
  [[gnu::noinline]] void* steal() noexcept {
    {
      std::lock_guard<std::mutex> g(caches_mutex_);
      for (detail::pool_cache* c : caches_) {
        if (c->count.load(std::memory_order_relaxed) == 0) continue;
        if (!c->lock.try_lock()) continue;
        const uint32_t n = c->count.load(std::memory_order_relaxed);
        if (n == 0) {
          c->lock.unlock();
          continue;
        }
        void* p = c->packets[n - 1];
        if (n > 1) shared_push(c->packets, n - 1);
        c->count.store(0, std::memory_order_relaxed);
        c->lock.unlock();
        return p;
      }
    }
    void* p;
    return shared_pop(&p, 1) == 1 ? p : nullptr;  // returned meanwhile?
  }

  // Gives this thread a cache for this pool: a free slot, else one of a dead
  // pool (abandoned), else a live pool's slot (flushed back to that pool).
  [[gnu::noinline]] detail::pool_cache* attach() {
    detail::pool_thread_state& st = detail::pool_tls();
    if (st.exited) return nullptr;
    static thread_local detail::pool_exit_hook hook;
    (void)hook;
    auto& reg = detail::registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    const int home = static_cast<int>(home_slot());
    int pick = -1;
    if (st.ids[home] == 0 || live_owner(reg, st.ids[home], st.caches[home]) == nullptr)
      pick = home;
    for (int i = 0; i < detail::pool_tls_slots && pick < 0; ++i)
      if (st.ids[i] == 0) pick = i;
    for (int i = 0; i < detail::pool_tls_slots && pick < 0; ++i)
      if (live_owner(reg, st.ids[i], st.caches[i]) == nullptr) pick = i;
    if (pick < 0) {
      pick = static_cast<int>(st.next_victim++ % detail::pool_tls_slots);
      st.caches[pick].pool->detach(&st.caches[pick]);
    }
    detail::pool_cache& c = st.caches[pick];
    c.count.store(0, std::memory_order_relaxed);
    c.pool = this;
    st.ids[pick] = id_;
    std::lock_guard<std::mutex> g2(caches_mutex_);
    caches_.push_back(&c);
    return &c;
  }

  // The live pool that cache c (carrying id) belongs to, or nullptr.
  // Caller holds the registry mutex.
  static packet_pool* live_owner(const detail::pool_registry& reg, uint64_t id,
                                 const detail::pool_cache& c) {
    if (id == 0) return nullptr;
    for (packet_pool* p : reg.live)
      if (p == c.pool && p->id_ == id) return p;
    return nullptr;
  }

  // Unlists the calling thread's cache c and returns its packets to the
  // shared stack. Caller holds the registry mutex (so this pool is live).
  void detach(detail::pool_cache* c) {
    std::lock_guard<std::mutex> g(caches_mutex_);
    caches_.erase(std::find(caches_.begin(), caches_.end(), c));
    // No thief is inside (they hold caches_mutex_); the lock orders our
    // reads after the last thief's writes.
    c->lock.lock();
    const uint32_t n = c->count.load(std::memory_order_relaxed);
    if (n > 0) shared_push(c->packets, n);
    c->count.store(0, std::memory_order_relaxed);
    c->lock.unlock();
  }

  // Read-only after construction (id_ is set before the pool is shared).
  uint64_t id_ = 0;
  char* const slab_;
  const size_t packet_size_;
  const size_t count_;
  const uint32_t cache_limit_;  // packets a thread cache holds at most
  const uint32_t batch_;        // packets moved per refill/flush
  const int packet_shift_;      // log2(packet_size_), or -1
  const std::unique_ptr<void*[]> stack_;
  // The shared stack: stack_[0 .. top_) are free; written under the lock
  // (top_ is atomic so that available() and the peek may read it).
  alignas(64) spin_lock shared_lock_;
  std::atomic<size_t> top_{0};
  // Caches of threads attached to this pool.
  alignas(64) mutable std::mutex caches_mutex_;
  std::vector<detail::pool_cache*> caches_;
};

namespace detail {

inline pool_exit_hook::~pool_exit_hook() {
  pool_thread_state* st = pool_tls_ptr;
  if (st == nullptr || st->exited) return;
  {
    auto& reg = registry();
    std::lock_guard<std::mutex> g(reg.mutex);
    for (int i = 0; i < pool_tls_slots; ++i) {
      if (packet_pool* p = packet_pool::live_owner(reg, st->ids[i], st->caches[i]))
        p->detach(&st->caches[i]);
      st->ids[i] = 0;
    }
  }
  // Detached from every live pool (under the registry and each pool's
  // caches mutex), so no thief can reach these caches any more.
  pool_tls_ptr = &exited_state();
  delete st;
}

}  // namespace detail

// The same fixed-size pool serves any object that lives in a slab of
// equal slots: the device's receive descriptors and rendezvous operations
// use it under this name.
using object_pool = packet_pool;

}  // namespace lci

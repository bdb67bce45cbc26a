// reg_cache: registrations of application memory made on the fly (long
// buffers whose segment is LCI_SEGMENT_ALL), cached per device so that a
// buffer sent again costs a lookup instead of a NIC registration. Kept
// correct when the application unmaps memory by lci/mem/mem_hooks.hpp (read
// it for what the hooks do not catch).
//
// Independent of the network: the owner passes two callbacks, one that
// registers [addr, addr+len) and returns a non-null backend handle, and one
// that deregisters a handle. They are never called with a cache lock held,
// and never from inside a hooked munmap/mremap/madvise.
//
// Layout:
//
//   reg_cache (shared)                      thread T (thread_local)
//   +--------------------------------+      +--------------------------------+
//   | id_, callbacks, bounds (r/o)   |      | slots[4]: {cache id,           |
//   | zombies_pending_, deferred_,   |      |   entries[8]: {base, end,      |
//   | applied_, clock_ (rarely set)  |      |     region*, generation}}      |
//   +--------------------------------+      | shard (which hits_ counter)    |
//   | hits_[16] (one line each)      |      +--------------------------------+
//   +--------------------------------+
//   | filter_: 4096 bits, 2 MiB pages|  regions: | state last_use | base end
//   +--------------------------------+           handle | one cache line
//   | defer_tail_ | defer_[32] ring  |           each, never freed before
//   +--------------------------------+           the cache (except
//   | mutex_                         |           per-use ones)
//   | index_: sorted, disjoint, valid|
//   | free_, zombies_, all_, pending_|
//   +--------------------------------+
//
// Regions. A region is a registered, page-aligned range [base, end). Its
// 64-bit `state` packs | generation:32 | valid:1 | use count:31 |:
//   - valid: listed in index_ and may be handed out. Cleared (under mutex_)
//     when the region is invalidated (its memory was unmapped), superseded
//     by a merged region, or evicted; never set again for this generation.
//   - use count: acquires not yet released.
//   - generation: bumped each time the region object is recycled.
// A region with valid == 0 and count == 0 is deregistered by whoever made it
// so (the last release(), or the invalidation/eviction that found it unused)
// and its object goes to free_ with the next generation. Region objects are
// type-stable: they are reused but never freed while the cache lives, so a
// stale pointer to one may always be read.
//
// Hit path (no shared lock): acquire() scans the calling thread's slot for
// this cache (matched by the cache's unique id, so a slot of a destroyed
// cache is never dereferenced) for an entry whose range contains the
// request, then takes a reference with one CAS that succeeds only if the
// region still has the entry's generation and is valid. That CAS is the
// whole answer to a concurrent invalidate(): the count can only grow while
// `valid` is set, and invalidate() clears `valid` with an atomic RMW on the
// same word, so either the acquire comes first (the invalidator sees the
// count and leaves deregistration to the last release) or the CAS fails (the
// entry is dropped and the shared index is consulted). Nothing needs undoing.
// Thread entries hold no reference: they are hints, validated at use.
//
// Miss path: under mutex_, look the range up in index_ (binary search; the
// regions there are disjoint, so only one can contain the range). On a miss,
// the new registration covers the page-aligned request merged with every
// region it overlaps (not merely adjacent ones: those may belong to another
// mapping with its own lifetime); the overlapped regions are replaced (made
// invalid). The registration itself runs without the lock while a `pending`
// record stays linked; an invalidation overlapping it meanwhile marks it
// stale, and the registration is then dropped and retried without merging;
// if that is stale too, it is handed out once, uncached (already invalid).
// A failed merged registration is likewise retried with the request alone.
// If another thread inserted a region containing the request meanwhile, that
// one is used and ours is deregistered.
//
// Bounds and eviction: at most max_entries regions and max_bytes bytes are
// cached. After a miss that exceeds either, unused regions are deregistered,
// least recently used first, down to 7/8 of max_entries (so that a sort is
// paid once per max_entries/8 misses) and to max_bytes. "Recently" is the
// cache's clock_, which only misses advance: a hit stamps its region with the
// current clock (a store to the region's own line, and only when the stamp
// changes). Regions in use are never evicted, so the bounds can be exceeded
// while more regions than that are in use at once.
//
// Per-use mode (options::cached == false): acquire() registers the request's
// pages for this use alone and release() deregisters them; nothing is
// shared, no lock is taken and the hooks are not listened to. This is the
// mode for backends whose registrations pin pages (see mem_hooks.hpp and
// decide_caching() below).
//
// No memory is allocated with mutex_ held: the hooks take mutex_ from inside
// munmap/madvise, which an allocator such as jemalloc calls from malloc().
// So the index's capacity, the eviction scratch space and spare region
// objects are grown with the lock dropped (reserve_locked()).
//
// Invalidation from the hooks (on_unmap()) never blocks (see the listener
// contract in mem_hooks.hpp). It first asks filter_, a bitmap of the 2 MiB
// pages (hashed) that cached or pending regions touch, whether the range can
// concern this cache at all; if not, it returns having touched no lock and
// written nothing. Otherwise it try-locks mutex_; if that succeeds it only
// unlinks and marks regions, and unused ones go to zombies_. If the lock is
// busy (another thread, a signal handler interrupting this thread's own
// locked section, or a lock inherited held across fork()), the range is
// queued in defer_, a bounded lock-free ring (a full ring turns into "drop
// every region"), and deferred_ is bumped. Every locked section outside the
// hooks first applies queued ranges, and the hit path falls back to the
// locked path while deferred_ != applied_, so no acquire after the munmap
// returned can hit a region it removed. Zombies are deregistered by the next
// acquire(), release() or collect() on any thread, or by the destructor. A
// direct call to invalidate() deregisters unused ones before it returns.
// filter_ bits are set under mutex_ before a region can be registered, and
// rebuilt (only ever cleared to a subset) once many regions left.
//
// Lock order: mutex_ only; the hooks take no lock but a try-lock. Thread
// slots are touched only by their thread.
//
// Lifetime: construct before the first acquire(); destroy when no thread is
// inside a member function and every acquired region has been released (the
// destructor deregisters whatever is still registered, and warns about
// regions still in use). The destructor waits for running hooks, so do not
// destroy a cache while holding a lock that the deregister callback takes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "lci/mem/mem_hooks.hpp"

namespace lci {

struct reg_region;

class LCI_INTERNAL_EXPORT reg_cache {
 public:
  // Registers [addr, addr+len) (page-aligned) and returns a backend handle,
  // or nullptr on failure (acquire() then returns nullptr).
  using register_fn = std::function<void*(void* addr, size_t len)>;
  using deregister_fn = std::function<void(void* handle)>;

  struct stats {
    uint64_t hits;              // acquires served by an existing registration
    uint64_t misses;            // acquires that registered memory for the cache
    uint64_t uncached;          // acquires that registered memory for one use (per-use mode)
    uint64_t invalidations;     // regions removed by invalidate() / the hooks
    uint64_t registered_bytes;  // registered with the backend now (in use or cached)
    uint64_t evictions;         // unused regions dropped to stay within the bounds
    uint64_t entries;           // regions cached now
    uint64_t deferred;          // hook invalidations queued because the lock was busy
  };

  struct options {
    bool cached = true;             // false: per-use mode (see above)
    size_t max_entries = SIZE_MAX;  // regions kept at most (see "Bounds")
    size_t max_bytes = SIZE_MAX;    // bytes kept at most
  };

  reg_cache(register_fn reg, deregister_fn dereg, const options& opt);
  // A caching cache bounded to capacity_bytes.
  reg_cache(register_fn reg, deregister_fn dereg, size_t capacity_bytes = SIZE_MAX);
  ~reg_cache();
  reg_cache(const reg_cache&) = delete;
  reg_cache& operator=(const reg_cache&) = delete;

  // A registration covering [addr, addr+len) (len 0: covering addr; a miss
  // then registers its page), with one more use. nullptr only if the
  // register callback failed.
  reg_region* acquire(void* addr, size_t len);
  // Ends one use of r (from any thread).
  void release(reg_region* r);
  static void* handle(const reg_region* r) noexcept;
  static uintptr_t base(const reg_region* r) noexcept;
  static size_t length(const reg_region* r) noexcept;

  // [addr, addr+len) was unmapped or its pages replaced: every region
  // overlapping the pages of the range leaves the index now (later acquires
  // miss) and is deregistered when unused (now, if unused already). Must not
  // be called with a lock held that the deregister callback takes.
  void invalidate(void* addr, size_t len);
  // Deregisters regions invalidated by the hooks and unused since.
  void collect();

  stats get_stats() const;
  bool cached() const noexcept { return cached_; }

 private:
  struct pending;
  static constexpr int filter_words = 64;  // 4096 bits
  static constexpr int filter_shift = 21;  // 2 MiB per bit (hashed)
  static constexpr unsigned defer_slots = 32;
  struct defer_slot {
    // Vyukov's bounded queue: seq == pos: free for the producer of pos;
    // pos + 1: holds [a, e) (release/acquire on seq covers a and e).
    std::atomic<uint64_t> seq{0};
    uintptr_t a = 0, e = 0;
  };

  reg_region* acquire_uncached(uintptr_t a, uintptr_t e);
  bool work_pending() const noexcept {
    return zombies_pending_.load(std::memory_order_relaxed) ||
           deferred_.load(std::memory_order_acquire) != applied_.load(std::memory_order_acquire);
  }
  void mark_locked(uintptr_t a, uintptr_t e) noexcept;
  bool may_cover(uintptr_t a, uintptr_t e) const noexcept;
  void rebuild_filter_locked() noexcept;
  void defer(uintptr_t a, uintptr_t e) noexcept;
  void apply_deferred_locked(reg_region** retire) noexcept;

  reg_region* acquire_slow(uintptr_t a, uintptr_t e, void* slot);
  void reserve_locked(std::unique_lock<std::mutex>& lk);
  reg_region* find_containing(uintptr_t a, uintptr_t e) const noexcept;
  // Unlinks every region overlapping [a, e) (page-aligned) from index_;
  // unused ones are prepended to *retire. If the memory was unmapped (not
  // merely superseded), also marks overlapping pending registrations stale.
  // Caller holds mutex_.
  size_t invalidate_locked(uintptr_t a, uintptr_t e, reg_region** retire, bool unmapped) noexcept;
  void link_locked(pending* p) noexcept;
  void unlink_locked(pending* p) noexcept;
  size_t evict_locked(const reg_region* keep, reg_region** retire) noexcept;
  bool over_bounds_locked() const noexcept {
    return index_.size() > max_entries_ || cached_bytes_ > max_bytes_;
  }
  reg_region* new_region_locked(uintptr_t b, uintptr_t e, void* h, bool valid) noexcept;
  // Deregisters a list of unused, invalid regions and recycles them.
  void retire(reg_region* list);
  static void on_unmap(void* self, uintptr_t addr, size_t len) noexcept;
  void count_hit(unsigned& shard) noexcept;

  // Read-only after construction.
  const register_fn reg_;
  const deregister_fn dereg_;
  const uint64_t id_;
  const uintptr_t page_mask_;
  const bool cached_;
  const size_t max_entries_;
  const size_t max_bytes_;
  mem_hooks::listener listener_;
  // Set after the hooks queue zombies; the hit path reads it.
  std::atomic<bool> zombies_pending_{false};
  // Ranges queued by hooks (bumped after each queued range or overflow) and
  // applied under mutex_ (stored, release, after they took effect).
  std::atomic<uint64_t> deferred_{0};
  std::atomic<uint64_t> applied_{0};
  // LRU clock: advanced by misses, read by hits.
  std::atomic<uint64_t> clock_{0};
  std::atomic<uint64_t> uncached_{0};

  // Hit counters, one line each, so that threads hitting at once do not
  // share a written line (a thread's shard is fixed at its first use).
  static constexpr int hit_shards = 16;
  struct alignas(64) shard {
    std::atomic<uint64_t> n{0};
  };
  shard hits_[hit_shards];

  // Read by every hook that reaches this cache; written under mutex_.
  alignas(64) std::atomic<uint64_t> filter_[filter_words] = {};
  // Producers: hooks that found mutex_ busy. Consumer: holders of mutex_.
  alignas(64) std::atomic<uint64_t> defer_tail_{0};
  std::atomic<uint64_t> defer_overflows_{0};
  defer_slot defer_[defer_slots];

  alignas(64) mutable std::mutex mutex_;
  std::vector<reg_region*> index_;             // valid regions, sorted by base, disjoint
  reg_region* free_ = nullptr;                 // recyclable objects (registered nowhere)
  reg_region* zombies_ = nullptr;              // invalid, unused, still registered
  reg_region* all_ = nullptr;                  // every object allocated, for the destructor
  pending* pending_ = nullptr;                 // registrations running without the lock
  std::atomic<uint64_t> registered_bytes_{0};  // also updated without the lock
  size_t cached_bytes_ = 0;                    // sum of index_ lengths
  uint64_t misses_ = 0, invalidations_ = 0, evictions_ = 0;
  // Eviction candidates with their last use as it was read once: hits
  // update last_use without the lock, so sorting on the live value would
  // give std::sort an inconsistent order (undefined behaviour: it can run
  // off the end of the range). Capacity >= index_'s.
  struct candidate {
    uint64_t last_use;
    reg_region* region;
  };
  std::vector<candidate> scratch_;
  uint64_t defer_head_ = 0;           // next defer_ slot to apply
  uint64_t overflows_applied_ = 0;
  size_t filter_dropped_ = 0;  // regions that left since filter_ was last rebuilt
};

// See "Regions" above. One cache line, so that threads counting uses of
// different regions do not contend.
struct alignas(64) reg_region {
  static constexpr uint64_t count_mask = (uint64_t{1} << 31) - 1;
  static constexpr uint64_t valid_bit = uint64_t{1} << 31;
  static constexpr int gen_shift = 32;

  std::atomic<uint64_t> state{0};
  std::atomic<uint64_t> last_use{0};  // the cache's clock_ at the last use
  // Written before the region is published (under the cache's mutex, or
  // before the CAS that hands it out can succeed); constant while in use.
  uintptr_t base = 0;
  uintptr_t end = 0;
  void* handle = nullptr;      // nullptr: not registered
  reg_region* next = nullptr;  // free_ / zombies_ / a retire list (owner's)
  reg_region* all_next = nullptr;
  bool per_use = false;  // made by per-use mode: deleted by its release
};

// Whether a device may cache its LCI_SEGMENT_ALL registrations.
//   use_dreg: LCI_USE_DREG (0: never).
//   registrations_pin: the backend's registrations pin physical pages
//     (verbs without on-demand paging; libfabric providers other than
//     shm/tcp-like ones). The hooks cannot see glibc's own unmaps (see
//     mem_hooks.hpp), so a cached pinned registration may keep old pages
//     while the program's buffer now lives in new ones: never cached.
//   hooks_active: the munmap hooks are in effect (mem_hooks::active()).
// reason: a short phrase for the log.
struct caching_decision {
  bool cache;
  const char* reason;
};
LCI_INTERNAL_EXPORT caching_decision decide_caching(int use_dreg, bool registrations_pin,
                                                    bool hooks_active) noexcept;

inline void* reg_cache::handle(const reg_region* r) noexcept { return r->handle; }
inline uintptr_t reg_cache::base(const reg_region* r) noexcept { return r->base; }
inline size_t reg_cache::length(const reg_region* r) noexcept { return r->end - r->base; }

}  // namespace lci

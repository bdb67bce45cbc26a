// Parking: how a waiter that cannot make progress gives up its processor
// until a completion object changes, under a pluggable waiting policy.
//
// Parking lot. A global table of buckets, each {spin lock, count of parked
// nodes, intrusive list}; a completion object is hashed to a bucket by its
// address (its *key*). A waiter parks a node that lives on its own stack; the
// node carries the key and a wake function chosen by the policy (futex wake
// for an OS thread, "make ready" for a fiber, tbb::task::resume for a TBB
// task). Because the buckets are global and never freed, a signaller never
// touches the completion object after it has published a completion: the
// waiter may free the object as soon as it sees the completion (the same
// lifetime rule as before parking existed).
//
// Lost wakeups. Waiter and signaller form a Dekker pair:
//   waiter:     count.fetch_add (seq_cst); fence (seq_cst); load "ready"
//   signaller:  publish (a seq_cst RMW or store); load count (seq_cst)
// All four are in the single total order S of seq_cst operations. If the
// signaller's publish precedes the waiter's fence in S, the waiter's ready
// load (sequenced after the fence) observes it. Otherwise the waiter's
// fetch_add precedes the publish, which precedes the signaller's seq_cst load
// of count, so the signaller sees the parked waiter and takes the slow path.
// The waiter re-checks "ready" under the bucket lock, and the slow path takes
// the same lock to unlink, so a waker never sees a node whose owner is still
// deciding whether to sleep; an unlinked node belongs to whoever unlinked it.
//
// Cost when nobody parks: the signaller's publish becomes seq_cst (free on
// x86 for an RMW, an xchg instead of a mov for a store) plus one load of the
// bucket's count, which stays in the cache in shared state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lci.h"
#include "lci/util/spin.hpp"

namespace lci {

struct park_node;
using wake_fn = void (*)(park_node*);

// One parked waiter. Lives on the waiter's stack (or fiber stack) from park()
// until it is woken; linked into its bucket's list only under the bucket lock.
struct park_node {
  park_node* next = nullptr;
  park_node* prev = nullptr;
  const void* key = nullptr;     // the completion object waited on
  wake_fn wake = nullptr;        // called once, by the thread that unlinked it
  void* handle = nullptr;        // the policy's "who": fiber, suspend point
  std::atomic<uint32_t> woken{0};  // futex word of the threads policy
};

namespace detail {

struct alignas(64) park_bucket {
  std::atomic<uint32_t> count{0};  // nodes in the list
  spin_lock lock;
  park_node* head = nullptr;
  park_node* tail = nullptr;
};

inline constexpr size_t park_bucket_count = 1024;  // 64 KiB
extern park_bucket park_buckets[park_bucket_count];

inline park_bucket& bucket_of(const void* key) noexcept {
  // Completion objects are at least 64-byte aligned: drop the low bits.
  const uintptr_t a = reinterpret_cast<uintptr_t>(key) >> 6;
  return park_buckets[(a ^ (a >> 10)) & (park_bucket_count - 1)];
}

void unpark_slow(const void* key, bool all) noexcept;

}  // namespace detail

// Signaller side, called after publishing with a seq_cst operation.
// Wakes one (or all) waiters parked on `key`, if any.
inline void unpark_one(const void* key) noexcept {
  if (detail::bucket_of(key).count.load(std::memory_order_seq_cst) != 0)
    detail::unpark_slow(key, false);
}
inline void unpark_all(const void* key) noexcept {
  if (detail::bucket_of(key).count.load(std::memory_order_seq_cst) != 0)
    detail::unpark_slow(key, true);
}

// Waiter side: blocks under the current policy until woken by unpark_* on
// `key`, or returns at once if ready(ctx) holds once parked. May return
// spuriously; callers re-check their condition and park again.
using ready_fn = bool (*)(const void* ctx);
void park(const void* key, ready_fn ready, const void* ctx) noexcept;

// The policy in force (LCIX_set_wait_policy, LCI_WAIT_POLICY).
LCIX_wait_policy_t wait_policy() noexcept;
void wait_policy_set(LCIX_wait_policy_t p) noexcept;

// True when the calling thread would park under a policy other than spinning
// (the threads policy spins briefly first).
bool wait_spins_first() noexcept;

// Blocks until try_consume() returns true. ready(ctx) must be a cheap,
// non-consuming test of the condition that the signaller publishes (it may
// err on the side of true). Under LCIX_WAIT_SPIN this is wait_until().
template <typename TryConsume>
inline void block_until(const void* key, TryConsume&& try_consume, ready_fn ready,
                        const void* ctx) noexcept {
  if (try_consume()) return;
  const LCIX_wait_policy_t p = wait_policy();
  if (p == LCIX_WAIT_SPIN) {
    wait_until(try_consume);
    return;
  }
  if (wait_spins_first()) {
    // Bounded spin (about 1 + 2 + ... + 64 pauses, a few microseconds),
    // then a few yields: most completions of a busy runtime arrive here.
    backoff b;
    for (int yields = 0; yields < 4;) {
      if (b.yielding()) ++yields;
      b.pause();
      if (try_consume()) return;
    }
  }
  for (;;) {
    park(key, ready, ctx);
    if (try_consume()) return;
  }
}

}  // namespace lci

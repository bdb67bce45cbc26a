// match_table: the per-device matching table. It holds, in one hash table,
// both receives that were posted before their message arrived and messages
// that arrived before their receive was posted.
//
// Entries are intrusive match_nodes embedded in the caller's objects (a
// receive descriptor, an arrived packet); the table never allocates, copies
// or frees them. A node belongs to the table from the insert_or_match() that
// appends it until the insert_or_match() that returns it.
//
// An entry's identity is its key (make_match_key) and its tag_hi, the
// upper half of a tag wider than the key's 16 bits (the LCI 2 interface's
// tags; 0 for every tag of the C API). Below, "equal key" means both are
// equal; tag_hi is compared only where the key already matched.
//
// Layout: 2^n buckets, one cache line each: {spin lock, entry count, head,
// tail} of a singly linked FIFO chain. The bucket of an entry is
// mix(key, tag_hi) & (nbuckets - 1); one chain holds the entries of several
// keys.
//
// Invariants (of each bucket, under its lock):
//   - all entries with equal key have the same kind: an insert of the
//     opposite kind would have matched instead of being appended;
//   - among entries with equal key, chain order is insertion order, so the
//     first equal-key entry of the chain is the oldest;
//   - count == the number of entries in the chain; tail is the last node
//     (nullptr iff head is nullptr).
// insert_or_match() looks for a match and appends under one lock hold, so a
// receive and its message meet exactly once whatever the interleaving.
//
// Per source rank the table also counts its entries whose key names that
// rank (rank_entries; receives of a rank-matching endpoint and their
// messages): the exact-rank receive lists (lci/core/rank_fifo.hpp) are used
// only while it is 0.
//
// Threads: any; operations on different buckets do not contend (the buckets
// do not share cache lines). size() reads the counts without locks.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "lci.h"
#include "lci/util/spin.hpp"

namespace lci {

enum class match_kind : uint8_t { recv = 0, send = 1 };

struct match_node {
  uint64_t key;
  match_node* next;
  match_kind kind;
  uint16_t tag_hi;  // the tag's upper half (in the padding after kind)
};
static_assert(sizeof(match_node) == 24, "match_node: tag_hi fits the padding");

// Key layout: bits 63..32 the rank (two's complement, so LCI_RANK_ANY = -1 is
// a distinct value), bits 27..16 the endpoint number, bits 15..0 the tag.
inline uint64_t make_match_key(int rank, uint32_t endpoint, uint32_t tag) noexcept {
  assert(rank >= LCI_RANK_ANY);
  assert(endpoint < 4096);
  assert(tag <= 0xffffu);
  return (static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 32) |
         (static_cast<uint64_t>(endpoint) << 16) | static_cast<uint64_t>(tag);
}

// The parts of a key (make_match_key's inverse); the rank is LCI_RANK_ANY
// for a tag-matching endpoint's.
inline int match_key_rank(uint64_t key) noexcept {
  return static_cast<int>(static_cast<uint32_t>(key >> 32));
}
inline uint32_t match_key_endpoint(uint64_t key) noexcept {
  return static_cast<uint32_t>(key >> 16) & 0xfffu;
}
inline uint32_t match_key_tag(uint64_t key) noexcept { return static_cast<uint32_t>(key) & 0xffffu; }

class match_table {
 public:
  // `nranks`: the ranks whose entries are counted (rank_entries).
  explicit match_table(size_t nbuckets, int nranks = 0)
      : mask_(round_buckets(nbuckets) - 1),
        buckets_(new bucket[mask_ + 1]),
        nranks_(nranks > 0 ? static_cast<uint32_t>(nranks) : 0),
        rank_entries_(new std::atomic<uint32_t>[nranks_ ? nranks_ : 1]()) {}
  match_table(const match_table&) = delete;
  match_table& operator=(const match_table&) = delete;

  // If the table holds an entry with node->key, node->tag_hi and the
  // opposite kind, unlinks the oldest such entry and returns it; otherwise
  // appends node (key, tag_hi and kind set by the caller) and returns
  // nullptr. Inlined at every call: a
  // caller that knows tag_hi (0 for the C API's receives and messages)
  // then pays neither its hashing nor a call.
  [[gnu::always_inline]] match_node* insert_or_match(match_node* node) noexcept {
    const uint64_t key = node->key;
    const uint16_t tag_hi = node->tag_hi;
    bucket& b = buckets_[mix(key, tag_hi) & mask_];
    b.lock.lock();
    match_node* prev = nullptr;
    for (match_node* cur = b.head; cur != nullptr; prev = cur, cur = cur->next) {
      if (cur->key != key || cur->tag_hi != tag_hi) continue;
      // The first entry with this key is the oldest, and all entries with
      // this key share its kind: it decides.
      if (cur->kind == node->kind) break;
      if (prev != nullptr)
        prev->next = cur->next;
      else
        b.head = cur->next;
      if (b.tail == cur) b.tail = prev;
      b.count.store(b.count.load(std::memory_order_relaxed) - 1,
                    std::memory_order_relaxed);
      count_rank(key, -1);
      b.lock.unlock();
      cur->next = nullptr;  // ours alone now: unreachable from the table
      return cur;
    }
    node->next = nullptr;
    if (b.tail != nullptr)
      b.tail->next = node;
    else
      b.head = node;
    b.tail = node;
    b.count.store(b.count.load(std::memory_order_relaxed) + 1,
                  std::memory_order_relaxed);
    count_rank(key, 1);
    b.lock.unlock();
    return nullptr;
  }

  // If the oldest entry with `key` and tag_hi 0 has the opposite kind of
  // `kind` and take(entry) says yes, unlinks and returns it; otherwise
  // changes nothing and returns nullptr. For a message that is only
  // delivered this way when its receive is already waiting (and otherwise
  // enters the table later through insert_or_match, which then meets any
  // receive posted between).
  template <class Pred>
  match_node* take_if(uint64_t key, match_kind kind, Pred&& take) noexcept {
    bucket& b = buckets_[mix(key, 0) & mask_];
    if (b.count.load(std::memory_order_relaxed) == 0) return nullptr;  // a stale 0: as if later
    b.lock.lock();
    match_node* prev = nullptr;
    for (match_node* cur = b.head; cur != nullptr; prev = cur, cur = cur->next) {
      if (cur->key != key || cur->tag_hi != 0) continue;
      if (cur->kind == kind || !take(cur)) break;
      if (prev != nullptr)
        prev->next = cur->next;
      else
        b.head = cur->next;
      if (b.tail == cur) b.tail = prev;
      b.count.store(b.count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      count_rank(key, -1);
      b.lock.unlock();
      cur->next = nullptr;
      return cur;
    }
    b.lock.unlock();
    return nullptr;
  }

  // Unlinks every entry for which pred(entry) is true and appends it to
  // *out, bucket by bucket under each bucket's lock (O(nbuckets); for the
  // rare sweeps of a failed peer, never on the data path).
  template <class Pred, class Out>
  void remove_if(Pred&& pred, Out* out) {
    for (size_t i = 0; i <= mask_; ++i) {
      bucket& b = buckets_[i];
      if (b.count.load(std::memory_order_relaxed) == 0) continue;
      b.lock.lock();
      match_node* prev = nullptr;
      for (match_node* cur = b.head; cur != nullptr;) {
        match_node* next = cur->next;
        if (!pred(cur)) {
          prev = cur;
          cur = next;
          continue;
        }
        if (prev != nullptr)
          prev->next = next;
        else
          b.head = next;
        if (b.tail == cur) b.tail = prev;
        b.count.store(b.count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
        count_rank(cur->key, -1);
        cur->next = nullptr;
        out->push_back(cur);
        cur = next;
      }
      b.lock.unlock();
    }
  }

  // Diagnostics (the state dump): calls f(entry) for every entry, bucket by
  // bucket under each bucket's lock, tried with a bound (try_lock_bounded)
  // and never waited for. Returns the number of buckets skipped because
  // their lock stayed held. f must not call into the table.
  template <class F>
  size_t for_each(F&& f) {
    size_t busy = 0;
    for (size_t i = 0; i <= mask_; ++i) {
      bucket& b = buckets_[i];
      if (b.count.load(std::memory_order_relaxed) == 0) continue;
      if (!try_lock_bounded(b.lock)) {
        ++busy;
        continue;
      }
      for (const match_node* cur = b.head; cur != nullptr; cur = cur->next) f(cur);
      b.lock.unlock();
    }
    return busy;
  }

  // Entries held; a sum of per-bucket snapshots (O(nbuckets); diagnostics).
  size_t size() const noexcept {
    size_t n = 0;
    for (size_t i = 0; i <= mask_; ++i)
      n += buckets_[i].count.load(std::memory_order_relaxed);
    return n;
  }

  size_t bucket_count() const noexcept { return mask_ + 1; }

  // Entries whose key names `rank` (0 for a rank not counted). Exact only
  // for a caller that excludes the inserts of that rank's keys, as the
  // exact-rank receive lists do with their lock; otherwise a snapshot.
  uint32_t rank_entries(int rank) const noexcept {
    return static_cast<uint32_t>(rank) < nranks_
               ? rank_entries_[static_cast<uint32_t>(rank)].load(std::memory_order_relaxed)
               : 0;
  }

 private:
  struct alignas(64) bucket {
    spin_lock lock;
    // Written under the lock; atomic only so that size() may read it.
    std::atomic<uint32_t> count{0};
    match_node* head = nullptr;
    match_node* tail = nullptr;
  };

  static size_t round_buckets(size_t n) noexcept {
    size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }

  // One multiply by an odd constant, whose high half is folded onto the
  // low half: every key bit reaches the high half of the product, so every
  // key bit affects the low bits used to pick a bucket, and keys differing
  // only in rank or in endpoint spread as well as keys differing in tag
  // (three instructions on every post and every arrival). tag_hi goes in
  // first at bits 28..43, from the key's unused bits 28..31 up into the
  // rank's (a shift and an xor; none where tag_hi is known to be 0), so
  // tags differing only in their upper half spread too.
  static uint64_t mix(uint64_t key, uint16_t tag_hi) noexcept {
    uint64_t x = key ^ (static_cast<uint64_t>(tag_hi) << 28);
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 32);
  }

  void count_rank(uint64_t key, int delta) noexcept {
    const uint32_t r = static_cast<uint32_t>(match_key_rank(key));
    if (r < nranks_)
      rank_entries_[r].fetch_add(static_cast<uint32_t>(delta), std::memory_order_relaxed);
  }

  const size_t mask_;
  const std::unique_ptr<bucket[]> buckets_;
  const uint32_t nranks_;
  const std::unique_ptr<std::atomic<uint32_t>[]> rank_entries_;
};

}  // namespace lci

// comp_queue: the completion queue, a bounded multi-producer multi-consumer
// FIFO of LCI_request_t.
//
// Layout: a ring of 2^n cells, each {sequence number, request}, one cell per
// cache line; an enqueue index (tail_) and a dequeue index (head_), each on its
// own cache line; both indices only grow (64-bit, they never wrap in practice).
//
// Invariants, for the cell at ring index i and a position pos with
// pos % capacity == i:
//   cell.seq == pos          the cell is free for the producer of `pos`;
//   cell.seq == pos + 1      the request of `pos` is written, ready for the
//                            consumer of `pos`;
//   cell.seq == pos + cap    consumed; free for the producer of pos + cap.
// A producer claims position `pos` by advancing tail_ from pos to pos + 1
// (CAS) only when the cell shows seq == pos; it then writes the request and
// publishes it with a release store of seq = pos + 1. A consumer claims `pos`
// by advancing head_ only when the cell shows seq == pos + 1 (acquire: it sees
// the request), copies it out, and releases the cell with seq = pos + cap.
// So each request is written by exactly one producer and read by exactly one
// consumer, and positions are consumed in the order they were claimed.
//
// Threads: any number of producers (push, usually inside LCI_progress) and
// consumers (pop, wait) at once. push never blocks; it fails when the cell it
// needs is still held, i.e. the queue is full (or the consumer of that cell
// has claimed but not yet copied it out). len() is a snapshot.
//
// Waiting: wait() and wait_multiple() block under the waiting policy
// (lci/wait/parking.hpp). A push publishes its cell with a seq_cst store (an
// xchg instead of a mov on x86) and then checks the parking lot with one
// seq_cst load, waking one parked consumer if there is any: the Dekker pair
// described in parking.hpp. One wake per push suffices: a woken consumer
// re-checks, and a request it does not take is left for a later wake.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "lci.h"
#include "lci/comp/comp.hpp"
#include "lci/util/spin.hpp"
#include "lci/wait/parking.hpp"

namespace lci {

class comp_queue : public comp_base {
 public:
  explicit comp_queue(size_t capacity)
      : comp_base(LCI_COMPLETION_QUEUE),
        mask_(round_capacity(capacity) - 1),
        cells_(new cell[mask_ + 1]) {
    for (size_t i = 0; i <= mask_; ++i)
      cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  ~comp_queue() = default;  // comp_base clears the magic
  comp_queue(const comp_queue&) = delete;
  comp_queue& operator=(const comp_queue&) = delete;

  // The largest capacity whose power-of-two rounding fits a size_t (2^63;
  // any length near it fails allocation anyway). Larger asks throw
  // std::length_error, which the C API's boundary turns into LCI_ERR_FATAL
  // and a message.
  static constexpr size_t max_capacity = size_t{1} << 63;

  // Number of requests the queue can hold (the requested capacity rounded up
  // to a power of two, at least 2).
  size_t capacity() const noexcept { return mask_ + 1; }

  // Appends r; false (and no effect) when the queue is full.
  bool push(const LCI_request_t& r) noexcept {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      // acquire: if the cell is free, its previous consumer's read of the
      // request happens before our write.
      const size_t seq = c.seq.load(std::memory_order_acquire);
      const intptr_t diff = static_cast<intptr_t>(seq - pos);
      if (diff == 0) {
        // relaxed: the cell's seq, not tail_, carries the data dependency.
        if (tail_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          c.req = r;
          // release (as part of seq_cst): publishes the request to its
          // consumer; seq_cst: orders it before the parking-lot check.
          c.seq.store(pos + 1, std::memory_order_seq_cst);
          // The consumer may free the queue now; unpark_one only uses the
          // address as a key.
          unpark_one(this);
          return true;
        }
        // pos was reloaded by the failed CAS.
      } else if (diff < 0) {
        return false;  // the cell still holds the request of pos - capacity
      } else {
        pos = tail_.load(std::memory_order_relaxed);  // another producer won
      }
    }
  }

  // Removes the oldest request into *out; false (nothing written) if empty.
  bool pop(LCI_request_t* out) noexcept {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      // acquire: pairs with the producer's release; the request is visible.
      const size_t seq = c.seq.load(std::memory_order_acquire);
      const intptr_t diff = static_cast<intptr_t>(seq - (pos + 1));
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1,
                                        std::memory_order_relaxed)) {
          *out = c.req;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // not yet written: empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Removes up to max of the oldest requests into out[0..]; returns how many
  // (possibly 0). Claims the whole run of ready cells with one CAS.
  size_t pop_multiple(size_t max, LCI_request_t* out) noexcept {
    if (max == 0) return 0;
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      // Count the ready cells starting at pos. A ready cell cannot change
      // until its position is claimed, so the count stays valid if the CAS
      // below succeeds.
      size_t n = 0;
      while (n < max && n <= mask_ &&
             cells_[(pos + n) & mask_].seq.load(std::memory_order_acquire) ==
                 pos + n + 1)
        ++n;
      if (n == 0) {
        const size_t seq = cells_[pos & mask_].seq.load(std::memory_order_acquire);
        const intptr_t diff = static_cast<intptr_t>(seq - (pos + 1));
        if (diff < 0) return 0;                                  // empty
        if (diff > 0) pos = head_.load(std::memory_order_relaxed);  // stale
        continue;  // (diff == 0: written just now; count again)
      }
      if (head_.compare_exchange_weak(pos, pos + n, std::memory_order_relaxed)) {
        for (size_t i = 0; i < n; ++i) {
          cell& c = cells_[(pos + i) & mask_];
          out[i] = c.req;
          c.seq.store(pos + i + mask_ + 1, std::memory_order_release);
        }
        return n;
      }
    }
  }

  // Snapshot of the number of requests held (or being pushed/popped).
  size_t len() const noexcept {
    // head first: tail_ only grows and never falls behind head_, so the
    // difference cannot underflow.
    const size_t h = head_.load(std::memory_order_acquire);
    const size_t t = tail_.load(std::memory_order_acquire);
    const size_t n = t - h;
    return n > capacity() ? capacity() : n;
  }

  // Blocks until one request is popped into *out.
  void wait(LCI_request_t* out) noexcept {
    block_until(this, [&] { return pop(out); }, &has_ready_cell, this);
  }

  // Blocks until exactly n requests were popped into out[0..n-1].
  void wait_multiple(size_t n, LCI_request_t* out) noexcept {
    size_t got = 0;
    block_until(
        this,
        [&] {
          got += pop_multiple(n - got, out + got);
          return got == n;
        },
        &has_ready_cell, this);
  }

 private:
  // One cell per cache line (8 + 56 bytes for the LCI 1.7 request), so that a
  // producer and a consumer working on neighbouring cells do not collide.
  struct alignas(64) cell {
    std::atomic<size_t> seq;
    LCI_request_t req;
  };

  // The parking lot's non-consuming re-check: the head cell is written, or
  // head_ moved on meanwhile (true errs on the side of re-checking).
  static bool has_ready_cell(const void* self) noexcept {
    auto* q = static_cast<const comp_queue*>(self);
    const size_t pos = q->head_.load(std::memory_order_acquire);
    const size_t seq = q->cells_[pos & q->mask_].seq.load(std::memory_order_acquire);
    return static_cast<intptr_t>(seq - (pos + 1)) >= 0;
  }

  static size_t round_capacity(size_t n) {
    if (n > max_capacity)
      throw std::length_error("queue length " + std::to_string(n) +
                              " exceeds the largest queue (" + std::to_string(max_capacity) +
                              " requests)");
    size_t c = 2;  // a 1-cell ring cannot tell "full" from "free"
    while (c < n) c <<= 1;
    return c;
  }

  // Read-only after construction; shares the line with comp_base.
  const size_t mask_;
  const std::unique_ptr<cell[]> cells_;
  // Written by producers only.
  alignas(64) std::atomic<size_t> tail_{0};
  // Written by consumers only.
  alignas(64) std::atomic<size_t> head_{0};
};

}  // namespace lci

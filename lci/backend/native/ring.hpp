// A bounded multi-producer, single-consumer ring of fixed-size cells, laid
// out in memory the caller provides (a shared segment or private memory).
//
// Every cell starts with a 64-bit sequence word. For the producer that
// reserved position p (cell p mod n), the cell is free when seq == p; the
// producer fills it and publishes it with seq = p + 1 (release). The
// consumer, at position head, finds the cell full when seq == head + 1
// (acquire), reads it and frees it for the next lap with seq = head + n.
// Producers reserve with one compare-and-swap on the shared tail, so many
// threads (and processes) post to one ring without a lock, and a full ring
// is seen without waiting (the caller reports "retry"). The consumer's
// empty check is one load of the next cell's sequence word: no atomic
// read-modify-write, and no line written by producers except that cell.
//
// Positions are 64-bit and never wrap in practice.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lci::native {

struct cell_head {
  std::atomic<uint64_t> seq;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "rings need lock-free 64-bit atomics");

class ring {
 public:
  ring() = default;
  // `tail`: the producers' counter (on its own cache line); `cells`: n
  // cells of cell_size bytes each, n a power of two.
  ring(std::atomic<uint64_t>* tail, char* cells, size_t cell_size, uint64_t n)
      : tail_(tail), cells_(cells), cell_size_(cell_size), mask_(n - 1) {}

  // Sets every cell free for the first lap (the owner, before anyone posts).
  void format() {
    for (uint64_t i = 0; i <= mask_; ++i) at(i)->seq.store(i, std::memory_order_relaxed);
    tail_->store(0, std::memory_order_release);
  }

  uint64_t size() const { return mask_ + 1; }
  size_t cell_size() const { return cell_size_; }

  // A reserved cell; `cell` is nullptr when the ring was full.
  struct slot {
    cell_head* cell;
    uint64_t pos;
  };

  // Producer: claims the next free cell, or returns {nullptr} if the ring is full.
  slot reserve() {
    uint64_t pos = tail_->load(std::memory_order_relaxed);
    for (;;) {
      cell_head* c = at(pos);
      const uint64_t seq = c->seq.load(std::memory_order_acquire);
      const int64_t d = static_cast<int64_t>(seq - pos);
      if (d == 0) {
        if (tail_->compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed,
                                         std::memory_order_relaxed))
          return {c, pos};
      } else if (d < 0) {
        return {nullptr, 0};  // the consumer has not freed this cell yet: full
      } else {
        pos = tail_->load(std::memory_order_relaxed);
      }
    }
  }
  // Producer: makes a filled cell visible to the consumer.
  static void publish(const slot& s) { s.cell->seq.store(s.pos + 1, std::memory_order_release); }

  // Consumer: the cell at `head` if it was published, else nullptr.
  cell_head* peek(uint64_t head) const {
    cell_head* c = at(head);
    return c->seq.load(std::memory_order_acquire) == head + 1 ? c : nullptr;
  }
  // Consumer: frees the cell at `head` for the producers' next lap.
  void release(uint64_t head) const {
    at(head)->seq.store(head + mask_ + 1, std::memory_order_release);
  }

  // Cells reserved or published and not yet freed by the consumer, read
  // from the sequence words of the last lap (diagnostics: O(size), a
  // snapshot that may be stale while others post, never unsafe).
  uint64_t occupied() const {
    const uint64_t tail = tail_->load(std::memory_order_acquire);
    const uint64_t n = mask_ + 1;
    uint64_t used = 0;
    for (uint64_t pos = tail > n ? tail - n : 0; pos < tail; ++pos) {
      const uint64_t seq = at(pos)->seq.load(std::memory_order_relaxed);
      used += seq == pos || seq == pos + 1;
    }
    return used;
  }

  cell_head* at(uint64_t pos) const {
    return reinterpret_cast<cell_head*>(cells_ + (pos & mask_) * cell_size_);
  }

 private:
  std::atomic<uint64_t>* tail_ = nullptr;
  char* cells_ = nullptr;
  size_t cell_size_ = 0;
  uint64_t mask_ = 0;
};

}  // namespace lci::native

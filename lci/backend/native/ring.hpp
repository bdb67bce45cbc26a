// A bounded multi-producer, single-consumer ring of fixed-size cells, laid
// out in memory the caller provides (a shared segment or private memory).
//
// Every cell starts with a 64-bit sequence word that holds a position, a
// state and, while a producer holds the cell, that producer's id:
//
//   free(p)          the cell waits for the producer of position p;
//   claimed(p, id)   producer `id` reserved it for p and is filling it;
//   published(p)     its contents are ready for the consumer.
//
// A producer claims the cell of position p with one compare-and-swap on
// its sequence word (free(p) -> claimed(p, id)), fills it and publishes it
// (a release store). The consumer, at position head, finds the cell full
// when it reads published(head) (acquire), reads it and frees it for the
// next lap, free(head + n). The shared tail is only a hint of the next
// free position, stored (not read-modify-written) by each producer after
// its claim: a producer that starts from a stale hint steps over the cells
// taken since. Many threads (and processes) post to one ring without a
// lock, a full ring is seen without waiting (the caller reports "retry"),
// and the consumer's empty check is one load of the next cell's word.
//
// Because the claim names its producer, a cell held by a producer that
// died before publishing it (a process killed between the two) is not
// lost: the consumer, once it knows that process is gone, frees it
// (holder(), release()) and goes on. (Were the reservation anonymous,
// such a cell would block every producer for ever: nobody could tell a
// dead producer's cell from a slow one's.)
//
// The claimed positions always form a prefix (a producer claims p only
// after seeing every position before it taken), so the consumer meets
// them in order. Positions are counted modulo 2^38 in the sequence words:
// every comparison is a difference of positions, which stays small (less
// than the ring's size), so they wrap without harm.
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
  // Producer ids: 1 .. max_id; 0 is an anonymous producer, whose cells
  // cannot be given back if it dies.
  static constexpr unsigned id_bits = 24;
  static constexpr uint32_t max_id = (uint32_t{1} << id_bits) - 1;

  ring() = default;
  // `tail`: the producers' hint (on its own cache line); `cells`: n cells
  // of cell_size bytes each, n a power of two below 2^36; `id`: this
  // process's producer id in this ring (0..max_id).
  ring(std::atomic<uint64_t>* tail, char* cells, size_t cell_size, uint64_t n, uint32_t id = 0)
      : tail_(tail), cells_(cells), cell_size_(cell_size), mask_(n - 1), id_(id & max_id) {}

  // Sets every cell free for the first lap (the owner, before anyone
  // posts); the first position is `first` (0 but in tests of wrap-around).
  void format(uint64_t first = 0) {
    for (uint64_t p = first; p != first + mask_ + 1; ++p)
      at(p)->seq.store(word(p, st_free), std::memory_order_relaxed);
    tail_->store(first, std::memory_order_release);
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
      uint64_t seq = c->seq.load(std::memory_order_acquire);
      const int64_t d = ahead(seq, pos);
      if (d == 0 && state(seq) == st_free) {
        if (c->seq.compare_exchange_weak(seq, word(pos, st_claimed, id_),
                                         std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
          tail_->store(pos + 1, std::memory_order_relaxed);
          return {c, pos};
        }
        // Another producer claimed it (or a spurious failure): look again.
      } else if (d < 0) {
        return {nullptr, 0};  // the consumer has not freed this cell yet: full
      } else {
        // Taken in this lap, or already free for a later one: pos is
        // behind. Jump to the hint if it is ahead, else step.
        const uint64_t t = tail_->load(std::memory_order_relaxed);
        pos = static_cast<int64_t>(t - pos) > 0 ? t : pos + 1;
      }
    }
  }
  // Producer: makes a filled cell visible to the consumer.
  static void publish(const slot& s) {
    s.cell->seq.store(word(s.pos, st_published), std::memory_order_release);
  }
  // The same, sequentially consistent: a load that follows it (a napping
  // consumer's doorbell, native.hpp) is not ordered before it.
  static void publish_seq_cst(const slot& s) {
    s.cell->seq.store(word(s.pos, st_published), std::memory_order_seq_cst);
  }

  // Consumer: the cell at `head` if it was published, else nullptr.
  cell_head* peek(uint64_t head) const {
    cell_head* c = at(head);
    return c->seq.load(std::memory_order_acquire) == word(head, st_published) ? c : nullptr;
  }
  // Consumer: frees the cell at `head` for the producers' next lap.
  void release(uint64_t head) const {
    at(head)->seq.store(word(head + mask_ + 1, st_free), std::memory_order_release);
  }
  // Consumer: the id of the producer that claimed the cell at `head` and
  // has not published it yet; 0 if none (or an anonymous one). Only when
  // that producer can no longer write (its process is gone) may the
  // consumer release() the cell unread. The id is what the cell says: a
  // caller that trusts no producer checks it names one it knows.
  uint32_t holder(uint64_t head) const {
    const uint64_t seq = at(head)->seq.load(std::memory_order_acquire);
    return ahead(seq, head) == 0 && state(seq) == st_claimed ? static_cast<uint32_t>(seq & max_id)
                                                            : 0;
  }

  // Cells claimed or published and not yet freed by the consumer, read
  // from the sequence words of the last lap (diagnostics: O(size), a
  // snapshot that may be stale while others post, never unsafe).
  uint64_t occupied() const {
    const uint64_t tail = tail_->load(std::memory_order_acquire);
    uint64_t used = 0;
    for (uint64_t pos = tail - mask_ - 1; pos != tail; ++pos) {
      const uint64_t seq = at(pos)->seq.load(std::memory_order_relaxed);
      used += ahead(seq, pos) == 0 && state(seq) != st_free;
    }
    return used;
  }

  cell_head* at(uint64_t pos) const {
    return reinterpret_cast<cell_head*>(cells_ + (pos & mask_) * cell_size_);
  }

 private:
  // The sequence word: position (high 38 bits), state (2), producer id (24).
  static constexpr unsigned state_shift = id_bits;
  static constexpr unsigned pos_shift = id_bits + 2;
  static constexpr uint64_t low_mask = (uint64_t{1} << pos_shift) - 1;
  static constexpr uint64_t st_free = 0, st_claimed = 1, st_published = 2;

  static uint64_t word(uint64_t pos, uint64_t st, uint32_t id = 0) {
    return pos << pos_shift | st << state_shift | id;
  }
  static uint64_t state(uint64_t seq) { return (seq >> state_shift) & 3; }
  // How far the word's position is ahead of pos (modulo 2^38, signed).
  static int64_t ahead(uint64_t seq, uint64_t pos) {
    return static_cast<int64_t>((seq & ~low_mask) - (pos << pos_shift)) >> pos_shift;
  }

  std::atomic<uint64_t>* tail_ = nullptr;
  char* cells_ = nullptr;
  size_t cell_size_ = 0;
  uint64_t mask_ = 0;
  uint32_t id_ = 0;
};

}  // namespace lci::native

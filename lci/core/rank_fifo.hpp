// Exact-rank receives without the matching table: per source rank, a short
// list of the receives posted for that rank (short and medium receives into
// the program's buffer on a rank-matching endpoint, with a 16-bit tag:
// LCI_recvs, LCI_recvm, the LCI 2 interface's post_recv up to the eager
// size), in posting order, each with what completes it. A message from that rank looks here first; no
// hashing, no bucket lock, no receive descriptor on this path.
//
// The list of rank r is used only while the matching table holds no entry
// that names r (match_table::rank_entries(r) == 0). Under the list's lock:
//   - a receive goes to the list if that count is 0 and the list has room;
//     otherwise it goes to the table, still under the lock (so the count
//     is raised before any later receive decides);
//   - a message takes the oldest list entry with its key; if there is none
//     it goes to the table, still under the lock.
// So every list entry is older than every table receive with the same key
// (a receive joins the list only while the table holds none from r), and a
// message never waits in the table while a list entry would take it (a
// receive joins the list only while the table holds no message from r).
// Taking the list first and then the table is therefore the table's own
// order: the oldest receive with the message's key.
//
// Lock order: a list's lock, then the table's bucket locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "lci.h"
#include "lci/util/spin.hpp"

namespace lci {

struct endpoint;

// A receive in a list: what its descriptor (recv_ctx) would hold.
struct fifo_recv {
  uint64_t key;
  void* buffer;
  size_t capacity;
  LCI_comp_t comp;          // nullptr: signal nothing
  void* user_context;
  endpoint* ep;
  LCI_segment_t segment;
  LCI_data_type_t type;     // LCI_IMMEDIATE or LCI_MEDIUM
};

class alignas(64) rank_fifo {
 public:
  static constexpr uint32_t depth = 4;

  spin_lock lock;

  // Under the lock.
  bool empty() const noexcept { return count_ == 0; }
  bool full() const noexcept { return count_ == depth; }
  uint32_t size() const noexcept { return count_; }
  void push(const fifo_recv& r) noexcept {
    e_[(head_ + count_) % depth] = r;
    ++count_;
  }
  // The oldest entry with `key` (nullptr: none); take() removes it.
  fifo_recv* find(uint64_t key) noexcept {
    for (uint32_t i = 0; i < count_; ++i) {
      fifo_recv& r = e_[(head_ + i) % depth];
      if (r.key == key) return &r;
    }
    return nullptr;
  }
  fifo_recv take(fifo_recv* r) noexcept {
    const fifo_recv out = *r;
    const uint32_t k = (static_cast<uint32_t>(r - e_) + depth - head_) % depth;  // its place
    if (k == 0) {
      head_ = (head_ + 1) % depth;
    } else {
      // The younger entries move up one place (rare: a message usually
      // takes the oldest).
      for (uint32_t j = k + 1; j < count_; ++j) e_[(head_ + j - 1) % depth] = e_[(head_ + j) % depth];
    }
    --count_;
    return out;
  }
  fifo_recv take_oldest() noexcept { return take(&e_[head_]); }
  const fifo_recv& at(uint32_t i) const noexcept { return e_[(head_ + i) % depth]; }

 private:
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  fifo_recv e_[depth];
};

}  // namespace lci

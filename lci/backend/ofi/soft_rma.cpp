// RDMA carried by authenticated messages (see soft_rma.hpp): the tables.
// The libfabric device's side of the protocol is in soft_rma_device.cpp.
#include "lci/backend/ofi/soft_rma.hpp"

#include <algorithm>

#include "lci/util/random.hpp"

namespace lci::ofi {

// ---- reg_table -------------------------------------------------------------------

uint64_t reg_table::insert(uintptr_t base, size_t length) {
  for (;;) {
    const uint64_t key = random_bits();
    if (key == 0) continue;
    bucket& b = b_[bucket_of(key)];
    b.lock.lock();
    const bool taken = std::any_of(b.entries.begin(), b.entries.end(),
                                   [&](const entry& e) { return e.key == key; });
    if (!taken) b.entries.push_back({key, base, length});
    b.lock.unlock();
    if (!taken) return key;
  }
}

void reg_table::erase(uint64_t key) {
  bucket& b = b_[bucket_of(key)];
  b.lock.lock();
  for (size_t i = 0; i < b.entries.size(); ++i) {
    if (b.entries[i].key != key) continue;
    b.entries[i] = b.entries.back();
    b.entries.pop_back();
    break;
  }
  b.lock.unlock();
}

size_t reg_table::size() const {
  size_t n = 0;
  for (const bucket& b : b_) {
    b.lock.lock();
    n += b.entries.size();
    b.lock.unlock();
  }
  return n;
}

// ---- rma_ops ---------------------------------------------------------------------

namespace {
constexpr int gen_shift = 42;
constexpr uint64_t gen_mask = (uint64_t{1} << 22) - 1;
constexpr uint64_t finished_bit = uint64_t{1} << 41;  // not in flight (or a free slot)
constexpr uint64_t failed_bit = uint64_t{1} << 40;
constexpr uint64_t bytes_mask = (uint64_t{1} << 40) - 1;
}  // namespace

rma_ops::rma_ops() {
  // Generations start at random values (never 0: id 0 means "none").
  uint64_t x = random_bits();
  for (slot& s : s_) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t gen = (x >> 40 & gen_mask) | 1;
    s.progress.store(gen << gen_shift | finished_bit, std::memory_order_relaxed);
  }
}

uint64_t rma_ops::take(kind k, int rank, char* buffer, uint64_t length, void* ctx) {
  for (uint32_t w = 0; w < slots / 64; ++w) {
    uint64_t bits = used_[w].load(std::memory_order_relaxed);
    while (bits != ~uint64_t{0}) {
      const int b = __builtin_ctzll(~bits);
      if (!used_[w].compare_exchange_weak(bits, bits | (uint64_t{1} << b),
                                          std::memory_order_acquire, std::memory_order_relaxed))
        continue;
      const uint32_t index = w * 64 + static_cast<uint32_t>(b);
      slot& s = s_[index];
      // Nobody reads the fields while the state says finished (a holder
      // that entered since only looks at the state and leaves).
      s.k = k;
      s.rank = rank;
      s.buffer = buffer;
      s.length = length;
      s.ctx = ctx;
      s.sent.store(0, std::memory_order_relaxed);
      s.next.store(-1, std::memory_order_relaxed);
      const uint64_t gen = s.progress.load(std::memory_order_relaxed) >> gen_shift;
      // In flight from here: publishes the fields above to whoever holds it.
      s.progress.store(gen << gen_shift, std::memory_order_seq_cst);
      return gen << 32 | index;
    }
  }
  return 0;
}

rma_ops::slot* rma_ops::enter(uint64_t id, int rank, kind k, bool any_kind) {
  const uint64_t index = id & 0xffffffffu;
  if (index >= slots) return nullptr;
  slot& s = s_[index];
  // Held before the state is read (both sequentially consistent): a poller
  // that saw no holder after the operation finished is seen to have
  // finished it here, so the fields are not read.
  s.users.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t p = s.progress.load(std::memory_order_seq_cst);
  if ((p >> gen_shift) != (id >> 32) || (p & finished_bit) || (s.k != k && !any_kind) ||
      s.rank != rank) {
    leave(s);
    return nullptr;
  }
  return &s;
}

void rma_ops::finish_empty(uint64_t id) {
  slot& s = s_[id & 0xffffffffu];
  s.progress.fetch_or(finished_bit, std::memory_order_seq_cst);
  push_finished(static_cast<int>(id & 0xffffffffu));
}

void rma_ops::note_sent(uint64_t id, int rank, uint64_t length) {
  slot* s = enter(id, rank, kind::write);
  if (!s) return;
  s->sent.fetch_add(length, std::memory_order_acq_rel);
  leave(*s);
}

char* rma_ops::read_begin(uint64_t id, int rank, uint64_t offset, uint64_t length) {
  slot* s = enter(id, rank, kind::read);
  if (!s) return nullptr;
  if (length == 0 || offset > s->length || length > s->length - offset) {
    leave(*s);
    return nullptr;
  }
  return s->buffer + offset;
}

bool rma_ops::read_end(uint64_t id, uint64_t length) {
  slot& s = s_[id & 0xffffffffu];
  const bool ok = count_held(s, id, length, false);
  leave(s);
  return ok;
}

bool rma_ops::count(uint64_t id, int rank, kind k, uint64_t length, bool failed) {
  slot* s = enter(id, rank, k);
  if (!s) return false;
  const bool ok = count_held(*s, id, length, failed);
  leave(*s);
  return ok;
}

bool rma_ops::count_held(slot& s, uint64_t id, uint64_t length, bool failed) {
  if (length == 0) return false;  // no message counts nothing
  uint64_t p = s.progress.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    if ((p >> gen_shift) != (id >> 32) || (p & finished_bit)) return false;  // finished meanwhile
    const uint64_t done = p & bytes_mask;
    // Without wrap-around: done <= length always.
    if (length > s.length - done) return false;
    if (s.k == kind::write) {
      // Answers to pieces not sent yet: a target cannot have received them.
      const uint64_t sent = s.sent.load(std::memory_order_acquire);
      if (sent < done || length > sent - done) return false;
    }
    next = p + length;
    if (failed) next |= failed_bit;
    if ((next & bytes_mask) == s.length) next |= finished_bit;
  } while (!s.progress.compare_exchange_weak(p, next, std::memory_order_seq_cst,
                                             std::memory_order_relaxed));
  if (next & finished_bit) push_finished(static_cast<int>(&s - s_));
  return true;
}

int rma_ops::fail_rank(int rank) {
  int n = 0;
  for (uint32_t index = 0; index < slots; ++index) {
    if ((used_[index / 64].load(std::memory_order_acquire) >> (index % 64) & 1) == 0) continue;
    slot& s = s_[index];
    const uint64_t gen = s.progress.load(std::memory_order_acquire) >> gen_shift;
    if (!enter(gen << 32 | index, rank, kind::write, true)) continue;  // another's, or finished
    // All bytes counted at once (as refused): the transition to finished is
    // made by exactly one thread, this one or a racing count().
    uint64_t p = s.progress.load(std::memory_order_relaxed);
    while ((p >> gen_shift) == gen && !(p & finished_bit)) {
      const uint64_t all = gen << gen_shift | finished_bit | failed_bit | s.length;
      if (s.progress.compare_exchange_weak(p, all, std::memory_order_seq_cst,
                                           std::memory_order_relaxed)) {
        push_finished(static_cast<int>(index));
        ++n;
        break;
      }
    }
    leave(s);
  }
  return n;
}

bool rma_ops::failed(int slot) const {
  return (s_[slot].progress.load(std::memory_order_acquire) & failed_bit) != 0;
}

void rma_ops::push_finished(int index) {
  slot& s = s_[index];
  int head = finished_.load(std::memory_order_relaxed);
  do {
    s.next.store(head, std::memory_order_relaxed);
  } while (!finished_.compare_exchange_weak(head, index, std::memory_order_release,
                                            std::memory_order_relaxed));
}

int rma_ops::pop_finished() {
  int head = finished_.exchange(-1, std::memory_order_acquire);
  if (head >= 0) {
    // Oldest last: the stack (newest first) goes before what waits already.
    const size_t first = ready_.size();
    while (head >= 0) {
      ready_.push_back(head);
      head = s_[head].next.load(std::memory_order_relaxed);
    }
    std::rotate(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(first), ready_.end());
  }
  // The oldest first; one still held (a piece being copied into it, a
  // count on its way out) waits for a later call.
  for (size_t i = ready_.size(); i-- > 0;) {
    const int index = ready_[i];
    if (s_[index].users.load(std::memory_order_seq_cst) != 0) continue;
    ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
    return index;
  }
  return -1;
}

void rma_ops::release(int index) {
  slot& s = s_[index];
  // A new generation: messages naming the finished operation are refused.
  uint64_t gen = ((s.progress.load(std::memory_order_relaxed) >> gen_shift) + 1) & gen_mask;
  if (gen == 0) gen = 1;
  s.progress.store(gen << gen_shift | finished_bit, std::memory_order_release);
  used_[index / 64].fetch_and(~(uint64_t{1} << (index % 64)), std::memory_order_release);
}

int rma_ops::in_flight() const {
  int n = 0;
  for (const auto& w : used_) n += __builtin_popcountll(w.load(std::memory_order_relaxed));
  return n;
}

}  // namespace lci::ofi

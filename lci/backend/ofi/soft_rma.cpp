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
constexpr int gen_shift = 40;
constexpr uint64_t gen_mask = (uint64_t{1} << 24) - 1;
constexpr uint64_t bytes_mask = (uint64_t{1} << gen_shift) - 1;
}  // namespace

rma_ops::rma_ops() {
  // Generations start at random values (never 0: id 0 means "none").
  uint64_t x = random_bits();
  for (slot& s : s_) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t gen = (x >> 40 & gen_mask) | 1;
    s.progress.store(gen << gen_shift, std::memory_order_relaxed);
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
      s.k = k;
      s.rank = rank;
      s.buffer = buffer;
      s.length = length;
      s.ctx = ctx;
      s.failed.store(false, std::memory_order_relaxed);
      s.next.store(-1, std::memory_order_relaxed);
      const uint64_t gen = s.progress.load(std::memory_order_relaxed) >> gen_shift;
      // Publishes the fields above to whoever counts bytes of this id.
      s.progress.store(gen << gen_shift, std::memory_order_release);
      return gen << 32 | index;
    }
  }
  return 0;
}

rma_ops::slot* rma_ops::find(uint64_t id, int rank, kind k) {
  const uint64_t index = id & 0xffffffffu;
  if (index >= slots || (used_[index / 64].load(std::memory_order_acquire) >> (index % 64) & 1) == 0)
    return nullptr;
  slot& s = s_[index];
  if ((s.progress.load(std::memory_order_acquire) >> gen_shift) != (id >> 32)) return nullptr;
  if (s.k != k || s.rank != rank) return nullptr;
  return &s;
}

char* rma_ops::read_target(uint64_t id, int rank, uint64_t offset, uint64_t length) {
  slot* s = find(id, rank, kind::read);
  if (!s || offset > s->length || length > s->length - offset) return nullptr;
  return s->buffer + offset;
}

bool rma_ops::count(uint64_t id, int rank, kind k, uint64_t length, bool failed) {
  slot* s = find(id, rank, k);
  if (!s) return false;
  if (failed) s->failed.store(true, std::memory_order_relaxed);
  uint64_t p = s->progress.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    if ((p >> gen_shift) != (id >> 32)) return false;  // finished meanwhile
    if ((p & bytes_mask) + length > s->length) return false;
    next = p + length;
  } while (!s->progress.compare_exchange_weak(p, next, std::memory_order_acq_rel,
                                               std::memory_order_relaxed));
  if ((next & bytes_mask) == s->length) push_finished(static_cast<int>(s - s_));
  return true;
}

int rma_ops::fail_rank(int rank) {
  int n = 0;
  for (uint32_t index = 0; index < slots; ++index) {
    if ((used_[index / 64].load(std::memory_order_acquire) >> (index % 64) & 1) == 0) continue;
    slot& s = s_[index];
    uint64_t p = s.progress.load(std::memory_order_acquire);
    if (s.rank != rank) continue;
    // All bytes counted at once (as refused): the transition to complete is
    // made by exactly one thread, this one or a racing count().
    const uint64_t gen = p >> gen_shift;
    s.failed.store(true, std::memory_order_relaxed);
    while ((p >> gen_shift) == gen && (p & bytes_mask) < s.length) {
      if (s.progress.compare_exchange_weak(p, gen << gen_shift | s.length,
                                           std::memory_order_acq_rel, std::memory_order_relaxed)) {
        push_finished(static_cast<int>(index));
        ++n;
        break;
      }
    }
  }
  return n;
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
  if (ready_.empty()) {
    int head = finished_.exchange(-1, std::memory_order_acquire);
    while (head >= 0) {
      ready_.push_back(head);
      head = s_[head].next.load(std::memory_order_relaxed);
    }
    if (ready_.empty()) return -1;
  }
  const int index = ready_.back();
  ready_.pop_back();
  return index;
}

void rma_ops::release(int index) {
  slot& s = s_[index];
  // A new generation: messages naming the finished operation are refused.
  uint64_t gen = ((s.progress.load(std::memory_order_relaxed) >> gen_shift) + 1) & gen_mask;
  if (gen == 0) gen = 1;
  s.progress.store(gen << gen_shift, std::memory_order_release);
  used_[index / 64].fetch_and(~(uint64_t{1} << (index % 64)), std::memory_order_release);
}

int rma_ops::in_flight() const {
  int n = 0;
  for (const auto& w : used_) n += __builtin_popcountll(w.load(std::memory_order_relaxed));
  return n;
}

}  // namespace lci::ofi

// LCT_queue_*: bounded MPMC FIFOs of void*.
//
// Two implementations stand behind every LCT_queue_type_t (lct.h lists the
// mapping); the kind is fixed at allocation and push/pop branch on one
// flag, no virtual call.
//
// ring (lock-free): `capacity` slots, each with a sequence number. Slot
//   i % capacity is free for the producer of position i when seq == i and
//   full for the consumer of position i when seq == i + 1; after a pop the
//   consumer sets seq = i + capacity, handing it to the producer of the next
//   lap. Producers claim positions by CAS on `tail`, consumers on `head`;
//   each counter sits on its own cache line. A slot that the other side has
//   claimed but not yet released is waited for (briefly: the claimer is
//   between two stores), never reported as full or empty. The slot's seq store (release)
//   publishes the value to the acquire load of the other side.
// locked ring: the same circular buffer behind a std::mutex.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

// One step of waiting for another thread that is between two stores: a
// pause, and after a while a yield (it may have been descheduled).
inline void relax(int& spins) {
  if (++spins > 64) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct alignas(64) slot {
  std::atomic<uint64_t> seq;
  void* value;
};

struct lockfree_ring {
  explicit lockfree_ring(size_t n) : capacity(n), slots(new slot[n]) {
    for (size_t i = 0; i < n; ++i) {
      slots[i].seq.store(i, std::memory_order_relaxed);
      slots[i].value = nullptr;
    }
  }

  // False when full.
  bool push(void* v) {
    int spins = 0;
    uint64_t pos = tail.load(std::memory_order_relaxed);
    for (;;) {
      slot& s = slots[pos % capacity];
      const uint64_t seq = s.seq.load(std::memory_order_acquire);
      if (seq == pos) {
        if (tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          s.value = v;
          s.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (seq < pos) {
        // The element of the previous lap is still in this slot. Full only
        // when no consumer has claimed it; otherwise its consumer is
        // between claiming and releasing the slot: wait for it, or a
        // program that never holds more than `capacity` elements would see
        // "full".
        if (head.load(std::memory_order_acquire) + capacity <= pos) return false;
        relax(spins);
        pos = tail.load(std::memory_order_relaxed);
      } else {
        pos = tail.load(std::memory_order_relaxed);
      }
    }
  }

  // NULL when empty.
  void* pop() {
    int spins = 0;
    uint64_t pos = head.load(std::memory_order_relaxed);
    for (;;) {
      slot& s = slots[pos % capacity];
      const uint64_t seq = s.seq.load(std::memory_order_acquire);
      if (seq == pos + 1) {
        if (head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          void* v = s.value;
          s.seq.store(pos + capacity, std::memory_order_release);
          return v;
        }
      } else if (seq < pos + 1) {
        // Not filled for this lap. Empty only when no producer has claimed
        // the position; otherwise wait for its value, so that a pop never
        // reports empty while a push of a later position has completed.
        if (tail.load(std::memory_order_acquire) <= pos) return nullptr;
        relax(spins);
        pos = head.load(std::memory_order_relaxed);
      } else {
        pos = head.load(std::memory_order_relaxed);
      }
    }
  }

  const size_t capacity;
  std::unique_ptr<slot[]> slots;
  alignas(64) std::atomic<uint64_t> tail{0};
  alignas(64) std::atomic<uint64_t> head{0};
};

struct locked_ring {
  explicit locked_ring(size_t n) : capacity(n), values(new void*[n]) {}

  bool push(void* v) {
    std::lock_guard<std::mutex> guard(mutex);
    if (count == capacity) return false;
    values[(first + count) % capacity] = v;
    ++count;
    return true;
  }

  void* pop() {
    std::lock_guard<std::mutex> guard(mutex);
    if (count == 0) return nullptr;
    void* v = values[first];
    first = (first + 1) % capacity;
    --count;
    return v;
  }

  const size_t capacity;
  std::unique_ptr<void*[]> values;
  std::mutex mutex;
  size_t first = 0;
  size_t count = 0;
};

bool uses_mutex(LCT_queue_type_t type) {
  return type == LCT_QUEUE_ARRAY_MUTEX || type == LCT_QUEUE_STD || type == LCT_QUEUE_STD_MUTEX;
}

}  // namespace

struct LCT_queue_opaque_t {
  bool locked;
  size_t capacity;
  std::unique_ptr<lockfree_ring> lockfree;
  std::unique_ptr<locked_ring> mutexed;
};

LCT_queue_t LCT_queue_alloc(LCT_queue_type_t type, size_t length) noexcept try {
  if (length == 0) lct::detail::fatal("LCT_queue_alloc", "length must be at least 1");
  if (static_cast<int>(type) < LCT_QUEUE_ARRAY_ATOMIC_FAA ||
      static_cast<int>(type) > LCT_QUEUE_LAZY_INDEX)
    lct::detail::fatal("LCT_queue_alloc", "unknown queue type %d", static_cast<int>(type));
  auto* q = new LCT_queue_opaque_t;
  q->locked = uses_mutex(type);
  q->capacity = length;
  if (q->locked)
    q->mutexed = std::make_unique<locked_ring>(length);
  else
    q->lockfree = std::make_unique<lockfree_ring>(length);
  return q;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_queue_free(LCT_queue_t* queue_p) noexcept try {
  if (queue_p == nullptr) return;
  delete *queue_p;
  *queue_p = nullptr;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_queue_push(LCT_queue_t queue, void* val) noexcept try {
  const bool ok = queue->locked ? queue->mutexed->push(val) : queue->lockfree->push(val);
  if (LCT_unlikely(!ok))
    lct::detail::fatal("LCT_queue_push", "queue full (capacity %zu)", queue->capacity);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void* LCT_queue_pop(LCT_queue_t queue) noexcept try {
  return queue->locked ? queue->mutexed->pop() : queue->lockfree->pop();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

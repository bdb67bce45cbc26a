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
// overflow: 1.7.9's STD, STD_MUTEX, MS, LCRQ, LPRQ, FAAARRAY and LAZY_INDEX
//   queues are unbounded (they ignore `length`): a push that finds the ring
//   full goes to a deque behind a mutex, and pops take from it once the ring
//   is empty. The array types are bounded in 1.7.9 (a push past `length`
//   corrupts them): here such a push warns once and overflows the same way.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
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

bool unbounded(LCT_queue_type_t type) {
  return type == LCT_QUEUE_STD || type == LCT_QUEUE_STD_MUTEX || type == LCT_QUEUE_MS ||
         type == LCT_QUEUE_LCRQ || type == LCT_QUEUE_LPRQ || type == LCT_QUEUE_FAAARRAY ||
         type == LCT_QUEUE_LAZY_INDEX;
}

}  // namespace

struct LCT_queue_opaque_t {
  bool locked;
  bool unbounded;
  size_t capacity;
  std::unique_ptr<lockfree_ring> lockfree;
  std::unique_ptr<locked_ring> mutexed;
  // Cold: what did not fit in the ring (see "overflow" above).
  alignas(64) std::atomic<size_t> overflow_size{0};
  std::atomic<bool> warned{false};
  std::mutex overflow_mutex;
  std::deque<void*> overflow;
};

namespace {

[[gnu::noinline]] void push_overflow(LCT_queue_opaque_t* q, void* val) {
  if (!q->unbounded && !q->warned.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr, "LCT LCT_queue_push: queue full (length %zu); it grows past its length "
                         "(warned once)\n", q->capacity);
  std::lock_guard<std::mutex> guard(q->overflow_mutex);
  q->overflow.push_back(val);
  q->overflow_size.store(q->overflow.size(), std::memory_order_release);
}

[[gnu::noinline]] void* pop_overflow(LCT_queue_opaque_t* q) {
  std::lock_guard<std::mutex> guard(q->overflow_mutex);
  if (q->overflow.empty()) return nullptr;
  void* v = q->overflow.front();
  q->overflow.pop_front();
  q->overflow_size.store(q->overflow.size(), std::memory_order_release);
  return v;
}

}  // namespace

LCT_queue_t LCT_queue_alloc(LCT_queue_type_t type, size_t length) noexcept try {
  // 1.7.9's unbounded types ignore the length; a ring has at least one slot.
  if (length == 0) length = 1;
  if (static_cast<int>(type) < LCT_QUEUE_ARRAY_ATOMIC_FAA ||
      static_cast<int>(type) > LCT_QUEUE_LAZY_INDEX)
    lct::detail::fatal("LCT_queue_alloc", "unknown queue type %d", static_cast<int>(type));
  auto* q = new LCT_queue_opaque_t;
  q->locked = uses_mutex(type);
  q->unbounded = unbounded(type);
  q->capacity = length;
  if (q->locked)
    q->mutexed = std::make_unique<locked_ring>(length);
  else
    // Two slots at least: with one, a slot's "free for the next lap" and
    // "full" sequence numbers are equal.
    q->lockfree = std::make_unique<lockfree_ring>(length < 2 ? 2 : length);
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
  if (LCT_unlikely(queue->overflow_size.load(std::memory_order_acquire) > 0)) {
    push_overflow(queue, val);  // behind earlier overflow: FIFO
    return;
  }
  const bool ok = queue->locked ? queue->mutexed->push(val) : queue->lockfree->push(val);
  if (LCT_unlikely(!ok)) push_overflow(queue, val);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void* LCT_queue_pop(LCT_queue_t queue) noexcept try {
  void* v = queue->locked ? queue->mutexed->pop() : queue->lockfree->pop();
  if (LCT_unlikely(v == nullptr) && queue->overflow_size.load(std::memory_order_acquire) > 0)
    v = pop_overflow(queue);
  return v;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

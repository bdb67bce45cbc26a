// Spinning building blocks: cpu_relax(), an exponential backoff, a spin
// lock, and wait_until() (spin with backoff, then yield). They serve short
// waits (contended spin locks, a queue slot in transit) and the
// LCIX_WAIT_SPIN policy. Blocking waits on completion objects
// (LCI_queue_wait, LCI_sync_wait) go through the waiting policy in
// lci/wait/parking.hpp instead (futex, fibers, oneTBB).
//
// Constructing a backoff is free (one int), so the fast path of a caller
// that never waits pays nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace lci {

// One "I am spinning" hint to the core: lets the sibling hyper-thread run and
// avoids the memory-order mis-speculation penalty when the spin ends.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#elif defined(__powerpc64__)
  asm volatile("or 27,27,27" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Exponential backoff: pause 1, 2, 4, ... max_spins times, then yield.
class backoff {
 public:
  // Number of pause instructions of the longest spinning round (~ a few
  // hundred nanoseconds on current x86); after that, rounds yield.
  static constexpr int max_spins = 64;

  void pause() noexcept {
    if (spins_ <= max_spins) {
      for (int i = 0; i < spins_; ++i) cpu_relax();
      spins_ *= 2;
    } else {
      std::this_thread::yield();
    }
  }
  // True once the backoff has given up spinning and yields.
  bool yielding() const noexcept { return spins_ > max_spins; }
  void reset() noexcept { spins_ = 1; }

 private:
  int spins_ = 1;
};

// Blocks the calling thread until done() returns true. done() is evaluated
// once before any pause, so a wait on a condition that already holds costs
// one call.
template <typename Pred>
inline void wait_until(Pred&& done) {
  if (done()) return;
  backoff b;
  do {
    b.pause();
  } while (!done());
}

// A one-byte test-and-test-and-set lock for short critical sections (a match
// table bucket, a packet pool's shared stack). try_lock() never waits; lock()
// spins on a plain load (no cache-line ping-pong while the lock is held) with
// backoff. Not recursive, not fair.
class spin_lock {
 public:
  constexpr spin_lock() noexcept = default;
  spin_lock(const spin_lock&) = delete;
  spin_lock& operator=(const spin_lock&) = delete;

  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    backoff b;
    do {
      while (locked_.load(std::memory_order_relaxed)) b.pause();
    } while (locked_.exchange(true, std::memory_order_acquire));
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// For diagnostics that read shared state while other threads run (the
// state dump, lci/core/state_dump.hpp): takes `l` with try_lock, backing off
// between attempts, and gives up after `attempts` (false) instead of
// waiting for a holder that may never let go. Never on the data path.
template <typename Lock>
inline bool try_lock_bounded(Lock& l, int attempts = 2000) {
  backoff b;
  for (int i = 0; i < attempts; ++i) {
    if (l.try_lock()) return true;
    b.pause();
  }
  return false;
}

}  // namespace lci

// fiber_pool: user-level threads (fibers) on Boost.Context, scheduled by a
// few OS worker threads, so that thousands of waits on LCI completion objects
// cost a parked fiber each instead of a blocked OS thread.
//
// Layout: a pool owns its workers and one ready queue (a deque under a mutex;
// idle workers sleep on a condition variable, never spin). A fiber is a heap
// object {its saved context, the worker context it will return to, fn, arg}
// with a fixed-size stack (64 KiB by default).
//
// Switching: a worker pops a fiber and resumes it; the fiber runs until it
// returns or suspends. fiber_suspend(after, arg) saves the fiber's context,
// switches to the worker, and the worker then calls after(arg): that is where
// the fiber may be published for waking (a parking-lot node, the ready queue
// for a yield), because only then can another worker resume it safely. A
// suspended fiber runs again once someone calls fiber_make_ready() for it,
// exactly once per suspension, on whichever worker pops it.
//
// Lifetimes: fibers are freed by the worker that sees them return; the pool
// joins (waits for every fiber spawned so far) and then stops its workers in
// its destructor.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace lci {

struct fiber;

// The fiber running on the calling thread, or nullptr on a plain thread.
fiber* current_fiber() noexcept;
// From a fiber: suspend it, then run after(arg) on its worker (see above).
void fiber_suspend(void (*after)(void*), void* arg) noexcept;
// Makes a suspended fiber ready to run again.
void fiber_make_ready(fiber* f) noexcept;
// From a fiber: go to the back of the ready queue.
void fiber_yield() noexcept;

class fiber_pool {
 public:
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  static constexpr size_t default_stack_size = 256 * 1024;  // instrumented frames are larger
#else
  static constexpr size_t default_stack_size = 64 * 1024;
#endif

  explicit fiber_pool(int nthreads, size_t stack_size = default_stack_size);
  ~fiber_pool();
  fiber_pool(const fiber_pool&) = delete;
  fiber_pool& operator=(const fiber_pool&) = delete;

  // Creates a fiber that runs fn(arg) and makes it ready.
  void spawn(void (*fn)(void*), void* arg);
  // Blocks the calling OS thread until every fiber spawned so far returned.
  void join();

  void push_ready(fiber* f) noexcept;

 private:
  void run_worker() noexcept;

  const size_t stack_size_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // workers: ready_ non-empty or stop_
  std::condition_variable idle_cv_;  // join: live_ == 0
  std::deque<fiber*> ready_;
  size_t live_ = 0;  // spawned and not yet returned
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace lci

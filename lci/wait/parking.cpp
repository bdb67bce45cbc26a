// The parking lot and the waiting policies; see parking.hpp.
#include "lci/wait/parking.hpp"

#include <oneapi/tbb/task.h>
#include <oneapi/tbb/task_arena.h>

#include "lci/util/futex.hpp"
#include "lci/wait/fiber.hpp"

namespace lci {

namespace detail {
park_bucket park_buckets[park_bucket_count];
}

namespace {

using detail::park_bucket;

std::atomic<int> g_policy{LCIX_WAIT_THREADS};

// How the calling waiter blocks, from the policy and where it runs.
enum class park_mode { thread, fiber, task };

park_mode current_mode() noexcept {
  switch (static_cast<LCIX_wait_policy_t>(g_policy.load(std::memory_order_relaxed))) {
    case LCIX_WAIT_FIBERS:
      return current_fiber() ? park_mode::fiber : park_mode::thread;
    case LCIX_WAIT_TBB:
      return tbb::this_task_arena::current_thread_index() >= 0 ? park_mode::task
                                                                : park_mode::thread;
    default:
      return park_mode::thread;
  }
}

void link(park_bucket& b, park_node* n) noexcept {
  n->next = nullptr;
  n->prev = b.tail;
  if (b.tail) b.tail->next = n;
  else b.head = n;
  b.tail = n;
}

void unlink(park_bucket& b, park_node* n) noexcept {
  if (n->prev) n->prev->next = n->next;
  else b.head = n->next;
  if (n->next) n->next->prev = n->prev;
  else b.tail = n->prev;
}

struct park_request {
  park_node* node;
  ready_fn ready;
  const void* ctx;
};

// Publishes the node for waking, then re-checks the condition; if it already
// holds, takes the node back and wakes it itself. Runs where the waiter can
// already be resumed by node->wake: inline for an OS thread, after the switch
// for a fiber or a TBB task. See parking.hpp for the memory orders.
void enqueue_and_recheck(const park_request* r) noexcept {
  park_node* n = r->node;
  park_bucket& b = detail::bucket_of(n->key);
  b.lock.lock();
  link(b, n);
  b.count.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Under the lock: no waker can unlink (and so resume) the node while we
  // still read the waiter's stack and the completion object.
  const bool ready = r->ready(r->ctx);
  if (ready) {
    unlink(b, n);
    b.count.fetch_sub(1, std::memory_order_relaxed);
  }
  b.lock.unlock();
  if (ready) n->wake(n);
}

// ---- OS threads: a futex on the node -----------------------------------------

void wake_thread(park_node* n) noexcept {
  // release: the waiter's acquire load of `woken` sees everything before the
  // wake (and so, transitively, the published completion).
  n->woken.store(1, std::memory_order_release);
  // The waiter may already have returned and reused this stack slot; a
  // FUTEX_WAKE on a stale address only costs a spurious wakeup elsewhere,
  // which every futex waiter tolerates.
  futex(&n->woken, FUTEX_WAKE_PRIVATE, 1);
}

void park_thread(park_node& n, const park_request& r) noexcept {
  n.wake = wake_thread;
  enqueue_and_recheck(&r);
  while (n.woken.load(std::memory_order_acquire) == 0)
    futex(&n.woken, FUTEX_WAIT_PRIVATE, 0);  // returns at once if woken != 0
}

// ---- fibers --------------------------------------------------------------------

void park_fiber(park_node& n, const park_request& r) noexcept {
  n.handle = current_fiber();
  n.wake = [](park_node* node) { fiber_make_ready(static_cast<fiber*>(node->handle)); };
  fiber_suspend([](void* req) { enqueue_and_recheck(static_cast<const park_request*>(req)); },
                const_cast<park_request*>(&r));
}

// ---- oneTBB resumable tasks ------------------------------------------------------

void park_task(park_node& n, const park_request& r) noexcept {
  n.wake = [](park_node* node) {
    tbb::task::resume(static_cast<tbb::task::suspend_point>(node->handle));
  };
  // The callback runs once the task's stack is switched away from; TBB allows
  // the suspend point to be resumed even before the callback returns.
  tbb::task::suspend([&](tbb::task::suspend_point sp) {
    n.handle = sp;
    enqueue_and_recheck(&r);
  });
}

}  // namespace

namespace detail {

void unpark_slow(const void* key, bool all) noexcept {
  park_bucket& b = bucket_of(key);
  park_node* chain = nullptr;
  park_node** chain_tail = &chain;
  uint32_t n_woken = 0;
  b.lock.lock();
  for (park_node* n = b.head; n;) {
    park_node* next = n->next;
    if (n->key == key) {
      unlink(b, n);
      n->next = nullptr;
      *chain_tail = n;
      chain_tail = &n->next;
      ++n_woken;
      if (!all) break;
    }
    n = next;
  }
  if (n_woken) b.count.fetch_sub(n_woken, std::memory_order_relaxed);
  b.lock.unlock();
  // Outside the lock: a wake may be a system call or take the ready-queue
  // mutex. Read next first: a woken node may vanish at once.
  while (chain) {
    park_node* next = chain->next;
    chain->wake(chain);
    chain = next;
  }
}

}  // namespace detail

void park(const void* key, ready_fn ready, const void* ctx) noexcept {
  park_node n;
  n.key = key;
  const park_request r{&n, ready, ctx};
  switch (current_mode()) {
    case park_mode::fiber: park_fiber(n, r); return;
    case park_mode::task: park_task(n, r); return;
    case park_mode::thread: park_thread(n, r); return;
  }
}

LCIX_wait_policy_t wait_policy() noexcept {
  return static_cast<LCIX_wait_policy_t>(g_policy.load(std::memory_order_relaxed));
}

void wait_policy_set(LCIX_wait_policy_t p) noexcept {
  g_policy.store(static_cast<int>(p), std::memory_order_relaxed);
}

bool wait_spins_first() noexcept { return current_mode() == park_mode::thread; }

}  // namespace lci

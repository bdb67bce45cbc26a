// fiber_pool on boost::context::fiber; see fiber.hpp.
#include "lci/wait/fiber.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>
#include <cassert>
#include <memory>
#include <utility>

namespace ctx = boost::context;

// ThreadSanitizer must be told about every stack switch, or it mixes up the
// shadow stacks and crashes. These are no-ops in other builds.
#if defined(__SANITIZE_THREAD__)
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
namespace {
void* tsan_current() { return __tsan_get_current_fiber(); }
void* tsan_create() { return __tsan_create_fiber(0); }
void tsan_destroy(void* f) { __tsan_destroy_fiber(f); }
void tsan_switch(void* f) { __tsan_switch_to_fiber(f, 0); }
}  // namespace
#else
namespace {
void* tsan_current() { return nullptr; }
void* tsan_create() { return nullptr; }
void tsan_destroy(void*) {}
void tsan_switch(void*) {}
}  // namespace
#endif

namespace lci {

struct fiber {
  fiber_pool* pool;
  void (*fn)(void*);
  void* arg;
  ctx::fiber self;    // the fiber's saved context while it is not running
  ctx::fiber caller;  // the worker's context while the fiber runs
  // Set by fiber_suspend just before switching out, run by the worker.
  void (*after)(void*) = nullptr;
  void* after_arg = nullptr;
  void* tsan_self = nullptr;    // ThreadSanitizer's handles (TSan builds)
  void* tsan_worker = nullptr;
};

namespace {
thread_local fiber* tl_current = nullptr;
}

// noinline: a fiber may migrate between workers at every suspension, and a
// compiler may keep a thread_local's address in a register across a call.
// Reading it only through this out-of-line function gives the current
// worker's value.
[[gnu::noinline]] fiber* current_fiber() noexcept { return tl_current; }

void fiber_suspend(void (*after)(void*), void* arg) noexcept {
  fiber* f = current_fiber();
  assert(f != nullptr);
  f->after = after;
  f->after_arg = arg;
  tsan_switch(f->tsan_worker);
  f->caller = std::move(f->caller).resume();
}

void fiber_make_ready(fiber* f) noexcept { f->pool->push_ready(f); }

void fiber_yield() noexcept {
  fiber_suspend([](void* f) { fiber_make_ready(static_cast<fiber*>(f)); }, current_fiber());
}

fiber_pool::fiber_pool(int nthreads, size_t stack_size) : stack_size_(stack_size) {
  if (nthreads < 1) nthreads = 1;
  workers_.reserve(static_cast<size_t>(nthreads));
  for (int i = 0; i < nthreads; ++i) workers_.emplace_back([this] { run_worker(); });
}

fiber_pool::~fiber_pool() {
  join();
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void fiber_pool::spawn(void (*fn)(void*), void* arg) {
  auto* f = new fiber{this, fn, arg, {}, {}};
  f->tsan_self = tsan_create();
  f->self = ctx::fiber(std::allocator_arg, ctx::fixedsize_stack(stack_size_),
                       [f](ctx::fiber&& caller) {
                         f->caller = std::move(caller);
                         f->fn(f->arg);
                         tsan_switch(f->tsan_worker);
                         return std::move(f->caller);
                       });
  {
    std::lock_guard<std::mutex> g(mu_);
    ++live_;
  }
  push_ready(f);
}

void fiber_pool::join() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_cv_.wait(lk, [this] { return live_ == 0; });
}

void fiber_pool::push_ready(fiber* f) noexcept {
  {
    std::lock_guard<std::mutex> g(mu_);
    ready_.push_back(f);
  }
  work_cv_.notify_one();
}

void fiber_pool::run_worker() noexcept {
  for (;;) {
    fiber* f;
    {
      std::unique_lock<std::mutex> lk(mu_);
      work_cv_.wait(lk, [this] { return stop_ || !ready_.empty(); });
      if (ready_.empty()) return;  // stop_
      f = ready_.front();
      ready_.pop_front();
    }
    tl_current = f;
    f->tsan_worker = tsan_current();
    tsan_switch(f->tsan_self);
    f->self = std::move(f->self).resume();
    tl_current = nullptr;
    if (!f->self) {  // fn returned; its stack is already released
      tsan_destroy(f->tsan_self);
      delete f;
      std::lock_guard<std::mutex> g(mu_);
      if (--live_ == 0) idle_cv_.notify_all();
      continue;
    }
    // Suspended: the context is saved in f->self, so f may now be woken.
    // Copy the action out first: once it runs, f may be running elsewhere.
    void (*after)(void*) = f->after;
    void* arg = f->after_arg;
    f->after = nullptr;
    if (after) after(arg);
  }
}

}  // namespace lci

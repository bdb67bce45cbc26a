// The munmap/mremap/madvise hooks and the registry of their listeners; see
// mem_hooks.hpp for what is caught, what is not, and the listener contract.
#include "lci/mem/mem_hooks.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <sched.h>

// Weak: dlsym lives in libc from glibc 2.34 on and in libdl before; without
// it active() answers false instead of the library failing to link.
extern "C" void* dlsym(void* handle, const char* symbol) noexcept __attribute__((weak));

namespace lci::mem_hooks {
namespace {

// The registry (see mem_hooks.hpp). Constant-initialized and trivially
// destructible: usable from the first munmap of the process (before static
// constructors) to the last (after static destructors).
//
// g_head and every listener's `next` are written only under g_writer and
// read by the hooks without a lock. Hooks announce themselves in
// g_readers[shard].count[epoch & 1] (and re-read the epoch, so that a
// remove() cannot flip it between their read and their count); remove()
// unlinks, flips g_epoch and waits for the counters of the old epoch to
// drain. All accesses on that path are seq_cst, which is what makes "a hook
// either is counted before remove() looks, or reads the list after the
// unlink" true.
constexpr int reader_shards = 16;
struct alignas(64) reader_shard {
  std::atomic<long> count[2];
};
reader_shard g_readers[reader_shards];
std::atomic<unsigned> g_epoch{0};
std::atomic<listener*> g_head{nullptr};
pthread_mutex_t g_writer = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

// active(): the probe calls munmap(&g_probe_token, 0) (EINVAL, no effect)
// through the default symbol lookup; our hook recognizes the address.
char g_probe_token;
std::atomic<bool> g_probe_seen{false};

// A shard from the caller's stack address: threads have disjoint stacks, so
// concurrent hooks on different threads mostly write different lines, and no
// thread-local storage (which may allocate on first use) is touched.
unsigned pick_shard() noexcept {
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return static_cast<unsigned>(((sp >> 16) * 0x9e3779b97f4a7c15ull) >> 60) % reader_shards;
}

// In the child of fork() only the forking thread exists: hooks that other
// threads were running, and an add()/remove() in progress, are gone with
// them, and their marks must go too.
void on_fork_child() noexcept {
  for (reader_shard& r : g_readers) {
    r.count[0].store(0, std::memory_order_relaxed);
    r.count[1].store(0, std::memory_order_relaxed);
  }
  pthread_mutex_init(&g_writer, nullptr);
}

void install_atfork() noexcept { pthread_atfork(nullptr, nullptr, &on_fork_child); }

// Waits until no hook that started before the last unlink is still running.
void wait_for_readers() noexcept {
  const unsigned old = g_epoch.fetch_add(1, std::memory_order_seq_cst) & 1;
  for (reader_shard& r : g_readers) {
    unsigned spins = 0;
    // > 0: a counter reset in a forked child may go below zero once.
    while (r.count[old].load(std::memory_order_seq_cst) > 0)
      if (++spins > 64) sched_yield();
  }
}

}  // namespace

void add(listener* l) noexcept {
  pthread_once(&g_atfork_once, &install_atfork);
  pthread_mutex_lock(&g_writer);
  l->next.store(g_head.load(std::memory_order_relaxed), std::memory_order_relaxed);
  // Publishes l's fields to the hooks.
  g_head.store(l, std::memory_order_seq_cst);
  pthread_mutex_unlock(&g_writer);
}

void remove(listener* l) noexcept {
  pthread_mutex_lock(&g_writer);
  std::atomic<listener*>* link = &g_head;
  for (listener* x = link->load(std::memory_order_relaxed); x != nullptr && x != l;
       x = link->load(std::memory_order_relaxed))
    link = &x->next;
  if (link->load(std::memory_order_relaxed) == l)
    link->store(l->next.load(std::memory_order_relaxed), std::memory_order_seq_cst);
  // A hook may still be inside l's callback or about to read l->next.
  wait_for_readers();
  pthread_mutex_unlock(&g_writer);
}

void invalidate(void* addr, size_t len) noexcept {
  // With no listener, nothing to do. Relaxed is enough for the shortcut: a
  // listener added concurrently belongs to a cache that cannot yet hold a
  // registration of memory that a correct program is unmapping right now.
  if (len == 0 || g_head.load(std::memory_order_relaxed) == nullptr) return;
  const int saved_errno = errno;
  reader_shard& r = g_readers[pick_shard()];
  // Counted in the current epoch's counter, and the epoch still the same
  // afterwards: a remove() that flipped it in between (and so may not have
  // waited for this counter) makes the hook count itself again.
  unsigned epoch, e;
  for (;;) {
    epoch = g_epoch.load(std::memory_order_seq_cst);
    e = epoch & 1;
    r.count[e].fetch_add(1, std::memory_order_seq_cst);
    if (g_epoch.load(std::memory_order_seq_cst) == epoch) break;
    r.count[e].fetch_sub(1, std::memory_order_seq_cst);
  }
  const auto a = reinterpret_cast<uintptr_t>(addr);
  for (listener* l = g_head.load(std::memory_order_seq_cst); l != nullptr;
       l = l->next.load(std::memory_order_seq_cst))
    l->on_invalidate(l->context, a, len);
  // Release: the callbacks happen before remove() returns.
  r.count[e].fetch_sub(1, std::memory_order_release);
  errno = saved_errno;
}

bool active() noexcept {
  static const bool result = [] {
    if (dlsym == nullptr) return false;
    using munmap_fn = int (*)(void*, size_t);
    auto fn = reinterpret_cast<munmap_fn>(dlsym(RTLD_DEFAULT, "munmap"));
    if (fn == nullptr) return false;
    const int saved_errno = errno;
    fn(&g_probe_token, 0);
    errno = saved_errno;
    return g_probe_seen.load(std::memory_order_relaxed);
  }();
  return result;
}

}  // namespace lci::mem_hooks

// The hooks. Their declarations come from <sys/mman.h> (noexcept in C++,
// extern "C"); only the visibility changes.
#pragma GCC visibility push(default)

int munmap(void* addr, size_t len) noexcept {
  if (len == 0 && addr == &lci::mem_hooks::g_probe_token)
    lci::mem_hooks::g_probe_seen.store(true, std::memory_order_relaxed);
  lci::mem_hooks::invalidate(addr, len);
  return static_cast<int>(syscall(SYS_munmap, addr, len));
}

void* mremap(void* old_address, size_t old_size, size_t new_size, int flags, ...) noexcept {
  void* new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_address = va_arg(ap, void*);
    va_end(ap);
    lci::mem_hooks::invalidate(new_address, new_size);
  }
  lci::mem_hooks::invalidate(old_address, std::max(old_size, new_size));
  const long r = syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address);
  if (r == -1) return MAP_FAILED;
  void* result = reinterpret_cast<void*>(r);
  if (result != old_address && result != new_address) lci::mem_hooks::invalidate(result, new_size);
  return result;
}

int madvise(void* addr, size_t len, int advice) noexcept {
  switch (advice) {
    case MADV_DONTNEED:
#ifdef MADV_DONTNEED_LOCKED
    case MADV_DONTNEED_LOCKED:
#endif
#ifdef MADV_FREE
    case MADV_FREE:
#endif
    case MADV_REMOVE:
      lci::mem_hooks::invalidate(addr, len);
      break;
    default:
      break;
  }
  return static_cast<int>(syscall(SYS_madvise, addr, len, advice));
}

#pragma GCC visibility pop

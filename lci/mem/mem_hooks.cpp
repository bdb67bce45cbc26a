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

// Weak: dlsym lives in libc from glibc 2.34 on and in libdl before; without
// it active() answers false instead of the library failing to link.
extern "C" void* dlsym(void* handle, const char* symbol) noexcept __attribute__((weak));

namespace lci::mem_hooks {
namespace {

// Constant-initialized and trivially destructible: usable from the first
// munmap of the process (before static constructors) to the last (after
// static destructors). g_head/g_count are written under g_mutex; g_count is
// also read without it, as the hooks' "nobody listens" shortcut.
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
listener* g_head = nullptr;
std::atomic<int> g_count{0};

// active(): the probe calls munmap(&g_probe_token, 0) (EINVAL, no effect)
// through the default symbol lookup; our hook recognizes the address.
char g_probe_token;
std::atomic<bool> g_probe_seen{false};

}  // namespace

void add(listener* l) noexcept {
  pthread_mutex_lock(&g_mutex);
  l->prev = nullptr;
  l->next = g_head;
  if (g_head) g_head->prev = l;
  g_head = l;
  g_count.fetch_add(1, std::memory_order_relaxed);
  pthread_mutex_unlock(&g_mutex);
}

void remove(listener* l) noexcept {
  // Hooks call listeners with g_mutex held, so once we hold it none is
  // inside l's callback, and none finds l after we unlink it.
  pthread_mutex_lock(&g_mutex);
  if (l->prev)
    l->prev->next = l->next;
  else
    g_head = l->next;
  if (l->next) l->next->prev = l->prev;
  l->prev = l->next = nullptr;
  g_count.fetch_sub(1, std::memory_order_relaxed);
  pthread_mutex_unlock(&g_mutex);
}

void invalidate(void* addr, size_t len) noexcept {
  // Relaxed is enough: a listener added concurrently belongs to a cache that
  // cannot yet hold a registration of memory that a correct program is
  // unmapping right now.
  if (len == 0 || g_count.load(std::memory_order_relaxed) == 0) return;
  const int saved_errno = errno;
  pthread_mutex_lock(&g_mutex);
  const auto a = reinterpret_cast<uintptr_t>(addr);
  for (listener* l = g_head; l != nullptr; l = l->next) l->on_invalidate(l->context, a, len);
  pthread_mutex_unlock(&g_mutex);
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

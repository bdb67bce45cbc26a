// mem_hooks: tells every live registration cache when the application unmaps
// memory or changes the pages behind it, so that a cached registration is
// never handed out for memory that is no longer the memory it registered.
//
// How: lci/mem/mem_hooks.cpp defines the C functions `munmap`, `mremap` and
// `madvise` with default visibility. liblci is linked into the program ahead
// of libc, so every call through the dynamic symbol table (the program's own
// calls, and other shared libraries' calls through their PLT) reaches liblci
// first. Each hook invalidates the affected range in every listener (one per
// registration cache) and then makes the real system call with syscall(2),
// so there is no dlsym() lookup of "the next munmap" and no recursion. The
// hooks return and set errno exactly like the glibc wrappers (errno is left
// untouched on success). Sanitizer runtimes that intercept munmap themselves
// come first and forward to the next definition, which is ours.
//
// What each hook invalidates (before the system call, see below):
//   munmap(a, n)            [a, a+n)
//   mremap(a, n, m, f, [b]) [a, a+max(n, m)); [b, b+m) with MREMAP_FIXED; and,
//                           after the call, the range it returned (stale
//                           registrations of earlier, uncaught unmaps there)
//   madvise(a, n, advice)   [a, a+n) for MADV_DONTNEED, MADV_DONTNEED_LOCKED,
//                           MADV_FREE, MADV_REMOVE (the pages are dropped and
//                           later faulted in anew); any other advice (among
//                           them MADV_DONTFORK, which rdma-core itself issues
//                           when it registers memory) passes through.
// Invalidating before the call is enough for a correct program: nothing may
// use memory while it is being unmapped, and a registration in progress at
// that moment is marked stale by the cache (see reg_cache.hpp).
//
// What is NOT caught:
//   - glibc's own calls. free() of a large (mmap-ed) chunk, heap trimming,
//     thread-stack reuse, dlclose() call munmap/madvise/brk inside libc
//     through hidden internal aliases, never through the PLT. A buffer from
//     malloc() that glibc unmaps and later maps again at the same address
//     keeps its cached registration.
//   - mmap(MAP_FIXED) over an existing mapping, shmdt(), brk()/sbrk(), and
//     any system call issued directly with syscall(2) or inline assembly.
//   - Everything, when liblci is loaded with dlopen() (libc is then already
//     ahead of it in the lookup order) or into a statically linked program.
//     mem_hooks::active() tells whether the hooks are in effect.
// This is safe for the libfabric providers that do not pin pages: `shm`
// moves data with process_vm_readv/writev (or CMA) by virtual address, and
// `tcp` copies through sockets, so a registration is only a permission and a
// key for a virtual range and always reaches whatever is mapped there now.
// A backend whose registrations pin physical pages (verbs, efa, cxi) must
// not rely on this cache alone. It must either register with on-demand
// paging (ODP: the NIC follows the page tables, so a stale registration
// still reaches the current pages); or validate each cache hit against a
// source that sees every unmap, e.g. re-register through the provider's own
// MR cache with a kernel-driven monitor (FI_MR_CACHE_MONITOR=userfaultfd or
// kdreg2), which returns a new key for remapped memory, and invalidate the
// range here when the key differs from the cached one; or not cache
// LCI_SEGMENT_ALL registrations at all (certainly when active() is false).
// Devices follow the last rule: lci::decide_caching() (reg_cache.hpp) keeps
// LCI_SEGMENT_ALL registrations cached only when the backend does not pin
// pages (libfabric shm/tcp-like providers, verbs with on-demand paging),
// LCI_USE_DREG allows it and active() is true; otherwise they are made and
// dropped per use.
//
// Listener contract: a listener's callback runs inside an arbitrary
// application call to munmap/mremap/madvise, on any thread, possibly inside a
// signal handler that interrupted another hook on the same thread, and
// possibly in a child process forked while other threads were inside hooks.
// It must therefore never block: it must not allocate memory, call into the
// network library, call munmap/mremap/madvise, or wait for a lock (a
// try-lock is fine). The registration cache only unlinks regions and defers
// their deregistration, and defers the whole invalidation when its lock is
// busy (see reg_cache.hpp).
//
// The registry: a singly linked list of listeners, read without any lock.
// A hook counts itself in one of `reader_shards` counters (each on its own
// cache line, picked from the thread's stack address, so that threads do not
// share a written line), walks the list, and uncounts itself. add() and
// remove() are serialized by a writer mutex that hooks never take; remove()
// unlinks the listener and then waits until every hook that might still see
// it has left (two counter sets and an epoch bit, so that a steady stream of
// new hooks cannot starve it). With no listener a hook costs one atomic load.
// The registry is constant-initialized, so the hooks work before any static
// constructor ran and after static destructors ran. A pthread_atfork child
// handler resets the counters and the writer mutex, so that a child forked
// while other threads were inside hooks or inside add()/remove() can use
// both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>

// Internal C++ entry points that the unit tests (separate executables) call
// into liblci, which is built with hidden visibility by default.
#define LCI_INTERNAL_EXPORT __attribute__((visibility("default")))

namespace lci::mem_hooks {

// One party interested in unmaps. Owned by the party; linked into the
// registry between add() and remove(), which own `next` meanwhile.
struct listener {
  // Called with [addr, addr+len), len > 0 (not rounded to pages).
  void (*on_invalidate)(void* context, uintptr_t addr, size_t len) noexcept = nullptr;
  void* context = nullptr;
  std::atomic<listener*> next{nullptr};
};

// Links l into the registry: from now on, every hooked unmap calls it.
LCI_INTERNAL_EXPORT void add(listener* l) noexcept;
// Unlinks l. When this returns, no callback of l is running or will run.
// Must not be called from a listener's callback.
LCI_INTERNAL_EXPORT void remove(listener* l) noexcept;
// What the hooks do before their system call: calls every listener with
// [addr, addr+len). No-op for len == 0. Preserves errno.
LCI_INTERNAL_EXPORT void invalidate(void* addr, size_t len) noexcept;
// Whether a munmap() called through the process's normal symbol lookup
// reaches liblci's hook (probed once, by calling it with a harmless invalid
// argument). False when liblci was dlopen()-ed or the lookup is unavailable.
LCI_INTERNAL_EXPORT bool active() noexcept;

}  // namespace lci::mem_hooks

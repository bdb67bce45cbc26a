// Counts every C++ heap allocation of the process: the replaceable global
// operator new (which every heap object and container of liblci goes
// through) adds one to g_news and takes its memory from the C allocator.
// Include it in exactly one source file of a program. Also the helpers the
// allocation-counting tests share: a synchronizer wait and an endpoint of
// LCI_UR_DEVICE whose ports signal synchronizers.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

#include "harness.hpp"

namespace count_new {
inline std::atomic<long> g_news{0};

inline void* counted(size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
inline void* counted_aligned(size_t n, std::align_val_t a) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  const size_t al = static_cast<size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}

// Waits until `sync` (threshold 1) fires, driving progress.
inline void wait_sync(LCI_comp_t sync, LCI_request_t* req, const char* what) {
  lci_test::deadline d;
  while (LCI_sync_test(sync, req) != LCI_OK) lci_test::progress(d, what);
}

// An endpoint on LCI_UR_DEVICE whose both ports signal synchronizers.
inline LCI_endpoint_t sync_endpoint() {
  using lci_test::ok;
  LCI_plist_t plist;
  ok(LCI_plist_create(&plist), "LCI_plist_create");
  ok(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_SYNC), "set_comp_type");
  ok(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC), "set_comp_type");
  LCI_endpoint_t ep;
  ok(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist), "LCI_endpoint_init");
  ok(LCI_plist_free(&plist), "LCI_plist_free");
  return ep;
}
}  // namespace count_new

void* operator new(size_t n) { return count_new::counted(n); }
void* operator new[](size_t n) { return count_new::counted(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  count_new::g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  count_new::g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new(size_t n, std::align_val_t a) { return count_new::counted_aligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return count_new::counted_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

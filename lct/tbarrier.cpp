// LCT_tbarrier_*: a reusable barrier of n threads, generation by arithmetic.
//
// One counter of arrivals only ever grows. Every thread arrives once per
// round, so arrival number a belongs to round a / n (the ticket) and round
// g is complete once the counter reaches (g + 1) * n. A thread cannot
// arrive in round g + 1 before round g is complete (it waits first), so
// arrivals are never counted in the wrong round and no reset is needed.
// The arrival is acq_rel and the test an acquire load: writes made before
// arriving are visible to every thread after its wait.
#include <atomic>
#include <cstdint>
#include <thread>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

struct tbarrier {
  explicit tbarrier(int n) : nthreads(n) {}
  const int64_t nthreads;
  alignas(64) std::atomic<int64_t> arrivals{0};
};

}  // namespace

LCT_tbarrier_t LCT_tbarrier_alloc(int nthreads) noexcept try {
  if (nthreads < 1) lct::detail::fatal("LCT_tbarrier_alloc", "nthreads is %d, must be >= 1", nthreads);
  return new tbarrier(nthreads);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_tbarrier_free(LCT_tbarrier_t* tbarrier_p) noexcept try {
  if (tbarrier_p == nullptr) return;
  delete static_cast<tbarrier*>(*tbarrier_p);
  *tbarrier_p = nullptr;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int64_t LCT_tbarrier_arrive(LCT_tbarrier_t t) noexcept try {
  auto* b = static_cast<tbarrier*>(t);
  return b->arrivals.fetch_add(1, std::memory_order_acq_rel) / b->nthreads;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

bool LCT_tbarrier_test(LCT_tbarrier_t t, int64_t ticket) noexcept try {
  auto* b = static_cast<tbarrier*>(t);
  return b->arrivals.load(std::memory_order_acquire) >= (ticket + 1) * b->nthreads;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_tbarrier_wait(LCT_tbarrier_t t, int64_t ticket) noexcept try {
  for (int spins = 0; !LCT_tbarrier_test(t, ticket); ++spins) {
    if (spins >= 64) std::this_thread::yield();
  }
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_tbarrier_arrive_and_wait(LCT_tbarrier_t t) noexcept try {
  LCT_tbarrier_wait(t, LCT_tbarrier_arrive(t));
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

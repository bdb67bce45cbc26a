// The count of a fault-injection hook (lci/core/test_hooks.hpp) that a
// module takes from as it hits the hook's point.
#pragma once

#include <atomic>

namespace lci {

// Takes one from a hook's count; true if it was positive.
inline bool take_test_count(std::atomic<int>& count) {
  int n = count.load(std::memory_order_relaxed);
  while (__builtin_expect(n > 0, 0))
    if (count.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) return true;
  return false;
}

}  // namespace lci

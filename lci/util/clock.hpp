// The monotonic clock in nanoseconds, for time-outs, heartbeats and
// liveness checks (never the wall clock: it may jump).
#pragma once

#include <chrono>
#include <cstdint>

namespace lci {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace lci

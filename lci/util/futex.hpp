// The futex system call on a 32-bit atomic word: the waits of the threads
// policy (lci/wait/parking.cpp, private to the process) and the doorbell of
// a native device (lci/backend/native, shared between processes).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace lci {

// `op` is FUTEX_WAIT/FUTEX_WAKE, with FUTEX_PRIVATE_FLAG where the word is
// not shared with another process; `timeout` (relative, FUTEX_WAIT only)
// may be null.
inline long futex(std::atomic<uint32_t>* word, int op, uint32_t val,
                  const timespec* timeout = nullptr) noexcept {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "a futex is 32 bits");
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}

}  // namespace lci

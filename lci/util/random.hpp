// Unpredictable 64-bit values: the libfabric backend's /dev/shm region
// names, registration keys and job token, and the native transport's keys. From the kernel's random
// source (getrandom); std::random_device only where that call fails.
#pragma once

#include <sys/random.h>

#include <cstdint>
#include <random>

namespace lci {

inline uint64_t random_bits() {
  uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, 0) == static_cast<ssize_t>(sizeof bits)) return bits;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace lci

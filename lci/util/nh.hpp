// NH, the universal hash of UMAC (RFC 4418, section 5), over 1 KiB blocks:
// what message authentication (lci/backend/ofi/auth.hpp) runs over long
// payloads before SipHash, so that the keyed PRF sees 16 bytes per KiB
// instead of every byte.
//
// For a block of 32-bit little-endian words m[0..2n) and key words k:
//   NH_k(m) = sum over i < n of ((m[2i] + k[2i]) mod 2^32) *
//                               ((m[2i+1] + k[2i+1]) mod 2^32)   mod 2^64
// Two messages of one length collide with probability at most 2^-32 over a
// random key; two passes whose keys are shifted by four words (UMAC's
// Toeplitz construction) make it 2^-64. The caller feeds both results of
// every block, and the payload's length, into SipHash under an independent
// key (hash-then-PRF): a forged tag needs an NH collision of a key nobody
// outside the job knows. The last block is padded with zeros; the length
// the caller hashes tells the padding from data.
//
// The loop is written so that compilers vectorize it (32x32->64 multiplies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lci {

class nh_block_hash {
 public:
  static constexpr size_t block_bytes = 1024;
  static constexpr size_t block_words = block_bytes / 4;
  static constexpr size_t key_words = block_words + 4;

  // `key`: key_words random 32-bit words.
  explicit nh_block_hash(const uint32_t* key) { memcpy(k_, key, sizeof k_); }

  // Both passes over one block of n <= block_bytes bytes (zero-padded).
  void block(const void* data, size_t n, uint64_t out[2]) const {
    if (n == block_bytes) {
      pass(static_cast<const unsigned char*>(data), block_words, out);
      return;
    }
    alignas(32) unsigned char m[block_bytes];
    const size_t words = (n + 7) / 8 * 2;  // whole pairs
    memset(m, 0, words * 4);
    memcpy(m, data, n);
    pass(m, words, out);
  }

 private:
  void pass(const unsigned char* p, size_t words, uint64_t out[2]) const {
    uint64_t a = 0, b = 0;
    for (size_t i = 0; i < words; i += 2) {
      uint32_t x, y;
      memcpy(&x, p + 4 * i, 4);
      memcpy(&y, p + 4 * i + 4, 4);
      a += static_cast<uint64_t>(x + k_[i]) * static_cast<uint32_t>(y + k_[i + 1]);
      b += static_cast<uint64_t>(x + k_[i + 4]) * static_cast<uint32_t>(y + k_[i + 5]);
    }
    out[0] = a;
    out[1] = b;
  }
  uint32_t k_[key_words];
};

}  // namespace lci

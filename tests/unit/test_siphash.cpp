// SipHash-2-4 (lci/util/siphash.hpp), the MAC of the libfabric backend's
// message authentication: the test vectors of the SipHash paper (key
// 00 01 .. 0f, message 00 01 .. n-1), and incremental hashing against
// one-shot hashing.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "lci/util/siphash.hpp"

using lci::siphash24;

namespace {

// The paper's key, as two little-endian words.
constexpr uint64_t k0 = 0x0706050403020100ull;
constexpr uint64_t k1 = 0x0f0e0d0c0b0a0908ull;

uint64_t vector_hash(size_t n) {
  std::vector<unsigned char> m(n);
  for (size_t i = 0; i < n; ++i) m[i] = static_cast<unsigned char>(i);
  return siphash24::hash(k0, k1, m.data(), n);
}

}  // namespace

TEST_CASE("siphash: the paper's test vectors") {
  // Appendix A of the paper: the 15-byte message 00 .. 0e.
  CHECK(vector_hash(15) == 0xa129ca6149be45e5ull);
  // The reference implementation's vectors (64-bit output, little-endian
  // byte strings read as words), messages of 0, 1, 7, 8 and 63 bytes.
  CHECK(vector_hash(0) == 0x726fdb47dd0e0e31ull);
  CHECK(vector_hash(1) == 0x74f839c593dc67fdull);
  CHECK(vector_hash(7) == 0xab0200f58b01d137ull);
  CHECK(vector_hash(8) == 0x93f5f5799a932462ull);
  CHECK(vector_hash(63) == 0x958a324ceb064572ull);
}

TEST_CASE("siphash: words and byte ranges in any split equal the one-shot hash") {
  std::mt19937_64 rng(7);
  std::vector<unsigned char> m(300);
  for (auto& b : m) b = static_cast<unsigned char>(rng());
  for (size_t n : {size_t(0), size_t(5), size_t(8), size_t(13), size_t(64), size_t(300)}) {
    const uint64_t want = siphash24::hash(k0, k1, m.data(), n);
    for (size_t cut = 0; cut <= n; cut += (n > 20 ? 7 : 1)) {
      siphash24 h(k0, k1);
      h.add_bytes(m.data(), cut);
      h.add_bytes(m.data() + cut, n - cut);
      CHECK(h.finish() == want);
    }
    // A word is its 8 little-endian bytes, at any alignment.
    if (n >= 16) {
      for (size_t lead : {size_t(0), size_t(3)}) {
        siphash24 h(k0, k1);
        h.add_bytes(m.data(), lead);
        uint64_t w = 0;
        for (int i = 0; i < 8; ++i) w |= static_cast<uint64_t>(m[lead + i]) << (8 * i);
        h.add_word(w);
        h.add_bytes(m.data() + lead + 8, n - lead - 8);
        CHECK(h.finish() == want);
      }
    }
  }
}

TEST_CASE("siphash: the key and every byte matter") {
  unsigned char m[32] = {};
  const uint64_t base = siphash24::hash(k0, k1, m, sizeof m);
  CHECK(siphash24::hash(k0 ^ 1, k1, m, sizeof m) != base);
  CHECK(siphash24::hash(k0, k1 ^ (uint64_t{1} << 63), m, sizeof m) != base);
  for (size_t i = 0; i < sizeof m; ++i) {
    m[i] ^= 0x80;
    CHECK(siphash24::hash(k0, k1, m, sizeof m) != base);
    m[i] ^= 0x80;
  }
  // Length is part of the input: a trailing zero byte changes the hash.
  CHECK(siphash24::hash(k0, k1, m, sizeof m - 1) != base);
}

// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// 2012): a keyed 64-bit pseudo-random function, used as the message
// authentication code of the libfabric backend (lci/backend/ofi/auth.hpp).
// Written from the paper's description: four 64-bit words of state, two
// rounds per 8-byte message word, four finalisation rounds; the last word
// holds the message length (mod 256) in its top byte.
//
// siphash24 is incremental: add 64-bit words (each counts as 8
// little-endian bytes of message) and byte ranges in any mix, then
// finish(). The result equals the one-shot hash of the concatenated bytes
// (tests/unit/test_siphash.cpp checks the paper's test vectors). An object
// is owned by one thread; it holds no pointer into the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lci {

class siphash24 {
 public:
  siphash24(uint64_t k0, uint64_t k1)
      : v0_(k0 ^ 0x736f6d6570736575ull),
        v1_(k1 ^ 0x646f72616e646f6dull),
        v2_(k0 ^ 0x6c7967656e657261ull),
        v3_(k1 ^ 0x7465646279746573ull) {}

  // 8 message bytes: the little-endian encoding of w.
  void add_word(uint64_t w) {
    if (tail_bytes_ == 0) {
      compress(w);
      length_ += 8;
      return;
    }
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(w >> (8 * i));
    add_bytes(b, 8);
  }

  void add_bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    length_ += n;
    // Complete a partial word first.
    while (tail_bytes_ != 0 && n != 0) {
      tail_ |= static_cast<uint64_t>(*p++) << (8 * tail_bytes_);
      --n;
      if (++tail_bytes_ == 8) {
        compress(tail_);
        tail_ = 0;
        tail_bytes_ = 0;
      }
    }
    for (; n >= 8; n -= 8, p += 8) compress(load_le(p));
    for (size_t i = 0; i < n; ++i) tail_ |= static_cast<uint64_t>(p[i]) << (8 * i);
    tail_bytes_ = static_cast<unsigned>(n);
  }

  uint64_t finish() {
    compress(tail_ | static_cast<uint64_t>(length_ & 0xff) << 56);
    v2_ ^= 0xff;
    for (int i = 0; i < 4; ++i) round();
    return v0_ ^ v1_ ^ v2_ ^ v3_;
  }

  static uint64_t hash(uint64_t k0, uint64_t k1, const void* data, size_t n) {
    siphash24 h(k0, k1);
    h.add_bytes(data, n);
    return h.finish();
  }

 private:
  static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  static uint64_t load_le(const unsigned char* p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
  }
  void round() {
    v0_ += v1_;
    v1_ = rotl(v1_, 13);
    v1_ ^= v0_;
    v0_ = rotl(v0_, 32);
    v2_ += v3_;
    v3_ = rotl(v3_, 16);
    v3_ ^= v2_;
    v0_ += v3_;
    v3_ = rotl(v3_, 21);
    v3_ ^= v0_;
    v2_ += v1_;
    v1_ = rotl(v1_, 17);
    v1_ ^= v2_;
    v2_ = rotl(v2_, 32);
  }
  void compress(uint64_t m) {
    v3_ ^= m;
    round();
    round();
    v0_ ^= m;
  }

  uint64_t v0_, v1_, v2_, v3_;
  uint64_t tail_ = 0;        // the bytes of an incomplete word, little-endian
  unsigned tail_bytes_ = 0;  // how many (0..7)
  uint64_t length_ = 0;      // message bytes so far
};

}  // namespace lci

// X25519 (RFC 7748, section 5): Diffie-Hellman on Curve25519, used by the
// libfabric backend to hand out its message key without the launcher's
// key-value store ever holding it (lci/backend/ofi/key_exchange.hpp).
//
// Written from the RFC's description: field elements mod p = 2^255 - 19 in
// five 51-bit limbs (products in unsigned __int128), the Montgomery ladder
// of section 5 with a constant-time conditional swap, a24 = 121665, the
// result x_2 * z_2^(p - 2). Scalars are clamped as decodeScalar25519 says;
// a u-coordinate's top bit is ignored and a non-canonical value is reduced,
// as decodeUCoordinate says. tests/unit/test_x25519.cpp checks the RFC's
// vectors (section 5.2, its 1,000-iteration chain, section 6.1).
//
// The ladder's branches and memory accesses do not depend on the scalar;
// the final inversion's exponent is public. Nothing here allocates.
#pragma once

#include <cstdint>
#include <cstring>

namespace lci::x25519 {

using bytes32 = unsigned char[32];

namespace detail {

using u128 = unsigned __int128;
constexpr uint64_t mask51 = (uint64_t{1} << 51) - 1;

struct fe {
  uint64_t v[5];
};

inline uint64_t load64(const unsigned char* p) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = w << 8 | p[i];
  return w;
}

// The low 255 bits of 32 little-endian bytes (limb i holds bits 51i ..).
inline fe load(const unsigned char* b) {
  fe r;
  r.v[0] = load64(b) & mask51;
  r.v[1] = (load64(b + 6) >> 3) & mask51;
  r.v[2] = (load64(b + 12) >> 6) & mask51;
  r.v[3] = (load64(b + 19) >> 1) & mask51;
  r.v[4] = (load64(b + 24) >> 12) & mask51;
  return r;
}

// Carries every limb into the next, the top one back into limb 0 times 19
// (2^255 = 19 mod p): limbs end below 2^51 + 2^13 or so.
inline void carry(fe& a) {
  for (int i = 0; i < 4; ++i) {
    a.v[i + 1] += a.v[i] >> 51;
    a.v[i] &= mask51;
  }
  a.v[0] += 19 * (a.v[4] >> 51);
  a.v[4] &= mask51;
}

inline fe add(const fe& a, const fe& b) {
  fe r;
  for (int i = 0; i < 5; ++i) r.v[i] = a.v[i] + b.v[i];
  carry(r);
  return r;
}

// a - b + 4p, limb by limb (every limb of 4p exceeds any carried limb).
inline fe sub(const fe& a, const fe& b) {
  fe r;
  r.v[0] = a.v[0] + 0x1fffffffffffb4ull - b.v[0];
  for (int i = 1; i < 5; ++i) r.v[i] = a.v[i] + 0x1ffffffffffffcull - b.v[i];
  carry(r);
  return r;
}

inline fe mul(const fe& a, const fe& b) {
  const uint64_t a0 = a.v[0], a1 = a.v[1], a2 = a.v[2], a3 = a.v[3], a4 = a.v[4];
  const uint64_t b0 = b.v[0], b1 = b.v[1], b2 = b.v[2], b3 = b.v[3], b4 = b.v[4];
  const uint64_t b1_19 = 19 * b1, b2_19 = 19 * b2, b3_19 = 19 * b3, b4_19 = 19 * b4;
  u128 r0 = (u128)a0 * b0 + (u128)a1 * b4_19 + (u128)a2 * b3_19 + (u128)a3 * b2_19 +
            (u128)a4 * b1_19;
  u128 r1 = (u128)a0 * b1 + (u128)a1 * b0 + (u128)a2 * b4_19 + (u128)a3 * b3_19 +
            (u128)a4 * b2_19;
  u128 r2 = (u128)a0 * b2 + (u128)a1 * b1 + (u128)a2 * b0 + (u128)a3 * b4_19 +
            (u128)a4 * b3_19;
  u128 r3 = (u128)a0 * b3 + (u128)a1 * b2 + (u128)a2 * b1 + (u128)a3 * b0 + (u128)a4 * b4_19;
  u128 r4 = (u128)a0 * b4 + (u128)a1 * b3 + (u128)a2 * b2 + (u128)a3 * b1 + (u128)a4 * b0;
  r1 += static_cast<uint64_t>(r0 >> 51);
  r2 += static_cast<uint64_t>(r1 >> 51);
  r3 += static_cast<uint64_t>(r2 >> 51);
  r4 += static_cast<uint64_t>(r3 >> 51);
  fe r;
  r.v[0] = static_cast<uint64_t>(r0) & mask51;
  r.v[1] = static_cast<uint64_t>(r1) & mask51;
  r.v[2] = static_cast<uint64_t>(r2) & mask51;
  r.v[3] = static_cast<uint64_t>(r3) & mask51;
  r.v[4] = static_cast<uint64_t>(r4) & mask51;
  r.v[0] += 19 * static_cast<uint64_t>(r4 >> 51);
  carry(r);
  return r;
}

inline fe mul_small(const fe& a, uint64_t k) {
  u128 c = 0;
  fe r;
  for (int i = 0; i < 5; ++i) {
    c += (u128)a.v[i] * k;
    r.v[i] = static_cast<uint64_t>(c) & mask51;
    c >>= 51;
  }
  r.v[0] += 19 * static_cast<uint64_t>(c);
  carry(r);
  return r;
}

// Swaps a and b when swap is 1, leaves them when 0, the same way either.
inline void cswap(uint64_t swap, fe& a, fe& b) {
  const uint64_t m = 0 - swap;
  for (int i = 0; i < 5; ++i) {
    const uint64_t t = m & (a.v[i] ^ b.v[i]);
    a.v[i] ^= t;
    b.v[i] ^= t;
  }
}

// a^(p - 2) = 1 / a (0 for 0). p - 2 = 2^255 - 21: bits 254 .. 5, 3, 1, 0.
inline fe invert(const fe& a) {
  fe r{{1, 0, 0, 0, 0}};
  for (int bit = 254; bit >= 0; --bit) {
    r = mul(r, r);
    if (bit >= 5 || bit == 3 || bit == 1 || bit == 0) r = mul(r, a);
  }
  return r;
}

// The canonical (fully reduced) little-endian encoding.
inline void store(fe a, unsigned char* out) {
  carry(a);
  carry(a);
  // a < 2^255 + small; subtract p once if a >= p: q = 1 exactly then.
  uint64_t q = (a.v[0] + 19) >> 51;
  for (int i = 1; i < 5; ++i) q = (a.v[i] + q) >> 51;
  a.v[0] += 19 * q;
  for (int i = 0; i < 4; ++i) {
    a.v[i + 1] += a.v[i] >> 51;
    a.v[i] &= mask51;
  }
  a.v[4] &= mask51;
  const uint64_t w[4] = {a.v[0] | a.v[1] << 51, a.v[1] >> 13 | a.v[2] << 38,
                         a.v[2] >> 26 | a.v[3] << 25, a.v[3] >> 39 | a.v[4] << 12};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) out[8 * i + j] = static_cast<unsigned char>(w[i] >> (8 * j));
}

}  // namespace detail

// out = X25519(scalar, u): the u-coordinate of scalar (clamped) times the
// point with u-coordinate u. out may alias neither input or either.
inline void scalarmult(bytes32 out, const bytes32 scalar, const bytes32 u) {
  using namespace detail;
  unsigned char k[32];
  memcpy(k, scalar, 32);
  k[0] &= 248;
  k[31] &= 127;
  k[31] |= 64;
  const fe x1 = load(u);
  fe x2{{1, 0, 0, 0, 0}}, z2{{0, 0, 0, 0, 0}}, x3 = x1, z3{{1, 0, 0, 0, 0}};
  uint64_t swap = 0;
  for (int t = 254; t >= 0; --t) {
    const uint64_t kt = (k[t >> 3] >> (t & 7)) & 1;
    swap ^= kt;
    cswap(swap, x2, x3);
    cswap(swap, z2, z3);
    swap = kt;
    const fe a = add(x2, z2), aa = mul(a, a);
    const fe b = sub(x2, z2), bb = mul(b, b);
    const fe e = sub(aa, bb);
    const fe c = add(x3, z3), d = sub(x3, z3);
    const fe da = mul(d, a), cb = mul(c, b);
    const fe s = add(da, cb), m = sub(da, cb);
    x3 = mul(s, s);
    z3 = mul(x1, mul(m, m));
    x2 = mul(aa, bb);
    z2 = mul(e, add(aa, mul_small(e, 121665)));
  }
  cswap(swap, x2, x3);
  cswap(swap, z2, z3);
  store(mul(x2, invert(z2)), out);
  memset(k, 0, sizeof k);
}

// The public value of a private scalar: X25519(scalar, 9).
inline void public_value(bytes32 out, const bytes32 scalar) {
  bytes32 nine = {9};
  scalarmult(out, scalar, nine);
}

}  // namespace lci::x25519

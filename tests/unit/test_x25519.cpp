// X25519 (lci/util/x25519.hpp), the key agreement behind the libfabric
// backend's message key: the test vectors of RFC 7748 (section 5.2: two
// single products, the iterated chain after 1 and 1,000 steps; section 6.1:
// both sides of the Diffie-Hellman example agree), and agreement between
// random pairs.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>

#include "lci/util/x25519.hpp"

namespace {

void from_hex(const char* hex, unsigned char* out) {
  for (int i = 0; i < 32; ++i) out[i] = static_cast<unsigned char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
}

std::string to_hex(const unsigned char* b) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) {
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

std::string x25519_hex(const char* scalar, const char* u) {
  unsigned char k[32], p[32], out[32];
  from_hex(scalar, k);
  from_hex(u, p);
  lci::x25519::scalarmult(out, k, p);
  return to_hex(out);
}

}  // namespace

TEST_CASE("x25519: RFC 7748 section 5.2 vectors") {
  CHECK(x25519_hex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
                   "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c") ==
        "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
  // The second vector's u has its top bit set: it is ignored.
  CHECK(x25519_hex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
                   "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493") ==
        "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957");
}

TEST_CASE("x25519: RFC 7748 section 5.2 iterated chain") {
  unsigned char k[32] = {9}, u[32] = {9}, r[32];
  for (int i = 1; i <= 1000; ++i) {
    lci::x25519::scalarmult(r, k, u);
    memcpy(u, k, 32);
    memcpy(k, r, 32);
    if (i == 1) CHECK(to_hex(k) == "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079");
  }
  CHECK(to_hex(k) == "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51");
}

TEST_CASE("x25519: RFC 7748 section 6.1 Diffie-Hellman") {
  unsigned char a[32], b[32], pa[32], pb[32], ka[32], kb[32];
  from_hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", a);
  from_hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb", b);
  lci::x25519::public_value(pa, a);
  lci::x25519::public_value(pb, b);
  CHECK(to_hex(pa) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  CHECK(to_hex(pb) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  lci::x25519::scalarmult(ka, a, pb);
  lci::x25519::scalarmult(kb, b, pa);
  CHECK(to_hex(ka) == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
  CHECK(to_hex(kb) == to_hex(ka));
}

TEST_CASE("x25519: random pairs agree") {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 50; ++n) {
    unsigned char a[32], b[32], pa[32], pb[32], ka[32], kb[32];
    for (int i = 0; i < 32; ++i) {
      a[i] = static_cast<unsigned char>(rng());
      b[i] = static_cast<unsigned char>(rng());
    }
    lci::x25519::public_value(pa, a);
    lci::x25519::public_value(pb, b);
    lci::x25519::scalarmult(ka, a, pb);
    lci::x25519::scalarmult(kb, b, pa);
    CHECK(memcmp(ka, kb, 32) == 0);
  }
}

// How the libfabric backend's per-job secret (the message key of auth.hpp
// and the job token) reaches every rank without the launcher's key-value
// store holding it.
//
// Why: the bootstrap's store is not private. Hydra's -pmi-port proxy
// answers any process that connects to its port, and across hosts every
// launcher carries the store over the management network in clear. A
// secret published there is a secret handed to whoever reads it.
//
// How: every rank draws an X25519 private scalar (lci/util/x25519.hpp) and
// publishes only its public value. After a fence rank 0 draws the secret
// (two key words and the token) and publishes, for each rank r, the secret
// XOR pad(r), where pad(r) is derived from the Diffie-Hellman value rank 0
// shares with rank r; after a second fence rank r computes the same value
// from its own scalar and rank 0's public value and unwraps. A process that
// only reads the store (or the wire between the launcher's daemons) learns
// public values and wrapped secrets, from which the secret follows only by
// solving Diffie-Hellman on Curve25519.
//
// Not covered: a process that can write the store before the ranks read it
// (any local user under Hydra -pmi-port; whoever controls the management
// network) can publish public values of its own, as rank 0 to the others
// and as the others to rank 0, and unwrap the secret: the exchange is not
// authenticated, since nothing but the store is shared before it. Nor does
// it help against a reader that sits on a rank's host as the same user.
//
// pad(r): words j = 0, 1, 2 of SipHash-2-4 keyed with the first 16 bytes of
// the shared value over (domain 3, j, its last 16 bytes, r). A shared value
// of zero (a public value of small order) is refused.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "lci/util/random.hpp"
#include "lci/util/siphash.hpp"
#include "lci/util/x25519.hpp"

namespace lci::ofi {

class key_exchange {
 public:
  static constexpr size_t words = 3;  // key k0, key k1, token

  key_exchange() {
    for (int i = 0; i < 4; ++i) {
      const uint64_t w = random_bits();
      memcpy(scalar_ + 8 * i, &w, 8);
    }
    x25519::public_value(public_, scalar_);
  }
  ~key_exchange() {
    volatile unsigned char* p = scalar_;
    for (size_t i = 0; i < sizeof scalar_; ++i) p[i] = 0;
  }
  key_exchange(const key_exchange&) = delete;
  key_exchange& operator=(const key_exchange&) = delete;

  const unsigned char* public_value() const { return public_; }
  static constexpr size_t public_bytes = 32;

  // The pad between rank 0 and rank `r` (r != 0), from the other side's
  // public value. false (out untouched): not 32 bytes, or a shared value of
  // zero.
  bool pad(const std::vector<unsigned char>& peer_public, int r, uint64_t out[words]) const {
    if (peer_public.size() != public_bytes) return false;
    unsigned char z[32];
    x25519::scalarmult(z, scalar_, peer_public.data());
    unsigned char any = 0;
    for (unsigned char b : z) any |= b;
    if (any == 0) return false;
    uint64_t zw[4];
    memcpy(zw, z, sizeof zw);
    for (size_t j = 0; j < words; ++j) {
      siphash24 h(zw[0], zw[1]);
      h.add_word(3);
      h.add_word(j);
      h.add_word(zw[2]);
      h.add_word(zw[3]);
      h.add_word(static_cast<uint64_t>(static_cast<uint32_t>(r)));
      out[j] = h.finish();
    }
    volatile unsigned char* p = z;
    for (size_t i = 0; i < sizeof z; ++i) p[i] = 0;
    return true;
  }

 private:
  unsigned char scalar_[32];
  unsigned char public_[32];
};

}  // namespace lci::ofi

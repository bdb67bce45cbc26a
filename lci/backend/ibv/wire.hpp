// What the verbs backend puts on the wire and into the bootstrap's key-value
// store, as pure functions (no device needed; tests/unit/test_ibv.cpp).
//
// Start-up exchange, per LCI device (group index g), per rank:
//   "ibv<g>"      the port address: format version, LID, GID, active MTU,
//                 link layer (encode_port_address), 23 bytes as hex.
//   "ibv<g>q<k>"  chunk k of the queue-pair numbers this rank created for
//                 ranks [64k, 64k + 64): 4 bytes each, big-endian, as hex
//                 (at most 512 characters, the bootstrap's limit).
// A rank reads every peer's port address and, from each peer, the one chunk
// that holds its own rank: n gets, not n^2.
//
// Immediate data is the 32-bit protocol header, carried in network byte
// order as verbs requires; the source rank is not in it (see qpn_map).
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lci::ibv {

inline constexpr uint8_t address_format_version = 1;
inline constexpr int qpns_per_chunk = 64;  // 64 x 8 hex characters = 512
inline constexpr uint32_t max_qpn = 0xFFFFFF;  // QP numbers have 24 bits

struct port_address {
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  uint8_t mtu = 0;         // enum ibv_mtu: 1 (256 B) .. 5 (4096 B)
  uint8_t link_layer = 0;  // IBV_LINK_LAYER_* (1: InfiniBand, 2: Ethernet)
  uint8_t gid_index = 0;   // informational (each side uses its own)
  bool operator==(const port_address& o) const {
    return lid == o.lid && !std::memcmp(gid, o.gid, 16) && mtu == o.mtu &&
           link_layer == o.link_layer && gid_index == o.gid_index;
  }
};

inline constexpr size_t port_address_bytes = 1 + 2 + 16 + 1 + 1 + 1;

namespace detail {
inline const char hex_digits[] = "0123456789abcdef";
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
inline std::string to_hex(const uint8_t* p, size_t n) {
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = hex_digits[p[i] >> 4];
    s[2 * i + 1] = hex_digits[p[i] & 15];
  }
  return s;
}
inline bool from_hex(const std::string& s, std::vector<uint8_t>* out) {
  if (s.size() % 2) return false;
  out->resize(s.size() / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}
}  // namespace detail

inline std::string encode_port_address(const port_address& a) {
  uint8_t b[port_address_bytes];
  b[0] = address_format_version;
  b[1] = static_cast<uint8_t>(a.lid >> 8);
  b[2] = static_cast<uint8_t>(a.lid);
  std::memcpy(b + 3, a.gid, 16);
  b[19] = a.mtu;
  b[20] = a.link_layer;
  b[21] = a.gid_index;
  return detail::to_hex(b, sizeof(b));
}

// False (out untouched) on anything but exactly what encode_port_address
// writes: wrong length, not hex, another format version, an MTU outside
// 1..5, a link layer other than InfiniBand or Ethernet.
inline bool decode_port_address(const std::string& text, port_address* out) {
  std::vector<uint8_t> b;
  if (text.size() != 2 * port_address_bytes || !detail::from_hex(text, &b)) return false;
  if (b[0] != address_format_version) return false;
  if (b[19] < 1 || b[19] > 5) return false;
  if (b[20] != 1 && b[20] != 2) return false;
  port_address a;
  a.lid = static_cast<uint16_t>(b[1] << 8 | b[2]);
  std::memcpy(a.gid, b.data() + 3, 16);
  a.mtu = b[19];
  a.link_layer = b[20];
  a.gid_index = b[21];
  *out = a;
  return true;
}

// Chunk k of `qpns` (the QP this rank created for each rank, in rank order).
inline std::string encode_qpn_chunk(const std::vector<uint32_t>& qpns, int chunk) {
  std::string s;
  const size_t first = static_cast<size_t>(chunk) * qpns_per_chunk;
  for (size_t r = first; r < qpns.size() && r < first + qpns_per_chunk; ++r) {
    const uint8_t b[4] = {static_cast<uint8_t>(qpns[r] >> 24), static_cast<uint8_t>(qpns[r] >> 16),
                          static_cast<uint8_t>(qpns[r] >> 8), static_cast<uint8_t>(qpns[r])};
    s += detail::to_hex(b, 4);
  }
  return s;
}

inline int qpn_chunk_of(int rank) { return rank / qpns_per_chunk; }
inline int qpn_chunks(int nranks) { return (nranks + qpns_per_chunk - 1) / qpns_per_chunk; }

// The QP number a peer's chunk names for `rank`; false if the chunk is
// malformed, too short to hold `rank`, or the number is not a valid 24-bit
// QP number of a reliable-connected QP (0 and 1 are the special QPs).
inline bool decode_qpn_for(const std::string& chunk_text, int rank, uint32_t* qpn) {
  if (chunk_text.empty() || chunk_text.size() % 8 || chunk_text.size() > 8 * qpns_per_chunk)
    return false;
  std::vector<uint8_t> b;
  if (!detail::from_hex(chunk_text, &b)) return false;
  const size_t i = static_cast<size_t>(rank % qpns_per_chunk);
  if (4 * i + 4 > b.size()) return false;
  const uint32_t v = static_cast<uint32_t>(b[4 * i]) << 24 | static_cast<uint32_t>(b[4 * i + 1]) << 16 |
                     static_cast<uint32_t>(b[4 * i + 2]) << 8 | b[4 * i + 3];
  if (v > max_qpn || v < 2) return false;
  *qpn = v;
  return true;
}

// Immediate data: host order in LCI, network order in the work request
// (ibv_send_wr::imm_data) and the work completion (ibv_wc::imm_data).
inline uint32_t imm_to_wire(uint32_t imm) { return htonl(imm); }
inline uint32_t imm_from_wire(uint32_t wire) { return ntohl(wire); }

// The first packet sequence number of the QP numbered qpn. Both sides
// compute it from the QP number they already exchanged, so it needs no
// field of its own: the sender's sq_psn equals the receiver's rq_psn.
inline uint32_t initial_psn(uint32_t qpn) { return (qpn * 2654435761u >> 8) & 0xFFFFFF; }

// Is the GID an IPv4-mapped IPv6 address (::ffff:a.b.c.d), as RoCE v2 GIDs
// built from an IPv4 address are?
inline bool gid_is_ipv4_mapped(const uint8_t gid[16]) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return !std::memcmp(gid, prefix, 12);
}

}  // namespace lci::ibv

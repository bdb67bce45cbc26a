// Wire format: the 32-bit header every message carries as immediate data,
// and the internal header in front of every packet's payload.
//
//   immediate data (32 bits):  | kind:4 | endpoint:12 | tag:16 |
//
// The source rank is not in the header: the backend supplies it (libfabric:
// upper half of the 64-bit immediate; verbs: from the queue pair).
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/core/config.hpp"
#include "lci/match/match_table.hpp"

namespace lci {

enum class msg_kind : uint8_t {
  short_msg = 0,   // LCI_sends: LCI_SHORT_SIZE bytes
  medium = 1,      // LCI_sendm/mn/mc
};

inline constexpr uint32_t make_imm(msg_kind kind, uint32_t endpoint, uint32_t tag) {
  return static_cast<uint32_t>(kind) << 28 | (endpoint & 0xfffu) << 16 | (tag & 0xffffu);
}
inline constexpr msg_kind imm_kind(uint32_t imm) { return static_cast<msg_kind>(imm >> 28); }
inline constexpr uint32_t imm_endpoint(uint32_t imm) { return (imm >> 16) & 0xfffu; }
inline constexpr uint32_t imm_tag(uint32_t imm) { return imm & 0xffffu; }

struct device;

// The header in front of every packet's payload (packet_header_size bytes).
// A packet is in one role at a time:
//  - posted for receive / holding an arrived message: `in` (the match node
//    lets it sit in the matching table while it waits for its receive);
//  - carrying an outgoing medium message: `out` (what the send completion
//    needs to signal the sender).
// `dev` is set once when the pool is created and never changes: it lets
// LCI_mbuffer_free find the pool from the buffer address alone.
struct packet {
  union {
    struct {
      match_node node;
      uint32_t length;
      int32_t src_rank;
      uint16_t tag;
      msg_kind kind;
    } in;
    struct {
      LCI_comp_t comp;
      void* user_context;
      void* user_address;  // the buffer as the caller passed it
      uint32_t length;
      int32_t rank;
      uint16_t tag;
      bool keep;           // the caller's LCI buffer: not freed at completion
    } out;
  };
  device* dev;

  char* payload() { return reinterpret_cast<char*>(this) + packet_header_size; }
  static packet* of_payload(void* p) {
    return reinterpret_cast<packet*>(static_cast<char*>(p) - packet_header_size);
  }
};
static_assert(sizeof(packet) <= packet_header_size, "packet header too large");

}  // namespace lci

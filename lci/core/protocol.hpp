// Wire format: the 32-bit header every message carries as immediate data,
// the payloads of the control messages, and the packet layout.
//
//   immediate data (32 bits):  | kind:4 | endpoint:12 | tag:16 |
//   RDMA write with immediate: | kind:4 (write_imm) | rendezvous id:28 |
//
// The source rank is not in the header: the backend supplies it (libfabric:
// upper half of the 64-bit immediate; verbs: from the queue pair).
//
// Kinds marked "trailer" append a 16-byte trailer after the payload (the
// packet has room for it past LCI_MEDIUM_SIZE), so a full-size medium
// payload can still carry a remote address or completion handle.
//
// Tags of the LCI 2 interface go up to 2^32-1. A message whose tag needs
// more than the header's 16 bits is sent as kind `tagged`: the header keeps
// the tag's lower half, and a 4-byte tag_suffix after everything else the
// message carries (payload, trailer) names its own kind and the tag's upper
// half. Messages with 16-bit tags (every message of the C API) are as
// before.
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/match/match_table.hpp"

namespace lci {

inline constexpr int packet_header_size = 64;     // internal header before each medium payload
inline constexpr int max_endpoint_index = 4095;   // 12 bits in the message header

enum class msg_kind : uint8_t {
  short_msg = 0,    // LCI_sends: LCI_SHORT_SIZE bytes, matched
  medium = 1,       // LCI_sendm/mn/mc, matched
  rts = 2,          // long/iovec two-sided: ready-to-send, matched (rts_payload)
  am_short = 3,     // LCI_puts to the default completion
  am_short_c = 4,   // LCI_puts, trailer: completion handle
  am_medium = 5,    // LCI_putma/mna/mac to the default completion
  am_medium_c = 6,  // the same, trailer: completion handle
  put_to = 7,       // LCI_putm/mn, trailer: remote address, completion handle
  rts_alloc = 8,    // LCI_putla/putva: ready-to-send into a target-allocated buffer
  notify = 9,       // target completion of putl/getl/putv/getv (notify_payload)
  tagged = 10,      // a message of kind 0..9 with a tag beyond 16 bits: tag_suffix last
  net = 13,         // the LCI 2 network layer (lci/cxx/net.cpp): subkind in the tag,
                    // trailer (last trailer_size bytes): net_trailer
  control = 15,     // rendezvous and fence control; subkind in the endpoint bits
};

enum class control_kind : uint8_t {
  rtr = 1,      // ready-to-receive (rtr_payload)
  fin = 2,      // all data of a rendezvous written (fin_payload)
  nack = 3,     // the target could not allocate (fin_payload with the sender's id)
  gfence = 4,   // gfence announcement (gfence_payload)
  getv_reply = 5,  // the piggy-back bytes a getv read (fin_payload with the getter's id, then data)
  abort = 6,    // the origin's RDMA writes failed (fin_payload with the receiver's id)
};

// The kinds that arrive as messages, each with one arrival handler
// (progress.hpp; msg_kind::control is dispatched by control kind).
inline constexpr msg_kind arrival_kinds[] = {
    msg_kind::short_msg, msg_kind::medium,      msg_kind::rts,         msg_kind::am_short,
    msg_kind::am_short_c, msg_kind::am_medium,  msg_kind::am_medium_c, msg_kind::put_to,
    msg_kind::rts_alloc,  msg_kind::notify,     msg_kind::tagged,      msg_kind::net};
inline constexpr control_kind control_kinds[] = {control_kind::rtr,    control_kind::fin,
                                                 control_kind::nack,   control_kind::gfence,
                                                 control_kind::getv_reply, control_kind::abort};

inline constexpr msg_kind write_imm_kind = static_cast<msg_kind>(14);
inline constexpr uint32_t rdv_id_bits = 28;
inline constexpr uint32_t rdv_id_mask = (1u << rdv_id_bits) - 1;

inline constexpr uint32_t make_imm(msg_kind kind, uint32_t endpoint, uint32_t tag) {
  return static_cast<uint32_t>(kind) << 28 | (endpoint & 0xfffu) << 16 | (tag & 0xffffu);
}
inline constexpr uint32_t make_control_imm(control_kind k) {
  return make_imm(msg_kind::control, static_cast<uint32_t>(k), 0);
}
inline constexpr uint32_t make_write_imm(uint32_t rdv_id) {
  return static_cast<uint32_t>(write_imm_kind) << 28 | (rdv_id & rdv_id_mask);
}
inline constexpr msg_kind imm_kind(uint32_t imm) { return static_cast<msg_kind>(imm >> 28); }
inline constexpr uint32_t imm_endpoint(uint32_t imm) { return (imm >> 16) & 0xfffu; }
inline constexpr uint32_t imm_tag(uint32_t imm) { return imm & 0xffffu; }
inline constexpr uint32_t imm_rdv_id(uint32_t imm) { return imm & rdv_id_mask; }
inline constexpr bool has_trailer(msg_kind k) {
  return k == msg_kind::am_short_c || k == msg_kind::am_medium_c || k == msg_kind::put_to;
}

inline constexpr size_t trailer_size = 16;
struct trailer {
  uint64_t address;  // put_to: where the payload goes at the target
  uint64_t comp;     // target completion handle (0: the endpoint's default)
};

// The last bytes of a `tagged` message (after its payload and trailer).
// The header's tag bits are the tag's lower half; `tag_hi` is never 0
// (such a tag goes in an ordinary message) and `zero` is 0.
struct tag_suffix {
  uint16_t tag_hi;  // the tag's upper half
  msg_kind kind;    // the message's own kind, one of 0..9
  uint8_t zero;
};
inline constexpr size_t tag_suffix_size = 4;
static_assert(sizeof(tag_suffix) == tag_suffix_size, "tag suffix layout");
inline constexpr bool is_wide_tag(uint32_t tag) { return tag > 0xffffu; }
inline tag_suffix make_tag_suffix(msg_kind kind, uint32_t tag) {
  return tag_suffix{static_cast<uint16_t>(tag >> 16), kind, 0};
}
// The most bytes a message carries past a full medium payload: a trailer
// and a tag suffix.
inline constexpr size_t max_extra_bytes = trailer_size + tag_suffix_size;

// Ready-to-send of a long message or iovec (kinds rts, rts_alloc).
struct rts_payload {
  uint64_t send_id;   // the sender's rendezvous id
  uint64_t size;      // total bytes (long) or bytes of all long buffers (iovec)
  uint64_t comp;      // rts_alloc: target completion handle (0: default)
  uint32_t count;     // iovec: number of long buffers (0: a plain long message)
  uint32_t piggy_length;
  // iovec: count uint64_t lengths, then piggy_length bytes of piggy-back data.
};

// Ready-to-receive: where each buffer of the transfer goes at the target.
struct rtr_payload {
  uint64_t send_id;
  uint64_t recv_id;
  uint32_t count;     // remote buffers that follow (1 for a long message)
  uint32_t pad;
  struct remote { uint64_t address, rkey, length; } buffers[1];  // count entries
};

struct fin_payload {
  uint64_t id;  // fin: the receiver's id; nack: the sender's id
};

struct gfence_payload {
  uint32_t endpoint;
  uint32_t round;
  uint64_t issued;  // operations the origin issued to this rank on the endpoint
};

// Target completion of a one-sided operation into known memory.
struct notify_payload {
  uint64_t comp;          // target completion handle (0: default)
  uint64_t segment;       // target's own LCI_segment_t of the first buffer
  uint64_t address;       // long: target address; iovec: piggy-back address
  uint64_t length;        // long: bytes; iovec: piggy-back bytes
  uint64_t reply_id;      // getv: the getter's id + 1, to answer with the piggy-back bytes (0: none)
  uint32_t type;          // LCI_LONG or LCI_IOVEC
  uint32_t count;         // iovec: long buffers (then count notify_buffer entries, then piggy data)
};
struct notify_buffer {
  uint64_t segment, address, length;
};

// The largest header any message of the iovec protocol carries in front of
// its piggy-back bytes: a notify (putv/getv) with one notify_buffer per long
// buffer. An RTS (sendv/putva) needs less: rts_payload and one length each.
inline constexpr size_t iovec_header_size = sizeof(notify_payload);
inline constexpr size_t iovec_buffer_size = sizeof(notify_buffer);
static_assert(sizeof(rts_payload) <= iovec_header_size &&
                  sizeof(uint64_t) <= iovec_buffer_size,
              "the notify header bounds every iovec header");

struct device;

// The header in front of every packet's payload (packet_header_size bytes).
// A packet is in one role at a time:
//  - posted for receive / holding an arrived message: `in` (the match node
//    lets it sit in the matching table while it waits for its receive);
//  - carrying an outgoing message: `out` (what the send completion needs).
// `user_owned` (debug builds only) is true while the program owns the
// packet as an LCI medium buffer: set when LCI hands it out (mbuffer_alloc,
// recvmn, putma/putmna targets), cleared when it returns to the pool, so
// LCI_mbuffer_free can refuse a buffer that is not the program's to free.
// Memory of one packet: header | LCI_MEDIUM_SIZE payload | trailer room.
struct endpoint;
struct packet {
  union {
    struct {
      match_node node;
      uint32_t length;
      int32_t src_rank;
      uint32_t tag;        // the whole tag (its upper half from a tag_suffix)
      msg_kind kind;       // the message's own kind (never `tagged`)
    } in;
    struct {
      LCI_comp_t comp;
      void* user_context;
      void* user_address;  // the buffer as the caller passed it
      endpoint* ep;        // for fences
      uint32_t length;
      int32_t rank;
      uint16_t tag_hi;     // the tag's upper half (the lower half is imm's)
      bool keep;           // the caller's LCI buffer: not freed at completion
      uint8_t extra;       // bytes sent past `length` (trailer, tag suffix): for a resend
      uint32_t imm;        // the header it was sent with: for a resend
      uint32_t tag() const { return uint32_t{tag_hi} << 16 | imm_tag(imm); }
    } out;
  };
  bool user_owned;

  char* payload() { return reinterpret_cast<char*>(this) + packet_header_size; }
  static packet* of_payload(void* p) {
    return reinterpret_cast<packet*>(static_cast<char*>(p) - packet_header_size);
  }
};
static_assert(sizeof(packet) <= packet_header_size, "packet header too large");
// Bytes a packet occupies in its slab beyond LCI_PACKET_SIZE: room for a
// trailer after a full payload, keeping packets 64-byte aligned.
inline constexpr size_t packet_slack = 64;

}  // namespace lci

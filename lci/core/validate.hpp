// Arriving messages that fail validation: the header fields and payload
// counts of every message are checked before the core uses them (see
// on_arrival in progress.cpp); one that fails is dropped, its packet returned
// to the pool, and a warning names the field and the source rank (at most
// one line a second, with the count of drops so far).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lci/core/protocol.hpp"

namespace lci {

struct device;
struct packet;

// Messages dropped by this process since it started.
extern std::atomic<uint64_t> g_dropped_messages;

// Counts and reports a dropped message (rate-limited warning).
void report_dropped(const char* what, const char* field, int rank);
// The same, and returns the message's packet to d's pool.
void drop_message(device& d, packet* p, const char* what, const char* field, int rank);

// The kinds other than two-sided short and medium messages, out of line so
// that the check of those two stays a few compares in the caller.
[[gnu::noinline]] inline const char* invalid_field_other(uint32_t imm, size_t len,
                                                         const char* payload) {
  switch (imm_kind(imm)) {
    // The receiver copies LCI_SHORT_SIZE bytes of a short message whatever
    // its length: a shorter one would hand it stale bytes of the packet.
    case msg_kind::short_msg:
    case msg_kind::am_short:
      return len == LCI_SHORT_SIZE ? nullptr : "length (short message)";
    case msg_kind::am_short_c:
      return len == LCI_SHORT_SIZE + trailer_size ? nullptr : "length (short message)";
    case msg_kind::medium:
    case msg_kind::am_medium:
      return len <= static_cast<size_t>(LCI_MEDIUM_SIZE) ? nullptr : "length";
    case msg_kind::am_medium_c:
    case msg_kind::put_to:
    case msg_kind::net:
      // (The receive size leaves room for a tag suffix too: the payload
      // is bounded here.)
      if (len < trailer_size) return "length (no trailer)";
      return len - trailer_size <= static_cast<size_t>(LCI_MEDIUM_SIZE) ? nullptr : "length";
    case msg_kind::rts:
    case msg_kind::rts_alloc: {
      if (len < sizeof(rts_payload)) return "length (truncated RTS)";
      rts_payload h;
      memcpy(&h, payload, sizeof(h));
      const uint64_t extra = uint64_t{h.count} * sizeof(uint64_t) + h.piggy_length;
      return extra <= len - sizeof(rts_payload) ? nullptr : "RTS count";
    }
    case msg_kind::notify: {
      if (len < sizeof(notify_payload)) return "length (truncated notify)";
      notify_payload n;
      memcpy(&n, payload, sizeof(n));
      if (n.type == LCI_LONG) return nullptr;
      if (n.type != LCI_IOVEC) return "notify type";
      const uint64_t room = len - sizeof(notify_payload);
      const uint64_t buffers = uint64_t{n.count} * sizeof(notify_buffer);
      if (buffers > room) return "notify count";
      // putv: the piggy-back bytes follow; getv: they are answered in one message.
      if (n.reply_id != 0)
        return n.length <= static_cast<size_t>(LCI_MEDIUM_SIZE) - sizeof(fin_payload)
                   ? nullptr
                   : "notify length";
      return n.length <= room - buffers ? nullptr : "notify length";
    }
    case msg_kind::tagged: {
      // The suffix names a kind of 0..9 and a non-zero upper half; the rest
      // is checked as a message of that kind.
      if (len < tag_suffix_size) return "length (no tag suffix)";
      tag_suffix t;
      memcpy(&t, payload + len - tag_suffix_size, sizeof(t));
      if (static_cast<uint8_t>(t.kind) >= static_cast<uint8_t>(msg_kind::tagged) ||
          t.tag_hi == 0 || t.zero != 0)
        return "tag suffix";
      const uint32_t inner = static_cast<uint32_t>(t.kind) << 28 | (imm & 0x0fffffffu);
      return invalid_field_other(inner, len - tag_suffix_size, payload);
    }
    case msg_kind::control:
      switch (static_cast<control_kind>(imm_endpoint(imm))) {
        case control_kind::rtr: {
          if (len < offsetof(rtr_payload, buffers)) return "length (truncated RTR)";
          uint32_t count;
          memcpy(&count, payload + offsetof(rtr_payload, count), sizeof(count));
          return uint64_t{count} * sizeof(rtr_payload::remote) <=
                         len - offsetof(rtr_payload, buffers)
                     ? nullptr
                     : "RTR count";
        }
        case control_kind::fin:
        case control_kind::nack:
        case control_kind::abort:
        case control_kind::getv_reply:
          return len >= sizeof(fin_payload) ? nullptr : "length (truncated control message)";
        case control_kind::gfence: {
          if (len < sizeof(gfence_payload)) return "length (truncated gfence)";
          gfence_payload g;
          memcpy(&g, payload, sizeof(g));
          return g.endpoint <= static_cast<uint32_t>(max_endpoint_index) ? nullptr
                                                                         : "gfence endpoint";
        }
      }
      return "control kind";
    default:
      return "kind";
  }
}

// The first field of an arriving message that is not valid, or nullptr:
// `len` bytes arrived at `payload` (a receive buffer of `recv_size` bytes)
// with immediate data `imm` from `src_rank`. Checked: the source rank, the
// kind, the length against the receive size and each kind's minimum, and
// the counts inside the payload against the length. (The endpoint index is
// checked where it is looked up; rendezvous ids where the operation is
// looked up.) It reads nothing but its arguments, the payload and the
// LCI_NUM_PROCESSES and LCI_MEDIUM_SIZE globals, so a fuzzer
// (tests/fuzz/fuzz_wire_header.cpp) drives it without a device.
inline const char* invalid_field(uint32_t imm, int src_rank, size_t len, const char* payload,
                                 size_t recv_size) {
  if (static_cast<uint32_t>(src_rank) >= static_cast<uint32_t>(LCI_NUM_PROCESSES))
    return "source rank";
  if (len > recv_size) return "length";
  switch (imm_kind(imm)) {
    case msg_kind::medium:
      return len <= static_cast<size_t>(LCI_MEDIUM_SIZE) ? nullptr : "length";
    case msg_kind::short_msg:
      return len == LCI_SHORT_SIZE ? nullptr : "length (short message)";
    default:
      return invalid_field_other(imm, len, payload);
  }
}

}  // namespace lci

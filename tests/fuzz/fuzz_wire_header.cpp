// Fuzzes the validation of arriving messages (invalid_field in
// lci/core/validate.hpp, which on_arrival calls before any handler) with
// any header, source rank, length and payload, and checks that every
// message it accepts holds what the handler of its kind then reads: the
// payload is copied into a buffer of exactly the arrived length, and the
// reads each handler makes (eager.cpp on_eager_put, rma.cpp on_notify
// and on_getv_reply, rendezvous.cpp complete_rts/on_rts_alloc/on_rtr and
// the other controls, eager.hpp complete_eager) are made on it, so AddressSanitizer reports any byte a
// handler would take from beyond the message.
//
// Input: imm (4 bytes) | source rank (2) | job size (2) | length (4) | payload.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "lci.h"
#include "lci/core/validate.hpp"
#include "tests/fuzz/fuzz_util.hpp"

int LCI_NUM_PROCESSES = 1;
int LCI_MEDIUM_SIZE = 8192 - lci::packet_header_size;

namespace {

using namespace lci;
using lci::fuzz::require;

uint32_t take_u32(const uint8_t*& p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  p += 4;
  return v;
}
uint16_t take_u16(const uint8_t*& p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  p += 2;
  return v;
}

// Reads `n` bytes at `at` as a handler would (memcpy out of the packet).
volatile unsigned char g_sink;
void touch(const char* at, size_t n) {
  unsigned char x = 0;
  for (size_t i = 0; i < n; ++i) x ^= static_cast<unsigned char>(at[i]);
  g_sink = x;
}

// What the handler of an accepted message reads, given its length.
void read_as_handler(uint32_t imm, const char* payload, size_t len) {
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  switch (imm_kind(imm)) {
    case msg_kind::tagged: {
      // progress.cpp on_tagged: the suffix, then the message without it as
      // one of the kind it names (never `tagged` again).
      require(len >= tag_suffix_size);
      tag_suffix s;
      std::memcpy(&s, payload + len - tag_suffix_size, sizeof(s));
      require(s.kind < msg_kind::tagged && s.tag_hi != 0);
      read_as_handler(static_cast<uint32_t>(s.kind) << 28 | (imm & 0x0fffffffu), payload,
                      len - tag_suffix_size);
      return;
    }
    case msg_kind::short_msg:
    case msg_kind::am_short:
      touch(payload, LCI_SHORT_SIZE);  // the immediate data
      return;
    case msg_kind::medium:
    case msg_kind::am_medium:
      require(len <= medium);
      touch(payload, len);
      return;
    case msg_kind::am_short_c:
    case msg_kind::am_medium_c:
    case msg_kind::put_to:
    case msg_kind::net: {
      require(len >= trailer_size);
      const size_t data = len - trailer_size;
      require(data <= medium);
      touch(payload + data, trailer_size);
      touch(payload, imm_kind(imm) == msg_kind::am_short_c ? LCI_SHORT_SIZE : data);
      return;
    }
    case msg_kind::rts:
    case msg_kind::rts_alloc: {
      rts_payload h;
      std::memcpy(&h, payload, sizeof(h));
      const char* extra = payload + sizeof(rts_payload);
      touch(extra, sizeof(uint64_t) * h.count);  // the iovec's lengths
      touch(extra + sizeof(uint64_t) * h.count, h.piggy_length);
      return;
    }
    case msg_kind::notify: {
      notify_payload n;
      std::memcpy(&n, payload, sizeof(n));
      if (n.type != LCI_IOVEC) return;
      const char* extra = payload + sizeof(n);
      touch(extra, sizeof(notify_buffer) * n.count);
      if (n.reply_id)  // getv: answered with fin_payload + length bytes in one message
        require(sizeof(fin_payload) + n.length <= medium);
      else
        touch(extra + sizeof(notify_buffer) * n.count, n.length);
      return;
    }
    case msg_kind::control:
      switch (static_cast<control_kind>(imm_endpoint(imm))) {
        case control_kind::rtr: {
          uint32_t count;
          std::memcpy(&count, payload + offsetof(rtr_payload, count), sizeof(count));
          touch(payload, offsetof(rtr_payload, buffers) + sizeof(rtr_payload::remote) * count);
          return;
        }
        case control_kind::fin:
        case control_kind::nack:
        case control_kind::abort:
          touch(payload, sizeof(fin_payload));
          return;
        case control_kind::getv_reply:
          touch(payload, len);
          return;
        case control_kind::gfence: {
          gfence_payload g;
          std::memcpy(&g, payload, sizeof(g));
          require(g.endpoint <= static_cast<uint32_t>(max_endpoint_index));
          return;
        }
      }
      require(false);  // an unknown control kind must have been refused
      return;
    default:
      require(false);  // an unknown kind must have been refused
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 12) return 0;
  const uint8_t* p = data;
  const uint32_t imm = take_u32(p);
  const int src_rank = static_cast<int16_t>(take_u16(p));
  LCI_NUM_PROCESSES = 1 + take_u16(p) % 1024;
  const size_t recv_size = static_cast<size_t>(LCI_MEDIUM_SIZE) + max_extra_bytes;
  // Lengths past the receive size are possible (a lying backend) but rare.
  const size_t len = take_u32(p) % (recv_size + 64);
  const size_t have = size - 12;

  // The arrived bytes: the payload given, zeros after it, nothing more
  // (a heap block of exactly len bytes, so a read past it is reported).
  std::unique_ptr<char[]> arrived(new char[len]());
  std::memcpy(arrived.get(), p, have < len ? have : len);
  const char* bad = invalid_field(imm, src_rank, len, arrived.get(), recv_size);
  if (bad) return 0;
  require(src_rank >= 0 && src_rank < LCI_NUM_PROCESSES);
  require(len <= recv_size);
  read_as_handler(imm, arrived.get(), len);
  return 0;
}

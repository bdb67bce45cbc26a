// The wire format both sides of a connection depend on (lci/core/protocol.hpp)
// and the validation of arriving headers (lci/core/validate.hpp), without a
// runtime: the immediate-data fields and their limits, the trailer and the
// control payloads' sizes and offsets, and invalid_field on hand-built
// messages (valid ones accepted, each bad field rejected with its reason).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "lci/core/protocol.hpp"
#include "lci/core/validate.hpp"

using namespace lci;

namespace {

constexpr msg_kind k_all_kinds[] = {
    msg_kind::short_msg, msg_kind::medium,   msg_kind::rts,         msg_kind::am_short,
    msg_kind::am_short_c, msg_kind::am_medium, msg_kind::am_medium_c, msg_kind::put_to,
    msg_kind::rts_alloc, msg_kind::notify,   msg_kind::tagged,      msg_kind::net,
    msg_kind::control};

// The reason as a string ("" for an accepted message), so doctest prints it.
std::string reason(const char* r) { return r ? r : ""; }

// A job of 4 ranks with 8 KiB packets: the globals invalid_field reads.
constexpr int k_ranks = 4;
constexpr int k_medium = 8192 - packet_header_size;
void set_job_globals() {
  LCI_NUM_PROCESSES = k_ranks;
  LCI_MEDIUM_SIZE = k_medium;
}

// Checks a message of `bytes` with immediate `imm` from rank 1, arriving in a
// receive buffer of LCI_MEDIUM_SIZE + max_extra_bytes bytes (the device's).
std::string check_message(uint32_t imm, const std::vector<char>& bytes) {
  return reason(invalid_field(imm, 1, bytes.size(), bytes.data(),
                              static_cast<size_t>(LCI_MEDIUM_SIZE) + max_extra_bytes));
}

// `bytes` as a `tagged` message of kind k with tag_hi (and `zero`) appended.
std::vector<char> with_suffix(std::vector<char> bytes, msg_kind k, uint16_t tag_hi,
                              uint8_t zero = 0) {
  const tag_suffix s{tag_hi, k, zero};
  const char* p = reinterpret_cast<const char*>(&s);
  bytes.insert(bytes.end(), p, p + sizeof(s));
  return bytes;
}

template <class T>
std::vector<char> bytes_of(const T& v, size_t extra = 0) {
  std::vector<char> out(sizeof(T) + extra, 0);
  memcpy(out.data(), &v, sizeof(T));
  return out;
}

rts_payload make_rts(uint32_t count, uint32_t piggy) {
  rts_payload h{};
  h.send_id = 7;
  h.size = 1 << 20;
  h.count = count;
  h.piggy_length = piggy;
  return h;
}

notify_payload make_notify(uint32_t type, uint32_t count, uint64_t length, uint64_t reply_id) {
  notify_payload n{};
  n.type = type;
  n.count = count;
  n.length = length;
  n.reply_id = reply_id;
  return n;
}

}  // namespace

TEST_CASE("protocol: make_imm and imm_* round-trip every field at its limits") {
  for (msg_kind k : k_all_kinds) {
    for (uint32_t ep : {0u, 1u, 0x7ffu, 0xfffu}) {
      for (uint32_t tag : {0u, 1u, 0x8000u, 0xffffu}) {
        const uint32_t imm = make_imm(k, ep, tag);
        CHECK(imm_kind(imm) == k);
        CHECK(imm_endpoint(imm) == ep);
        CHECK(imm_tag(imm) == tag);
      }
    }
  }
  // The field layout: kind in the top 4 bits, endpoint in the next 12, tag
  // in the low 16.
  CHECK(make_imm(msg_kind::medium, 0, 0) == 0x10000000u);
  CHECK(make_imm(msg_kind::short_msg, 0xfff, 0) == 0x0fff0000u);
  CHECK(make_imm(msg_kind::short_msg, 0, 0xffff) == 0x0000ffffu);
  CHECK(make_imm(msg_kind::control, 0xfff, 0xffff) == 0xffffffffu);
  // Out-of-range endpoints and tags are cut to their fields and never spill
  // into the neighbouring one.
  const uint32_t wide = make_imm(msg_kind::rts, 0x1234, 0x12345);
  CHECK(imm_kind(wide) == msg_kind::rts);
  CHECK(imm_endpoint(wide) == 0x234u);
  CHECK(imm_tag(wide) == 0x2345u);
  CHECK(make_imm(msg_kind::medium, 0x1000, 0) == make_imm(msg_kind::medium, 0, 0));
  CHECK(make_imm(msg_kind::medium, 0, 0x10000) == make_imm(msg_kind::medium, 0, 0));
  // The endpoint field holds every endpoint index.
  CHECK(imm_endpoint(make_imm(msg_kind::medium, max_endpoint_index, 0)) ==
        static_cast<uint32_t>(max_endpoint_index));
  static_assert(max_endpoint_index == 0xfff, "12 endpoint bits in the header");
}

TEST_CASE("protocol: kinds are distinct 4-bit values; write_imm is none of them") {
  for (size_t i = 0; i < sizeof(k_all_kinds) / sizeof(k_all_kinds[0]); ++i) {
    CHECK(static_cast<uint32_t>(k_all_kinds[i]) < 16u);
    CHECK(k_all_kinds[i] != write_imm_kind);
    for (size_t j = i + 1; j < sizeof(k_all_kinds) / sizeof(k_all_kinds[0]); ++j)
      CHECK(k_all_kinds[i] != k_all_kinds[j]);
  }
  CHECK(static_cast<uint32_t>(write_imm_kind) == 14u);
  CHECK(static_cast<uint32_t>(msg_kind::control) == 15u);
}

TEST_CASE("protocol: control and write immediates") {
  for (control_kind c : {control_kind::rtr, control_kind::fin, control_kind::nack,
                         control_kind::gfence, control_kind::getv_reply, control_kind::abort}) {
    const uint32_t imm = make_control_imm(c);
    CHECK(imm_kind(imm) == msg_kind::control);
    CHECK(imm_endpoint(imm) == static_cast<uint32_t>(c));
    CHECK(imm_tag(imm) == 0u);
  }
  CHECK(rdv_id_bits == 28u);
  CHECK(rdv_id_mask == 0x0fffffffu);
  for (uint32_t id : {0u, 1u, 0x1234567u, rdv_id_mask}) {
    const uint32_t imm = make_write_imm(id);
    CHECK(imm_kind(imm) == write_imm_kind);
    CHECK(imm_rdv_id(imm) == id);
  }
  // An id beyond 28 bits is cut and leaves the kind intact.
  CHECK(imm_kind(make_write_imm(0xffffffffu)) == write_imm_kind);
  CHECK(imm_rdv_id(make_write_imm(0xffffffffu)) == rdv_id_mask);
  CHECK(imm_rdv_id(make_write_imm(rdv_id_mask + 1)) == 0u);
}

TEST_CASE("protocol: exactly the completion-carrying kinds have a trailer") {
  for (msg_kind k : k_all_kinds) {
    const bool expected =
        k == msg_kind::am_short_c || k == msg_kind::am_medium_c || k == msg_kind::put_to;
    CHECK(has_trailer(k) == expected);
  }
  CHECK_FALSE(has_trailer(write_imm_kind));
}

TEST_CASE("protocol: trailer layout") {
  static_assert(std::is_standard_layout<trailer>::value, "trailer is copied as bytes");
  static_assert(std::is_trivially_copyable<trailer>::value, "trailer is copied as bytes");
  CHECK(sizeof(trailer) == trailer_size);
  CHECK(trailer_size == 16u);
  CHECK(offsetof(trailer, address) == 0u);
  CHECK(offsetof(trailer, comp) == 8u);
  // A full-size medium payload plus its trailer fits in a packet's slack.
  CHECK(packet_slack >= trailer_size);
  CHECK(sizeof(packet) <= static_cast<size_t>(packet_header_size));
  CHECK(packet_header_size % 64 == 0);
  CHECK(packet_slack % 64 == 0);
}

TEST_CASE("protocol: payload sizes and offsets") {
  static_assert(std::is_trivially_copyable<rts_payload>::value, "sent as bytes");
  static_assert(std::is_trivially_copyable<notify_payload>::value, "sent as bytes");
  static_assert(std::is_trivially_copyable<rtr_payload>::value, "sent as bytes");
  static_assert(std::is_trivially_copyable<gfence_payload>::value, "sent as bytes");

  CHECK(sizeof(rts_payload) == 32u);
  CHECK(offsetof(rts_payload, send_id) == 0u);
  CHECK(offsetof(rts_payload, size) == 8u);
  CHECK(offsetof(rts_payload, comp) == 16u);
  CHECK(offsetof(rts_payload, count) == 24u);
  CHECK(offsetof(rts_payload, piggy_length) == 28u);

  CHECK(sizeof(notify_payload) == 48u);
  CHECK(offsetof(notify_payload, comp) == 0u);
  CHECK(offsetof(notify_payload, segment) == 8u);
  CHECK(offsetof(notify_payload, address) == 16u);
  CHECK(offsetof(notify_payload, length) == 24u);
  CHECK(offsetof(notify_payload, reply_id) == 32u);
  CHECK(offsetof(notify_payload, type) == 40u);
  CHECK(offsetof(notify_payload, count) == 44u);
  CHECK(sizeof(notify_buffer) == 24u);

  CHECK(offsetof(rtr_payload, send_id) == 0u);
  CHECK(offsetof(rtr_payload, recv_id) == 8u);
  CHECK(offsetof(rtr_payload, count) == 16u);
  CHECK(offsetof(rtr_payload, buffers) == 24u);
  CHECK(sizeof(rtr_payload::remote) == 24u);
  CHECK(sizeof(rtr_payload) == 24u + sizeof(rtr_payload::remote));

  CHECK(sizeof(fin_payload) == 8u);
  CHECK(sizeof(gfence_payload) == 16u);
  CHECK(offsetof(gfence_payload, endpoint) == 0u);
  CHECK(offsetof(gfence_payload, round) == 4u);
  CHECK(offsetof(gfence_payload, issued) == 8u);
}

TEST_CASE("validate: well-formed messages of every kind are accepted") {
  set_job_globals();
  const std::vector<char> short_bytes(LCI_SHORT_SIZE, 'x');
  const std::vector<char> short_c(LCI_SHORT_SIZE + trailer_size, 'x');
  CHECK(check_message(make_imm(msg_kind::short_msg, 0, 5), short_bytes) == "");
  CHECK(check_message(make_imm(msg_kind::am_short, 3, 5), short_bytes) == "");
  CHECK(check_message(make_imm(msg_kind::am_short_c, 3, 5), short_c) == "");
  for (size_t len : {size_t{0}, size_t{1}, static_cast<size_t>(k_medium)}) {
    const std::vector<char> m(len, 'm');
    CHECK(check_message(make_imm(msg_kind::medium, 0, 1), m) == "");
    CHECK(check_message(make_imm(msg_kind::am_medium, 0, 1), m) == "");
  }
  const std::vector<char> tr(trailer_size, 0), full_tr(k_medium + trailer_size, 0);
  CHECK(check_message(make_imm(msg_kind::am_medium_c, 0, 1), tr) == "");
  CHECK(check_message(make_imm(msg_kind::put_to, 0, 1), tr) == "");
  CHECK(check_message(make_imm(msg_kind::put_to, 0, 1), full_tr) == "");
  CHECK(check_message(make_imm(msg_kind::net, 0, 1), tr) == "");
  CHECK(check_message(make_imm(msg_kind::net, 0, 1), full_tr) == "");

  // Long (count 0) and iovec RTS with their lengths and piggy-back bytes.
  CHECK(check_message(make_imm(msg_kind::rts, 0, 1), bytes_of(make_rts(0, 0))) == "");
  CHECK(check_message(make_imm(msg_kind::rts, 0, 1),
                      bytes_of(make_rts(3, 10), 3 * sizeof(uint64_t) + 10)) == "");
  CHECK(check_message(make_imm(msg_kind::rts_alloc, 0, 1),
                      bytes_of(make_rts(2, 0), 2 * sizeof(uint64_t))) == "");

  // notify: a long target, a putv with its piggy-back bytes, a getv.
  CHECK(check_message(make_imm(msg_kind::notify, 0, 1),
                      bytes_of(make_notify(LCI_LONG, 0, 1 << 30, 0))) == "");
  CHECK(check_message(make_imm(msg_kind::notify, 0, 1),
                      bytes_of(make_notify(LCI_IOVEC, 2, 100, 0),
                               2 * sizeof(notify_buffer) + 100)) == "");
  CHECK(check_message(
            make_imm(msg_kind::notify, 0, 1),
            bytes_of(make_notify(LCI_IOVEC, 1, k_medium - sizeof(fin_payload), 9),
                     sizeof(notify_buffer))) == "");

  // Control messages.
  std::vector<char> rtr(offsetof(rtr_payload, buffers) + 2 * sizeof(rtr_payload::remote), 0);
  const uint32_t two = 2;
  memcpy(rtr.data() + offsetof(rtr_payload, count), &two, sizeof(two));
  CHECK(check_message(make_control_imm(control_kind::rtr), rtr) == "");
  const std::vector<char> fin(sizeof(fin_payload), 0);
  for (control_kind c :
       {control_kind::fin, control_kind::nack, control_kind::abort, control_kind::getv_reply})
    CHECK(check_message(make_control_imm(c), fin) == "");
  std::vector<char> reply(sizeof(fin_payload) + 100, 0);
  CHECK(check_message(make_control_imm(control_kind::getv_reply), reply) == "");
  gfence_payload g{};
  g.endpoint = static_cast<uint32_t>(max_endpoint_index);
  g.round = 3;
  g.issued = 12;
  CHECK(check_message(make_control_imm(control_kind::gfence), bytes_of(g)) == "");

  // Every source rank of the job.
  for (int rank = 0; rank < k_ranks; ++rank)
    CHECK(reason(invalid_field(make_imm(msg_kind::medium, 0, 0), rank, 0, nullptr, 0)) == "");
}

TEST_CASE("validate: source rank and receive size") {
  set_job_globals();
  const std::vector<char> m(10, 0);
  const uint32_t imm = make_imm(msg_kind::medium, 0, 0);
  CHECK(reason(invalid_field(imm, k_ranks, m.size(), m.data(), 100)) == "source rank");
  CHECK(reason(invalid_field(imm, -1, m.size(), m.data(), 100)) == "source rank");
  CHECK(reason(invalid_field(imm, 1 << 20, m.size(), m.data(), 100)) == "source rank");
  // More bytes than the receive buffer holds, whatever the kind.
  CHECK(reason(invalid_field(imm, 0, m.size(), m.data(), m.size() - 1)) == "length");
  CHECK(reason(invalid_field(make_control_imm(control_kind::fin), 0, m.size(), m.data(), 9)) ==
        "length");
  CHECK(reason(invalid_field(imm, 0, m.size(), m.data(), m.size())) == "");
}

TEST_CASE("validate: bad lengths of eager messages") {
  set_job_globals();
  for (size_t len : {size_t{0}, size_t{LCI_SHORT_SIZE - 1}, size_t{LCI_SHORT_SIZE + 1}}) {
    const std::vector<char> b(len, 0);
    CHECK(check_message(make_imm(msg_kind::short_msg, 0, 0), b) == "length (short message)");
    CHECK(check_message(make_imm(msg_kind::am_short, 0, 0), b) == "length (short message)");
  }
  CHECK(check_message(make_imm(msg_kind::am_short_c, 0, 0), std::vector<char>(LCI_SHORT_SIZE)) ==
        "length (short message)");
  CHECK(check_message(make_imm(msg_kind::am_short_c, 0, 0),
                      std::vector<char>(LCI_SHORT_SIZE + trailer_size + 1)) ==
        "length (short message)");
  const std::vector<char> too_long(k_medium + 1, 0);
  CHECK(check_message(make_imm(msg_kind::medium, 0, 0), too_long) == "length");
  CHECK(check_message(make_imm(msg_kind::am_medium, 0, 0), too_long) == "length");
  // A tag suffix does not make room for a longer payload.
  CHECK(check_message(make_imm(msg_kind::tagged, 0, 0),
                      with_suffix(too_long, msg_kind::medium, 1)) == "length");
  const std::vector<char> no_trailer(trailer_size - 1, 0);
  CHECK(check_message(make_imm(msg_kind::am_medium_c, 0, 0), no_trailer) == "length (no trailer)");
  CHECK(check_message(make_imm(msg_kind::put_to, 0, 0), no_trailer) == "length (no trailer)");
  CHECK(check_message(make_imm(msg_kind::net, 0, 0), no_trailer) == "length (no trailer)");
  // The receive buffer has room for a trailer and a tag suffix past a full
  // payload: a payload longer than LCI_MEDIUM_SIZE is refused all the same.
  const std::vector<char> long_tr(k_medium + tag_suffix_size + trailer_size, 0);
  CHECK(check_message(make_imm(msg_kind::am_medium_c, 0, 0), long_tr) == "length");
  CHECK(check_message(make_imm(msg_kind::put_to, 0, 0), long_tr) == "length");
  CHECK(check_message(make_imm(msg_kind::net, 0, 0), long_tr) == "length");
}

TEST_CASE("validate: RTS counts against the length") {
  set_job_globals();
  for (msg_kind k : {msg_kind::rts, msg_kind::rts_alloc}) {
    CAPTURE(static_cast<int>(k));
    std::vector<char> truncated = bytes_of(make_rts(0, 0));
    truncated.pop_back();
    CHECK(check_message(make_imm(k, 0, 0), truncated) == "length (truncated RTS)");
    // Lengths or piggy-back bytes announced beyond what arrived.
    CHECK(check_message(make_imm(k, 0, 0), bytes_of(make_rts(1, 0))) == "RTS count");
    CHECK(check_message(make_imm(k, 0, 0), bytes_of(make_rts(0, 1))) == "RTS count");
    CHECK(check_message(make_imm(k, 0, 0),
                        bytes_of(make_rts(3, 10), 3 * sizeof(uint64_t) + 9)) == "RTS count");
    // Counts whose byte total would overflow 32 bits are still caught.
    CHECK(check_message(make_imm(k, 0, 0), bytes_of(make_rts(0xffffffffu, 0xffffffffu), 64)) ==
          "RTS count");
  }
}

TEST_CASE("validate: notify type, count and length") {
  set_job_globals();
  const uint32_t imm = make_imm(msg_kind::notify, 0, 0);
  std::vector<char> truncated = bytes_of(make_notify(LCI_LONG, 0, 0, 0));
  truncated.pop_back();
  CHECK(check_message(imm, truncated) == "length (truncated notify)");
  CHECK(check_message(imm, bytes_of(make_notify(LCI_MEDIUM, 0, 0, 0))) == "notify type");
  CHECK(check_message(imm, bytes_of(make_notify(77, 0, 0, 0))) == "notify type");
  CHECK(check_message(imm, bytes_of(make_notify(LCI_IOVEC, 2, 0, 0), sizeof(notify_buffer))) ==
        "notify count");
  CHECK(check_message(imm, bytes_of(make_notify(LCI_IOVEC, 0xffffffffu, 0, 0), 64)) ==
        "notify count");
  // putv: piggy-back bytes beyond the message.
  CHECK(check_message(imm, bytes_of(make_notify(LCI_IOVEC, 1, 11, 0),
                                    sizeof(notify_buffer) + 10)) == "notify length");
  // getv: more piggy-back bytes than one reply can carry.
  CHECK(check_message(imm, bytes_of(make_notify(LCI_IOVEC, 1, k_medium - sizeof(fin_payload) + 1,
                                                9),
                                    sizeof(notify_buffer))) == "notify length");
}

TEST_CASE("validate: control messages") {
  set_job_globals();
  const uint32_t rtr_imm = make_control_imm(control_kind::rtr);
  CHECK(check_message(rtr_imm, std::vector<char>(offsetof(rtr_payload, buffers) - 1)) ==
        "length (truncated RTR)");
  // An RTR with no buffer is as long as its fixed part.
  CHECK(check_message(rtr_imm, std::vector<char>(offsetof(rtr_payload, buffers))) == "");
  std::vector<char> rtr(offsetof(rtr_payload, buffers) + sizeof(rtr_payload::remote), 0);
  for (uint32_t count : {2u, 0xffffffffu}) {
    memcpy(rtr.data() + offsetof(rtr_payload, count), &count, sizeof(count));
    CHECK(check_message(rtr_imm, rtr) == "RTR count");
  }
  for (control_kind c :
       {control_kind::fin, control_kind::nack, control_kind::abort, control_kind::getv_reply})
    CHECK(check_message(make_control_imm(c), std::vector<char>(sizeof(fin_payload) - 1)) ==
          "length (truncated control message)");
  const uint32_t gfence_imm = make_control_imm(control_kind::gfence);
  CHECK(check_message(gfence_imm, std::vector<char>(sizeof(gfence_payload) - 1)) ==
        "length (truncated gfence)");
  gfence_payload g{};
  g.endpoint = static_cast<uint32_t>(max_endpoint_index) + 1;
  CHECK(check_message(gfence_imm, bytes_of(g)) == "gfence endpoint");
  g.endpoint = 0xffffffffu;
  CHECK(check_message(gfence_imm, bytes_of(g)) == "gfence endpoint");
  // Subkinds that do not exist.
  const std::vector<char> fin(sizeof(fin_payload), 0);
  for (uint32_t sub : {0u, 7u, 0xfffu})
    CHECK(check_message(make_imm(msg_kind::control, sub, 0), fin) == "control kind");
}

TEST_CASE("protocol: tag suffix layout") {
  static_assert(std::is_trivially_copyable<tag_suffix>::value, "sent as bytes");
  CHECK(sizeof(tag_suffix) == tag_suffix_size);
  CHECK(offsetof(tag_suffix, tag_hi) == 0u);
  CHECK(offsetof(tag_suffix, kind) == 2u);
  CHECK(static_cast<uint32_t>(msg_kind::tagged) == 10u);
  CHECK_FALSE(is_wide_tag(0xffffu));
  CHECK(is_wide_tag(0x10000u));
  const tag_suffix s = make_tag_suffix(msg_kind::rts, 0xabcd1234u);
  CHECK(s.tag_hi == 0xabcdu);
  CHECK(s.kind == msg_kind::rts);
  CHECK(s.zero == 0);
  // A full medium payload with a trailer and a suffix fits a packet's slack.
  CHECK(packet_slack >= max_extra_bytes + 16);  // + the ofi backend's authentication trailer
}

TEST_CASE("validate: tagged messages are checked as their own kind") {
  set_job_globals();
  const uint32_t imm = make_imm(msg_kind::tagged, 3, 0x5678);
  for (size_t len : {size_t{0}, size_t{1}, static_cast<size_t>(k_medium)}) {
    const std::vector<char> m(len, 'm');
    CHECK(check_message(imm, with_suffix(m, msg_kind::medium, 0x1234)) == "");
    CHECK(check_message(imm, with_suffix(m, msg_kind::am_medium, 0xffff)) == "");
  }
  // The largest message: a full payload, a trailer and the suffix.
  CHECK(check_message(imm, with_suffix(std::vector<char>(k_medium + trailer_size),
                                       msg_kind::am_medium_c, 1)) == "");
  CHECK(check_message(imm, with_suffix(bytes_of(make_rts(0, 0)), msg_kind::rts, 1)) == "");
  CHECK(check_message(imm, with_suffix(bytes_of(make_rts(0, 0)), msg_kind::rts_alloc, 1)) == "");
  CHECK(check_message(imm, with_suffix(bytes_of(make_notify(LCI_LONG, 0, 8, 0)),
                                       msg_kind::notify, 7)) == "");
  CHECK(check_message(imm, with_suffix(std::vector<char>(LCI_SHORT_SIZE), msg_kind::short_msg,
                                       2)) == "");

  // No room for a suffix; a suffix naming no message kind, `tagged` itself
  // or a control message; an upper half of 0 (an ordinary message's tag);
  // a non-zero pad byte.
  CHECK(check_message(imm, std::vector<char>(tag_suffix_size - 1)) == "length (no tag suffix)");
  CHECK(check_message(imm, with_suffix({}, msg_kind::tagged, 1)) == "tag suffix");
  CHECK(check_message(imm, with_suffix({}, msg_kind::control, 1)) == "tag suffix");
  CHECK(check_message(imm, with_suffix({}, static_cast<msg_kind>(12), 1)) == "tag suffix");
  CHECK(check_message(imm, with_suffix({}, msg_kind::medium, 0)) == "tag suffix");
  CHECK(check_message(imm, with_suffix({}, msg_kind::medium, 1, 1)) == "tag suffix");
  // The rest is checked as the named kind, without the suffix.
  CHECK(check_message(imm, with_suffix(std::vector<char>(LCI_SHORT_SIZE + 1), msg_kind::short_msg,
                                       2)) == "length (short message)");
  CHECK(check_message(imm, with_suffix(std::vector<char>(trailer_size - 1), msg_kind::am_medium_c,
                                       2)) == "length (no trailer)");
  std::vector<char> rts = bytes_of(make_rts(1, 0));
  CHECK(check_message(imm, with_suffix(rts, msg_kind::rts, 3)) == "RTS count");
  // A receive buffer too small for the whole message.
  const std::vector<char> m = with_suffix(std::vector<char>(10), msg_kind::medium, 1);
  CHECK(reason(invalid_field(imm, 0, m.size(), m.data(), m.size() - 1)) == "length");
}

TEST_CASE("validate: kinds that never arrive as messages") {
  set_job_globals();
  const std::vector<char> b(64, 0);
  for (uint32_t k = 11; k < 15; ++k) {
    if (static_cast<msg_kind>(k) == msg_kind::net) continue;
    CAPTURE(k);
    CHECK(check_message(make_imm(static_cast<msg_kind>(k), 0, 0), b) == "kind");
  }
  // An RDMA write's immediate is not a message header.
  CHECK(check_message(make_write_imm(5), b) == "kind");
}

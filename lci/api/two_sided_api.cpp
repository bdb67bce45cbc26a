// C entry points: short and medium two-sided communication, medium buffers.
#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/core/eager.hpp"
#include "lci/util/log.hpp"

using namespace lci;

namespace {

// The hot sends and recvm end in a tail call (send_eager_entry,
// recvm_entry, eager.hpp), with no call before it that would make them
// save their arguments: once a peer has failed, they go through these
// instead, which refuse a failed rank first (peer_refused).
[[gnu::cold, gnu::noinline]] LCI_error_t send_after_failure(endpoint* e, uint32_t imm,
                                                            void* address, size_t length,
                                                            int rank, const char* call) noexcept {
  if (peer_failed(rank)) return LCI_ERR_FATAL;
  return send_eager_entry(e, imm, address, length, rank, call);
}

[[gnu::cold, gnu::noinline]] LCI_error_t recvm_after_failure(endpoint* e, uint64_t key, int rank,
                                                             void* buffer, size_t capacity,
                                                             LCI_comp_t completion,
                                                             void* user_context) noexcept {
  if (peer_failed(rank)) return LCI_ERR_FATAL;
  return recvm_entry(e, key, buffer, capacity, completion, user_context);
}

// send_eager_entry, or send_after_failure once a peer has failed.
[[gnu::always_inline]] inline LCI_error_t send_checked(LCI_endpoint_t ep, msg_kind kind,
                                                       void* address, size_t length, int rank,
                                                       LCI_tag_t tag, const char* call) noexcept {
  endpoint* e = to_endpoint(ep);
  const uint32_t imm = make_imm(kind, e->index, tag);
  if (__builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0))
    return send_after_failure(e, imm, address, length, rank, call);
  return send_eager_entry(e, imm, address, length, rank, call);
}

}  // namespace

// boundary: tail call
LCI_error_t LCI_sends(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag) noexcept {
  LCI_ALWAYS_SEND("LCI_sends", ep, rank, tag);
  return send_checked(ep, msg_kind::short_msg, &src, LCI_SHORT_SIZE, rank, tag, "LCI_sends");
}

LCI_error_t LCI_recvs(LCI_endpoint_t ep, int rank, LCI_tag_t tag, LCI_comp_t completion,
                      void* user_context) noexcept try {
  LCI_ALWAYS_RECV("LCI_recvs", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_port_comp("LCI_recvs", "completion", ep, LCI_PORT_MESSAGE, completion, false));
  endpoint* e = to_endpoint(ep);
  post_recv_plain(e, recv_key(e, rank, tag), nullptr, 0, completion, user_context);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// boundary: tail call
LCI_error_t LCI_sendm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                      LCI_tag_t tag) noexcept {
  LCI_ALWAYS_SEND("LCI_sendm", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_sendm", ep, "buffer", buffer);
  LCI_CHECK(debug::check_medium_length("LCI_sendm", "buffer", buffer));
  return send_checked(ep, msg_kind::medium, buffer.address, buffer.length, rank, tag, "LCI_sendm");
}

// boundary: tail call
LCI_error_t LCI_sendmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                       LCI_tag_t tag) noexcept {
  LCI_ALWAYS_SEND("LCI_sendmn", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_sendmn", ep, "buffer", buffer);
  LCI_CHECK(debug::check_medium_length("LCI_sendmn", "buffer", buffer));
  return send_checked(ep, msg_kind::medium, buffer.address, buffer.length, rank, tag, "LCI_sendmn");
}

LCI_error_t LCI_sendmc(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                       LCI_comp_t completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_sendmc", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_sendmc", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_sendmc", "buffer", buffer));
  LCI_CHECK(debug::check_port_comp("LCI_sendmc", "completion", ep, LCI_PORT_COMMAND, completion, false));
  endpoint* e = to_endpoint(ep);
  if (e->cmd_comp_type == LCI_COMPLETION_NONE) completion = nullptr;
  return to_error(send_eager(e, msg_kind::medium, buffer.address, buffer.length, rank, tag, completion,
                    user_context, true));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// boundary: tail call
LCI_error_t LCI_recvm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                      LCI_comp_t completion, void* user_context) noexcept {
  LCI_ALWAYS_RECV("LCI_recvm", ep, rank, tag);
  // The buffer may be larger than any medium message; it must exist.
  LCI_CHECK(buffer.address || !buffer.length
                ? LCI_OK
                : debug::fail("LCI_recvm", "argument buffer.address is NULL with length %zu",
                              buffer.length));
  LCI_CHECK(debug::check_port_comp("LCI_recvm", "completion", ep, LCI_PORT_MESSAGE, completion, false));
  endpoint* e = to_endpoint(ep);
  if (__builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0))
    return recvm_after_failure(e, recv_key(e, rank, tag), rank, buffer.address, buffer.length,
                               completion, user_context);
  return recvm_entry(e, recv_key(e, rank, tag), buffer.address, buffer.length, completion,
                     user_context);
}

LCI_error_t LCI_recvmn(LCI_endpoint_t ep, int rank, LCI_tag_t tag, LCI_comp_t completion,
                       void* user_context) noexcept try {
  LCI_ALWAYS_RECV("LCI_recvmn", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_port_comp("LCI_recvmn", "completion", ep, LCI_PORT_MESSAGE, completion, true));
  endpoint* e = to_endpoint(ep);
  post_recv_packet(e, recv_key(e, rank, tag), completion, user_context);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_mbuffer_alloc(LCI_device_t device, LCI_mbuffer_t* mbuffer) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_mbuffer_alloc", "device", device);
  LCI_CHECK(debug::check_device("LCI_mbuffer_alloc", device));
  LCI_CHECK(mbuffer ? LCI_OK : debug::fail("LCI_mbuffer_alloc", "argument mbuffer is NULL"));
  packet* p = reinterpret_cast<lci::device*>(device)->get_send_packet();
  if (!p) return LCI_ERR_RETRY;
  device::hand_out(p);
  mbuffer->address = p->payload();
  mbuffer->length = static_cast<size_t>(LCI_MEDIUM_SIZE);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_mbuffer_free(LCI_mbuffer_t mbuffer) noexcept try {
  // The pool is found from the address (a few compares): an address inside
  // a packet but not at its payload frees that packet instead of reading a
  // header at a wrong place; an address outside every pool is refused.
  device* owner = foreign_pool_owner(mbuffer.address);
  LCI_CHECK(owner ? LCI_OK
                  : debug::fail("LCI_mbuffer_free",
                                "argument mbuffer.address (%p) is not an LCI medium buffer",
                                mbuffer.address));
  if (__builtin_expect(owner == nullptr, 0)) return LCI_ERR_FATAL;
  auto* p = static_cast<packet*>(owner->packets->packet_of(mbuffer.address));
  LCI_CHECK(p->payload() == mbuffer.address
                ? LCI_OK
                : debug::fail("LCI_mbuffer_free",
                              "argument mbuffer.address (%p) points inside an LCI medium buffer, "
                              "not at its start (%p)", mbuffer.address, (void*)p->payload()));
  LCI_CHECK(p->user_owned ? LCI_OK
                          : debug::fail("LCI_mbuffer_free",
                                        "argument mbuffer.address (%p) is not allocated (freed "
                                        "twice, or consumed by a send)", mbuffer.address));
  owner->put_packet(p);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// The argument checks of debug builds (the registry of live handles they
// consult is lci/core/handles.hpp).
#include "lci/api/check.hpp"

#include <cstdarg>
#include <cstdio>

#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/runtime.hpp"
#include "lci/util/log.hpp"

namespace lci::debug {

LCI_error_t fail(const char* call, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  log_message(log_level::error, "%s: %s", call, msg);
  return LCI_ERR_FATAL;
}

}  // namespace lci::debug

namespace lci::refuse {

LCI_error_t peer(const char* call, LCI_endpoint_t ep, int rank, LCI_tag_t tag) {
  if (ep == nullptr)
    return debug::fail(call, "argument ep is NULL (LCI_UR_ENDPOINT is NULL before LCI_initialize "
                             "and after LCI_finalize)");
  if (tag > 65535u)
    return debug::fail(call, "argument tag = %u is over LCI_MAX_TAG (%d)", tag, LCI_MAX_TAG);
  return debug::fail(call, "argument rank = %d is out of range [0, %d)", rank, LCI_NUM_PROCESSES);
}

LCI_error_t medium(const char* call, const char* arg, size_t length) {
  return debug::fail(call, "argument %s.length = %zu is over LCI_MEDIUM_SIZE (%d): send it with "
                     "the long protocol (LCI_sendl, LCI_putla) or raise LCI_PACKET_SIZE",
                     arg, length, LCI_MEDIUM_SIZE);
}

LCI_error_t null_handle(const char* call, const char* arg) {
  return debug::fail(call, "argument %s is NULL%s", arg,
                     g_initialized.load(std::memory_order_acquire)
                         ? ""
                         : " (LCI is not initialized: call LCI_initialize first)");
}

LCI_error_t rank(const char* call, const char* arg, int value) {
  return debug::fail(call, "argument %s = %d is out of range [0, %d)", arg, value,
                     LCI_NUM_PROCESSES);
}

}  // namespace lci::refuse

namespace lci::debug {

LCI_error_t check_handle(const char* call, const char* arg, const void* handle, handle_kind kind) {
  if (!handle) return fail(call, "argument %s is NULL", arg);
  handle_kind k;
  if (!lookup(handle, &k))
    return fail(call, "argument %s (%p) is not a live %s (freed or never created)", arg, handle,
                kind_name(kind));
  if (k != kind)
    return fail(call, "argument %s (%p) is a %s, not a %s", arg, handle, kind_name(k),
                kind_name(kind));
  return LCI_OK;
}

LCI_error_t check_comp_any(const char* call, const char* arg, LCI_comp_t comp) {
  if (!comp) return fail(call, "argument %s is NULL", arg);
  handle_kind k;
  if (!lookup(comp, &k) ||
      (k != handle_kind::queue && k != handle_kind::sync && k != handle_kind::handler))
    return fail(call, "argument %s (%p) is not a live completion object", arg, comp);
  return LCI_OK;
}

LCI_error_t check_endpoint(const char* call, LCI_endpoint_t ep) {
  return check_handle(call, "ep", ep, handle_kind::endpoint);
}

LCI_error_t check_send(const char* call, LCI_endpoint_t ep, int rank, LCI_tag_t tag) {
  LCI_error_t rc = check_endpoint(call, ep);
  if (rc == LCI_OK) rc = check_rank(call, rank, false);
  if (rc == LCI_OK) rc = check_tag(call, tag);
  return rc;
}

LCI_error_t check_recv(const char* call, LCI_endpoint_t ep, int rank, LCI_tag_t tag) {
  LCI_error_t rc = check_endpoint(call, ep);
  if (rc != LCI_OK) return rc;
  if (reinterpret_cast<const endpoint*>(ep)->match_type == LCI_MATCH_RANKTAG)
    rc = check_rank(call, rank, false);
  if (rc == LCI_OK) rc = check_tag(call, tag);
  return rc;
}

LCI_error_t check_device(const char* call, LCI_device_t device) {
  return check_handle(call, "device", device, handle_kind::device);
}

LCI_error_t check_rank(const char* call, int rank, bool allow_any) {
  if (allow_any && rank == LCI_RANK_ANY) return LCI_OK;
  if (rank < 0 || rank >= LCI_NUM_PROCESSES)
    return fail(call, "argument rank = %d is out of range [0, %d)", rank, LCI_NUM_PROCESSES);
  return LCI_OK;
}

LCI_error_t check_tag(const char* call, LCI_tag_t tag) {
  if (tag > static_cast<LCI_tag_t>(LCI_MAX_TAG))
    return fail(call, "argument tag = %u is over LCI_MAX_TAG (%d)", tag, LCI_MAX_TAG);
  return LCI_OK;
}

LCI_error_t check_port_comp(const char* call, const char* arg, LCI_endpoint_t ep,
                            LCI_port_t port, LCI_comp_t comp, bool required) {
  auto* e = reinterpret_cast<endpoint*>(ep);
  const int type = port == LCI_PORT_COMMAND ? e->cmd_comp_type : e->msg_comp_type;
  if (type == LCI_COMPLETION_NONE) return LCI_OK;
  if (!comp) {
    if (required) return fail(call, "argument %s is NULL but the result is only delivered through it", arg);
    return LCI_OK;
  }
  // Any kind will do: every build signals the object as its own kind, not
  // as the port's (release builds read no kind here, and both builds accept
  // the same programs).
  handle_kind k;
  if (!lookup(comp, &k))
    return fail(call, "argument %s (%p) is not a live completion object", arg, comp);
  return LCI_OK;
}

LCI_error_t check_plist_default_comp(const char* call, int msg_type,
                                     LCI_comp_t comp) {
  if (msg_type == LCI_COMPLETION_NONE) return LCI_OK;
  // As in check_port_comp, any live kind: it is signalled as itself.
  handle_kind k;
  if (!lookup(comp, &k))
    return fail(call, "argument plist: its default completion (%p) is not a live completion "
                      "object", comp);
  return LCI_OK;
}

LCI_error_t check_medium_length(const char* call, const char* arg, LCI_mbuffer_t buffer) {
  if (buffer.length > static_cast<size_t>(LCI_MEDIUM_SIZE))
    return fail(call, "argument %s.length = %zu is over LCI_MEDIUM_SIZE (%d)", arg,
                buffer.length, LCI_MEDIUM_SIZE);
  if (!buffer.address && buffer.length)
    return fail(call, "argument %s.address is NULL with length %zu", arg, buffer.length);
  return LCI_OK;
}

LCI_error_t check_local_lbuffer(const char* call, const char* arg, const LCI_lbuffer_t& b,
                                LCI_endpoint_t ep) {
  if (!b.address && b.length)
    return fail(call, "argument %s.address is NULL with length %zu", arg, b.length);
  if (!b.segment) return LCI_OK;  // LCI_SEGMENT_ALL
  handle_kind k;
  if (!lookup(b.segment, &k) || k != handle_kind::segment)
    return fail(call, "argument %s.segment (%p) is not a live segment", arg, (void*)b.segment);
  const LCII_mr_t* seg = b.segment;
  if (seg->remote)
    return fail(call, "argument %s.segment is a remote (deserialized) segment", arg);
  const auto* e = reinterpret_cast<const endpoint*>(ep);
  if (e && seg->dev != e->dev)
    return fail(call, "argument %s.segment is registered on device %d, the endpoint is on "
                      "device %d", arg, seg->group, e->dev->group_index);
  const auto a = reinterpret_cast<uintptr_t>(b.address);
  if (b.length && (a < seg->base || a + b.length > seg->base + seg->length))
    return fail(call, "argument %s [%p, +%zu) is outside its segment [%p, +%zu)", arg, b.address,
                b.length, (void*)seg->base, seg->length);
  return LCI_OK;
}

LCI_error_t check_remote_lbuffer(const char* call, const char* arg, const LCI_lbuffer_t& b,
                                 LCI_endpoint_t ep) {
  if (!b.segment)
    return fail(call, "argument %s.segment is LCI_SEGMENT_ALL; a remote buffer needs the peer's "
                      "deserialized segment", arg);
  handle_kind k;
  if (!lookup(b.segment, &k) || k != handle_kind::segment)
    return fail(call, "argument %s.segment (%p) is not a live segment", arg, (void*)b.segment);
  const LCII_mr_t* seg = b.segment;
  if (!seg->remote)
    return fail(call, "argument %s.segment is a local segment; use the peer's deserialized one", arg);
  const auto* e = reinterpret_cast<const endpoint*>(ep);
  if (e && seg->group != e->dev->group_index)
    return fail(call, "argument %s.segment belongs to device group %d, the endpoint to group %d",
                arg, seg->group, e->dev->group_index);
  const auto a = reinterpret_cast<uintptr_t>(b.address);
  if (a < seg->base || a + b.length > seg->base + seg->length)
    return fail(call, "argument %s [%p, +%zu) is outside the peer's registered range [%p, +%zu)",
                arg, b.address, b.length, (void*)seg->base, seg->length);
  return LCI_OK;
}

LCI_error_t check_iovec(const char* call, const char* arg, const LCI_iovec_t& iov, bool local,
                        bool allow_null_array, bool check_piggy, LCI_endpoint_t ep) {
  if (!iov.lbuffers) {
    if (allow_null_array) return LCI_OK;
    return fail(call, "argument %s.lbuffers is NULL", arg);
  }
  if (iov.count < 1 || iov.count > LCI_IOVEC_SIZE)
    return fail(call, "argument %s.count = %d is outside [1, LCI_IOVEC_SIZE = %d]", arg,
                iov.count, LCI_IOVEC_SIZE);
  // A receive's piggy-back region (recvv, the local side of getv, the remote
  // side of putv) is a capacity; every other piggy-back length is what
  // travels and must fit the protocol.
  if (check_piggy && iov.piggy_back.length > LCI_get_iovec_piggy_back_size(iov.count))
    return fail(call, "argument %s.piggy_back.length = %zu is over %zu for %d buffers", arg,
                iov.piggy_back.length, LCI_get_iovec_piggy_back_size(iov.count), iov.count);
  bool all_registered = iov.lbuffers[0].segment != nullptr;
  for (int i = 0; i < iov.count; ++i) {
    char name[64];
    snprintf(name, sizeof(name), "%s.lbuffers[%d]", arg, i);
    LCI_error_t rc = local ? check_local_lbuffer(call, name, iov.lbuffers[i], ep)
                           : check_remote_lbuffer(call, name, iov.lbuffers[i], ep);
    if (rc != LCI_OK) return rc;
    if (iov.lbuffers[i].length == 0) return fail(call, "argument %s.length is 0", name);
    if (local && (iov.lbuffers[i].segment != nullptr) != all_registered)
      return fail(call, "argument %s mixes registered buffers and LCI_SEGMENT_ALL", arg);
  }
  return LCI_OK;
}

}  // namespace lci::debug

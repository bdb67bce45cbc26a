// C entry points: long and iovec messages, one-sided operations, fences.
#include <vector>

#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/core/fence.hpp"
#include "lci/core/rendezvous.hpp"
#include "lci/core/rma.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/eager.hpp"
#include "lci/util/log.hpp"

using namespace lci;

namespace {
// A one-buffer iovec view of a long buffer (putl/getl go the iovec way).
LCI_iovec_t single(LCI_lbuffer_t* b) {
  LCI_iovec_t v;
  v.piggy_back.address = nullptr;
  v.piggy_back.length = 0;
  v.lbuffers = b;
  v.count = 1;
  return v;
}
}  // namespace

// ---- long two-sided ------------------------------------------------------------

LCI_error_t LCI_sendl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank, LCI_tag_t tag,
                      LCI_comp_t completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_sendl", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_local_lbuffer("LCI_sendl", "buffer", buffer, ep));
  LCI_CHECK(debug::check_port_comp("LCI_sendl", "completion", ep, LCI_PORT_COMMAND, completion, false));
  return to_error(start_send_long(to_endpoint(ep), buffer, rank, tag, completion, user_context, false, 0));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_recvl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank, LCI_tag_t tag,
                      LCI_comp_t completion, void* user_context) noexcept try {
  LCI_ALWAYS_RECV("LCI_recvl", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(buffer.address ? debug::check_local_lbuffer("LCI_recvl", "buffer", buffer, ep) : LCI_OK);
  LCI_CHECK(debug::check_port_comp("LCI_recvl", "completion", ep, LCI_PORT_MESSAGE, completion,
                                   buffer.address == nullptr));
  post_recv(to_endpoint(ep), rank, tag, buffer.address, buffer.length,
                   false, completion, user_context, buffer.segment, nullptr, false, true);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_sendv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                      LCI_comp_t completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_sendv", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_iovec("LCI_sendv", "iovec", iovec, true, false, true, ep));
  LCI_CHECK(debug::check_port_comp("LCI_sendv", "completion", ep, LCI_PORT_COMMAND, completion, false));
  return to_error(start_send_iovec(to_endpoint(ep), iovec, rank, tag, completion, user_context, false, 0));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_recvv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                      LCI_comp_t completion, void* user_context) noexcept try {
  LCI_ALWAYS_RECV("LCI_recvv", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_iovec("LCI_recvv", "iovec", iovec, true, true, false, ep));
  LCI_CHECK(debug::check_port_comp("LCI_recvv", "completion", ep, LCI_PORT_MESSAGE, completion,
                                   iovec.lbuffers == nullptr));
  post_recv(to_endpoint(ep), rank, tag, nullptr, 0, false, completion,
                   user_context, nullptr, &iovec);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- one-sided: short and medium ----------------------------------------------------


LCI_error_t LCI_puts(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag,
                     uintptr_t remote_completion) noexcept try {
  LCI_ALWAYS_SEND("LCI_puts", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  return to_error(put_eager(to_endpoint(ep), &src, LCI_SHORT_SIZE, rank, tag, remote_completion, true,
                   nullptr, nullptr));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putma(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                      uintptr_t remote_completion) noexcept try {
  LCI_ALWAYS_SEND("LCI_putma", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_putma", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_putma", "buffer", buffer));
  return to_error(put_eager(to_endpoint(ep), buffer.address, buffer.length, rank, tag, remote_completion,
                   false, nullptr, nullptr));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putmna(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                       uintptr_t remote_completion) noexcept try {
  LCI_ALWAYS_SEND("LCI_putmna", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_putmna", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_putmna", "buffer", buffer));
  return to_error(put_eager(to_endpoint(ep), buffer.address, buffer.length, rank, tag, remote_completion,
                   false, nullptr, nullptr));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putmac(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                       uintptr_t remote_completion, LCI_comp_t local_completion,
                       void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_putmac", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_putmac", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_putmac", "buffer", buffer));
  LCI_CHECK(debug::check_port_comp("LCI_putmac", "local_completion", ep, LCI_PORT_COMMAND,
                                   local_completion, false));
  return to_error(put_eager(to_endpoint(ep), buffer.address, buffer.length, rank, tag, remote_completion,
                   false, local_completion, user_context, true));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}


LCI_error_t LCI_putm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                     LCI_mbuffer_t remote_buffer, uintptr_t remote_completion) noexcept try {
  LCI_ALWAYS_SEND("LCI_putm", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_putm", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_putm", "buffer", buffer));
  LCI_CHECK(remote_buffer.length >= buffer.length && (remote_buffer.address || !buffer.length)
                ? LCI_OK
                : debug::fail("LCI_putm", "argument remote_buffer (%zu bytes) cannot hold %zu bytes",
                              remote_buffer.length, buffer.length));
  return to_error(put_to(to_endpoint(ep), buffer.address, buffer.length, rank, tag, remote_buffer.address,
                          remote_completion));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank, LCI_tag_t tag,
                      LCI_mbuffer_t remote_buffer, uintptr_t remote_completion) noexcept try {
  LCI_ALWAYS_SEND("LCI_putmn", ep, rank, tag);
  LCI_ALWAYS_MEDIUM_EP("LCI_putmn", ep, "buffer", buffer);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_medium_length("LCI_putmn", "buffer", buffer));
  LCI_CHECK(remote_buffer.length >= buffer.length && (remote_buffer.address || !buffer.length)
                ? LCI_OK
                : debug::fail("LCI_putmn", "argument remote_buffer (%zu bytes) cannot hold %zu bytes",
                              remote_buffer.length, buffer.length));
  return to_error(put_to(to_endpoint(ep), buffer.address, buffer.length, rank, tag, remote_buffer.address,
                          remote_completion));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- one-sided: long and iovec ------------------------------------------------------

LCI_error_t LCI_putla(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_comp_t completion, int rank,
                      LCI_tag_t tag, uintptr_t remote_completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_putla", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_local_lbuffer("LCI_putla", "buffer", buffer, ep));
  LCI_CHECK(debug::check_port_comp("LCI_putla", "completion", ep, LCI_PORT_COMMAND, completion, false));
  return to_error(start_send_long(to_endpoint(ep), buffer, rank, tag, completion, user_context, true,
                         remote_completion));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putva(LCI_endpoint_t ep, LCI_iovec_t iovec, LCI_comp_t completion, int rank,
                      LCI_tag_t tag, uintptr_t remote_completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_putva", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_iovec("LCI_putva", "iovec", iovec, true, false, true, ep));
  LCI_CHECK(debug::check_port_comp("LCI_putva", "completion", ep, LCI_PORT_COMMAND, completion, false));
  return to_error(start_send_iovec(to_endpoint(ep), iovec, rank, tag, completion, user_context, true,
                          remote_completion));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putl(LCI_endpoint_t ep, LCI_lbuffer_t local_buffer, LCI_comp_t local_completion,
                     int rank, LCI_tag_t tag, LCI_lbuffer_t remote_buffer,
                     uintptr_t remote_completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_putl", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_local_lbuffer("LCI_putl", "local_buffer", local_buffer, ep));
  LCI_CHECK(debug::check_remote_lbuffer("LCI_putl", "remote_buffer", remote_buffer, ep));
  LCI_CHECK(remote_buffer.length >= local_buffer.length
                ? LCI_OK
                : debug::fail("LCI_putl", "argument remote_buffer.length = %zu is below the %zu bytes put",
                              remote_buffer.length, local_buffer.length));
  LCI_CHECK(debug::check_port_comp("LCI_putl", "local_completion", ep, LCI_PORT_COMMAND,
                                   local_completion, false));
  return to_error(start_put(to_endpoint(ep), single(&local_buffer), false, local_completion, rank, tag,
                   single(&remote_buffer), remote_completion, user_context));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_getl(LCI_endpoint_t ep, LCI_lbuffer_t* local_buffer, size_t length,
                     LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                     LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                     void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_getl", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(local_buffer && local_buffer->address
                ? LCI_OK
                : debug::fail("LCI_getl", "argument local_buffer is NULL or has no address"));
  LCI_CHECK(debug::check_local_lbuffer("LCI_getl", "local_buffer", *local_buffer, ep));
  LCI_CHECK(length <= local_buffer->length && length <= remote_buffer.length
                ? LCI_OK
                : debug::fail("LCI_getl", "argument length = %zu is over a buffer's length", length));
  LCI_CHECK(debug::check_remote_lbuffer("LCI_getl", "remote_buffer", remote_buffer, ep));
  LCI_CHECK(debug::check_port_comp("LCI_getl", "local_completion", ep, LCI_PORT_COMMAND,
                                   local_completion, false));
  LCI_lbuffer_t local = *local_buffer;
  local.length = length;
  LCI_lbuffer_t remote = remote_buffer;
  remote.length = length;
  return to_error(start_get(to_endpoint(ep), single(&local), false, local_completion, rank, tag,
                   single(&remote), remote_completion, user_context));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_putv(LCI_endpoint_t ep, LCI_iovec_t local_iovec, LCI_comp_t local_completion,
                     int rank, LCI_tag_t tag, LCI_iovec_t remote_iovec,
                     uintptr_t remote_completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_putv", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_iovec("LCI_putv", "local_iovec", local_iovec, true, false, true, ep));
  LCI_CHECK(debug::check_iovec("LCI_putv", "remote_iovec", remote_iovec, false, false, false, ep));
  LCI_CHECK(local_iovec.count == remote_iovec.count
                ? LCI_OK
                : debug::fail("LCI_putv", "the iovecs have %d and %d buffers", local_iovec.count,
                              remote_iovec.count));
  LCI_CHECK(debug::check_port_comp("LCI_putv", "local_completion", ep, LCI_PORT_COMMAND,
                                   local_completion, false));
  return to_error(start_put(to_endpoint(ep), local_iovec, true, local_completion, rank, tag, remote_iovec,
                   remote_completion, user_context));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_getv(LCI_endpoint_t ep, LCI_iovec_t local_iovec, LCI_comp_t local_completion,
                     int rank, LCI_tag_t tag, LCI_iovec_t remote_iovec,
                     uintptr_t remote_completion, void* user_context) noexcept try {
  LCI_ALWAYS_SEND("LCI_getv", ep, rank, tag);
  if (lci::peer_refused(rank)) return LCI_ERR_FATAL;
  LCI_CHECK(debug::check_iovec("LCI_getv", "local_iovec", local_iovec, true, false, false, ep));
  LCI_CHECK(debug::check_iovec("LCI_getv", "remote_iovec", remote_iovec, false, false, true, ep));
  LCI_CHECK(local_iovec.count == remote_iovec.count
                ? LCI_OK
                : debug::fail("LCI_getv", "the iovecs have %d and %d buffers", local_iovec.count,
                              remote_iovec.count));
  LCI_CHECK(local_iovec.piggy_back.length >= remote_iovec.piggy_back.length &&
                    (local_iovec.piggy_back.address || !remote_iovec.piggy_back.length)
                ? LCI_OK
                : debug::fail("LCI_getv",
                              "argument local_iovec.piggy_back (%p, %zu bytes) cannot hold the "
                              "%zu remote bytes", local_iovec.piggy_back.address,
                              local_iovec.piggy_back.length, remote_iovec.piggy_back.length));
  LCI_CHECK(debug::check_port_comp("LCI_getv", "local_completion", ep, LCI_PORT_COMMAND,
                                   local_completion, false));
  // The remote lengths say how much is read; the local buffers take it.
  std::vector<LCI_lbuffer_t> local(local_iovec.lbuffers, local_iovec.lbuffers + local_iovec.count);
  for (int i = 0; i < local_iovec.count; ++i) local[i].length = remote_iovec.lbuffers[i].length;
  LCI_iovec_t l = local_iovec;
  l.lbuffers = local.data();
  l.piggy_back.length = remote_iovec.piggy_back.length;
  // The completion reports the caller's iovec as passed.
  return to_error(start_get(to_endpoint(ep), l, true, local_completion, rank, tag, remote_iovec,
                   remote_completion, user_context, &local_iovec));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- fences ---------------------------------------------------------------------------

LCI_error_t LCI_fence_wait(LCI_endpoint_t ep) noexcept try {
  LCI_CHECK(debug::check_endpoint("LCI_fence_wait", ep));
  fence_wait(to_endpoint(ep));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_gfence_wait(LCI_endpoint_t ep) noexcept try {
  LCI_CHECK(debug::check_endpoint("LCI_gfence_wait", ep));
  return gfence_wait(to_endpoint(ep)) ? LCI_OK : LCI_ERR_FATAL;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// Eager two-sided protocol (short and medium), written inline so the API
// entry points compile to straight-line code.
//
// Send: a payload that fits the backend's inject size leaves with one
// inject call and no packet; a larger one is copied into a pool packet (or
// sent straight from the caller's LCI buffer) and the packet is released by
// the send completion. Receive: arrived packets and posted receives meet in
// the device's matching table (lci/core/progress.cpp does the arrival side).
#pragma once

#include <cstring>

#include "lci.h"
#include "lci/comp/signal.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/util/log.hpp"
#include "lci/core/runtime.hpp"

namespace lci {

inline LCI_request_t make_request(int rank, LCI_tag_t tag, LCI_data_type_t type,
                                  void* user_context) {
  LCI_request_t r;
  r.flag = LCI_OK;
  r.rank = rank;
  r.tag = tag;
  r.type = type;
  r.user_context = user_context;
  return r;
}

inline void signal_medium(LCI_comp_t comp, int rank, LCI_tag_t tag, void* address,
                          size_t length, void* user_context) {
  LCI_request_t r = make_request(rank, tag, LCI_MEDIUM, user_context);
  r.data.mbuffer.address = address;
  r.data.mbuffer.length = length;
  comp_signal(comp, r);
}

// Medium buffers handed to LCI by address are the caller's memory or a
// buffer of some device's pool (LCI_mbuffer_alloc, LCI_recvmn). All packet
// slabs lie inside [g_slabs_lo, g_slabs_hi) (widened as devices appear), so
// caller memory is recognised with two compares; only an address inside
// that range pays the scan over devices.
extern std::atomic<uintptr_t> g_slabs_lo, g_slabs_hi;
device* scan_pool_owner(const void* address);
inline device* foreign_pool_owner(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  if (__builtin_expect(a < g_slabs_lo.load(std::memory_order_relaxed) ||
                           a >= g_slabs_hi.load(std::memory_order_relaxed), 1))
    return nullptr;
  return scan_pool_owner(address);
}

// Eager send of `length` bytes at `address` (plus a trailer for the kinds
// that carry one). `comp` (command port; nullptr for none) is signalled when
// the buffer is the caller's again. Without a completion an LCI buffer is
// consumed; with one it is kept. `tracked` (an endpoint, or null) counts a
// packet send as pending for fences until it completes: only operations with
// a local completion (sendmc, putmac) are tracked; elemental sends are
// complete for the caller at return, so the endpoint may go right after.
inline LCI_error_t send_eager(device& d, endpoint* tracked, uint32_t imm, void* address,
                              size_t length, int rank, LCI_tag_t tag, LCI_comp_t comp,
                              void* user_context, const trailer* tr = nullptr) {
  const bool own_buffer = d.owns_packet(address);
  const size_t total = length + (tr ? trailer_size : 0);
  if (total <= d.max_inject && (!tr || total <= 256)) {
    const void* from = address;
    char staged[256];
    if (tr) {
      if (length) memcpy(staged, address, length);
      memcpy(staged + length, tr, trailer_size);
      from = staged;
    }
    if (__builtin_expect(d.net->inject(rank, from, total, imm) != net::status::ok, 0)) {
      LCI_PROF_INC(d, retries);
      return LCI_ERR_RETRY;
    }
    LCI_PROF_INC(d, sent);
    if (comp)
      signal_medium(comp, rank, tag, address, length, user_context);
    else if (own_buffer)
      d.put_packet(static_cast<packet*>(d.packets->packet_of(address)));
    else if (address)
      if (device* owner = foreign_pool_owner(address))
        owner->put_packet(static_cast<packet*>(owner->packets->packet_of(address)));
    return LCI_OK;
  }
  packet* p;
  char* from;
  if (own_buffer) {
    p = static_cast<packet*>(d.packets->packet_of(address));
    from = static_cast<char*>(address);
  } else {
    p = d.get_send_packet();
    if (__builtin_expect(p == nullptr, 0)) {
      LCI_PROF_INC(d, retries);
      return LCI_ERR_RETRY;
    }
    memcpy(p->payload(), address, length);
    from = p->payload();
  }
  // The packet has room for a trailer past a full payload. In the caller's
  // own LCI buffer those bytes are the caller's: they are restored if the
  // send is refused, so that LCI_ERR_RETRY leaves the buffer as it was.
  char saved[trailer_size] = {};
  if (tr) {
    if (own_buffer) memcpy(saved, from + length, trailer_size);
    memcpy(from + length, tr, trailer_size);
  }
  p->out.comp = comp;
  p->out.user_context = user_context;
  p->out.user_address = address;
  p->out.ep = tracked;
  p->out.length = static_cast<uint32_t>(length);
  p->out.rank = rank;
  p->out.tag = static_cast<uint16_t>(tag);
  p->out.keep = own_buffer && comp != nullptr;
  if (tracked) tracked->start_local();
  if (__builtin_expect(
          d.net->post_send(rank, from, total, d.slab_mr.desc, imm, p) != net::status::ok, 0)) {
    if (tracked) tracked->end_local();
    if (!own_buffer)
      d.put_packet(p);
    else if (tr)
      memcpy(from + length, saved, trailer_size);
    LCI_PROF_INC(d, retries);
    return LCI_ERR_RETRY;
  }
  LCI_PROF_INC(d, sent);
  if (!own_buffer && !comp && address)
    if (device* owner = foreign_pool_owner(address))
      owner->put_packet(static_cast<packet*>(owner->packets->packet_of(address)));
  return LCI_OK;
}

inline LCI_error_t send_eager(endpoint* ep, msg_kind kind, void* address, size_t length,
                              int rank, LCI_tag_t tag, LCI_comp_t comp, void* user_context,
                              bool tracked = false) {
  LCI_error_t rc = send_eager(*ep->dev, tracked ? ep : nullptr, make_imm(kind, ep->index, tag),
                              address, length, rank, tag, comp, user_context);
  if (rc == LCI_OK) ep->issued.add(rank);
  return rc;
}

// Sends one of LCI's own messages from inside progress: never refused, a
// message the network cannot take now waits in the device's backlog.
void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length);
// One attempt at sending such a message (retry: the network refused it).
net::status send_control_now(device& d, int rank, uint32_t imm, const void* data,
                             size_t length);

// Completes receive `c` with arrived packet `p` and releases both (or hands
// the packet to the caller for LCI_recvmn).
void complete_rts(device& d, recv_ctx* c, packet* p);

inline void complete_recv(device& d, recv_ctx* c, packet* p) {
  if (__builtin_expect(p->in.kind == msg_kind::rts, 0)) {
    complete_rts(d, c, p);
    return;
  }
  c->ep->done.add(p->in.src_rank);
  LCI_request_t r = make_request(p->in.src_rank, p->in.tag, LCI_MEDIUM, c->user_context);
  const size_t length = p->in.length;
  bool release = true;
  if (p->in.kind == msg_kind::short_msg) {
    r.type = LCI_IMMEDIATE;
    memcpy(&r.data.immediate, p->payload(), LCI_SHORT_SIZE);
  } else if (c->want_packet) {
    r.data.mbuffer.address = p->payload();
    r.data.mbuffer.length = length;
    release = false;
    device::hand_out(p);
  } else {
    size_t n = length;
    if (__builtin_expect(n > c->capacity, 0)) {
      LCI_WARN("LCI_recvm: a %zu-byte message from rank %d (tag %u) does not fit the %zu-byte "
               "receive buffer; truncated", n, r.rank, r.tag, c->capacity);
      n = c->capacity;
    }
    if (n) memcpy(c->buffer, p->payload(), n);
    r.data.mbuffer.address = c->buffer;
    r.data.mbuffer.length = n;
  }
  if (release) d.put_packet(p);
  LCI_comp_t comp = c->comp;
  d.put_ctx(c);
  if (comp) comp_signal(comp, r);
}

// Posts a receive; completes it at once if its message already arrived.
// `always_signal`: signal `comp` even when the endpoint's message port is
// LCI_COMPLETION_NONE (LCI's own receives, e.g. those of the collectives).
inline LCI_error_t post_recv(endpoint* ep, msg_kind kind, int rank, LCI_tag_t tag,
                             void* buffer, size_t capacity, bool want_packet, LCI_comp_t comp,
                             void* user_context, LCI_segment_t segment = nullptr,
                             const LCI_iovec_t* iov = nullptr, bool always_signal = false) {
  device& d = *ep->dev;
  recv_ctx* c = d.get_ctx();
  c->segment = segment;
  c->iov.lbuffers = nullptr;
  if (iov) c->iov = *iov;
  c->comp = ep->msg_comp_type == LCI_COMPLETION_NONE && !always_signal ? nullptr : comp;
  c->user_context = user_context;
  c->ep = ep;
  c->buffer = buffer;
  c->capacity = capacity;
  c->kind = kind;
  c->want_packet = want_packet;
  c->node.key =
      make_match_key(ep->match_type == LCI_MATCH_TAG ? LCI_RANK_ANY : rank, ep->index, tag);
  c->node.kind = match_kind::recv;
  if (match_node* m = d.table->insert_or_match(&c->node))
    complete_recv(d, c, reinterpret_cast<packet*>(m));
  return LCI_OK;
}

}  // namespace lci

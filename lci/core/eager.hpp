// Eager protocol: two-sided short and medium messages and the eager
// one-sided puts (puts, putma/putmna/putmac, putm/putmn), written inline so
// the API entry points compile to straight-line code. Their arrivals are
// handled in eager.cpp (registered in progress's dispatch table).
//
// Send: a payload that fits the backend's inject size leaves with one
// inject call and no packet; a larger one is copied into a pool packet (or
// sent straight from the caller's LCI buffer) and the packet is released by
// the send completion. Receive: arrived packets and posted receives meet in
// the device's matching table.
#pragma once

#include <cstring>

#include "lci.h"
#include "lci/comp/signal.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/request.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/status.hpp"
#include "lci/util/copy.hpp"
#include "lci/util/log.hpp"

namespace lci {

// Eager send of `length` bytes at `address` (plus a trailer for the kinds
// that carry one, and after it the tag suffix of a `tagged` message: `sfx`,
// whose imm is then make_imm(msg_kind::tagged, ...); `tag` is the whole
// tag). `comp` (command port; nullptr for none) is signalled when
// the buffer is the caller's again. Without a completion an LCI buffer is
// consumed; with one it is kept. `tracked` (an endpoint, or null) counts a
// packet send as pending for fences until it completes: only operations with
// a local completion (sendmc, putmac) are tracked; elemental sends are
// complete for the caller at return, so the endpoint may go right after.
// send_eager_body is the code, inlined into send_eager and send_eager_plain.
[[gnu::always_inline]] inline post_status send_eager_body(device& d, endpoint* tracked,
                                                           uint32_t imm, void* address,
                                                           size_t length, int rank,
                                                           LCI_tag_t tag, LCI_comp_t comp,
                                                           void* user_context, const trailer* tr,
                                                           const tag_suffix* sfx = nullptr) {
  // A suspected peer's connection may be another process's: nothing is
  // sent to it until it proved alive or died (peer_failure.hpp).
  if (__builtin_expect(peer_suspected(rank), 0)) return post_status::retry_queue_full;
  const bool own_buffer = d.owns_packet(address);
  const size_t tr_bytes = tr ? trailer_size : 0;
  const size_t total = length + tr_bytes + (sfx ? tag_suffix_size : 0);
  if (total <= d.net->max_inject(rank) && ((!tr && !sfx) || total <= 256)) {
    const void* from = address;
    char staged[256];
    if (tr || sfx) {
      if (length) memcpy(staged, address, length);
      if (tr) memcpy(staged + length, tr, trailer_size);
      if (sfx) memcpy(staged + length + tr_bytes, sfx, tag_suffix_size);
      from = staged;
    }
    if (__builtin_expect(d.net->inject(rank, from, total, imm) != net::status::ok, 0)) {
      LCI_PROF_RETRY(d, post_status::retry_queue_full);
      return post_status::retry_queue_full;
    }
    LCI_PROF_INC(d, sent);
    if (comp)
      signal_medium(comp, rank, tag, address, length, user_context);
    else if (own_buffer)
      d.put_packet(static_cast<packet*>(d.packets->packet_of(address)));
    else if (address)
      if (device* owner = foreign_pool_owner(address))
        owner->put_packet(static_cast<packet*>(owner->packets->packet_of(address)));
    return post_status::ok;
  }
  packet* p;
  char* from;
  if (own_buffer) {
    p = static_cast<packet*>(d.packets->packet_of(address));
    from = static_cast<char*>(address);
  } else {
    p = d.get_send_packet();
    if (__builtin_expect(p == nullptr, 0)) {
      LCI_PROF_RETRY(d, post_status::retry_no_packet);
      return post_status::retry_no_packet;
    }
    memcpy(p->payload(), address, length);
    from = p->payload();
  }
  // The packet has room for a trailer and a tag suffix past a full payload.
  // In the caller's own LCI buffer those bytes are the caller's: they are
  // restored if the send is refused, so that LCI_ERR_RETRY leaves the
  // buffer as it was.
  char saved[max_extra_bytes] = {};
  if (tr || sfx) {
    if (own_buffer) memcpy(saved, from + length, total - length);
    if (tr) memcpy(from + length, tr, trailer_size);
    if (sfx) memcpy(from + length + tr_bytes, sfx, tag_suffix_size);
  }
  p->out.comp = comp;
  p->out.user_context = user_context;
  p->out.user_address = address;
  p->out.ep = tracked;
  p->out.length = static_cast<uint32_t>(length);
  p->out.rank = rank;
  p->out.tag_hi = sfx ? static_cast<uint16_t>(tag >> 16) : 0;
  p->out.keep = own_buffer && comp != nullptr;
  p->out.extra = static_cast<uint8_t>(total - length);
  p->out.imm = imm;
  if (tracked) tracked->start_local();
  if (__builtin_expect(
          d.net->post_send(rank, from, total, d.slab_mr.desc, imm, p) != net::status::ok, 0)) {
    if (tracked) tracked->end_local();
    if (!own_buffer)
      d.put_packet(p);
    else if (tr || sfx)
      memcpy(from + length, saved, total - length);
    LCI_PROF_RETRY(d, post_status::retry_queue_full);
    return post_status::retry_queue_full;
  }
  LCI_PROF_INC(d, sent);
  if (!own_buffer && !comp && address)
    if (device* owner = foreign_pool_owner(address))
      owner->put_packet(static_cast<packet*>(owner->packets->packet_of(address)));
  return post_status::ok;
}

inline post_status send_eager(device& d, endpoint* tracked, uint32_t imm, void* address,
                              size_t length, int rank, LCI_tag_t tag, LCI_comp_t comp,
                              void* user_context, const trailer* tr = nullptr) {
  return send_eager_body(d, tracked, imm, address, length, rank, tag, comp, user_context, tr);
}

// send_eager of a message of `kind` from `ep` whose tag needs more than 16
// bits (is_wide_tag, on an endpoint with wide_tags): as kind `tagged`, with
// a tag suffix. Counts it as issued when it left. Out of line: the common
// sends only test for it.
post_status send_eager_tagged(endpoint* ep, msg_kind kind, void* address, size_t length,
                              int rank, LCI_tag_t tag, LCI_comp_t comp, void* user_context,
                              const trailer* tr, bool tracked);

// Sends one of LCI's own messages from inside progress: never refused, a
// message the network cannot take now waits in the device's backlog (in a
// pool packet; on the heap only while the pool is empty), retried by
// progress (backlog_op::op::message, eager.cpp). `data` may be the payload
// of one of d's pool packets, which send_control then consumes.
void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length);

// The eager send and receive of the C entry points' common cases, out of
// line (eager_entry.cpp) with every argument in a register. An entry point is
// noexcept with a catch-all handler (lci/util/log.hpp), and GCC gives a
// function with a handler a frame pointer when one of its calls passes
// arguments on the stack: a few instructions on every call of sendm or
// recvm, which these spare.
//
// send_eager_plain: send_eager without a local completion and not tracked
// (the tag only matters to a completion).
post_status send_eager_plain(device& d, uint32_t imm, void* address, size_t length, int rank,
                             const trailer* tr);

inline post_status send_eager(endpoint* ep, msg_kind kind, void* address, size_t length,
                              int rank, LCI_tag_t tag, LCI_comp_t comp, void* user_context,
                              bool tracked = false) {
  if (__builtin_expect(is_wide_tag(tag), 0) && ep->wide_tags)
    return send_eager_tagged(ep, kind, address, length, rank, tag, comp, user_context, nullptr,
                             tracked);
  const uint32_t imm = make_imm(kind, ep->index, tag);
  const post_status st =
      comp || tracked ? send_eager(*ep->dev, tracked ? ep : nullptr, imm, address, length, rank,
                                   tag, comp, user_context)
                      : send_eager_plain(*ep->dev, imm, address, length, rank, nullptr);
  if (st == post_status::ok) ep->issued.add(rank);
  return st;
}

// The completion object a target-side completion goes to: the endpoint's
// default for handle 0, else the live object of the message port's kind
// that the handle (a remote_completion sent by the origin) names; nullptr
// for a NONE message port. False when the handle names no such object (the
// message is dropped). Used by every one-sided arrival. A named object comes
// with a reference in *ref (registry.hpp): hold it until the object was
// signalled.
bool target_comp(endpoint* ep, uint64_t handle, LCI_comp_t* out, comp_ref* ref);

// Eager one-sided put to the target's completion object: puts (is_short),
// putma/putmna (no local completion), putmac (`local_completion`, tracked
// for fences). `remote_completion` 0 means the target endpoint's default.
inline post_status put_eager(endpoint* e, void* address, size_t length, int rank, LCI_tag_t tag,
                             uintptr_t remote_completion, bool is_short,
                             LCI_comp_t local_completion, void* user_context,
                             bool has_local_completion = false) {
  if (e->cmd_comp_type == LCI_COMPLETION_NONE) local_completion = nullptr;
  const trailer tr{0, remote_completion};
  const msg_kind kind = is_short
                            ? (remote_completion ? msg_kind::am_short_c : msg_kind::am_short)
                            : (remote_completion ? msg_kind::am_medium_c : msg_kind::am_medium);
  // Only putmac has a local completion; the other puts are done at return.
  endpoint* tracked = has_local_completion ? e : nullptr;
  if (__builtin_expect(is_wide_tag(tag), 0) && e->wide_tags)
    return send_eager_tagged(e, kind, address, length, rank, tag, local_completion, user_context,
                             remote_completion ? &tr : nullptr, has_local_completion);
  const uint32_t imm = make_imm(kind, e->index, tag);
  const post_status st =
      local_completion || tracked
          ? send_eager(*e->dev, tracked, imm, address, length, rank, tag, local_completion,
                       user_context, remote_completion ? &tr : nullptr)
          : send_eager_plain(*e->dev, imm, address, length, rank,
                             remote_completion ? &tr : nullptr);
  if (st == post_status::ok) e->issued.add(rank);
  return st;
}

// putm/putmn: the payload lands at `remote_address` at the target (which
// must lie in a segment the target registered, or the target drops it).
inline post_status put_to(endpoint* e, void* address, size_t length, int rank, LCI_tag_t tag,
                          void* remote_address, uintptr_t remote_completion) {
  const trailer tr{reinterpret_cast<uint64_t>(remote_address), remote_completion};
  const post_status st = send_eager_plain(*e->dev, make_imm(msg_kind::put_to, e->index, tag),
                                          address, length, rank, &tr);
  if (st == post_status::ok) e->issued.add(rank);
  return st;
}

// Completes receive `c` with a message of kind K (short or medium) from
// `src` with `tag`: `length` bytes at `payload`, in packet `p` (or, for a
// receive that does not want the packet, wherever the transport holds
// them: p may then be null), and releases the receive. Returns whether the
// packet is free again (repost), or was handed to the caller (LCI_recvmn:
// kept).
// `Pooled`: c came from the device's descriptor pool (get_ctx) and goes
// back to it; false for a receive taken from its rank's list (rank_fifo.hpp),
// whose descriptor is the caller's.
template <msg_kind K, bool Pooled = true>
[[gnu::always_inline]] inline arrival complete_eager_from(device& d, recv_ctx* c, int src,
                                                          LCI_tag_t tag, const char* payload,
                                                          size_t length, packet* p) {
  static_assert(K == msg_kind::short_msg || K == msg_kind::medium);
  c->ep->done.add(src);
  LCI_request_t r = make_request(src, tag, LCI_MEDIUM, c->user_context);
  arrival a = arrival::repost;
  if constexpr (K == msg_kind::short_msg) {
    r.type = LCI_IMMEDIATE;
    memcpy(&r.data.immediate, payload, LCI_SHORT_SIZE);
  } else if (c->want_packet) {
    r.data.mbuffer.address = p->payload();
    r.data.mbuffer.length = length;
    a = arrival::kept;
    device::hand_out(p);
  } else {
    size_t n = length;
    if (__builtin_expect(n > c->capacity, 0)) {
      LCI_WARN("LCI_recvm: a %zu-byte message from rank %d (tag %u) does not fit the %zu-byte "
               "receive buffer; truncated", n, r.rank, r.tag, c->capacity);
      n = c->capacity;
    }
    copy_bytes(c->buffer, payload, n);
    r.data.mbuffer.address = c->buffer;
    r.data.mbuffer.length = n;
  }
  LCI_comp_t comp = c->comp;
  if constexpr (Pooled) d.put_ctx(c);
  if (comp) comp_signal(comp, r);
  return a;
}

template <msg_kind K, bool Pooled = true>
inline arrival complete_eager(device& d, recv_ctx* c, packet* p) {
  return complete_eager_from<K, Pooled>(d, c, p->in.src_rank, p->in.tag, p->payload(),
                                        p->in.length, p);
}

// A receive found its message already waiting in the matching table.
inline void complete_waiting(device& d, recv_ctx* c, packet* p) {
  switch (p->in.kind) {
    case msg_kind::short_msg:
      if (complete_eager<msg_kind::short_msg>(d, c, p) == arrival::repost) d.put_packet(p);
      return;
    case msg_kind::medium:
      if (complete_eager<msg_kind::medium>(d, c, p) == arrival::repost) d.put_packet(p);
      return;
    default:  // rts: only the three matched kinds enter the table
      complete_matched(d, c, p);
      return;
  }
}

// The matching key of a receive of `ep` from `rank` with `tag`: the tag's
// lower half (and recv_tag_hi its upper half, where the endpoint has
// wide_tags; the C API's tags stay within 16 bits, their key as before).
inline uint64_t recv_key(const endpoint* ep, int rank, LCI_tag_t tag) {
  return make_match_key(ep->match_rank ? rank : LCI_RANK_ANY, ep->index, tag & ep->tag_mask);
}
inline uint16_t recv_tag_hi(const endpoint* ep, LCI_tag_t tag) {
  return static_cast<uint16_t>((tag >> 16) & ep->tag_mask);
}

// A receive descriptor from the device's pool for post_recv_keyed's
// arguments, ready to enter the table.
[[gnu::always_inline]] inline recv_ctx* make_recv_ctx(endpoint* ep, uint64_t key, void* buffer,
                                                      size_t capacity, bool want_packet,
                                                      LCI_comp_t comp, void* user_context,
                                                      LCI_segment_t segment,
                                                      const LCI_iovec_t* iov, bool always_signal,
                                                      bool long_recv, uint16_t tag_hi) {
  recv_ctx* c = ep->dev->get_ctx();
  c->type = iov ? LCI_IOVEC
            : long_recv ? LCI_LONG
            : (want_packet || buffer) ? LCI_MEDIUM
                                      : LCI_IMMEDIATE;
  c->segment = segment;
  c->iov.lbuffers = nullptr;
  if (iov) c->iov = *iov;
  c->comp = ep->msg_comp_type == LCI_COMPLETION_NONE && !always_signal ? nullptr : comp;
  c->user_context = user_context;
  c->ep = ep;
  c->buffer = buffer;
  c->capacity = capacity;
  c->want_packet = want_packet;
  c->node.key = key;
  c->node.kind = match_kind::recv;
  c->node.tag_hi = tag_hi;
  return c;
}

// After receive c entered the table: m is the message it met there (then
// c completes now), or nullptr (c waits; a receive from a failed peer is
// completed by the sweep).
inline void finish_post(device& d, recv_ctx* c, match_node* m, uint64_t key) {
  if (m)
    complete_waiting(d, c, reinterpret_cast<packet*>(m));
  else if (__builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0))
    recheck_failed_receive(d, key);
}

// A receive that may wait in its rank's list (rank_fifo.hpp): true if it
// joined the list (the table holds nothing from its rank). False: it goes
// to the table, and *locked is the list whose lock the caller holds until
// the receive is in the table (nullptr: its rank has no list).
[[gnu::always_inline]] inline bool list_receive(device& d, const fifo_recv& e,
                                                rank_fifo** locked) {
  const uint32_t rank = static_cast<uint32_t>(match_key_rank(e.key));
  if (rank >= d.fifo_ranks) return false;  // any rank: the table alone
  rank_fifo& f = d.fifos[rank];
  f.lock.lock();
  if (__builtin_expect(f.full() || d.table->rank_entries(static_cast<int>(rank)) != 0, 0)) {
    *locked = &f;
    return false;
  }
  f.push(e);
  f.lock.unlock();
  if (__builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0))
    recheck_failed_receive(d, e.key);
  return true;
}

// A receive taken from its rank's list, as a descriptor on the caller's
// stack for complete_eager_from<K, false> (a short or medium message).
inline recv_ctx stack_ctx(const fifo_recv& r) {
  recv_ctx c;
  c.comp = r.comp;
  c.user_context = r.user_context;
  c.ep = r.ep;
  c.buffer = r.buffer;
  c.capacity = r.capacity;
  c.want_packet = false;
  c.heap = false;
  return c;
}

// Posts a receive with matching key `key` (recv_key) and `tag_hi`
// (recv_tag_hi); completes it at once if its message already arrived.
// `always_signal`: signal `comp` even when
// the endpoint's message port is LCI_COMPLETION_NONE (LCI's own receives,
// e.g. those of the collectives).
[[gnu::always_inline]] inline void post_recv_keyed(endpoint* ep, uint64_t key, void* buffer,
                                                   size_t capacity, bool want_packet,
                                                   LCI_comp_t comp, void* user_context,
                                                   LCI_segment_t segment = nullptr,
                                                   const LCI_iovec_t* iov = nullptr,
                                                   bool always_signal = false,
                                                   bool long_recv = false,
                                                   uint16_t tag_hi = 0) {
  device& d = *ep->dev;
  rank_fifo* f = nullptr;
  if (!want_packet && iov == nullptr && !long_recv && tag_hi == 0) {
    const fifo_recv e{key, buffer, capacity,
                      ep->msg_comp_type == LCI_COMPLETION_NONE && !always_signal ? nullptr : comp,
                      user_context, ep, segment, buffer ? LCI_MEDIUM : LCI_IMMEDIATE};
    if (list_receive(d, e, &f)) return;
  }
  recv_ctx* c = make_recv_ctx(ep, key, buffer, capacity, want_packet, comp, user_context, segment,
                              iov, always_signal, long_recv, tag_hi);
  match_node* m = d.table->insert_or_match(&c->node);
  if (f) f->lock.unlock();
  finish_post(d, c, m, key);  // outside the lock: a completion may post again
}

inline void post_recv(endpoint* ep, int rank, LCI_tag_t tag, void* buffer, size_t capacity,
                      bool want_packet, LCI_comp_t comp, void* user_context,
                      LCI_segment_t segment = nullptr, const LCI_iovec_t* iov = nullptr,
                      bool always_signal = false, bool long_recv = false) {
  post_recv_keyed(ep, recv_key(ep, rank, tag), buffer, capacity, want_packet, comp, user_context,
                  segment, iov, always_signal, long_recv);
}

// post_recv_keyed into `buffer` (the LCI 2 interface's post_recv), except
// that a medium message already waiting is copied out at once and reported
// in *out instead of signalling `comp`: true then. False: the receive is
// posted (or met a waiting RTS) and `comp` will be signalled.
[[gnu::always_inline]] inline bool post_recv_or_done(endpoint* ep, uint64_t key,
                                                     uint16_t tag_hi, void* buffer,
                                                     size_t capacity, LCI_comp_t comp,
                                                     void* user_context, LCI_segment_t segment,
                                                     bool long_recv, LCI_request_t* out) {
  device& d = *ep->dev;
  rank_fifo* f = nullptr;
  if (!long_recv && tag_hi == 0 &&
      list_receive(d, fifo_recv{key, buffer, capacity, comp, user_context, ep, segment, LCI_MEDIUM},
                   &f))
    return false;  // (nothing from its rank waits: posted)
  recv_ctx* c = d.get_ctx();
  c->type = long_recv ? LCI_LONG : LCI_MEDIUM;
  c->segment = segment;
  c->iov.lbuffers = nullptr;
  c->comp = comp;
  c->user_context = user_context;
  c->ep = ep;
  c->buffer = buffer;
  c->capacity = capacity;
  c->want_packet = false;
  c->node.key = key;
  c->node.kind = match_kind::recv;
  c->node.tag_hi = tag_hi;
  match_node* m = d.table->insert_or_match(&c->node);
  if (f) f->lock.unlock();
  if (m) {
    packet* p = reinterpret_cast<packet*>(m);
    if (p->in.kind == msg_kind::medium) {
      *out = make_request(p->in.src_rank, p->in.tag, LCI_MEDIUM, user_context);
      out->data.mbuffer.address = buffer;
      out->data.mbuffer.length = p->in.length < capacity ? p->in.length : capacity;
      c->comp = nullptr;  // reported to the caller instead
      complete_waiting(d, c, p);
      return true;
    }
    complete_waiting(d, c, p);
  } else if (__builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0)) {
    recheck_failed_receive(d, key);
  }
  return false;
}

// The receives of recvs and recvm (into `buffer`) and of recvmn (into a
// packet), register arguments only (see send_eager_plain).
void post_recv_plain(endpoint* ep, uint64_t key, void* buffer, size_t capacity, LCI_comp_t comp,
                     void* user_context);
void post_recv_packet(endpoint* ep, uint64_t key, LCI_comp_t comp, void* user_context);

// The last step of LCI_sends/sendm/sendmn and of LCI_recvm, once their
// checks passed: each entry point ends in a tail call to one of these, which
// hold the catch-all handler (a handler in the entry point itself would
// rule out the tail call and make it save its arguments across the call).
// send_eager_entry: send_eager_plain, counted as issued; an exception is
// reported under `call`. The endpoint's tag fits 16 bits (the entry points
// refuse wider ones; C endpoints have no wide tags).
LCI_error_t send_eager_entry(endpoint* ep, uint32_t imm, void* address, size_t length, int rank,
                             const char* call) noexcept;
// post_recv_plain, LCI_OK; an exception is reported under LCI_recvm.
LCI_error_t recvm_entry(endpoint* ep, uint64_t key, void* buffer, size_t capacity, LCI_comp_t comp,
                        void* user_context) noexcept;

}  // namespace lci

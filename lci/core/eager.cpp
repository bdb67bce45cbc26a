// Arrivals of the eager protocol (see eager.hpp): the matched two-sided
// kinds (short, medium, and the RTS of a long or iovec message, which
// meets its receive in the same table) and the eager one-sided puts to the
// target's completion object. Each handler is registered for its kind in
// progress's dispatch table. Also LCI's own control sends (send_control)
// and their retries from the backlog.
#include "lci/core/eager.hpp"

#include <cstring>

#include "lci/comp/registry.hpp"
#include "lci/core/validate.hpp"

namespace lci {

// ---- control messages ------------------------------------------------------------

void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length) {
  // A failed peer reads nothing more (and a full ring of its would keep
  // the message in the backlog forever).
  if (peer_refused(rank)) {
    if (d.owns_packet(data)) d.put_packet(static_cast<packet*>(d.packets->packet_of(data)));
    return;
  }
  if (d.backlog_empty() &&
      send_eager(d, nullptr, imm, const_cast<void*>(data), length, rank, 0, nullptr, nullptr) ==
          post_status::ok)
    return;
  backlog_op b;
  b.what = backlog_op::op::message;
  b.rank = rank;
  b.imm = imm;
  b.length = length;
  if (d.owns_packet(data))
    b.pkt = static_cast<packet*>(d.packets->packet_of(data));  // built in a packet already
  else if ((b.pkt = d.get_packet()) != nullptr)
    memcpy(b.pkt->payload(), data, length);
  else
    b.bytes.assign(static_cast<const char*>(data), static_cast<const char*>(data) + length);
  d.push_backlog(std::move(b));
}

namespace {
// One attempt at sending a control message held in a pool packet or on the heap.
bool retry_message(device& d, backlog_op& op) {
  // Queued before its peer was known dead (after the sweep dropped the
  // others): dropped, or a full ring of the dead peer would hold the
  // backlog forever.
  if (peer_refused(op.rank)) {
    if (op.pkt) d.put_packet(op.pkt);
    return true;
  }
  void* from = op.pkt ? static_cast<void*>(op.pkt->payload()) : op.bytes.data();
  return send_eager(d, nullptr, op.imm, from, op.length, op.rank, 0, nullptr, nullptr) ==
         post_status::ok;
}
LCI_BACKLOG_RETRY(backlog_op::op::message, retry_message);
}  // namespace

post_status send_eager_tagged(endpoint* ep, msg_kind kind, void* address, size_t length,
                              int rank, LCI_tag_t tag, LCI_comp_t comp, void* user_context,
                              const trailer* tr, bool tracked) {
  const tag_suffix sfx = make_tag_suffix(kind, tag);
  const post_status st =
      send_eager_body(*ep->dev, tracked ? ep : nullptr, make_imm(msg_kind::tagged, ep->index, tag),
                      address, length, rank, tag, comp, user_context, tr, &sfx);
  if (st == post_status::ok) ep->issued.add(rank);
  return st;
}

bool target_comp(endpoint* ep, uint64_t handle, LCI_comp_t* out, comp_ref* ref) {
  *out = nullptr;
  if (ep->msg_comp_type == LCI_COMPLETION_NONE) return true;
  if (!handle) {
    *out = ep->default_comp;
    return true;
  }
  if (ep->lookup_comp) return ep->lookup_comp(handle, out, ref);
  comp_base* c = comp_registry::acquire(handle);
  if (!c) return false;
  ref->reset(c);
  if (c->type != ep->msg_comp_type && ep->msg_comp_type != comp_type_any) return false;
  *out = c;
  return true;
}

namespace {

// ---- two-sided: short, medium, RTS -----------------------------------------------

// Completes the oldest receive waiting for the message, or leaves the
// message in the matching table until its receive is posted. A message of
// a rank-matching endpoint looks at its rank's list of receives first
// (rank_fifo.hpp) and enters the table under the list's lock. `Tagged`: it
// came as a `tagged` message; an ordinary message's tag has an upper half
// of 0.
template <msg_kind K, bool Tagged = false>
arrival on_matched(device& d, endpoint* ep, packet* p) {
  const uint64_t key = recv_key(ep, p->in.src_rank, p->in.tag);
  p->in.node.key = key;
  p->in.node.kind = match_kind::send;
  p->in.node.tag_hi = Tagged ? recv_tag_hi(ep, p->in.tag) : 0;
  const uint32_t rank = static_cast<uint32_t>(match_key_rank(key));
  match_node* m;
  if (rank < d.fifo_ranks) {
    rank_fifo& f = d.fifos[rank];
    f.lock.lock();
    // (list entries have tag_hi 0: a wide tag's message may have it too)
    fifo_recv* r = p->in.node.tag_hi != 0 || f.empty() ? nullptr : f.find(key);
    if (r != nullptr) {
      const fifo_recv taken = f.take(r);
      f.lock.unlock();
      if constexpr (K == msg_kind::rts) {
        m = &d.ctx_from_list(taken)->node;  // the rendezvous keeps a descriptor
      } else {
        recv_ctx c = stack_ctx(taken);
        return complete_eager<K, false>(d, &c, p);
      }
    } else {
      m = d.table->insert_or_match(&p->in.node);
      f.lock.unlock();
    }
  } else {
    m = d.table->insert_or_match(&p->in.node);
  }
  if (!m) return arrival::kept;
  auto* c = reinterpret_cast<recv_ctx*>(m);
  if constexpr (K == msg_kind::rts) {
    complete_matched(d, c, p);  // rendezvous.cpp
    return arrival::kept;
  } else {
    return complete_eager<K>(d, c, p);
  }
}

// The receive `n` (of a short or medium message's key) takes the message
// from where the transport holds it: it copies it out (recvs, recvm; not
// recvmn, which keeps a packet) and its completion object is not a handler,
// which would run under the poll's serialisation.
bool comp_copies_in_place(LCI_comp_t comp) {
  return to_comp(comp)->type != LCI_COMPLETION_HANDLER && to_comp(comp)->type != comp_type_callback;
}
bool copies_in_place(const match_node* n) {
  const auto* c = reinterpret_cast<const recv_ctx*>(n);
  return !c->want_packet && (c->comp == nullptr || comp_copies_in_place(c->comp));
}

LCI_ARRIVAL(msg_kind::short_msg, on_matched<msg_kind::short_msg>);
LCI_ARRIVAL(msg_kind::medium, on_matched<msg_kind::medium>);
LCI_ARRIVAL(msg_kind::rts, on_matched<msg_kind::rts>);
LCI_TAGGED_ARRIVAL(msg_kind::short_msg, (on_matched<msg_kind::short_msg, true>));
LCI_TAGGED_ARRIVAL(msg_kind::medium, (on_matched<msg_kind::medium, true>));
LCI_TAGGED_ARRIVAL(msg_kind::rts, (on_matched<msg_kind::rts, true>));

// ---- one-sided: puts, putma/putmna/putmac, putm/putmn -----------------------------

// Keeps a one-sided medium message on the heap (device::parked) until a
// packet is free to carry it to `comp`; `ref` is the reference taken on it.
void park(device& d, LCI_comp_t comp, comp_base* ref, const LCI_request_t& r, const char* data,
          size_t length) {
  parked_msg m;
  m.comp = comp;
  m.ref = ref;
  m.src_rank = r.rank;
  m.tag = r.tag;
  m.length = length;
  m.target_context = r.user_context;
  m.bytes.reset(new char[length ? length : 1]);
  if (length) memcpy(m.bytes.get(), data, length);
  d.parked_lock.lock();
  d.parked.push_back(std::move(m));
  d.parked_count.fetch_add(1, std::memory_order_release);
  d.parked_lock.unlock();
}

// An eager one-sided message of kind K arrived in packet p: deliver it to
// the target's completion object.
template <msg_kind K>
arrival on_eager_put(device& d, endpoint* ep, packet* p) {
  constexpr bool short_put = K == msg_kind::am_short || K == msg_kind::am_short_c;
  size_t length = p->in.length;
  trailer tr{0, 0};
  if constexpr (has_trailer(K)) {
    length -= trailer_size;
    memcpy(&tr, p->payload() + length, trailer_size);
  }
  LCI_comp_t comp;
  comp_ref held;  // until comp was signalled
  if (!target_comp(ep, tr.comp, &comp, &held)) {
    drop_message(d, p, "one-sided message", "remote completion handle", p->in.src_rank);
    return arrival::kept;
  }
  if (K == msg_kind::put_to && !d.segments.covers(tr.address, length)) {
    drop_message(d, p, "put", "target address (not in a registered segment)", p->in.src_rank);
    return arrival::kept;
  }
  ep->done.add(p->in.src_rank);
  LCI_request_t r = make_request(p->in.src_rank, p->in.tag, LCI_MEDIUM, ep->target_context);
  arrival a = arrival::repost;
  if constexpr (short_put) {
    r.type = LCI_IMMEDIATE;
    memcpy(&r.data.immediate, p->payload(), LCI_SHORT_SIZE);
  } else if constexpr (K == msg_kind::put_to) {
    if (length) memcpy(reinterpret_cast<void*>(tr.address), p->payload(), length);
    r.data.mbuffer.address = reinterpret_cast<void*>(tr.address);
    r.data.mbuffer.length = length;
  } else {  // am_medium[_c]: the target owns the packet from now on
    if (!comp) return arrival::repost;  // no one to hand it to (a NONE message port)
    // The program may hold the packet for long: a fresh one replaces its
    // receive now. With none free (every packet held by the program or by
    // messages not yet consumed), the message keeps its packet and its
    // receive stays missing while at least recv_reserve receives remain
    // posted; beyond that, or with messages parked already (they go
    // first), it waits on the heap and its packet is posted again, so that
    // this rank keeps receiving whatever follows (a barrier's message, say).
    const bool none_parked = d.parked_count.load(std::memory_order_acquire) == 0;
    packet* fresh = none_parked ? d.get_packet() : nullptr;
    if (fresh) {
      d.post_recv_packet(fresh);
      a = arrival::replaced;
    } else if (none_parked && d.recv_deficit.load(std::memory_order_relaxed) <
                                  d.recv_target - d.recv_reserve) {
      a = arrival::kept;  // on_arrival counts the receive as missing
    } else {
      park(d, comp, held.take(), r, p->payload(), length);
      return arrival::repost;
    }
    r.data.mbuffer.address = p->payload();
    r.data.mbuffer.length = length;
    device::hand_out(p);
  }
  if (comp) comp_signal(comp, r);
  return a;
}

LCI_ARRIVAL(msg_kind::am_short, on_eager_put<msg_kind::am_short>);
LCI_ARRIVAL(msg_kind::am_short_c, on_eager_put<msg_kind::am_short_c>);
LCI_ARRIVAL(msg_kind::am_medium, on_eager_put<msg_kind::am_medium>);
LCI_ARRIVAL(msg_kind::am_medium_c, on_eager_put<msg_kind::am_medium_c>);
LCI_ARRIVAL(msg_kind::put_to, on_eager_put<msg_kind::put_to>);

}  // namespace

bool deliver_parked(device& d) {
  if (d.parked_delivering.exchange(true, std::memory_order_acquire)) return false;
  bool did = false;
  for (;;) {
    packet* p = d.get_packet();
    if (!p) break;
    parked_msg m;
    d.parked_lock.lock();
    const bool any = !d.parked.empty();
    if (any) {
      m = std::move(d.parked.front());
      d.parked.pop_front();
    }
    d.parked_lock.unlock();
    if (!any) {
      d.put_packet(p);
      break;
    }
    if (m.length) memcpy(p->payload(), m.bytes.get(), m.length);
    LCI_request_t r = make_request(m.src_rank, m.tag, LCI_MEDIUM, m.target_context);
    r.data.mbuffer.address = p->payload();
    r.data.mbuffer.length = m.length;
    device::hand_out(p);
    comp_signal(m.comp, r);
    if (m.ref) comp_registry::release(m.ref);
    // Counted out only now: an arrival meanwhile still parks behind it.
    d.parked_count.fetch_sub(1, std::memory_order_release);
    did = true;
  }
  d.parked_delivering.store(false, std::memory_order_release);
  return did;
}

namespace {
// A short or medium message that the native transport offers from its ring
// cell (native_device::deliver_in_place; `dev` is the device): completes
// the receive that already waits for it if that receive copies the
// payload out. False: the message takes the usual path, through a packet.
bool arrive_in_place(void* dev, int src, uint32_t imm, const char* payload, size_t length) {
  device& d = *static_cast<device*>(dev);
  const msg_kind kind = imm_kind(imm);
  if (kind != msg_kind::medium && kind != msg_kind::short_msg) return false;
  // A bad field is reported by the usual path, which checks it again.
  if (invalid_field(imm, src, length, payload, d.recv_size) != nullptr) return false;
  if (peer_refused(src)) return false;  // (dropped by the usual path)
  endpoint* ep = endpoint_by_index(imm_endpoint(imm));
  if (ep == nullptr || ep->dev != &d) return false;
  const LCI_tag_t tag = imm_tag(imm);
  const uint64_t key = recv_key(ep, src, tag);
  const uint32_t rank = static_cast<uint32_t>(match_key_rank(key));  // (any rank: no list)
  if (rank < d.fifo_ranks) {
    // The rank's list first (rank_fifo.hpp): its entries are older than
    // the table's receives with this key.
    rank_fifo& f = d.fifos[rank];
    f.lock.lock();
    fifo_recv* r = f.empty() ? nullptr : f.find(key);
    if (r != nullptr) {
      if (r->comp != nullptr && !comp_copies_in_place(r->comp)) {
        f.lock.unlock();
        return false;  // a handler: the usual path takes it from the list
      }
      const fifo_recv taken = f.take(r);
      f.lock.unlock();
      LCI_PROF_INC(d, received);
      recv_ctx c = stack_ctx(taken);
      if (kind == msg_kind::short_msg)
        complete_eager_from<msg_kind::short_msg, false>(d, &c, src, tag, payload, length, nullptr);
      else
        complete_eager_from<msg_kind::medium, false>(d, &c, src, tag, payload, length, nullptr);
      return true;
    }
    f.lock.unlock();
  }
  match_node* m = d.table->take_if(key, match_kind::send, copies_in_place);
  if (m == nullptr) return false;
  LCI_PROF_INC(d, received);
  auto* c = reinterpret_cast<recv_ctx*>(m);
  if (kind == msg_kind::short_msg)
    complete_eager_from<msg_kind::short_msg>(d, c, src, tag, payload, length, nullptr);
  else
    complete_eager_from<msg_kind::medium>(d, c, src, tag, payload, length, nullptr);
  return true;
}
}  // namespace

void device::enable_in_place() { net->deliver_in_place(&arrive_in_place, this); }

}  // namespace lci

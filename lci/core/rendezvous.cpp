// Rendezvous: long and iovec messages, two-sided (sendl/recvl, sendv/recvv)
// and into target-allocated buffers (putla, putva), and the rendezvous
// control messages (RTR, FIN, NACK, abort). Their data moves with the RDMA
// engine (rdma_engine.hpp). See rendezvous.hpp.
#include "lci/core/rendezvous.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lci/comp/signal.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/rdma_engine.hpp"
#include "lci/core/validate.hpp"
#include "lci/util/log.hpp"

namespace lci {

namespace {

// Sends the RTR of a receiving op whose buffers are registered. It is
// built in a pool packet (or, while the pool is empty, on the heap) and
// sent from there. The op gets its id here and is published in the table
// only once the RTR is built: from then on a peer's message or a failed
// peer's sweep may take it, and this thread reads it no more (it names it
// by id and serial: rdv_table.hpp).
void send_rtr(device& d, rdv_op* op) {
  const uint32_t id = d.rdv.reserve();
  op->id = id;
  const int rank = op->rank;
  const size_t n = op->count;
  const size_t length = offsetof(rtr_payload, buffers) + n * sizeof(rtr_payload::remote);
  packet* p = d.get_packet();
  std::vector<char> heap(p ? 0 : length);  // only while the pool is empty
  char* bytes = p ? p->payload() : heap.data();
  auto* rtr = reinterpret_cast<rtr_payload*>(bytes);
  rtr->send_id = op->peer_id;
  rtr->recv_id = op->id;
  rtr->count = static_cast<uint32_t>(n);
  rtr->pad = 0;
  for (size_t i = 0; i < n; ++i) {
    const rdv_buffer& b = op->bufs[i];
    rtr->buffers[i].address = rdma_address(d, op->rank, b.reg.base, b.local);
    // Masked for the network where messages are authenticated: an RTR
    // read off a taken-over connection shows no usable key.
    rtr->buffers[i].rkey = d.net->seal_key(op->rank, b.reg.rkey, rtr->send_id, rtr->recv_id, i);
    rtr->buffers[i].length = b.length;
  }
  const uint64_t serial = d.rdv.publish(id, op);
  send_control(d, rank, make_control_imm(control_kind::rtr), bytes, length);
  end_if_peer_failed(d, id, serial, rank, true);
}

// What became of an RTS at its target.
enum class accepted {
  yes,             // buffers ready and registered: answer with an RTR
  no_memory,       // an LCI long buffer could not be allocated
  not_registered,  // a buffer could not be registered (nothing kept)
};

// Allocates an LCI long buffer for a receive.
accepted allocate(device& d, size_t size, LCI_lbuffer_t* out) {
  if (size == 0) {
    *out = LCI_lbuffer_t{nullptr, nullptr, 0};
    return accepted::yes;
  }
  bool not_registered = false;
  if (lbuffer_alloc(d, size, 0, out, &not_registered)) return accepted::yes;
  return not_registered ? accepted::not_registered : accepted::no_memory;
}

// Target of a rendezvous: fills the op from the RTS, allocates what the
// receive (or putla/putva) did not provide, registers and answers with an
// RTR. Unless the answer is accepted::yes nothing is kept (the caller
// decides what then).
accepted accept_rts(device& d, rdv_op* op, const rts_payload& h, const char* extra,
                    const recv_ctx* c) {
  op->peer_id = h.send_id;
  if (h.count == 0) {
    op->type = LCI_LONG;
    LCI_lbuffer_t b;
    if (c && c->buffer) {
      b = LCI_lbuffer_t{c->segment, c->buffer, h.size};
      if (h.size > c->capacity) {
        LCI_WARN("LCI_recvl: a %llu-byte message from rank %d (tag %u) does not fit the %zu-byte "
                 "buffer; truncated", static_cast<unsigned long long>(h.size), op->rank, op->tag,
                 c->capacity);
        b.length = c->capacity;
      }
    } else if (const accepted a = allocate(d, h.size, &b); a != accepted::yes) {
      return a;
    }
    op->lbuffer = b;
    op->set_count(1);
    op->bufs[0].local = static_cast<char*>(b.address);
    op->bufs[0].length = b.length;
    // (An allocated buffer has its own segment: only the program's can fail.)
    return register_buffers(d, op, &op->lbuffer, 1) ? accepted::yes : accepted::not_registered;
  }
  // iovec: count lengths, then the piggy-back bytes.
  op->type = LCI_IOVEC;
  const int count = static_cast<int>(h.count);
  const auto* lengths = reinterpret_cast<const uint64_t*>(extra);
  const char* piggy = extra + sizeof(uint64_t) * h.count;
  LCI_iovec_t iov;
  op->set_count(static_cast<uint32_t>(count));
  if (c && c->iov.lbuffers) {
    iov = c->iov;
    if (iov.count != count)
      fatal("LCI_recvv: the sender's iovec has %d buffers, the receive %d", count, iov.count);
    for (int i = 0; i < count; ++i)
      if (iov.lbuffers[i].length < lengths[i])
        fatal("LCI_recvv: buffer %d holds %zu bytes, %llu arrive", i, iov.lbuffers[i].length,
              static_cast<unsigned long long>(lengths[i]));
    if (h.piggy_length > iov.piggy_back.length)
      fatal("LCI_recvv: the piggy-back buffer holds %zu bytes, %u arrive",
            iov.piggy_back.length, h.piggy_length);
    // Registered whole, before anything of the receive changes: a refused
    // receive stays posted as it was.
    if (!register_buffers(d, op, iov.lbuffers, count)) return accepted::not_registered;
    for (int i = 0; i < count; ++i) iov.lbuffers[i].length = lengths[i];
    if (h.piggy_length) memcpy(iov.piggy_back.address, piggy, h.piggy_length);
    iov.piggy_back.length = h.piggy_length;
  } else {
    iov.count = count;
    iov.lbuffers = static_cast<LCI_lbuffer_t*>(malloc(sizeof(LCI_lbuffer_t) * h.count));
    iov.piggy_back.address = malloc(h.piggy_length ? h.piggy_length : 1);
    iov.piggy_back.length = h.piggy_length;
    if (!iov.lbuffers || !iov.piggy_back.address) {
      free(iov.lbuffers);
      free(iov.piggy_back.address);
      return accepted::no_memory;
    }
    memcpy(iov.piggy_back.address, piggy, h.piggy_length);
    for (int i = 0; i < count; ++i) {
      if (const accepted a = allocate(d, lengths[i], &iov.lbuffers[i]); a != accepted::yes) {
        for (int j = 0; j < i; ++j) lbuffer_free(iov.lbuffers[j]);
        free(iov.lbuffers);
        free(iov.piggy_back.address);
        return a;
      }
    }
    // Each allocated buffer has its own segment: registering cannot fail.
    register_buffers(d, op, iov.lbuffers, count);
  }
  op->iov = iov;
  for (int i = 0; i < count; ++i) {
    op->bufs[i].local = static_cast<char*>(iov.lbuffers[i].address);
    op->bufs[i].length = iov.lbuffers[i].length;
  }
  return accepted::yes;
}

// Tells the origin of RTS `send_id` that its rendezvous is refused (it
// completes with LCI_ERR_RETRY); counted as finished here, for gfence.
void refuse_rts(device& d, endpoint* ep, int rank, uint64_t send_id) {
  fin_payload nack{send_id};
  send_control(d, rank, make_control_imm(control_kind::nack), &nack, sizeof(nack));
  ep->done.add(rank);
}

}  // namespace

// ---- origin ---------------------------------------------------------------------

namespace {

// Builds the RTS of a long or iovec send in a packet and sends it. The op
// is in the table before the RTS leaves, so an RTR can find it whichever
// thread receives it. *id_out and *serial_out name it in the table
// (rdv_table.hpp): the caller must not use its address once it returns.
post_status send_rts(endpoint* ep, rdv_op* op, bool alloc_at_target, uintptr_t remote_comp,
                     const LCI_iovec_t* iov, uint32_t* id_out, uint64_t* serial_out) {
  device& d = *ep->dev;
  packet* p = d.get_send_packet();
  if (!p) return post_status::retry_no_packet;
  char* bytes = p->payload();
  rts_payload h{};
  h.comp = remote_comp;
  size_t length = sizeof(rts_payload);
  if (iov) {
    h.count = static_cast<uint32_t>(iov->count);
    h.piggy_length = static_cast<uint32_t>(iov->piggy_back.length);
    auto* lengths = reinterpret_cast<uint64_t*>(bytes + sizeof(rts_payload));
    for (int i = 0; i < iov->count; ++i) {
      lengths[i] = iov->lbuffers[i].length;
      h.size += iov->lbuffers[i].length;
    }
    length += sizeof(uint64_t) * h.count;
    if (h.piggy_length) memcpy(bytes + length, iov->piggy_back.address, h.piggy_length);
    length += h.piggy_length;
  } else {
    h.size = op->lbuffer.length;
  }
  // Once the RTS has left, another thread's progress may run the whole
  // rendezvous and free the op: nothing below the send may read it.
  const int rank = op->rank;
  const LCI_tag_t tag = op->tag;
  // One lock: the op's id and serial are written before another thread
  // (a failed peer's sweep) can find it.
  uint64_t serial = 0;
  const uint32_t id = d.rdv.insert(op, &serial, &op->id);
  *id_out = id;
  *serial_out = serial;
  h.send_id = id;
  memcpy(bytes, &h, sizeof(h));
  const msg_kind kind = alloc_at_target ? msg_kind::rts_alloc : msg_kind::rts;
  uint32_t imm = make_imm(kind, ep->index, tag);
  if (is_wide_tag(tag) && ep->wide_tags) {
    const tag_suffix sfx = make_tag_suffix(kind, tag);
    memcpy(bytes + length, &sfx, sizeof(sfx));
    length += tag_suffix_size;
    imm = make_imm(msg_kind::tagged, ep->index, tag);
  }
  // From the packet: injected (and the packet freed) or sent in place.
  const post_status st = send_eager(d, nullptr, imm, bytes, length, rank, tag, nullptr, nullptr);
  if (st != post_status::ok) {
    d.put_packet(p);
    // (A failed peer's sweep may have taken and finished the op meanwhile:
    // then it was accepted, and has completed with LCI_ERR_FATAL.)
    if (!d.rdv.take_if_current(id, serial)) return post_status::ok;
    return st;
  }
  ep->issued.add(rank);
  return post_status::ok;
}

// The origin of a long (iov == nullptr, one buffer) or iovec send.
post_status start_send(endpoint* ep, const LCI_lbuffer_t* buffers, int count,
                       const LCI_iovec_t* iov, int rank, LCI_tag_t tag, LCI_comp_t comp,
                       void* user_context, bool alloc_at_target, uintptr_t remote_comp,
                       bool always_signal) {
  device& d = *ep->dev;
  if (!d.backlog_empty()) return post_status::retry_backlog;
  rdv_op* op = new_rdv(d);
  op->role = alloc_at_target ? rdv_role::put_alloc : rdv_role::send;
  op->type = iov ? LCI_IOVEC : LCI_LONG;
  op->ep = ep;
  op->rank = rank;
  op->tag = tag;
  op->comp = ep->cmd_comp_type == LCI_COMPLETION_NONE && !always_signal ? nullptr : comp;
  op->user_context = user_context;
  if (iov)
    op->iov = *iov;
  else
    op->lbuffer = buffers[0];
  op->set_count(static_cast<uint32_t>(count));
  for (int i = 0; i < count; ++i) {
    op->bufs[i].local = static_cast<char*>(buffers[i].address);
    op->bufs[i].length = buffers[i].length;
  }
  if (!register_buffers(d, op, buffers, count)) {
    delete_rdv(d, op);
    return post_status::retry_no_registration;
  }
  // Counted before the RTS leaves: an empty message completes at once.
  op->counted_local = true;
  ep->start_local();
  uint32_t id = 0;
  uint64_t serial = 0;
  if (const post_status st = send_rts(ep, op, alloc_at_target, remote_comp, iov, &id, &serial);
      st != post_status::ok) {
    ep->end_local();
    release_regs(d, op);
    delete_rdv(d, op);
    return st;
  }
  // An empty message has nothing to move: done once its RTS left (unless
  // a failed peer's sweep finished it first: then the table no longer has it).
  if (!iov && buffers[0].length == 0) {
    if (rdv_op* mine = d.rdv.take_if_current(id, serial)) finish(d, mine, false);
  } else {
    end_if_peer_failed(d, id, serial, rank, false);
  }
  return post_status::ok;
}

}  // namespace

post_status start_send_long(endpoint* ep, const LCI_lbuffer_t& buffer, int rank, LCI_tag_t tag,
                            LCI_comp_t comp, void* user_context, bool alloc_at_target,
                            uintptr_t remote_comp, bool always_signal) {
  return start_send(ep, &buffer, 1, nullptr, rank, tag, comp, user_context, alloc_at_target,
                    remote_comp, always_signal);
}

post_status start_send_iovec(endpoint* ep, const LCI_iovec_t& iov, int rank, LCI_tag_t tag,
                             LCI_comp_t comp, void* user_context, bool alloc_at_target,
                             uintptr_t remote_comp) {
  return start_send(ep, iov.lbuffers, iov.count, &iov, rank, tag, comp, user_context,
                    alloc_at_target, remote_comp, false);
}

// ---- end of the origin's writes -----------------------------------------------------

namespace {

// Every write of a sendl/sendv/putla/putva finished at the origin.
void on_writes_finished(device& d, rdv_op* op) {
  if (op->flag != LCI_OK) {
    // The data did not arrive (whole or in part): the target completes
    // with an error instead of a FIN, which would claim it did.
    fin_payload abort{op->peer_id};
    send_control(d, op->rank, make_control_imm(control_kind::abort), &abort, sizeof(abort));
  } else if (!op->write_imm) {
    fin_payload fin{op->peer_id};
    send_control(d, op->rank, make_control_imm(control_kind::fin), &fin, sizeof(fin));
  }
  finish(d, op, false);
}

LCI_RDMA_FINISHED(rdv_role::send, on_writes_finished);
LCI_RDMA_FINISHED(rdv_role::put_alloc, on_writes_finished);

}  // namespace

// ---- target -------------------------------------------------------------------------

namespace {

// A two-sided RTS met its receive (recvl or recvv); the packet goes back to
// the pool.
void complete_rts(device& d, recv_ctx* c, packet* p) {
  rts_payload h;
  memcpy(&h, p->payload(), sizeof(h));
  rdv_op* op = new_rdv(d);
  op->role = rdv_role::recv;
  op->ep = c->ep;
  op->rank = p->in.src_rank;
  op->tag = p->in.tag;
  op->comp = c->comp;
  op->user_context = c->user_context;
  const accepted a = accept_rts(d, op, h, p->payload() + sizeof(rts_payload), c);
  d.put_packet(p);
  if (a == accepted::not_registered) {
    // Refused: the origin completes with LCI_ERR_RETRY and may send again;
    // the receive stays posted for that (or another matching) message.
    LCI_LOG(info, "%s: cannot register the buffers for a message from rank %d (tag %u); refused",
            h.count ? "LCI_recvv" : "LCI_recvl", op->rank, op->tag);
    refuse_rts(d, c->ep, op->rank, h.send_id);
    delete_rdv(d, op);
    if (match_node* m = d.table->insert_or_match(&c->node))
      complete_waiting(d, c, reinterpret_cast<packet*>(m));
    return;
  }
  d.put_ctx(c);
  if (a != accepted::yes) {
    // API: a dynamic recvl/recvv that cannot allocate aborts the process
    // (a receive into the program's buffers never fails to allocate).
    fatal("%s: cannot allocate %llu bytes for a message from rank %d (tag %u); aborting",
          h.count ? "LCI_recvv" : "LCI_recvl", static_cast<unsigned long long>(h.size), op->rank,
          op->tag);
  }
  if (h.size == 0 && h.count == 0) {
    // Nothing to move: the sender completed when its RTS left (the op was
    // never in the table).
    finish(d, op, true);
    return;
  }
  send_rtr(d, op);
}

LCI_MATCHED(msg_kind::rts, complete_rts);

// A putla/putva asks to write into a buffer this process allocates.
arrival on_rts_alloc(device& d, endpoint* ep, packet* p) {
  rts_payload h;
  memcpy(&h, p->payload(), sizeof(h));
  rdv_op* op = new_rdv(d);
  op->role = rdv_role::recv_alloc;
  op->ep = ep;
  op->rank = p->in.src_rank;
  op->tag = p->in.tag;
  op->user_context = ep->target_context;
  comp_ref held;
  const bool comp_ok = target_comp(ep, h.comp, &op->comp, &held);
  op->held_comp = held.take();  // released with the op
  if (!comp_ok) {
    delete_rdv(d, op);
    drop_message(d, p, "put request", "remote completion handle", p->in.src_rank);
    return arrival::kept;
  }
  const accepted a = accept_rts(d, op, h, p->payload() + sizeof(rts_payload), nullptr);
  // Everything of the RTS has been read: the packet is free from here on.
  if (a != accepted::yes) {
    // Nothing arrives here; the origin learns it from its completion.
    LCI_LOG(info, "cannot %s %llu bytes for a put from rank %d; refused",
            a == accepted::no_memory ? "allocate" : "register",
            static_cast<unsigned long long>(h.size), op->rank);
    refuse_rts(d, ep, op->rank, h.send_id);
    delete_rdv(d, op);
    return arrival::repost;
  }
  if (h.size == 0 && h.count == 0) {
    finish(d, op, true);  // never in the table
    return arrival::repost;
  }
  send_rtr(d, op);
  return arrival::repost;
}

LCI_ARRIVAL(msg_kind::rts_alloc, on_rts_alloc);

constexpr unsigned origin_roles = role_bit(rdv_role::send) | role_bit(rdv_role::put_alloc);
constexpr unsigned target_roles = role_bit(rdv_role::recv) | role_bit(rdv_role::recv_alloc);

// The rendezvous `id` of a receiving op from `rank` has all its data (a
// write with immediate data or a FIN); an id that names no such op is
// dropped. `rank` may be net::any_member (see net_types.hpp).
void on_write_imm(device& d, uint64_t id, int rank) {
  rdv_op* op = take_peer_op(d, id, rank, target_roles, [](const rdv_op*) { return true; });
  if (!op) {
    report_dropped("rendezvous completion", "rendezvous id", rank);
    return;
  }
  finish(d, op, true);
}

// A peer's RDMA write with immediate data (its source checked by progress).
void on_remote_write(device& d, const net::completion& c) {
  on_write_imm(d, imm_rdv_id(c.imm), c.src_rank);
}

LCI_COMPLETION(net::completion_kind::remote_write, on_remote_write);

}  // namespace

// ---- control messages ---------------------------------------------------------------

namespace {

// The target's buffers are ready: write (or, for no bytes, finish).
arrival on_rtr(device& d, packet* p) {
  const int rank = p->in.src_rank;
  const auto* rtr = reinterpret_cast<const rtr_payload*>(p->payload());
  // One RTR per op, with one remote buffer per local one. Taken out of the
  // table: from here its own RDMA completions finish it, which a failed
  // peer's sweep must not do first.
  const uint32_t count = rtr->count;
  rdv_op* op = take_peer_op(d, rtr->send_id, rank, origin_roles, [count](const rdv_op* o) {
    return !o->have_remote && o->count == count;
  });
  if (!op) {
    drop_message(d, p, "RTR", "rendezvous id or RTR count", rank);
    return arrival::kept;
  }
  op->peer_id = rtr->recv_id;
  op->have_remote = true;
  for (uint32_t i = 0; i < op->count; ++i) {
    rdv_buffer& b = op->bufs[i];
    b.remote = rtr->buffers[i];
    b.remote.rkey = d.net->open_key(rank, b.remote.rkey, rtr->send_id, rtr->recv_id, i);
    // A receive may take fewer bytes than were sent (recvl into a smaller buffer).
    b.length = std::min<size_t>(b.length, b.remote.length);
  }
  // One write with immediate data carries the FIN; a receive that takes
  // 0 bytes gets no write at all, so it is finished with a FIN message.
  // A write with immediate data carries no authentication trailer: where
  // the network authenticates messages, its target learns of it from a FIN.
  // With LCI_PEER_FAILURE=continue, also only where the target learns who
  // wrote: a failed rank's ops at the target end unwritten and their ids
  // are reused, and a late write naming only the id would complete another
  // rank's op, before its data (a FIN names its sender).
  op->write_imm = op->type == LCI_LONG && d.rdv_write_imm &&
                  !d.net->authenticates_messages(rank) &&
                  (d.write_imm_unnamed || d.net->names_rdma_writer(rank)) &&
                  op->bufs[0].length > 0 && op->bufs[0].length <= d.piece_for(rank);
  start_rdma(d, op);
  return arrival::repost;
}

arrival on_fin(device& d, packet* p) {
  fin_payload fin;
  memcpy(&fin, p->payload(), sizeof(fin));
  on_write_imm(d, fin.id, p->in.src_rank);
  return arrival::repost;
}

// The origin's writes failed: this receive (or putla/putva target)
// completes with LCI_ERR_FATAL; its buffers are delivered as usual (an
// LCI-allocated one is the program's to free) with undefined contents.
arrival on_abort(device& d, packet* p) {
  fin_payload abort;
  memcpy(&abort, p->payload(), sizeof(abort));
  rdv_op* op =
      take_peer_op(d, abort.id, p->in.src_rank, target_roles, [](const rdv_op*) { return true; });
  if (!op) {
    drop_message(d, p, "rendezvous abort", "rendezvous id", p->in.src_rank);
    return arrival::kept;
  }
  op->flag = LCI_ERR_FATAL;
  finish(d, op, true);
  return arrival::repost;
}

// The target refused the rendezvous: the origin completes with LCI_ERR_RETRY.
arrival on_nack(device& d, packet* p) {
  fin_payload nack;
  memcpy(&nack, p->payload(), sizeof(nack));
  // Only a rendezvous that has not had its RTR can be refused.
  rdv_op* op = take_peer_op(d, nack.id, p->in.src_rank, origin_roles,
                            [](const rdv_op* o) { return !o->have_remote; });
  if (!op) {
    drop_message(d, p, "refusal", "rendezvous id", p->in.src_rank);
    return arrival::kept;
  }
  op->flag = LCI_ERR_RETRY;
  finish(d, op, false);
  return arrival::repost;
}

LCI_CONTROL_ARRIVAL(control_kind::rtr, on_rtr);
LCI_CONTROL_ARRIVAL(control_kind::fin, on_fin);
LCI_CONTROL_ARRIVAL(control_kind::abort, on_abort);
LCI_CONTROL_ARRIVAL(control_kind::nack, on_nack);

}  // namespace

}  // namespace lci

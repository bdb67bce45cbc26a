// RMA: puts and gets into memory the peer registered (putl/putv,
// getl/getv), their notify messages to the target, and getv's reply with
// the piggy-back bytes (see rma.hpp). (The eager one-sided puts are
// eager.{hpp,cpp}.)
#include "lci/core/rma.hpp"

#include <cstdlib>
#include <cstring>

#include "lci/comp/signal.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/rdma_engine.hpp"
#include "lci/core/validate.hpp"
#include "lci/util/log.hpp"

namespace lci {

// ---- RDMA puts and gets ------------------------------------------------------------

namespace {

// Builds the notify message that tells the target an operation finished.
void build_notify(rdv_op* op, const LCI_iovec_t& remote, bool is_iovec, uintptr_t remote_comp,
                  const LCI_iovec_t& local, bool with_piggy) {
  const int count = is_iovec ? remote.count : 0;
  const size_t piggy = with_piggy ? local.piggy_back.length : 0;
  const bool wide = is_wide_tag(op->tag) && op->ep->wide_tags;
  const size_t length = sizeof(notify_payload) +
                        sizeof(notify_buffer) * static_cast<size_t>(count) + piggy +
                        (wide ? tag_suffix_size : 0);
  // A long transfer's notify fits the op; an iovec's goes on the heap.
  if (length > sizeof(op->notify_inline)) {
    op->notify = static_cast<char*>(calloc(1, length));
    LCI_ASSERT(op->notify, "out of memory for a %zu-byte put/get notification", length);
  }
  op->notify_length = static_cast<uint32_t>(length);
  notify_payload n{};
  n.comp = remote_comp;
  if (is_iovec) {
    n.type = LCI_IOVEC;
    n.count = static_cast<uint32_t>(count);
    n.address = reinterpret_cast<uint64_t>(remote.piggy_back.address);
    n.length = local.piggy_back.length;
    auto* b = reinterpret_cast<notify_buffer*>(op->notify + sizeof(notify_payload));
    for (int i = 0; i < count; ++i) {
      const LCII_mr_t* seg = remote.lbuffers[i].segment;
      b[i].segment = seg->owner_handle;
      b[i].address = reinterpret_cast<uint64_t>(remote.lbuffers[i].address);
      b[i].length = op->bufs[i].length;
    }
    if (piggy)
      memcpy(op->notify + sizeof(notify_payload) + sizeof(notify_buffer) * count,
             local.piggy_back.address, piggy);
  } else {
    n.type = LCI_LONG;
    n.segment = remote.lbuffers[0].segment->owner_handle;
    n.address = reinterpret_cast<uint64_t>(remote.lbuffers[0].address);
    n.length = op->bufs[0].length;
  }
  memcpy(op->notify, &n, sizeof(n));
  op->notify_imm = make_imm(msg_kind::notify, op->ep->index, op->tag);
  if (wide) {
    const tag_suffix sfx = make_tag_suffix(msg_kind::notify, op->tag);
    memcpy(op->notify + length - tag_suffix_size, &sfx, sizeof(sfx));
    op->notify_imm = make_imm(msg_kind::tagged, op->ep->index, op->tag);
  }
}

post_status start_transfer(endpoint* ep, rdv_role role, const LCI_iovec_t& local,
                           bool is_iovec, LCI_comp_t comp, int rank, LCI_tag_t tag,
                           const LCI_iovec_t& remote, uintptr_t remote_comp, void* user_context,
                           const LCI_iovec_t* report) {
  device& d = *ep->dev;
  if (!d.backlog_empty()) return post_status::retry_backlog;
  rdv_op* op = new_rdv(d);
  op->role = role;
  op->type = is_iovec ? LCI_IOVEC : LCI_LONG;
  op->ep = ep;
  op->rank = rank;
  op->tag = tag;
  op->comp = ep->cmd_comp_type == LCI_COMPLETION_NONE ? nullptr : comp;
  op->user_context = user_context;
  if (is_iovec)
    op->iov = report ? *report : local;
  else
    op->lbuffer = local.lbuffers[0];
  op->set_count(static_cast<uint32_t>(local.count));
  op->have_remote = true;
  for (int i = 0; i < local.count; ++i) {
    const LCI_lbuffer_t& lb = local.lbuffers[i];
    const LCI_lbuffer_t& rb = remote.lbuffers[i];
    rdv_buffer& b = op->bufs[i];
    b.local = static_cast<char*>(lb.address);
    b.length = lb.length;
    const LCII_mr_t* seg = rb.segment;
    b.remote = {remote_rdma_address(d, rank, seg, reinterpret_cast<uintptr_t>(rb.address)),
                seg->rkey, rb.length};
  }
  if (!register_buffers(d, op, local.lbuffers, local.count)) {
    delete_rdv(d, op);
    return post_status::retry_no_registration;
  }
  // putv carries the piggy-back bytes in its notify; getv asks for them.
  build_notify(op, remote, is_iovec, remote_comp, local, role == rdv_role::put);
  d.rdv.insert(op, &op->serial, &op->id);
  if (role == rdv_role::get && is_iovec) {
    auto* n = reinterpret_cast<notify_payload*>(op->notify);
    n->reply_id = local.piggy_back.length ? op->id + 1u : 0;  // 0 means no reply
    n->length = local.piggy_back.length;
  }
  op->counted_local = true;
  ep->start_local();
  // A remote range outside what the peer registered is refused here, with
  // an error completion: not every provider reports its own key check
  // (libfabric 1.17's shm drops such a write without completing it).
  for (int i = 0; i < remote.count; ++i) {
    const LCII_mr_t* seg = remote.lbuffers[i].segment;
    const auto a = reinterpret_cast<uintptr_t>(remote.lbuffers[i].address);
    if (a < seg->base || a + op->bufs[i].length > seg->base + seg->length) {
      LCI_LOG(info, "%s to rank %d: [%p, +%zu) is outside the registered [%p, +%zu)",
              role == rdv_role::put ? "put" : "get", rank, remote.lbuffers[i].address,
              op->bufs[i].length, reinterpret_cast<void*>(seg->base), seg->length);
      op->flag = LCI_ERR_FATAL;
      finish(d, op, false);
      return post_status::ok;
    }
  }
  // Counted as issued to the target once it succeeded (rdma_finished).
  start_rdma(d, op);
  return post_status::ok;
}

}  // namespace

post_status start_put(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context) {
  return start_transfer(ep, rdv_role::put, local, is_iovec, comp, rank, tag, remote, remote_comp,
                    user_context, nullptr);
}

post_status start_get(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context, const LCI_iovec_t* report) {
  return start_transfer(ep, rdv_role::get, local, is_iovec, comp, rank, tag, remote, remote_comp,
                    user_context, report);
}

namespace {

// Every read or write of a putl/putv/getl/getv finished at the origin. Only
// an operation that reached the target is announced to it and counted as
// issued there (gfence): a failed one never notifies, so counting it would
// leave the target's count short forever.
void on_transfer_finished(device& d, rdv_op* op) {
  if (op->flag == LCI_OK) {
    op->ep->issued.add(op->rank);
    send_control(d, op->rank, op->notify_imm, op->notify, op->notify_length);
  }
  // A getv that asked for piggy-back bytes (reply_id != 0, the condition
  // the target answers on) completes when the target's reply arrives.
  if (op->role == rdv_role::get && op->flag == LCI_OK &&
      reinterpret_cast<const notify_payload*>(op->notify)->reply_id != 0) {
    const uint32_t id = op->id;
    const uint64_t serial = op->serial;
    const int rank = op->rank;
    op->awaiting_reply.store(true, std::memory_order_release);
    // (pairs with the fence of fail_waiting_ops: a sweep that ran before
    // the store is seen here)
    std::atomic_thread_fence(std::memory_order_seq_cst);
    end_if_peer_failed(d, id, serial, rank, false);
    return;
  }
  finish(d, op, false);
}

LCI_RDMA_FINISHED(rdv_role::put, on_transfer_finished);
LCI_RDMA_FINISHED(rdv_role::get, on_transfer_finished);

// A put or get into this process's memory finished.
arrival on_notify(device& d, endpoint* ep, packet* p) {
  notify_payload n;
  memcpy(&n, p->payload(), sizeof(n));
  const int origin = p->in.src_rank;
  // Every address the message names must lie in memory this process
  // registered: the segments it reports, and the piggy-back buffer that a
  // putv writes and a getv reads.
  const char* bad = nullptr;
  LCI_comp_t comp;
  comp_ref held;  // until comp was signalled
  if (!target_comp(ep, n.comp, &comp, &held)) {
    bad = "remote completion handle";
  } else if (n.type == LCI_IOVEC) {
    const auto* b = reinterpret_cast<const notify_buffer*>(p->payload() + sizeof(n));
    for (uint32_t i = 0; i < n.count && !bad; ++i)
      if (!d.segments.covers(b[i].address, b[i].length, b[i].segment)) bad = "segment or address";
    if (!bad && n.length && !d.segments.covers(n.address, n.length))
      bad = "piggy-back address (not in a registered segment)";
  } else if (!d.segments.covers(n.address, n.length, n.segment)) {
    bad = "segment or address";
  }
  if (bad) {
    drop_message(d, p, "put/get notification", bad, origin);
    return arrival::kept;
  }
  // A put's or get's notification: the byte after the endpoint's marker.
  void* marker = ep->target_context ? static_cast<char*>(ep->target_context) + 1 : nullptr;
  LCI_request_t r = make_request(origin, p->in.tag, static_cast<LCI_data_type_t>(n.type), marker);
  const char* extra = p->payload() + sizeof(n);
  if (n.type == LCI_IOVEC) {
    const auto* b = reinterpret_cast<const notify_buffer*>(extra);
    auto* array = static_cast<LCI_lbuffer_t*>(malloc(sizeof(LCI_lbuffer_t) * (n.count ? n.count : 1)));
    LCI_ASSERT(array, "out of memory for an iovec completion");
    for (uint32_t i = 0; i < n.count; ++i)
      array[i] = LCI_lbuffer_t{reinterpret_cast<LCI_segment_t>(b[i].segment),
                               reinterpret_cast<void*>(b[i].address), b[i].length};
    const char* piggy = extra + sizeof(notify_buffer) * n.count;
    if (n.reply_id) {
      // getv: send the piggy-back bytes back before the memory is released,
      // built in this notification's own packet (its header was read
      // above; the piggy-back bytes of a getv are not in it).
      fin_payload id{n.reply_id - 1};
      char* reply = p->payload();
      memcpy(reply, &id, sizeof(id));
      memcpy(reply + sizeof(id), reinterpret_cast<void*>(n.address), n.length);
      send_control(d, origin, make_control_imm(control_kind::getv_reply), reply,
                   sizeof(id) + n.length);
      p = nullptr;  // consumed by send_control
    } else if (n.length) {
      memcpy(reinterpret_cast<void*>(n.address), piggy, n.length);  // putv
    }
    r.data.iovec.piggy_back.address = reinterpret_cast<void*>(n.address);
    r.data.iovec.piggy_back.length = n.length;
    r.data.iovec.lbuffers = array;
    r.data.iovec.count = static_cast<int>(n.count);
  } else {
    r.data.lbuffer = LCI_lbuffer_t{reinterpret_cast<LCI_segment_t>(n.segment),
                                   reinterpret_cast<void*>(n.address), n.length};
  }
  ep->done.add(origin);
  if (comp)
    comp_signal(comp, r);
  else if (n.type == LCI_IOVEC)
    free(r.data.iovec.lbuffers);
  return p ? arrival::repost : arrival::kept;
}

// The piggy-back bytes a getv read, sent back by its target.
arrival on_getv_reply(device& d, packet* p) {
  const int rank = p->in.src_rank;
  fin_payload id;
  memcpy(&id, p->payload(), sizeof(id));
  // A getv whose reads finished and that waits for its piggy-back bytes,
  // taken out of the table (a failed peer's sweep never finishes it too).
  const size_t n = p->in.length - sizeof(id);
  rdv_op* op = id.id > rdv_id_mask ? nullptr
               : d.rdv.take_if(static_cast<uint32_t>(id.id), [rank, n](const rdv_op* o) {
                   return o->rank == rank && o->role == rdv_role::get && o->type == LCI_IOVEC &&
                          o->awaiting_reply.load(std::memory_order_acquire) &&
                          n <= o->iov.piggy_back.length;
                 });
  if (!op) {
    drop_message(d, p, "getv reply", "rendezvous id or length", rank);
    return arrival::kept;
  }
  if (n) memcpy(op->iov.piggy_back.address, p->payload() + sizeof(id), n);
  finish(d, op, false);
  return arrival::repost;
}

LCI_ARRIVAL(msg_kind::notify, on_notify);
LCI_CONTROL_ARRIVAL(control_kind::getv_reply, on_getv_reply);

}  // namespace

}  // namespace lci

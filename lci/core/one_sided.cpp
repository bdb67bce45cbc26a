// One-sided operations: eager puts to the target's completion object
// (puts, putma/putmna/putmac, putm/putmn) and RDMA puts and gets into memory
// the peer registered (putl/putv, getl/getv) with their notifications.
#include <cstdlib>
#include <cstring>

#include "lci/comp/registry.hpp"
#include "lci/comp/signal.hpp"
#include "lci/util/log.hpp"
#include "lci/core/rdma.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/test_hooks.hpp"
#include "lci/core/two_sided.hpp"
#include "lci/core/validate.hpp"

namespace lci {

bool target_comp(endpoint* ep, uint64_t handle, LCI_comp_t* out) {
  *out = nullptr;
  if (ep->msg_comp_type == LCI_COMPLETION_NONE) return true;
  if (!handle) {
    *out = ep->default_comp;
    return true;
  }
  comp_base* c = comp_registry::find(handle);
  if (!c || c->type != ep->msg_comp_type) return false;
  *out = c;
  return true;
}

namespace {

LCI_request_t target_request(int origin, LCI_tag_t tag, LCI_data_type_t type) {
  return make_request(origin, tag, type, nullptr);
}

}  // namespace

// ---- eager puts: arrivals --------------------------------------------------------

// An eager one-sided message arrived in packet p (kinds am_short[_c],
// am_medium[_c], put_to): deliver it to the target's completion object.
void on_eager_put(device& d, endpoint* ep, packet* p) {
  const msg_kind kind = p->in.kind;
  size_t length = p->in.length;
  trailer tr{0, 0};
  if (has_trailer(kind)) {
    length -= trailer_size;
    memcpy(&tr, p->payload() + length, trailer_size);
  }
  LCI_comp_t comp;
  if (!target_comp(ep, tr.comp, &comp)) {
    drop_message(d, p, "one-sided message", "remote completion handle", p->in.src_rank);
    return;
  }
  if (kind == msg_kind::put_to && !d.segments.covers(tr.address, length)) {
    drop_message(d, p, "put", "target address (not in a registered segment)", p->in.src_rank);
    return;
  }
  ep->done.add(p->in.src_rank);
  LCI_request_t r = target_request(p->in.src_rank, p->in.tag, LCI_MEDIUM);
  switch (kind) {
    case msg_kind::am_short:
    case msg_kind::am_short_c:
      r.type = LCI_IMMEDIATE;
      memcpy(&r.data.immediate, p->payload(), LCI_SHORT_SIZE);
      d.put_packet(p);
      break;
    case msg_kind::put_to:
      if (length) memcpy(reinterpret_cast<void*>(tr.address), p->payload(), length);
      r.data.mbuffer.address = reinterpret_cast<void*>(tr.address);
      r.data.mbuffer.length = length;
      d.put_packet(p);
      break;
    default:  // am_medium[_c]: the target owns the packet from now on
      r.data.mbuffer.address = p->payload();
      r.data.mbuffer.length = length;
      if (!comp) {
        d.put_packet(p);  // no one to hand it to (a NONE message port)
        return;
      }
      device::hand_out(p);
      break;
  }
  if (comp) comp_signal(comp, r);
}

// ---- RDMA puts and gets ------------------------------------------------------------

namespace {

// Builds the notify message that tells the target an operation finished.
void build_notify(rdv_op* op, const LCI_iovec_t& remote, bool is_iovec, uintptr_t remote_comp,
                  const LCI_iovec_t& local, bool with_piggy) {
  const int count = is_iovec ? remote.count : 0;
  const size_t piggy = with_piggy ? local.piggy_back.length : 0;
  op->notify.assign(sizeof(notify_payload) + sizeof(notify_buffer) * static_cast<size_t>(count) +
                        piggy, 0);
  notify_payload n{};
  n.comp = remote_comp;
  if (is_iovec) {
    n.type = LCI_IOVEC;
    n.count = static_cast<uint32_t>(count);
    n.address = reinterpret_cast<uint64_t>(remote.piggy_back.address);
    n.length = local.piggy_back.length;
    auto* b = reinterpret_cast<notify_buffer*>(op->notify.data() + sizeof(notify_payload));
    for (int i = 0; i < count; ++i) {
      const LCII_mr_t* seg = remote.lbuffers[i].segment;
      b[i].segment = seg->owner_handle;
      b[i].address = reinterpret_cast<uint64_t>(remote.lbuffers[i].address);
      b[i].length = op->lengths[static_cast<size_t>(i)];
    }
    if (piggy)
      memcpy(op->notify.data() + sizeof(notify_payload) + sizeof(notify_buffer) * count,
             local.piggy_back.address, piggy);
  } else {
    n.type = LCI_LONG;
    n.segment = remote.lbuffers[0].segment->owner_handle;
    n.address = reinterpret_cast<uint64_t>(remote.lbuffers[0].address);
    n.length = op->lengths[0];
  }
  memcpy(op->notify.data(), &n, sizeof(n));
  op->notify_imm = make_imm(msg_kind::notify, op->ep->index, op->tag);
}

LCI_error_t start_rdma(endpoint* ep, rdv_role role, const LCI_iovec_t& local, bool is_iovec,
                       LCI_comp_t comp, int rank, LCI_tag_t tag, const LCI_iovec_t& remote,
                       uintptr_t remote_comp, void* user_context,
                       const LCI_iovec_t* report) {
  device& d = *ep->dev;
  if (!d.backlog_empty()) return LCI_ERR_RETRY;
  auto* op = new rdv_op;
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
  for (int i = 0; i < local.count; ++i) {
    const LCI_lbuffer_t& lb = local.lbuffers[i];
    const LCI_lbuffer_t& rb = remote.lbuffers[i];
    op->local.push_back(static_cast<char*>(lb.address));
    op->lengths.push_back(lb.length);
    const LCII_mr_t* seg = rb.segment;
    op->remote.push_back({remote_rdma_address(seg, reinterpret_cast<uintptr_t>(rb.address)),
                          seg->rkey, rb.length});
  }
  if (!register_buffers(d, op, local.lbuffers, local.count)) {
    delete op;
    return LCI_ERR_RETRY;
  }
  // putv carries the piggy-back bytes in its notify; getv asks for them.
  build_notify(op, remote, is_iovec, remote_comp, local, role == rdv_role::put);
  op->id = d.rdv.insert(op);
  if (role == rdv_role::get && is_iovec) {
    auto* n = reinterpret_cast<notify_payload*>(op->notify.data());
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
    if (a < seg->base || a + op->lengths[static_cast<size_t>(i)] > seg->base + seg->length) {
      LCI_LOG(info, "%s to rank %d: [%p, +%zu) is outside the registered [%p, +%zu)",
              role == rdv_role::put ? "put" : "get", rank, remote.lbuffers[i].address,
              op->lengths[static_cast<size_t>(i)], reinterpret_cast<void*>(seg->base),
              seg->length);
      op->flag = LCI_ERR_FATAL;
      finish(d, op, false);
      return LCI_OK;
    }
  }
  // Counted as issued to the target once it succeeded (rdma_finished).
  if (__builtin_expect(g_test_fail_next_rdma.load(std::memory_order_relaxed), 0) &&
      g_test_fail_next_rdma.exchange(false)) {
    on_rdma_failed(d, op, -1);  // as if every piece was posted and one failed
    return LCI_OK;
  }
  post_rdma(d, op);
  return LCI_OK;
}

}  // namespace

LCI_error_t start_put(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context) {
  return start_rdma(ep, rdv_role::put, local, is_iovec, comp, rank, tag, remote, remote_comp,
                    user_context, nullptr);
}

LCI_error_t start_get(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context, const LCI_iovec_t* report) {
  return start_rdma(ep, rdv_role::get, local, is_iovec, comp, rank, tag, remote, remote_comp,
                    user_context, report);
}

// A put or get into this process's memory finished.
void on_notify(device& d, endpoint* ep, packet* p) {
  notify_payload n;
  memcpy(&n, p->payload(), sizeof(n));
  const int origin = p->in.src_rank;
  // Every address the message names must lie in memory this process
  // registered: the segments it reports, and the piggy-back buffer that a
  // putv writes and a getv reads.
  const char* bad = nullptr;
  LCI_comp_t comp;
  if (!target_comp(ep, n.comp, &comp)) {
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
    return;
  }
  LCI_request_t r = target_request(origin, p->in.tag, static_cast<LCI_data_type_t>(n.type));
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
      // getv: send the piggy-back bytes back before the memory is released.
      std::vector<char> reply(sizeof(fin_payload) + n.length);
      fin_payload id{n.reply_id - 1};
      memcpy(reply.data(), &id, sizeof(id));
      memcpy(reply.data() + sizeof(id), reinterpret_cast<void*>(n.address), n.length);
      send_control(d, origin, make_control_imm(control_kind::getv_reply), reply.data(),
                   reply.size());
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
  d.put_packet(p);
  ep->done.add(origin);
  if (comp)
    comp_signal(comp, r);
  else if (n.type == LCI_IOVEC)
    free(r.data.iovec.lbuffers);
}

}  // namespace lci

// The RDMA engine (see rdma_engine.hpp): posting pieces, their completions
// and the end of an operation.
#include "lci/core/rdma_engine.hpp"

#include <algorithm>
#include <vector>

#include "lci/comp/signal.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/request.hpp"
#include "lci/core/test_flags.hpp"
#include "lci/util/log.hpp"

namespace lci {

namespace {

LCI_request_t origin_request(const rdv_op* op) {
  LCI_request_t r = make_request(op->rank, op->tag, op->type, op->user_context);
  r.flag = op->flag;
  if (op->type == LCI_IOVEC)
    r.data.iovec = op->iov;
  else
    r.data.lbuffer = op->lbuffer;
  return r;
}

}  // namespace

void release_regs(device& d, rdv_op* op) {
  for (uint32_t i = 0; i < op->registered; ++i) release_local(d, op->bufs[i].reg);
  op->registered = 0;
}

// The op is done at this process: signal, release, forget.
void finish(device& d, rdv_op* op, bool target) {
  LCI_request_t r = origin_request(op);
  release_regs(d, op);
  d.rdv.erase_if_same(op->id, op);  // (taken out already by a peer's message or a sweep)
  if (target) op->ep->done.add(op->rank);
  if (op->counted_local) op->ep->end_local();
  LCI_comp_t comp = op->comp;
  comp_ref held;
  held.reset(op->held_comp);  // the op goes first; the object lives until signalled
  op->held_comp = nullptr;
  delete_rdv(d, op);
  if (comp) comp_signal(comp, r);
}

// Registers every local buffer of the op, in order: for reading only where
// the op only sends from them (read-only memory works), else for RDMA into
// them. On failure nothing stays registered.
bool register_buffers(device& d, rdv_op* op, const LCI_lbuffer_t* buffers, int count) {
  const bool source = op->role == rdv_role::send || op->role == rdv_role::put_alloc ||
                      op->role == rdv_role::put;
  const net::mr_access access = source ? net::mr_access::source : net::mr_access::remote;
  for (int i = 0; i < count; ++i) {
    local_reg& r = op->bufs[i].reg;
    r = local_reg{};
    if (buffers[i].length != 0 && !register_local(d, buffers[i], access, &r)) {
      LCI_LOG(info, "registering %p (%zu bytes) for a transfer with rank %d failed",
              buffers[i].address, buffers[i].length, op->rank);
      release_regs(d, op);
      return false;
    }
    op->registered = static_cast<uint32_t>(i) + 1;
  }
  return true;
}

rdv_op* peer_op(device& d, uint64_t id, int rank, unsigned roles) {
  if (id > rdv_id_mask) return nullptr;
  rdv_op* op = d.rdv.get(static_cast<uint32_t>(id));
  if (!op || (op->rank != rank && rank != net::any_member) || !(roles & role_bit(op->role)))
    return nullptr;
  return op;
}

int fail_waiting_ops(device& d, int rank) {
  constexpr unsigned origin = role_bit(rdv_role::send) | role_bit(rdv_role::put_alloc);
  constexpr unsigned target = role_bit(rdv_role::recv) | role_bit(rdv_role::recv_alloc);
  std::vector<rdv_op*> ops;
  // Pairs with the fence of a getv that begins to wait for its reply
  // (rma.cpp): either it sees the rank failed, or this sees it waiting.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  d.rdv.take_all_if(
      [rank](const rdv_op* op) {
        const unsigned bit = role_bit(op->role);
        return op->rank == rank && ((bit & target) || ((bit & origin) && !op->have_remote) ||
                                    op->awaiting_reply.load(std::memory_order_acquire));
      },
      &ops);
  for (rdv_op* op : ops) {
    op->flag = LCI_ERR_FATAL;
    finish(d, op, (role_bit(op->role) & target) != 0);
  }
  return static_cast<int>(ops.size());
}

void end_if_peer_failed(device& d, uint32_t id, uint64_t serial, int rank, bool target) {
  if (!peer_refused(rank)) return;
  if (rdv_op* mine = d.rdv.take_if_current(id, serial)) {
    mine->flag = LCI_ERR_FATAL;
    finish(d, mine, target);
  }
}

LCI_REGISTER_HANDLER(::lci::register_peer_failed(&fail_waiting_ops));

// ---- completions -------------------------------------------------------------------

namespace {

// All pieces of an op finished at this process: its role's handler goes on.
void rdma_finished(device& d, rdv_op* op) {
  if (const rdma_finished_handler h = g_rdma_finished[static_cast<size_t>(op->role)]) {
    h(d, op);
    return;
  }
  fatal("rendezvous: unexpected RDMA completion for a receiving operation");
}

void on_rdma_done(device& d, rdv_op* op) {
  if (op->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) rdma_finished(d, op);
}

void on_rdma_failed(device& d, rdv_op* op, int error) {
  LCI_LOG(info, "an RDMA operation to rank %d (tag %u) failed (%d)", op->rank, op->tag, error);
  op->flag = LCI_ERR_FATAL;
  on_rdma_done(d, op);
}

void on_rma_done_completion(device& d, const net::completion& c) {
  on_rdma_done(d, static_cast<rdv_op*>(c.ctx));
}
// (progress has checked that c.ctx is no packet of d: a failed message send
// is fatal there.)
void on_failed_completion(device& d, const net::completion& c) {
  on_rdma_failed(d, static_cast<rdv_op*>(c.ctx), c.error);
}

LCI_COMPLETION(net::completion_kind::rma_done, on_rma_done_completion);
LCI_COMPLETION(net::completion_kind::failed, on_failed_completion);

// ---- posting -------------------------------------------------------------------------

// Posts the op's pieces from where it stopped; a refused piece queues the
// op in the backlog, whose drain calls this again (resume_rdma).
void post_rdma(device& d, rdv_op* op) {
  // A peer that failed gets no more pieces (a provider may refuse them with
  // "retry" forever): the op ends with the error once its posted pieces did.
  if (__builtin_expect(peer_refused(op->rank), 0)) {
    op->flag = LCI_ERR_FATAL;
    op->next_buffer = op->count;
  }
  const size_t piece = d.piece_for(op->rank);
  while (op->next_buffer < op->count) {
    const rdv_buffer& b = op->bufs[op->next_buffer];
    const size_t length = b.length;
    if (op->next_offset >= length) {
      ++op->next_buffer;
      op->next_offset = 0;
      continue;
    }
    const size_t off = op->next_offset;
    const size_t n = std::min(piece, length - off);
    char* local = b.local + off;
    const uint64_t raddr = b.remote.address + off;
    const uint64_t rkey = b.remote.rkey;
    void* desc = b.reg.desc;
    if (const size_t limit = g_test_max_message.load(std::memory_order_relaxed);
        __builtin_expect(limit != 0 && n > limit, 0))
      fatal("an RDMA piece of %zu bytes exceeds the backend's maximum of %zu", n, limit);
    op->outstanding.fetch_add(1, std::memory_order_relaxed);
    net::status st;
    if (op->role == rdv_role::get)
      st = d.net->post_read(op->rank, local, n, desc, raddr, rkey, op);
    else if (op->write_imm)
      st = d.net->post_write_imm(op->rank, local, n, desc, raddr, rkey,
                                 make_write_imm(static_cast<uint32_t>(op->peer_id)), op);
    else
      st = d.net->post_write(op->rank, local, n, desc, raddr, rkey, op, true);
    if (st != net::status::ok) {
      op->outstanding.fetch_sub(1, std::memory_order_relaxed);
      backlog_op b;
      b.what = backlog_op::op::rdma;
      b.rdv = op;
      d.push_backlog(std::move(b));
      return;
    }
    op->next_offset += n;
  }
  // Everything posted: drop the posting reference.
  on_rdma_done(d, op);
}

bool resume_rdma(device& d, backlog_op& op) {
  post_rdma(d, op.rdv);
  return true;
}

LCI_BACKLOG_RESUME(backlog_op::op::rdma, resume_rdma);

}  // namespace

void start_rdma(device& d, rdv_op* op) {
  if (__builtin_expect(g_test_fail_next_rdma.load(std::memory_order_relaxed), 0) &&
      g_test_fail_next_rdma.exchange(false)) {
    on_rdma_failed(d, op, -1);  // as if every piece was posted and one failed
    return;
  }
  post_rdma(d, op);
}

}  // namespace lci

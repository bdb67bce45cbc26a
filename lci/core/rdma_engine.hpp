// The RDMA engine: makes, finds and finishes the operations of rendezvous
// and one-sided transfers (rdv_op.hpp), and moves their data. It posts an
// operation's RDMA writes or reads, split into pieces of at most the
// device's piece towards the peer (LCI_MAX_SINGLE_MESSAGE_SIZE, or the
// native transport's), resumes posting from the backlog when the network
// refuses a piece, and counts the pieces' completions. When every piece has
// finished it hands the op to the handler of its role (LCI_RDMA_FINISHED,
// progress.hpp: the rendezvous protocol for sends, rma.cpp for puts and
// gets). It knows no protocol message.
//
// Posting and completions may run on different threads: `outstanding`
// counts posted and unfinished pieces plus one while posting, so whoever
// brings it to zero finishes the operation exactly once.
#pragma once

#include <cstdint>
#include <new>

#include "lci.h"
#include "lci/core/device.hpp"
#include "lci/core/rdv_op.hpp"

namespace lci {

inline rdv_op* new_rdv(device& d) {
  if (void* slot = d.rdv_ops->get()) return new (slot) rdv_op;
  auto* op = new rdv_op;
  op->heap = true;
  return op;
}
inline void delete_rdv(device& d, rdv_op* op) {
  if (op->heap) {
    delete op;
    return;
  }
  op->~rdv_op();
  d.rdv_ops->put(op);
}

// The live op that a peer's message names: its id, the peer's rank (or
// net::any_member) and one of `roles` (role_bit values) must match, or
// nullptr (the message is not acted on).
rdv_op* peer_op(device& d, uint64_t id, int rank, unsigned roles);
// The same, taken out of the table (the caller owns it: a failed peer's
// sweep can no longer find it); `waiting` must hold too. For the messages
// that finish an op or hand it to its RDMA.
template <class Pred>
rdv_op* take_peer_op(device& d, uint64_t id, int rank, unsigned roles, Pred&& waiting);
// A failed peer's operations that wait for a message from it (an origin's
// RTR, a target's data): taken out of the table and finished with
// LCI_ERR_FATAL. Operations with RDMA of their own in flight finish when it
// does. Returns how many.
int fail_waiting_ops(device& d, int rank);
// An op that just began to wait for `rank` (published in the table, or a
// getv waiting for its reply): if the rank is known dead, the sweep may
// have passed already, so the op ends here with LCI_ERR_FATAL (if it is
// still in the table at `id` with the `serial` its insert or publish
// returned; whoever takes it finishes it). The caller reads id, serial and
// rank before the op is visible to others: it may be finished, and its
// memory and id reused, before this runs.
void end_if_peer_failed(device& d, uint32_t id, uint64_t serial, int rank, bool target);
// Registers the op's local buffers (one local_reg each, in order). False,
// with none registered, if an LCI_SEGMENT_ALL registration failed.
bool register_buffers(device& d, rdv_op* op, const LCI_lbuffer_t* buffers, int count);
// Releases what register_buffers registered.
void release_regs(device& d, rdv_op* op);
// The op is done at this process: signal its completion, release its
// registrations and id, count it for fences (`target`: as arrived here),
// delete it.
void finish(device& d, rdv_op* op, bool target);
// Starts posting an operation's pieces once the remote buffers are known
// (or, when a test asked for it with LCIT_fail_next_rdma, fails it as if a
// piece had failed).
void start_rdma(device& d, rdv_op* op);

template <class Pred>
rdv_op* take_peer_op(device& d, uint64_t id, int rank, unsigned roles, Pred&& waiting) {
  if (id > rdv_id_mask) return nullptr;
  return d.rdv.take_if(static_cast<uint32_t>(id), [&](rdv_op* op) {
    return (op->rank == rank || rank == net::any_member) && (roles & role_bit(op->role)) &&
           waiting(op);
  });
}

}  // namespace lci

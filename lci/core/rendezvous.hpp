// Rendezvous and RDMA operations: long and iovec messages (two-sided and
// into target-allocated buffers) and one-sided puts and gets into memory a
// peer registered.
//
// Protocol of a long send (LCI_RDV_WRITEIMM, one piece):
//   origin: RTS {send id, size}          -> target matches a receive (or, for
//   target: RTR {ids, address, key}      <-  putla, allocates), registers
//   origin: RDMA write with immediate (the target's id)  -> target completes
//   origin completes when its write completes locally.
// Several pieces (device::rdma_piece), iovecs or LCI_RDV_WRITE: the
// writes ask for delivery completion and a FIN {target id} follows them.
// putl/putv: writes with delivery completion, then a notify message to the
// target's completion object. getl/getv: reads, then a notify.
//
// An rdv_op lives from the call (or the RTS) until its completion and is
// found by id from the messages of its peer. It comes from the device's
// operation pool (heap only while the pool is empty) and holds one buffer
// inline, so a long message allocates nothing; only an iovec of several
// buffers puts its buffer array on the heap. RTS and RTR are built in a
// packet (or on the stack when they fit the backend's inject size). Posting resumes from the
// backlog when the network refuses a piece: `outstanding` counts posted and
// unfinished pieces plus one while posting, so whoever brings it to zero
// finishes the operation exactly once.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

#include "lci.h"
#include "lci/comp/registry.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/status.hpp"

namespace lci {

enum class rdv_role : uint8_t {
  send,        // sendl/sendv origin
  put_alloc,   // putla/putva origin
  recv,        // recvl/recvv target
  recv_alloc,  // putla/putva target
  put,         // putl/putv origin
  get,         // getl/getv origin
};

// One local buffer of an operation, and where it goes at (or comes from)
// the peer.
struct rdv_buffer {
  char* local = nullptr;
  size_t length = 0;             // bytes moved
  local_reg reg;                 // valid for the first rdv_op::registered buffers
  rtr_payload::remote remote{};  // origin: from the RTR (or the caller, for put/get)
};

struct rdv_op {
  rdv_op() = default;
  rdv_op(const rdv_op&) = delete;
  rdv_op& operator=(const rdv_op&) = delete;
  ~rdv_op() {
    if (held_comp) comp_registry::release(held_comp);
    if (bufs != &one) delete[] bufs;
    if (notify != notify_inline) free(notify);
  }

  rdv_role role;
  LCI_data_type_t type = LCI_LONG;  // LCI_LONG or LCI_IOVEC
  endpoint* ep = nullptr;
  int rank = 0;                     // the peer
  LCI_tag_t tag = 0;
  LCI_comp_t comp = nullptr;        // nullptr: signal nothing
  comp_base* held_comp = nullptr;   // a peer named comp: its reference (registry.hpp)
  void* user_context = nullptr;
  uint32_t id = 0;
  uint64_t peer_id = 0;
  LCI_error_t flag = LCI_OK;
  LCI_lbuffer_t lbuffer{};          // long: the buffer as passed (or allocated)
  LCI_iovec_t iov{};                // iovec: as passed (or allocated)
  rdv_buffer* bufs = &one;          // `count` buffers: `one`, or a heap array (iovec)
  uint32_t count = 0;
  uint32_t registered = 0;          // bufs[0, registered) hold a registration
  size_t next_buffer = 0, next_offset = 0;
  std::atomic<int> outstanding{1};
  bool write_imm = false;           // one write carrying the target's id
  bool counted_local = false;       // counted in ep->pending
  bool have_remote = false;         // origin: the RTR arrived
  bool heap = false;                // allocated with new (the pool was empty)
  // put/get: the notify message (inline for a long transfer)
  char* notify = notify_inline;
  uint32_t notify_length = 0;
  uint32_t notify_imm = 0;
  rdv_buffer one;
  alignas(8) char notify_inline[sizeof(notify_payload)];

  // Makes room for `n` buffers (n > 1: an iovec, on the heap).
  void set_count(uint32_t n) {
    if (n > 1) bufs = new rdv_buffer[n];
    count = n;
  }
};

// Bytes of one pool slot (device.cpp sizes the pool with it).
inline constexpr size_t rdv_op_slot_size() { return (sizeof(rdv_op) + 63) / 64 * 64; }

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

// ---- origin calls (a refusal has no effect) -----------------------------------
// `always_signal`: signal `comp` even when the endpoint's command port is
// LCI_COMPLETION_NONE (LCI's own sends, e.g. those of the collectives).
post_status start_send_long(endpoint* ep, const LCI_lbuffer_t& buffer, int rank, LCI_tag_t tag,
                            LCI_comp_t comp, void* user_context, bool alloc_at_target,
                            uintptr_t remote_comp, bool always_signal = false);
post_status start_send_iovec(endpoint* ep, const LCI_iovec_t& iov, int rank, LCI_tag_t tag,
                             LCI_comp_t comp, void* user_context, bool alloc_at_target,
                             uintptr_t remote_comp);
post_status start_put(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context);
// `report`: the iovec the origin completion shows (the caller's, as passed),
// when `local` was adjusted for the transfer.
post_status start_get(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context, const LCI_iovec_t* report = nullptr);

// ---- progress: arrivals and completions ------------------------------------
// A two-sided RTS met its receive (recvl or recvv); the packet goes back to
// the pool.
void complete_rts(device& d, recv_ctx* c, packet* p);
inline constexpr unsigned role_bit(rdv_role r) { return 1u << static_cast<unsigned>(r); }
// The live op that a peer's message names: its id, the peer's rank (or
// net::any_member) and one of `roles` (role_bit values) must match, or
// nullptr (the message is not acted on).
rdv_op* peer_op(device& d, uint64_t id, int rank, unsigned roles);
// The rendezvous `id` of a receiving op from `rank` has all its data (a
// write with immediate data or a FIN); an id that names no such op is dropped.
void on_write_imm(device& d, uint64_t id, int rank);
void on_rdma_done(device& d, rdv_op* op);
void on_rdma_failed(device& d, rdv_op* op, int error);
// The op is done at this process: signal its completion, release its
// registrations and id, count it for fences, delete it.
void finish(device& d, rdv_op* op, bool target);
// Registers the op's local buffers (one local_reg each, in order). False,
// with none registered, if an LCI_SEGMENT_ALL registration failed.
bool register_buffers(device& d, rdv_op* op, const LCI_lbuffer_t* buffers, int count);
// Continues posting an operation's pieces (from the backlog).
void post_rdma(device& d, rdv_op* op);
// Starts posting an operation's pieces once the remote buffers are known
// (or, when a test asked for it with LCIT_fail_next_rdma, fails it as if a
// piece had failed).
void start_rdma(device& d, rdv_op* op);

}  // namespace lci

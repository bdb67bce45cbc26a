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
// found by id from the messages of its peer. Posting resumes from the
// backlog when the network refuses a piece: `outstanding` counts posted and
// unfinished pieces plus one while posting, so whoever brings it to zero
// finishes the operation exactly once.
#pragma once

#include <atomic>
#include <vector>

#include "lci.h"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/protocol.hpp"

namespace lci {

enum class rdv_role : uint8_t {
  send,        // sendl/sendv origin
  put_alloc,   // putla/putva origin
  recv,        // recvl/recvv target
  recv_alloc,  // putla/putva target
  put,         // putl/putv origin
  get,         // getl/getv origin
};

struct rdv_op {
  rdv_role role;
  LCI_data_type_t type = LCI_LONG;  // LCI_LONG or LCI_IOVEC
  endpoint* ep = nullptr;
  int rank = 0;                     // the peer
  LCI_tag_t tag = 0;
  LCI_comp_t comp = nullptr;        // nullptr: signal nothing
  void* user_context = nullptr;
  uint32_t id = 0;
  uint64_t peer_id = 0;
  LCI_error_t flag = LCI_OK;
  LCI_lbuffer_t lbuffer{};          // long: the buffer as passed (or allocated)
  LCI_iovec_t iov{};                // iovec: as passed (or allocated)
  std::vector<local_reg> regs;      // one per local buffer
  std::vector<rtr_payload::remote> remote;  // where each buffer goes / comes from
  std::vector<size_t> lengths;      // bytes moved per buffer
  std::vector<char*> local;         // local address per buffer
  size_t next_buffer = 0, next_offset = 0;
  std::atomic<int> outstanding{1};
  bool write_imm = false;           // one write carrying the target's id
  bool counted_local = false;       // counted in ep->pending
  std::vector<char> notify;         // put/get: the notify message
  uint32_t notify_imm = 0;
};

// ---- origin calls (return LCI_ERR_RETRY with no effect) --------------------
// `always_signal`: signal `comp` even when the endpoint's command port is
// LCI_COMPLETION_NONE (LCI's own sends, e.g. those of the collectives).
LCI_error_t start_send_long(endpoint* ep, const LCI_lbuffer_t& buffer, int rank, LCI_tag_t tag,
                            LCI_comp_t comp, void* user_context, bool alloc_at_target,
                            uintptr_t remote_comp, bool always_signal = false);
LCI_error_t start_send_iovec(endpoint* ep, const LCI_iovec_t& iov, int rank, LCI_tag_t tag,
                             LCI_comp_t comp, void* user_context, bool alloc_at_target,
                             uintptr_t remote_comp);
LCI_error_t start_put(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context);
// `report`: the iovec the origin completion shows (the caller's, as passed),
// when `local` was adjusted for the transfer.
LCI_error_t start_get(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context, const LCI_iovec_t* report = nullptr);

// ---- progress: arrivals and completions ------------------------------------
void on_rts_alloc(device& d, endpoint* ep, packet* p);
void on_control(device& d, packet* p, control_kind kind);
// The rendezvous `id` of a receiving op from `rank` has all its data (a
// write with immediate data or a FIN); an id that names no such op is dropped.
void on_write_imm(device& d, uint64_t id, int rank);
void on_notify(device& d, endpoint* ep, packet* p);
void on_rdma_done(device& d, rdv_op* op);
void on_rdma_failed(device& d, rdv_op* op, int error);
// The op is done at this process: signal its completion, release its
// registrations and id, count it for fences, delete it.
void finish(device& d, rdv_op* op, bool target);
// Registers the op's local buffers (one local_reg each, in order). False,
// with none registered, if an LCI_SEGMENT_ALL registration failed.
bool register_buffers(device& d, rdv_op* op, const LCI_lbuffer_t* buffers, int count);
// An eager one-sided message (puts, putma..., putm...) arrived.
void on_eager_put(device& d, endpoint* ep, packet* p);
// The completion object a target-side completion goes to: the endpoint's
// default for handle 0, else the live object of the message port's kind
// that the handle (a remote_completion sent by the origin) names; nullptr
// for a NONE message port. False when the handle names no such object (the
// message is dropped).
bool target_comp(endpoint* ep, uint64_t handle, LCI_comp_t* out);
// Continues posting an operation's pieces (from the backlog).
void post_rdma(device& d, rdv_op* op);
// A gfence announcement arrived (lci/core/fence.cpp).
void on_gfence(device& d, packet* p);

}  // namespace lci

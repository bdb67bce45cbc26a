// The operation of a rendezvous or one-sided RDMA transfer (rdv_op): what
// the rendezvous protocol (rendezvous.{hpp,cpp}), the RMA calls (rma.cpp)
// and the RDMA engine (rdma_engine.{hpp,cpp}) share. Types only: an op is
// made and found through rdma_engine.hpp, and the device sizes its pool of
// ops with rdv_op_slot_size.
//
// An rdv_op lives from the call (or the RTS) until its completion and is
// found by id from the messages of its peer. It comes from the device's
// operation pool (heap only while the pool is empty) and holds one buffer
// inline, so a long message allocates nothing; only an iovec of several
// buffers puts its buffer array on the heap. `outstanding` counts posted and
// unfinished RDMA pieces plus one while posting, so whoever brings it to
// zero finishes the operation exactly once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "lci.h"
#include "lci/comp/registry.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/reg_types.hpp"

namespace lci {

// Which side of which transfer an op is: the kind of its RDMA completion
// (progress.hpp, LCI_RDMA_FINISHED: the origin roles post RDMA).
enum class rdv_role : uint8_t {
  send,        // sendl/sendv origin
  put_alloc,   // putla/putva origin
  recv,        // recvl/recvv target
  recv_alloc,  // putla/putva target
  put,         // putl/putv origin
  get,         // getl/getv origin
};
inline constexpr size_t rdv_role_count = 6;
inline constexpr unsigned role_bit(rdv_role r) { return 1u << static_cast<unsigned>(r); }

// One local buffer of an operation, and where it goes at (or comes from)
// the peer.
struct rdv_buffer {
  char* local = nullptr;
  size_t length = 0;             // bytes moved
  local_reg reg;                 // valid for the first rdv_op::registered buffers
  rtr_payload::remote remote{};  // origin: from the RTR (or the caller, for put/get)
};

struct endpoint;

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
  uint64_t serial = 0;              // put/get: its stamp in the table (rdv_table.hpp)
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
  // getv: its reads finished and it waits for the target's reply with the
  // piggy-back bytes (set last: a failed peer's sweep may then take it).
  std::atomic<bool> awaiting_reply{false};
  // put/get: the notify message (inline for a long transfer)
  char* notify = notify_inline;
  uint32_t notify_length = 0;
  uint32_t notify_imm = 0;
  rdv_buffer one;
  alignas(8) char notify_inline[sizeof(notify_payload) + tag_suffix_size];

  // Makes room for `n` buffers (n > 1: an iovec, on the heap).
  void set_count(uint32_t n) {
    if (n > 1) bufs = new rdv_buffer[n];
    count = n;
  }
};

// Bytes of one pool slot (device.cpp sizes the pool with it).
inline constexpr size_t rdv_op_slot_size() { return (sizeof(rdv_op) + 63) / 64 * 64; }

}  // namespace lci

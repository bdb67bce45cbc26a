// Fault injection for LCI's own tests, off unless the process was started
// with LCI_TEST_HOOKS=1. Declared for the tests in
// tests/common/test_hooks.h; nothing here is part of the LCI API.
//
//   LCIT_send_raw(ep, rank, imm, data, length): sends `length` bytes with
//       the 32-bit header `imm` as chosen (any kind, endpoint and tag) as
//       one ordinary message of ep's device: what a faulty or hostile peer
//       could put on the wire.
//   LCIT_fail_next_rdma(): the next putl/putv/getl/getv of this process, or
//       the RDMA writes of the next sendl/sendv/putla/putva whose RTR
//       arrives here, are completed as if the network had reported a
//       failure for them.
//   LCIT_fail_next_sends(n): the next n message sends of this process
//       over an authenticated libfabric device (tcp) take their sequence
//       numbers, are not posted and complete as failed, as if their
//       connection had broken before they left.
//   LCIT_lose_next_sends(n): the next n messages this process sends over
//       an authenticated libfabric device (tcp), the backend's own
//       heartbeats included, take their sequence numbers and complete
//       without being sent, as if the connection had taken them and then
//       broken: lost, which the peer's heartbeat check must name.
//   LCIT_refuse_next_recv_posts(n): the next n posts of a receive packet
//       by this process are refused as if the network's receive queue were
//       full (the packet waits in the device's backlog).
//   LCIT_fail_next_registrations(n): the next n memory registrations of
//       this process (LCI_memory_register, LCI long buffers, LCI_SEGMENT_ALL
//       buffers of an operation) fail as if the network refused them.
//   LCIT_limit_message_size(n): devices created after the call take the
//       backend's largest message as at most n bytes, and an RDMA piece
//       longer than n is fatal (as the provider would refuse it).
//   LCIT_coll_internal_comp(&handle): the address of the collectives'
//       internal completion object, as a peer would have to guess it to
//       name it as a remote completion (it must not be able to).
// All of these return LCI_ERR_FEATURE_NA when the hooks are off.
//   LCIT_dropped_messages(): arriving messages this process dropped as
//       malformed (validate.hpp), hooks on or off.
//   LCIT_native_forge(device, rank, cell, payload, n, retarget): writes a
//       cell of the native transport, field by field as given, into rank's
//       ring (native_device::forge): what a faulty or hostile local rank could.
//   LCIT_native_state(device, &pending, &in_flight): the native transport's
//       unanswered peer requests and own pipelined operations.
//   LCIT_native_received(device, &total, &in_place): messages the native
//       transport received on device, and how many of them were delivered
//       from their ring cells (deliver_in_place).
//   LCIT_native_naps(device, &naps): how often a thread progressing device
//       napped (native_device::nap).
//   LCIT_native_refuse_cma(rank): devices created after the call treat
//       cross-memory attach to rank as refused by the kernel (its bulk data
//       is pipelined through the rings), as Yama or a container would.
//   LCIT_rdma_piece(device, rank): the longest RDMA piece towards rank.
//   LCIT_message_secret(device, out): the libfabric backend's message key
//       (out[0], out[1]) and job token (out[2]), 0 where there is none.
//   LCIT_resources(device, &r): packets free, rendezvous ids in use,
//       matching-table entries, backlog (to count before and after).
//   LCIT_fail_peer(rank): this process treats rank as failed, as if its
//       death had been detected (LCI_PEER_FAILURE=continue only; otherwise
//       LCI_ERR_FATAL).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

// A cell's fields as LCIT_native_forge takes them; the same layout as the
// declaration in tests/common/test_hooks.h.
extern "C" typedef struct {
  uint8_t kind;
  uint8_t flags;
  int32_t src;
  uint32_t imm;
  uint32_t length;
  uint64_t address;
  uint64_t key;
  uint64_t op;
} LCIT_native_cell;

// LCIT_resources: what a device holds; the same layout as in
// tests/common/test_hooks.h.
extern "C" typedef struct {
  size_t packets_free, packets_total, receives_missing, rendezvous, matching, backlog;
} LCIT_resources_t;

#include "lci.h"

namespace lci {

// The collectives' internal completion object (lci/coll/coll.cpp), for
// LCIT_coll_internal_comp.
LCI_comp_t coll_internal_comp();

// The switches the LCIT_* calls set are test_flags.hpp's.

}  // namespace lci

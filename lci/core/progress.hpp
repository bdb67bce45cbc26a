// Progress: polling the backend and the one dispatch of everything it
// reports, the backlog of operations the network refused, receive
// re-posting. Progress is the hub of the core: it names no protocol; each
// module registers the handlers of the kinds it owns, and progress looks
// them up in a table (one load of a function pointer, no allocation).
//
// Arrival dispatch. Every message is validated once (validate.hpp), its
// header decoded once into the packet's `in` fields, and then handed to the
// one handler registered for its kind: a table indexed by msg_kind, and for
// msg_kind::control a second one indexed by control_kind. No handler
// re-tests the kind it was registered for.
//
// A handler says what became of the packet: `repost` (its bytes are used
// up, and progress posts the same packet again as a receive, with no trip
// through the pool) or `kept` (handed to the program, waiting in the
// matching table, or already returned to the pool; progress posts a fresh
// packet instead).
//
// The tables, who fills them (at static initialisation, with the macros
// below) and which kinds must have exactly one handler (handler_problems):
//   LCI_ARRIVAL          msg_kind (arrival_kinds)   eager.cpp, rendezvous.cpp, rma.cpp,
//                        cxx/net.cpp (msg_kind::net), progress.cpp (tagged:
//                        decodes the tag suffix, then the kind's
//                        LCI_TAGGED_ARRIVAL handler if it has one, else its
//                        LCI_ARRIVAL handler)
//   LCI_TAGGED_ARRIVAL   msg_kind (tagged_arrival_kinds): short_msg, medium, rts
//                        (eager.cpp)
//   LCI_CONTROL_ARRIVAL  control_kind (control_kinds)  rendezvous.cpp, rma.cpp, fence.cpp
//   LCI_COMPLETION       net::completion_kind rma_done, failed (rdma_engine.cpp),
//                        remote_write (rendezvous.cpp); progress handles the
//                        others (recv, send_done, recv_failed, dropped) itself
//   LCI_BACKLOG_RETRY    backlog_op::op recv (progress.cpp), message (eager.cpp);
//   LCI_BACKLOG_RESUME   rdma (rdma_engine.cpp)
//   LCI_RDMA_FINISHED    rdv_role send, put_alloc (rendezvous.cpp), put, get
//                        (rma.cpp): all RDMA pieces of an op finished
//   LCI_MATCHED          msg_kind rts (rendezvous.cpp): a receive met a
//                        waiting RTS (eager's matching, complete_matched)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/core/device.hpp"
#include "lci/core/handler_table.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/rdv_op.hpp"

#ifndef LCI_INTERNAL_EXPORT
#define LCI_INTERNAL_EXPORT __attribute__((visibility("default")))
#endif

namespace lci {

struct endpoint;

// What an arrival handler did with its packet: done with it (repost: it is
// posted again as a receive), kept it (a fresh packet replaces the
// receive), or kept it and posted a replacement itself (replaced).
enum class arrival : uint8_t { repost, kept, replaced };

// A message of a kind other than control: `ep` is the endpoint its header
// names, already checked to exist on this device.
using arrival_handler = arrival (*)(device& d, endpoint* ep, packet* p);
using control_handler = arrival (*)(device& d, packet* p);
// A completion of an RDMA operation (rma_done, failed: c.ctx is its
// rdv_op) or a peer's RDMA write with immediate data (remote_write: its
// source rank was checked).
using completion_handler = void (*)(device& d, const net::completion& c);
// One more try of a backlog entry. RETRY: under the backlog lock, in
// order; true when the network took it (the entry leaves), false when it
// refused again (the pass stops). RESUME: the entry was taken out and the
// lock released first (it may queue itself again); the pass stops.
using backlog_handler = bool (*)(device& d, backlog_op& op);
// Every RDMA piece of `op` finished at this process (op->flag says how).
using rdma_finished_handler = void (*)(device& d, rdv_op* op);
// Receive `c` met message `p` of a matched kind that eager does not
// complete itself; the handler owns both from here on.
using matched_handler = void (*)(device& d, recv_ctx* c, packet* p);

// The kinds that must have exactly one handler each (handler_problems).
inline constexpr net::completion_kind dispatched_completions[] = {
    net::completion_kind::rma_done, net::completion_kind::remote_write,
    net::completion_kind::failed};
inline constexpr backlog_op::op backlog_kinds[] = {backlog_op::op::recv, backlog_op::op::message,
                                                   backlog_op::op::rdma};
inline constexpr rdv_role rdma_roles[] = {rdv_role::send, rdv_role::put_alloc, rdv_role::put,
                                          rdv_role::get};
inline constexpr msg_kind matched_kinds[] = {msg_kind::rts};
// The kinds whose handler for a `tagged` message is not their ordinary one:
// those that enter the matching table.
inline constexpr msg_kind tagged_arrival_kinds[] = {msg_kind::short_msg, msg_kind::medium,
                                                    msg_kind::rts};

// What else a failed peer's sweep ends beyond the posted receives: the
// rendezvous operations waiting for it (rdma_engine.cpp registers
// fail_waiting_ops). Returns how many it completed.
using peer_failed_handler = int (*)(device& d, int rank);
bool register_peer_failed(peer_failed_handler handler);
// A receive was just posted under `key` while some peer is known dead: if
// the rank it names failed, the receives posted for that rank complete with
// LCI_ERR_FATAL now (the sweep may have run between the entry point's check
// and the insert; the table's lock orders the two, so one of them sees it).
void recheck_failed_receive(device& d, uint64_t key);

// Fill the tables (once per kind; a second registration is fatal).
bool register_arrival(msg_kind kind, arrival_handler handler);
// The handler of `kind` when it came as a `tagged` message (its tag wider
// than 16 bits), where that differs: the one of an ordinary message may
// then take the tag's upper half to be 0.
bool register_tagged_arrival(msg_kind kind, arrival_handler handler);
bool register_control(control_kind kind, control_handler handler);
bool register_completion(net::completion_kind kind, completion_handler handler);
bool register_backlog(backlog_op::op kind, backlog_handler handler, bool resume);
bool register_rdma_finished(rdv_role role, rdma_finished_handler handler);
bool register_matched(msg_kind kind, matched_handler handler);

// One line per kind of any table above without exactly one handler (empty
// when all is well). Checked by LCI_initialize in debug builds and by the
// unit test test_dispatch.
LCI_INTERNAL_EXPORT std::vector<std::string> handler_problems();

#define LCI_ARRIVAL_CAT2(a, b) a##b
#define LCI_ARRIVAL_CAT(a, b) LCI_ARRIVAL_CAT2(a, b)
// At namespace scope in the file that owns `kind`.
#define LCI_REGISTER_HANDLER(call)                                                   \
  [[maybe_unused]] static const bool LCI_ARRIVAL_CAT(lci_handler_, __LINE__) = call
#define LCI_ARRIVAL(kind, handler) LCI_REGISTER_HANDLER(::lci::register_arrival(kind, handler))
#define LCI_TAGGED_ARRIVAL(kind, handler) \
  LCI_REGISTER_HANDLER(::lci::register_tagged_arrival(kind, handler))
#define LCI_CONTROL_ARRIVAL(kind, handler) \
  LCI_REGISTER_HANDLER(::lci::register_control(kind, handler))
#define LCI_COMPLETION(kind, handler) \
  LCI_REGISTER_HANDLER(::lci::register_completion(kind, handler))
#define LCI_BACKLOG_RETRY(kind, handler) \
  LCI_REGISTER_HANDLER(::lci::register_backlog(kind, handler, false))
#define LCI_BACKLOG_RESUME(kind, handler) \
  LCI_REGISTER_HANDLER(::lci::register_backlog(kind, handler, true))
#define LCI_RDMA_FINISHED(role, handler) \
  LCI_REGISTER_HANDLER(::lci::register_rdma_finished(role, handler))
#define LCI_MATCHED(kind, handler) LCI_REGISTER_HANDLER(::lci::register_matched(kind, handler))

// The tables that modules other than progress dispatch through.
extern handler_table<rdma_finished_handler, rdv_role_count> g_rdma_finished;
extern handler_table<matched_handler, 16> g_matched;

// Completes receive `c` with the waiting message `p` of a kind in
// matched_kinds (an RTS).
inline void complete_matched(device& d, recv_ctx* c, packet* p) {
  g_matched[static_cast<size_t>(p->in.kind) & 15](d, c, p);
}

}  // namespace lci

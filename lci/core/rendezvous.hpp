// The rendezvous protocol: long and iovec messages, two-sided (sendl/recvl,
// sendv/recvv) and into target-allocated buffers (putla, putva). Their
// operations (rdv_op.hpp) and the RDMA that moves their data are the RDMA
// engine's (rdma_engine.hpp); the messages and what they do are here.
//
// Protocol of a long send (LCI_RDV_WRITEIMM, one piece):
//   origin: RTS {send id, size}          -> target matches a receive (or, for
//   target: RTR {ids, address, key}      <-  putla, allocates), registers
//   origin: RDMA write with immediate (the target's id)  -> target completes
//   origin completes when its write completes locally.
// Several pieces (device::rdma_piece), iovecs or LCI_RDV_WRITE: the
// writes ask for delivery completion and a FIN {target id} follows them.
// A target that cannot take the message answers with a NACK (the origin
// completes with LCI_ERR_RETRY); an origin whose writes failed sends an
// abort instead of the FIN (the target completes with LCI_ERR_FATAL).
//
// RTS and RTR are built in a packet (or on the stack when they fit the
// backend's inject size). The handlers of the RTS (matched with its
// receive: LCI_MATCHED), of putla's RTS, of RTR/FIN/NACK/abort, of a write
// with immediate data and of the end of the origin's writes are registered
// in progress's tables (progress.hpp).
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/core/endpoint.hpp"
#include "lci/core/status.hpp"

namespace lci {

// ---- origin calls (a refusal has no effect) -----------------------------------
// `always_signal`: signal `comp` even when the endpoint's command port is
// LCI_COMPLETION_NONE (LCI's own sends, e.g. those of the collectives).
post_status start_send_long(endpoint* ep, const LCI_lbuffer_t& buffer, int rank, LCI_tag_t tag,
                            LCI_comp_t comp, void* user_context, bool alloc_at_target,
                            uintptr_t remote_comp, bool always_signal = false);
post_status start_send_iovec(endpoint* ep, const LCI_iovec_t& iov, int rank, LCI_tag_t tag,
                             LCI_comp_t comp, void* user_context, bool alloc_at_target,
                             uintptr_t remote_comp);

}  // namespace lci

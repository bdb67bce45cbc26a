// RMA: puts and gets into memory a peer registered (putl/putv, getl/getv).
// putl/putv: RDMA writes with delivery completion, then a notify message to
// the target's completion object. getl/getv: reads, then a notify (getv:
// the target answers with the piggy-back bytes). The RDMA is the engine's
// (rdma_engine.hpp); rma.cpp registers the notify, the getv reply and the
// end of a put's or get's RDMA in progress's tables.
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/core/endpoint.hpp"
#include "lci/core/status.hpp"

namespace lci {

post_status start_put(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context);
// `report`: the iovec the origin completion shows (the caller's, as passed),
// when `local` was adjusted for the transfer.
post_status start_get(endpoint* ep, const LCI_iovec_t& local, bool is_iovec, LCI_comp_t comp,
                      int rank, LCI_tag_t tag, const LCI_iovec_t& remote, uintptr_t remote_comp,
                      void* user_context, const LCI_iovec_t* report = nullptr);

}  // namespace lci

// The LCIX collectives over the core (algorithm and rules: coll.cpp).
//
// Each start call begins one collective of this process on `ep` (an
// endpoint that matches by rank and tag) and advances it as far as it goes
// without waiting; *out is then the handle, or nullptr when the collective
// already completed (its completion has been signalled). The arguments are
// taken as valid: the C entry points (lci/api/coll_api.cpp) check them.
#pragma once

#include "lci.h"

namespace lci {

struct endpoint;

namespace coll {

LCI_error_t barrier(endpoint* ep, LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                    LCIX_collective_t* out);
LCI_error_t bcastm(endpoint* ep, LCI_mbuffer_t buffer, int root, LCI_tag_t tag,
                   LCI_comp_t completion, void* user_context, LCIX_collective_t* out);
LCI_error_t bcastl(endpoint* ep, LCI_lbuffer_t buffer, int root, LCI_tag_t tag,
                   LCI_comp_t completion, void* user_context, LCIX_collective_t* out);
// LCI_ERR_RETRY (nothing started) when the device's packet pool cannot
// supply one buffer per send of this process.
LCI_error_t allreducem(endpoint* ep, LCI_mbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                       LCI_comp_t completion, void* user_context, LCIX_collective_t* out);
// Fatal when the scratch memory of the children's contributions cannot be
// allocated.
LCI_error_t allreducel(endpoint* ep, LCI_lbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                       LCI_comp_t completion, void* user_context, LCIX_collective_t* out);

// Advances the live collective *handle; when it completes, signals its
// completion, frees it and sets *handle to nullptr. LCI_OK if it moved or
// completed, LCI_ERR_RETRY if nothing could happen yet.
LCI_error_t progress(LCIX_collective_t* handle);

}  // namespace coll
}  // namespace lci

// C entry points: the LCIX collectives (barrier, broadcast, allreduce). They
// check the arguments and start or advance the collective in lci/coll
// (coll.hpp), where the algorithm is described.
//
// Usage: every process starts the same collective with the same tag (and
// root), then drives it to completion:
//
//   LCIX_collective_t coll;
//   LCIX_allreducem(LCI_UR_ENDPOINT, buf, sum_op, tag, cq, ctx, &coll);
//   while (coll) { LCIX_coll_progress(&coll); LCI_progress(LCI_UR_DEVICE); }
//   LCI_queue_wait(cq, &req);  // {LCI_OK, -1, tag, LCI_MEDIUM, buf, ctx}
//
// The endpoint must match by rank and tag (LCI_MATCH_RANKTAG); every build
// checks it and refuses another endpoint with LCI_ERR_FATAL. The tag must carry no other
// traffic on the endpoint until the collective completed on this process;
// the next collective may then reuse it. Medium forms copy through packets;
// long forms move the data by rendezvous (registered or LCI_SEGMENT_ALL
// buffers, as the buffer says).
#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/util/log.hpp"
#include "lci/coll/coll.hpp"
#include "lci/core/endpoint.hpp"

using namespace lci;

namespace {

// Every build: the algorithm names each message's source rank, so on an
// endpoint that matches by tag only, a receive meets whichever process's
// message arrives first and the collective silently delivers wrong data.
// One load and compare per collective, not per message.
[[gnu::noinline, gnu::cold]] LCI_error_t fail_match_type(const char* call) {
  return debug::fail(call, "argument ep matches by tag only (LCI_MATCH_TAG); collectives need an "
                           "LCI_MATCH_RANKTAG endpoint");
}

LCI_error_t check_match_type(const char* call, LCI_endpoint_t ep) {
  if (__builtin_expect(!ep, 0)) return debug::fail(call, "argument ep is NULL");
  if (__builtin_expect(to_endpoint(ep)->match_type != LCI_MATCH_RANKTAG, 0))
    return fail_match_type(call);
  return LCI_OK;
}

// Debug builds only.
[[maybe_unused]] LCI_error_t check_start(const char* call, LCI_endpoint_t ep, LCI_tag_t tag,
                                         LCI_comp_t completion, LCIX_collective_t* coll) {
  LCI_error_t rc = debug::check_endpoint(call, ep);
  if (rc != LCI_OK) return rc;
  rc = debug::check_tag(call, tag);
  if (rc == LCI_OK)
    rc = debug::check_port_comp(call, "completion", ep, LCI_PORT_MESSAGE, completion, false);
  if (rc == LCI_OK && !coll) rc = debug::fail(call, "argument coll is NULL");
  return rc;
}

[[maybe_unused]] LCI_error_t check_op(const char* call, LCI_op_t op) {
  return op ? LCI_OK : debug::fail(call, "argument op is NULL");
}

}  // namespace

LCI_error_t LCIX_barrier(LCI_endpoint_t ep, LCI_tag_t tag, LCI_comp_t completion,
                         void* user_context, LCIX_collective_t* coll) noexcept try {
  LCI_CHECK(check_start("LCIX_barrier", ep, tag, completion, coll));
  if (LCI_error_t rc = check_match_type("LCIX_barrier", ep); rc != LCI_OK) return rc;
  return lci::coll::barrier(to_endpoint(ep), tag, completion, user_context, coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_bcastm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int root, LCI_tag_t tag,
                        LCI_comp_t completion, void* user_context, LCIX_collective_t* coll) noexcept try {
  LCI_ALWAYS_RANK("LCIX_bcastm", "root", root);
  LCI_ALWAYS_MEDIUM("LCIX_bcastm", "buffer", buffer);
  LCI_CHECK(check_start("LCIX_bcastm", ep, tag, completion, coll));
  if (LCI_error_t rc = check_match_type("LCIX_bcastm", ep); rc != LCI_OK) return rc;
  LCI_CHECK(debug::check_rank("LCIX_bcastm", root, false));
  LCI_CHECK(debug::check_medium_length("LCIX_bcastm", "buffer", buffer));
  return lci::coll::bcastm(to_endpoint(ep), buffer, root, tag, completion, user_context, coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_bcastl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int root, LCI_tag_t tag,
                        LCI_comp_t completion, void* user_context, LCIX_collective_t* coll) noexcept try {
  LCI_ALWAYS_RANK("LCIX_bcastl", "root", root);
  LCI_CHECK(check_start("LCIX_bcastl", ep, tag, completion, coll));
  if (LCI_error_t rc = check_match_type("LCIX_bcastl", ep); rc != LCI_OK) return rc;
  LCI_CHECK(debug::check_rank("LCIX_bcastl", root, false));
  LCI_CHECK(debug::check_local_lbuffer("LCIX_bcastl", "buffer", buffer));
  return lci::coll::bcastl(to_endpoint(ep), buffer, root, tag, completion, user_context, coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_allreducem(LCI_endpoint_t ep, LCI_mbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                            LCI_comp_t completion, void* user_context, LCIX_collective_t* coll) noexcept try {
  LCI_ALWAYS_MEDIUM("LCIX_allreducem", "buffer", buffer);
  LCI_CHECK(check_start("LCIX_allreducem", ep, tag, completion, coll));
  if (LCI_error_t rc = check_match_type("LCIX_allreducem", ep); rc != LCI_OK) return rc;
  LCI_CHECK(check_op("LCIX_allreducem", op));
  LCI_CHECK(debug::check_medium_length("LCIX_allreducem", "buffer", buffer));
  return lci::coll::allreducem(to_endpoint(ep), buffer, op, tag, completion, user_context, coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_allreducel(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                            LCI_comp_t completion, void* user_context, LCIX_collective_t* coll) noexcept try {
  LCI_CHECK(check_start("LCIX_allreducel", ep, tag, completion, coll));
  if (LCI_error_t rc = check_match_type("LCIX_allreducel", ep); rc != LCI_OK) return rc;
  LCI_CHECK(check_op("LCIX_allreducel", op));
  LCI_CHECK(debug::check_local_lbuffer("LCIX_allreducel", "buffer", buffer));
  return lci::coll::allreducel(to_endpoint(ep), buffer, op, tag, completion, user_context, coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_coll_progress(LCIX_collective_t* coll) noexcept try {
  LCI_CHECK(coll ? LCI_OK : debug::fail("LCIX_coll_progress", "argument coll is NULL"));
  if (!*coll) return LCI_OK;
  LCI_CHECK(debug::check_handle("LCIX_coll_progress", "*coll", *coll,
                                debug::handle_kind::collective));
  return lci::coll::progress(coll);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

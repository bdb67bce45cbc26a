// C entry points: completion queues, synchronizers, handlers.
#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/comp/handler.hpp"
#include "lci/comp/queue.hpp"
#include "lci/comp/sync.hpp"
#include "lci/core/runtime.hpp"
#include "lci/util/log.hpp"

using namespace lci;

namespace {
comp_queue* to_queue(LCI_comp_t c) { return static_cast<comp_queue*>(static_cast<comp_base*>(c)); }
comp_sync* to_sync(LCI_comp_t c) { return static_cast<comp_sync*>(static_cast<comp_base*>(c)); }

[[maybe_unused]] LCI_error_t check_queue(const char* call, LCI_comp_t cq) {
  return debug::check_handle(call, "cq", cq, debug::handle_kind::queue);
}
[[maybe_unused]] LCI_error_t check_sync(const char* call, LCI_comp_t s) {
  return debug::check_handle(call, "completion", s, debug::handle_kind::sync);
}
[[maybe_unused]] LCI_error_t check_out(const char* call, const char* arg, const void* p) {
  return p ? LCI_OK : debug::fail(call, "argument %s is NULL", arg);
}

const char* comp_type_name(int type) {
  return type == LCI_COMPLETION_QUEUE  ? "completion queue"
         : type == LCI_COMPLETION_SYNC ? "synchronizer"
         : type == LCI_COMPLETION_HANDLER ? "handler"
                                          : "completion object of an unknown kind";
}

[[maybe_unused]] debug::handle_kind debug_kind(int type) {
  return type == LCI_COMPLETION_QUEUE ? debug::handle_kind::queue
         : type == LCI_COMPLETION_SYNC ? debug::handle_kind::sync
                                       : debug::handle_kind::handler;
}

[[gnu::cold, gnu::noinline]] LCI_error_t refuse_comp(const char* call, const char* arg,
                                                     LCI_comp_t c, int want) {
  if (c == nullptr)
    return debug::fail(call, "argument %s is NULL (freed already, or never created)", arg);
  return debug::fail(call, "argument %s is a %s, not a %s", arg,
                     comp_type_name(static_cast<comp_base*>(c)->type), comp_type_name(want));
}
}  // namespace

// Every build: a NULL completion object (one freed already: the free calls
// set the handle to NULL) or one of the wrong kind is refused (a load and a
// compare on the object the call reads anyway).
#define LCI_ALWAYS_COMP(call, arg, c, want)                                             \
  do {                                                                                  \
    LCI_CHECK(debug::check_handle(call, arg, c, debug_kind(want)));               \
    if (__builtin_expect((c) == nullptr || static_cast<comp_base*>(c)->type != (want), 0)) \
      return refuse_comp(call, arg, c, want);                                           \
  } while (0)

// ---- queue -------------------------------------------------------------------

LCI_error_t LCI_queue_createx(LCI_device_t device, size_t max_length, LCI_comp_t* cq) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_queue_createx", "cq", cq);
  LCI_CHECK(check_out("LCI_queue_createx", "cq", cq));
  LCI_CHECK(max_length ? LCI_OK : debug::fail("LCI_queue_createx", "argument max_length is 0"));
  auto* q = new comp_queue(max_length);
  comp_registry::add(q);
  *cq = static_cast<comp_base*>(q);
  LCI_DEBUG_ONLY(debug::track(*cq, debug::handle_kind::queue));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_create(LCI_device_t device, LCI_comp_t* cq) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_queue_create", "cq", cq);
  LCI_CHECK(check_out("LCI_queue_create", "cq", cq));
  return LCI_queue_createx(device, static_cast<size_t>(LCI_MAX_QUEUE_LENGTH), cq);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_free(LCI_comp_t* cq) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_queue_free", "cq", cq);
  LCI_ALWAYS_COMP("LCI_queue_free", "*cq", *cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_out("LCI_queue_free", "cq", cq));
  LCI_CHECK(check_queue("LCI_queue_free", *cq));
  LCI_DEBUG_ONLY(debug::untrack(*cq));
  comp_registry::retire(to_queue(*cq));
  *cq = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_pop(LCI_comp_t cq, LCI_request_t* request) noexcept try {
  LCI_ALWAYS_COMP("LCI_queue_pop", "cq", cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_queue("LCI_queue_pop", cq));
  LCI_CHECK(check_out("LCI_queue_pop", "request", request));
  return to_queue(cq)->pop(request) ? LCI_OK : LCI_ERR_RETRY;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_wait(LCI_comp_t cq, LCI_request_t* request) noexcept try {
  LCI_ALWAYS_COMP("LCI_queue_wait", "cq", cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_queue("LCI_queue_wait", cq));
  LCI_CHECK(check_out("LCI_queue_wait", "request", request));
  to_queue(cq)->wait(request);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_pop_multiple(LCI_comp_t cq, size_t request_count, LCI_request_t* requests,
                                   size_t* return_count) noexcept try {
  LCI_ALWAYS_COMP("LCI_queue_pop_multiple", "cq", cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_queue("LCI_queue_pop_multiple", cq));
  LCI_CHECK(check_out("LCI_queue_pop_multiple", "requests", requests));
  LCI_CHECK(check_out("LCI_queue_pop_multiple", "return_count", return_count));
  *return_count = to_queue(cq)->pop_multiple(request_count, requests);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_wait_multiple(LCI_comp_t cq, size_t request_count,
                                    LCI_request_t* requests) noexcept try {
  LCI_ALWAYS_COMP("LCI_queue_wait_multiple", "cq", cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_queue("LCI_queue_wait_multiple", cq));
  LCI_CHECK(check_out("LCI_queue_wait_multiple", "requests", requests));
  to_queue(cq)->wait_multiple(request_count, requests);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_queue_len(LCI_comp_t cq, size_t* len) noexcept try {
  LCI_ALWAYS_COMP("LCI_queue_len", "cq", cq, LCI_COMPLETION_QUEUE);
  LCI_CHECK(check_queue("LCI_queue_len", cq));
  LCI_CHECK(check_out("LCI_queue_len", "len", len));
  *len = to_queue(cq)->len();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- synchronizer ------------------------------------------------------------

LCI_error_t LCI_sync_create(LCI_device_t device, int threshold,
                            LCI_comp_t* completion) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_sync_create", "completion", completion);
  if (__builtin_expect(threshold < 1, 0))
    return debug::fail("LCI_sync_create", "argument threshold = %d is below 1", threshold);
  LCI_CHECK(check_out("LCI_sync_create", "completion", completion));
  LCI_CHECK(threshold >= 1 ? LCI_OK
                           : debug::fail("LCI_sync_create", "argument threshold = %d is below 1",
                                         threshold));
  auto* s = new comp_sync(threshold);
  comp_registry::add(s);
  *completion = static_cast<comp_base*>(s);
  LCI_DEBUG_ONLY(debug::track(*completion, debug::handle_kind::sync));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_sync_free(LCI_comp_t* completion) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_sync_free", "completion", completion);
  LCI_ALWAYS_COMP("LCI_sync_free", "*completion", *completion, LCI_COMPLETION_SYNC);
  LCI_CHECK(check_out("LCI_sync_free", "completion", completion));
  LCI_CHECK(check_sync("LCI_sync_free", *completion));
  LCI_DEBUG_ONLY(debug::untrack(*completion));
  comp_registry::retire(to_sync(*completion));
  *completion = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_sync_signal(LCI_comp_t completion, LCI_request_t request) noexcept try {
  LCI_ALWAYS_COMP("LCI_sync_signal", "completion", completion, LCI_COMPLETION_SYNC);
  LCI_CHECK(check_sync("LCI_sync_signal", completion));
  to_sync(completion)->signal(request);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_sync_wait(LCI_comp_t completion, LCI_request_t request[]) noexcept try {
  LCI_ALWAYS_COMP("LCI_sync_wait", "completion", completion, LCI_COMPLETION_SYNC);
  LCI_CHECK(check_sync("LCI_sync_wait", completion));
  to_sync(completion)->wait(request);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_sync_test(LCI_comp_t completion, LCI_request_t request[]) noexcept try {
  LCI_ALWAYS_COMP("LCI_sync_test", "completion", completion, LCI_COMPLETION_SYNC);
  LCI_CHECK(check_sync("LCI_sync_test", completion));
  return to_sync(completion)->test(request) ? LCI_OK : LCI_ERR_RETRY;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- handler -----------------------------------------------------------------

LCI_error_t LCI_handler_create(LCI_device_t device, LCI_handler_t handler,
                               LCI_comp_t* completion) noexcept try {
  LCI_CHECK(check_out("LCI_handler_create", "completion", completion));
  LCI_CHECK(check_out("LCI_handler_create", "handler", reinterpret_cast<const void*>(handler)));
  auto* h = new comp_handler(handler);
  comp_registry::add(h);
  // The API has no call that frees a handler: LCI_finalize does.
  remember_handler(h);
  *completion = static_cast<comp_base*>(h);
  LCI_DEBUG_ONLY(debug::track(*completion, debug::handle_kind::handler));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

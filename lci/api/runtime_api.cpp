// C entry points: runtime, devices, property lists, endpoints, progress.
#include <cstdio>

#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/comp/comp.hpp"
#include "lci/util/log.hpp"
#include "lci/core/barrier.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/state_dump.hpp"

using namespace lci;

namespace {
plist* to_plist(LCI_plist_t p) { return reinterpret_cast<plist*>(p); }

LCI_error_t check_initialized(const char* call) {
  if (!g_initialized.load(std::memory_order_acquire))
    return debug::fail(call, "LCI is not initialized (call LCI_initialize first; after "
                             "LCI_finalize only LCI_initialize may be called)");
  return LCI_OK;
}
}  // namespace

namespace {
// LCI_initialize ran and LCI_finalize did not yet. The runtime itself may
// also be held by the LCI 2 interface (lci.hpp) in the same process: it is
// initialized by its first user and finalized by its last (runtime_acquire).
std::atomic<bool> g_c_api_initialized{false};
}  // namespace

LCI_error_t LCI_initialize() noexcept try {
  if (g_c_api_initialized.exchange(true)) fatal("LCI_initialize: called twice");
  if (runtime_acquire()) {
    runtime_initialize();
    runtime_barrier();
#if LCI_ENABLE_DEBUG
    // Every message, control, completion and backlog kind has one handler.
    for (const std::string& problem : handler_problems())
      fatal("LCI_initialize: dispatch table: %s", problem.c_str());
#endif
    dump_signal_start(settings().dump_signal);
  }
  LCI_DEBUG_ONLY(debug::track(LCI_UR_DEVICE, debug::handle_kind::device));
  LCI_DEBUG_ONLY(debug::track(LCI_UR_ENDPOINT, debug::handle_kind::endpoint));
  LCI_DEBUG_ONLY(debug::track(LCI_UR_CQ, debug::handle_kind::queue));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_initialized(int* flag) noexcept try {
  LCI_CHECK(flag ? LCI_OK : debug::fail("LCI_initialized", "argument flag is NULL"));
  *flag = g_c_api_initialized.load(std::memory_order_acquire) ? 1 : 0;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_finalize() noexcept try {
  LCI_ALWAYS_CHECK(check_initialized("LCI_finalize"));
  LCI_ALWAYS_CHECK(g_c_api_initialized.load(std::memory_order_acquire)
                       ? LCI_OK
                       : debug::fail("LCI_finalize", "LCI_initialize was not called (the "
                                                     "runtime is the LCI 2 interface's)"));
  LCI_DEBUG_ONLY(debug::untrack(LCI_UR_DEVICE));
  LCI_DEBUG_ONLY(debug::untrack(LCI_UR_ENDPOINT));
  LCI_DEBUG_ONLY(debug::untrack(LCI_UR_CQ));
  g_c_api_initialized.store(false, std::memory_order_release);
  if (!runtime_release()) return LCI_OK;  // the LCI 2 interface still holds it
  // After a peer failed, LCI's barrier cannot complete: lcrun's (in the
  // device's teardown) knows who is left; other launchers' barriers would
  // wait for the dead rank, and the survivors finalize without one.
  if (!g_any_peer_failed.load(std::memory_order_acquire)) runtime_barrier();
  // A job stuck in the barrier above can still be asked for its state.
  dump_signal_stop();
  runtime_finalize();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_barrier() noexcept try {
  LCI_ALWAYS_CHECK(check_initialized("LCI_barrier"));
  return runtime_barrier() ? LCI_OK : LCI_ERR_FATAL;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_device_init(LCI_device_t* device_ptr) noexcept try {
  LCI_ALWAYS_CHECK(check_initialized("LCI_device_init"));
  LCI_CHECK(device_ptr ? LCI_OK : debug::fail("LCI_device_init", "argument device_ptr is NULL"));
  device* d = device_create();
  *device_ptr = reinterpret_cast<LCI_device_t>(d);
  LCI_DEBUG_ONLY(debug::track(d, debug::handle_kind::device));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_device_initx(LCI_device_t* device_ptr) noexcept try {
  return LCI_device_init(device_ptr);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_device_free(LCI_device_t* device_ptr) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_device_free", "device_ptr", device_ptr);
  LCI_ALWAYS_HANDLE("LCI_device_free", "*device_ptr", *device_ptr);
  LCI_CHECK(device_ptr ? LCI_OK : debug::fail("LCI_device_free", "argument device_ptr is NULL"));
  LCI_CHECK(debug::check_device("LCI_device_free", *device_ptr));
  LCI_DEBUG_ONLY(debug::untrack(*device_ptr));
  LCI_DEBUG_ONLY(debug::untrack_device_objects(*device_ptr));
  device_destroy(to_device(*device_ptr));
  *device_ptr = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_progress(LCI_device_t device) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_progress", "device", device);
  LCI_CHECK(debug::check_device("LCI_progress", device));
  return to_device(device)->progress() ? LCI_OK : LCI_ERR_RETRY;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCIX_transport_t LCIX_transport_of(LCI_device_t device, int rank) noexcept try {
#if LCI_ENABLE_DEBUG
  if (debug::check_device("LCIX_transport_of", device) != LCI_OK) return LCIX_TRANSPORT_NETWORK;
#endif
  if (device == nullptr || rank < 0 || rank >= LCI_NUM_PROCESSES) return LCIX_TRANSPORT_NETWORK;
  return to_device(device)->net->is_native(rank) ? LCIX_TRANSPORT_NATIVE : LCIX_TRANSPORT_NETWORK;
} catch (...) {
  lci::fatal_exception(__func__);
}

LCI_error_t LCIX_transport_counts(LCI_device_t device,
                                  LCIX_transport_counts_t* counts) noexcept try {
  LCI_ALWAYS_HANDLE("LCIX_transport_counts", "device", device);
  LCI_CHECK(debug::check_device("LCIX_transport_counts", device));
  LCI_CHECK(counts ? LCI_OK
                   : debug::fail("LCIX_transport_counts", "argument counts is NULL"));
  const net::backend_device& n = *to_device(device)->net;
  counts->native_received = n.native_received();
  counts->network_received = n.network_received();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- property lists --------------------------------------------------------

LCI_error_t LCI_plist_create(LCI_plist_t* plist_ptr) noexcept try {
  LCI_CHECK(plist_ptr ? LCI_OK : debug::fail("LCI_plist_create", "argument plist_ptr is NULL"));
  auto* p = new plist;
  p->default_comp = LCI_UR_CQ;
  *plist_ptr = reinterpret_cast<LCI_plist_t>(p);
  LCI_DEBUG_ONLY(debug::track(p, debug::handle_kind::plist));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_free(LCI_plist_t* plist_ptr) noexcept try {
  LCI_CHECK(plist_ptr ? LCI_OK : debug::fail("LCI_plist_free", "argument plist_ptr is NULL"));
  LCI_CHECK(debug::check_handle("LCI_plist_free", "plist", *plist_ptr, debug::handle_kind::plist));
  LCI_DEBUG_ONLY(debug::untrack(*plist_ptr));
  delete to_plist(*plist_ptr);
  *plist_ptr = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_get(LCI_endpoint_t ep, LCI_plist_t* plist_ptr) noexcept try {
  LCI_CHECK(debug::check_endpoint("LCI_plist_get", ep));
  LCI_CHECK(plist_ptr ? LCI_OK : debug::fail("LCI_plist_get", "argument plist_ptr is NULL"));
  endpoint* e = to_endpoint(ep);
  auto* p = new plist;
  p->match_type = e->match_type;
  p->cmd_comp_type = e->cmd_comp_type;
  p->msg_comp_type = e->msg_comp_type;
  p->default_comp = e->default_comp;
  *plist_ptr = reinterpret_cast<LCI_plist_t>(p);
  LCI_DEBUG_ONLY(debug::track(p, debug::handle_kind::plist));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

namespace {
const char* comp_type_name(int t) {
  switch (t) {
    case LCI_COMPLETION_NONE: return "none";
    case LCI_COMPLETION_QUEUE: return "queue";
    case LCI_COMPLETION_HANDLER: return "handler";
    case LCI_COMPLETION_SYNC: return "sync";
  }
  return "invalid";
}
}  // namespace

LCI_error_t LCI_plist_decode(LCI_plist_t plist, char* string) noexcept try {
  LCI_CHECK(debug::check_handle("LCI_plist_decode", "plist", plist, debug::handle_kind::plist));
  LCI_CHECK(string ? LCI_OK : debug::fail("LCI_plist_decode", "argument string is NULL"));
  const auto* p = to_plist(plist);
  snprintf(string, 256, "match=%s command_port=%s message_port=%s default_comp=%p",
           p->match_type == LCI_MATCH_TAG ? "tag" : "ranktag", comp_type_name(p->cmd_comp_type),
           comp_type_name(p->msg_comp_type), p->default_comp);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_set_match_type(LCI_plist_t plist, LCI_match_t match_type) noexcept try {
  LCI_CHECK(debug::check_handle("LCI_plist_set_match_type", "plist", plist, debug::handle_kind::plist));
  LCI_CHECK(match_type == LCI_MATCH_RANKTAG || match_type == LCI_MATCH_TAG
                ? LCI_OK
                : debug::fail("LCI_plist_set_match_type", "argument match_type = %d is not an LCI_match_t",
                              static_cast<int>(match_type)));
  to_plist(plist)->match_type = match_type;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_set_match(LCI_plist_t plist, LCI_match_t match_type) noexcept try {
  return LCI_plist_set_match_type(plist, match_type);
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_set_comp_type(LCI_plist_t plist, LCI_port_t port,
                                    LCI_comp_type_t comp_type) noexcept try {
  LCI_CHECK(debug::check_handle("LCI_plist_set_comp_type", "plist", plist, debug::handle_kind::plist));
  LCI_CHECK(port == LCI_PORT_COMMAND || port == LCI_PORT_MESSAGE
                ? LCI_OK
                : debug::fail("LCI_plist_set_comp_type", "argument port = %d is not an LCI_port_t",
                              static_cast<int>(port)));
  LCI_CHECK(comp_type >= LCI_COMPLETION_NONE && comp_type <= LCI_COMPLETION_SYNC
                ? LCI_OK
                : debug::fail("LCI_plist_set_comp_type",
                              "argument comp_type = %d is not an LCI_comp_type_t",
                              static_cast<int>(comp_type)));
  if (port == LCI_PORT_COMMAND)
    to_plist(plist)->cmd_comp_type = comp_type;
  else
    to_plist(plist)->msg_comp_type = comp_type;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_plist_set_default_comp(LCI_plist_t plist, LCI_comp_t comp) noexcept try {
  LCI_CHECK(debug::check_handle("LCI_plist_set_default_comp", "plist", plist, debug::handle_kind::plist));
  // NULL is allowed: an endpoint whose message port is NONE needs no object.
  LCI_CHECK(comp ? debug::check_comp_any("LCI_plist_set_default_comp", "comp", comp) : LCI_OK);
  to_plist(plist)->default_comp = comp;
  to_plist(plist)->default_comp_set = true;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// ---- endpoints -------------------------------------------------------------

LCI_error_t LCI_endpoint_init(LCI_endpoint_t* ep_ptr, LCI_device_t device,
                              LCI_plist_t plist) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_endpoint_init", "device", device);
  LCI_CHECK(ep_ptr ? LCI_OK : debug::fail("LCI_endpoint_init", "argument ep_ptr is NULL"));
  LCI_CHECK(debug::check_device("LCI_endpoint_init", device));
  LCI_CHECK(debug::check_handle("LCI_endpoint_init", "plist", plist, debug::handle_kind::plist));
  // An explicitly set default completion object must be live
  // (plist::default_comp_set).
  LCI_CHECK(to_plist(plist)->default_comp && to_plist(plist)->default_comp_set
                ? debug::check_plist_default_comp("LCI_endpoint_init", to_plist(plist)->msg_comp_type,
                                                  to_plist(plist)->default_comp)
                : LCI_OK);
  endpoint* ep = endpoint_create(to_device(device), *to_plist(plist));
  *ep_ptr = reinterpret_cast<LCI_endpoint_t>(ep);
  LCI_DEBUG_ONLY(debug::track(ep, debug::handle_kind::endpoint));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_endpoint_free(LCI_endpoint_t* ep_ptr) noexcept try {
  LCI_CHECK(ep_ptr ? LCI_OK : debug::fail("LCI_endpoint_free", "argument ep_ptr is NULL"));
  LCI_CHECK(debug::check_endpoint("LCI_endpoint_free", *ep_ptr));
  LCI_DEBUG_ONLY(debug::untrack(*ep_ptr));
  endpoint_destroy(to_endpoint(*ep_ptr));
  *ep_ptr = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIX_dump_state(FILE* out) noexcept try {
  LCI_CHECK(out ? LCI_OK : debug::fail("LCIX_dump_state", "argument out is NULL"));
  if (!out) out = stderr;
  if (!dump_state(out)) {
    LCI_WARN("LCIX_dump_state: LCI is not initialized (call LCI_initialize first)");
    return LCI_ERR_FATAL;
  }
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API int LCIX_peer_failed(int rank) noexcept try {
  return lci::peer_failed(rank) ? 1 : 0;
} catch (...) {
  lci::log_exception(__func__);
  return 0;
}

LCI_API LCI_error_t LCIX_on_peer_failure(void (*fn)(int rank, void* ctx), void* ctx) noexcept try {
  LCI_ALWAYS_CHECK(check_initialized("LCIX_on_peer_failure"));
  lci::set_peer_failure_callback(fn, ctx);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

// Fault injection for LCI's own tests (see test_hooks.hpp).
#include "lci/core/test_hooks.hpp"

#include "lci/core/config.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci.h"
#include "lci/core/endpoint.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/device.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/test_flags.hpp"
#include "lci/core/validate.hpp"
#include "lci/util/log.hpp"

namespace lci {

namespace {
// LCI_TEST_HOOKS through the configuration table: the parsed settings once
// LCI is initialized; before (hooks set up ahead of LCI_initialize), the
// same table read from the environment.
bool hooks_enabled() {
  if (g_initialized.load(std::memory_order_acquire)) return settings().test_hooks;
  config c;
  std::string error;
  return config_read([](const char* name) { return std::getenv(name); }, c, error) &&
         c.test_hooks;
}
}  // namespace

}  // namespace lci

extern "C" {

LCI_API LCI_error_t LCIT_send_raw(LCI_endpoint_t ep, int rank, uint32_t imm, const void* data,
                          size_t length) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  auto* e = reinterpret_cast<lci::endpoint*>(ep);
  if (rank < 0 || rank >= LCI_NUM_PROCESSES || length > static_cast<size_t>(LCI_MEDIUM_SIZE))
    return LCI_ERR_FATAL;
  return lci::to_error(lci::send_eager(*e->dev, nullptr, imm, const_cast<void*>(data), length,
                                       rank, 0, nullptr, nullptr));
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_fail_next_rdma(void) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_fail_next_rdma.store(true, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_fail_next_sends(int n) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_fail_sends.store(n, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_lose_next_sends(int n) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_lose_sends.store(n, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_refuse_next_recv_posts(int n) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_refuse_recv_posts.store(n, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_fail_next_registrations(int n) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_fail_registrations.store(n, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_limit_message_size(size_t n) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_max_message.store(n, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_coll_internal_comp(uint64_t* handle) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  *handle = reinterpret_cast<uint64_t>(lci::coll_internal_comp());
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API uint64_t LCIT_dropped_messages(void) noexcept try {
  return lci::g_dropped_messages.load(std::memory_order_relaxed);
} catch (...) {
  lci::fatal_exception(__func__);
}

LCI_API LCI_error_t LCIT_native_forge(LCI_device_t device, int rank, const LCIT_native_cell* cell,
                                      const void* payload, size_t payload_length,
                                      uint64_t retarget) noexcept try {
  if (!lci::hooks_enabled() || !device || !cell || rank < 0 || rank >= LCI_NUM_PROCESSES)
    return LCI_ERR_FEATURE_NA;
  lci::native::native_device* s = lci::to_device(device)->net->native();
  if (!s || !lci::to_device(device)->net->is_native(rank)) return LCI_ERR_FEATURE_NA;
  lci::native::cell_fields f;
  f.kind = cell->kind;
  f.flags = cell->flags;
  f.src = cell->src;
  f.imm = cell->imm;
  f.length = cell->length;
  f.address = cell->address;
  f.key = cell->key;
  f.op = cell->op;
  return s->forge(rank, f, payload, payload_length, retarget) ? LCI_OK : LCI_ERR_RETRY;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_native_refuse_cma(int rank) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  lci::g_test_no_cma_rank.store(rank, std::memory_order_relaxed);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_fail_peer(int rank) noexcept try {
  if (!lci::hooks_enabled()) return LCI_ERR_FEATURE_NA;
  if (!lci::peer_failure_continues() || rank < 0 || rank >= LCI_NUM_PROCESSES || rank == LCI_RANK)
    return LCI_ERR_FATAL;
  lci::mark_peer_failed(rank, "LCIT_fail_peer");
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_resources(LCI_device_t device, LCIT_resources_t* out) noexcept try {
  if (!device || !out) return LCI_ERR_FATAL;
  lci::device& d = *lci::to_device(device);
  out->packets_free = d.packets->available();
  out->packets_total = d.packets->capacity();
  out->receives_missing = static_cast<size_t>(d.recv_deficit.load(std::memory_order_relaxed));
  out->rendezvous = d.rdv.in_use();
  out->matching = d.table->size();
  for (uint32_t r = 0; r < d.fifo_ranks; ++r) {  // the ranks' lists (rank_fifo.hpp)
    lci::rank_fifo& f = d.fifos[r];
    f.lock.lock();
    out->matching += f.size();
    f.lock.unlock();
  }
  out->backlog = static_cast<size_t>(d.backlog_size.load(std::memory_order_relaxed));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API size_t LCIT_rdma_piece(LCI_device_t device, int rank) noexcept try {
  if (!device || rank < 0 || rank >= LCI_NUM_PROCESSES) return 0;
  return lci::to_device(device)->piece_for(rank);
} catch (...) {
  lci::fatal_exception(__func__);
}

LCI_API LCI_error_t LCIT_message_secret(LCI_device_t device, uint64_t* out) noexcept try {
  if (!lci::hooks_enabled() || !device || !out) return LCI_ERR_FEATURE_NA;
  return lci::to_device(device)->net->secret(out) ? LCI_OK : LCI_ERR_FEATURE_NA;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_segment_keys(LCI_segment_t segment, uint64_t* peer_key,
                                      uint64_t* provider_key) noexcept try {
  if (!lci::hooks_enabled() || !segment) return LCI_ERR_FEATURE_NA;
  const LCII_mr_t* seg = segment;
  if (seg->magic != segment_magic || seg->remote || !seg->dev) return LCI_ERR_FATAL;
  if (peer_key) *peer_key = seg->mr.rkey;
  if (provider_key) *provider_key = seg->dev->net->provider_key(seg->mr);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

}  // extern "C"

namespace {
// The native transport of `device` for the hooks that read it; nullptr when
// the hooks are off, or the device has none.
lci::native::native_device* hooked_native(LCI_device_t device) {
  if (!lci::hooks_enabled() || !device) return nullptr;
  return lci::to_device(device)->net->native();
}
}  // namespace

extern "C" {

LCI_API LCI_error_t LCIT_native_state(LCI_device_t device, size_t* pending_replies,
                                      int* ops_in_flight) noexcept try {
  lci::native::native_device* s = hooked_native(device);
  if (!s) return LCI_ERR_FEATURE_NA;
  if (pending_replies) *pending_replies = s->pending_replies();
  if (ops_in_flight) *ops_in_flight = s->ops_in_flight();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_native_naps(LCI_device_t device, uint64_t* naps) noexcept try {
  lci::native::native_device* s = hooked_native(device);
  if (!s) return LCI_ERR_FEATURE_NA;
  if (naps) *naps = s->naps();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_API LCI_error_t LCIT_native_received(LCI_device_t device, uint64_t* total,
                                         uint64_t* in_place) noexcept try {
  lci::native::native_device* s = hooked_native(device);
  if (!s) return LCI_ERR_FEATURE_NA;
  if (total) *total = s->received();
  if (in_place) *in_place = s->received_in_place();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

}  // extern "C"

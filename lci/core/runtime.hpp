// Process-wide state: the bootstrap, the endpoint table and the counters
// that give devices and endpoints their numbers.
//
// Endpoints are numbered in creation order on every rank (LCI_UR_ENDPOINT is
// 0); a message carries the number, and the receiver finds the endpoint in
// `endpoints` with one load. LCI's private barrier endpoint has a fixed
// number past every user endpoint, so it never shifts the numbering.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "lci.h"
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/comp/handler.hpp"
#include "lci/core/config.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/protocol.hpp"

namespace lci {

class comp_sync;

inline constexpr uint32_t plist_magic = 0x4c434950u;

struct plist {
  uint32_t magic = plist_magic;
  LCI_match_t match_type = LCI_MATCH_RANKTAG;
  int cmd_comp_type = LCI_COMPLETION_QUEUE;  // LCI_comp_type_t, or comp_type_any
  int msg_comp_type = LCI_COMPLETION_QUEUE;
  LCI_comp_t default_comp = nullptr;
  // Set by LCI_plist_set_default_comp. Debug builds check an explicit
  // default against the message-port type; the implicit LCI_UR_CQ is not
  // checked, since 1.7.9 programs pair it with any port type and never use it.
  bool default_comp_set = false;
  // The LCI 2 interface's endpoints (endpoint.hpp): matching policies
  // beyond LCI_match_t, arrivals' marker, rcomp lookup.
  bool match_rank = true;
  bool match_tag = true;
  bool wide_tags = false;
  void* target_context = nullptr;
  comp_lookup_fn lookup_comp = nullptr;
};

struct runtime {
  // The process's shared bootstrap (bootstrap::acquire), also used by
  // LCT_pmi_*; released by runtime_finalize.
  bootstrap::bootstrap* boot = nullptr;
  int next_device_index = 0;     // device groups, in creation order
  uint32_t next_endpoint_index = 0;
  uint32_t barrier_seq = 0;
  endpoint* barrier_ep = nullptr;
  std::atomic<endpoint*> endpoints[max_endpoint_index + 1] = {};
  std::mutex devices_mutex;      // creation/destruction only (and abandoned_syncs)
  std::vector<device*> devices;
  // Barriers given up after a peer failed: what their posted receives
  // signal, freed once the devices are gone.
  std::vector<comp_sync*> abandoned_syncs;
};

extern runtime* g_runtime;
extern std::atomic<bool> g_initialized;
// LCI_NUM_PROCESSES as the library's own (non-interposable) copy, for the
// range checks of every call (lci/api/check.hpp): one load, no GOT.
extern unsigned g_nranks;

inline endpoint* endpoint_by_index(uint32_t index) {
  return g_runtime->endpoints[index].load(std::memory_order_acquire);
}

// Handlers live until LCI_finalize (the API has no call that frees one).
void remember_handler(comp_handler* h);

// Collective operations of the runtime (lci/core/runtime.cpp). The barrier
// that ends LCI_initialize and the one that starts LCI_finalize are the
// caller's (runtime_barrier, barrier.hpp, which is above the runtime).
void runtime_initialize();
void runtime_finalize();
// The runtime's users (the C API's LCI_initialize, the LCI 2 interface's
// runtimes), counted: acquire returns true for the first, which must then
// initialize it (runtime_initialize, then a barrier); release returns true
// for the last, which must finalize it.
bool runtime_acquire();
bool runtime_release();
device* device_create(const device_options& opt = device_options());
void device_destroy(device* d);
endpoint* endpoint_create(device* d, const plist& p);
void endpoint_destroy(endpoint* ep);
}  // namespace lci

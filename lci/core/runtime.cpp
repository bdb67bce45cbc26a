// Runtime: initialization, devices and endpoints (LCI's barrier is barrier.cpp).
#include "lci/core/runtime.hpp"

#include <cstring>
#ifdef LCI_PROFILE
#include <cstdio>
#include <cstdlib>
#endif

#include "lci/comp/queue.hpp"
#include "lci/comp/sync.hpp"
#include "lci/core/handles.hpp"
#include "lci/util/log.hpp"

namespace lci {

runtime* g_runtime = nullptr;
std::atomic<bool> g_initialized{false};
unsigned g_nranks = 1;

namespace {
std::mutex g_handlers_mutex;
std::vector<comp_handler*>* g_handlers = nullptr;
}  // namespace

void remember_handler(comp_handler* h) {
  std::lock_guard<std::mutex> guard(g_handlers_mutex);
  if (!g_handlers) g_handlers = new std::vector<comp_handler*>;
  g_handlers->push_back(h);
}

namespace {
void free_handlers() {
  std::lock_guard<std::mutex> guard(g_handlers_mutex);
  if (!g_handlers) return;
  for (comp_handler* h : *g_handlers) {
    debug::untrack(h);
    comp_registry::retire(h);
  }
  delete g_handlers;
  g_handlers = nullptr;
}
}  // namespace

device* device_create(const device_options& opt) {
  runtime& rt = *g_runtime;
  auto* d = new device(rt.next_device_index++, *rt.boot, opt);
  std::lock_guard<std::mutex> guard(rt.devices_mutex);
  rt.devices.push_back(d);
  add_pool_owner(d);
  ++LCI_NUM_DEVICES;
  return d;
}

#ifdef LCI_PROFILE
// LCI_PRINT_PROFILE=1: print each device's counters when it is destroyed
// (LCI_device_free, or LCI_finalize for the rest). Read at LCI_initialize.
static bool g_print_profile = false;

static void print_profile(const device& d) {
  const device_profile& c = d.prof;
  auto v = [](const std::atomic<uint64_t>& a) {
    return static_cast<unsigned long long>(a.load(std::memory_order_relaxed));
  };
  unsigned long long retries = 0;
  for (const auto& r : c.retries) retries += v(r);
  std::fprintf(stderr,
               "LCI profile: rank %d device %d: sent %llu received %llu retries %llu "
               "(queue full %llu, no packet %llu, backlog %llu, registration %llu) "
               "backlog_pushes %llu progress_calls %llu progress_empty %llu\n",
               LCI_RANK, d.group_index, v(c.sent), v(c.received), retries,
               v(c.retries[static_cast<int>(post_status::retry_queue_full)]),
               v(c.retries[static_cast<int>(post_status::retry_no_packet)]),
               v(c.retries[static_cast<int>(post_status::retry_backlog)]),
               v(c.retries[static_cast<int>(post_status::retry_no_registration)]),
               v(c.backlog_pushes), v(c.progress_calls), v(c.progress_empty));
}
#endif

void device_destroy(device* d) {
  runtime& rt = *g_runtime;
#ifdef LCI_PROFILE
  if (g_print_profile) print_profile(*d);
#endif
  // After a rank failed (LCI_PEER_FAILURE=continue) the launcher's barrier
  // and fence complete only under lcrun; elsewhere they would wait for the
  // dead rank forever, and the device closes without them.
  d->net->begin_close();
  if (!g_any_peer_failed.load(std::memory_order_acquire) ||
      rt.boot->barriers_survive_failures()) {
    // Nobody may still send to this device when it closes (nor probe it).
    rt.boot->barrier();
    // Where messages are authenticated: every one a peer sent has arrived
    // (a connection taken over loses them silently otherwise).
    d->net->check_delivery(*rt.boot, [d] { d->progress(); }, [](int r) { return peer_failed(r); });
  }
  {
    std::lock_guard<std::mutex> guard(rt.devices_mutex);
    remove_pool_owner(d);
    for (size_t i = 0; i < rt.devices.size(); ++i)
      if (rt.devices[i] == d) {
        rt.devices.erase(rt.devices.begin() + static_cast<long>(i));
        break;
      }
  }
  // Endpoints the program did not free go with their device.
  for (auto& slot : rt.endpoints) {
    endpoint* ep = slot.load(std::memory_order_acquire);
    if (ep && ep->dev == d && ep != rt.barrier_ep) endpoint_destroy(ep);
  }
  delete d;
  --LCI_NUM_DEVICES;
}

namespace {
endpoint* make_endpoint(device* d, const plist& p, uint32_t index) {
  const int n = LCI_NUM_PROCESSES;
  auto* ep = new endpoint(n);
  ep->gfence_round.reset(new std::atomic<uint32_t>[static_cast<size_t>(n)]);
  ep->gfence_issued.reset(new std::atomic<uint64_t>[static_cast<size_t>(n)]);
  for (int r = 0; r < n; ++r) {
    ep->gfence_round[r].store(0, std::memory_order_relaxed);
    ep->gfence_issued[r].store(0, std::memory_order_relaxed);
  }
  ep->index = index;
  ep->dev = d;
  ep->match_type = p.match_type;
  ep->send_rank_max = static_cast<uint32_t>(n - 1);
  ep->recv_rank_max = p.match_type == LCI_MATCH_RANKTAG ? static_cast<uint32_t>(n - 1) : UINT32_MAX;
  ep->medium_max = static_cast<uint32_t>(settings().medium_size);
  ep->cmd_comp_type = p.cmd_comp_type;
  ep->msg_comp_type = p.msg_comp_type;
  ep->default_comp = p.default_comp;
  ep->match_rank = p.match_rank && p.match_type != LCI_MATCH_TAG;
  ep->tag_mask = p.match_tag ? 0xffffu : 0u;
  ep->wide_tags = p.wide_tags;
  ep->target_context = p.target_context;
  ep->lookup_comp = p.lookup_comp;
  g_runtime->endpoints[index].store(ep, std::memory_order_release);
  return ep;
}
}  // namespace

endpoint* endpoint_create(device* d, const plist& p) {
  runtime& rt = *g_runtime;
  if (rt.next_endpoint_index >= static_cast<uint32_t>(LCI_MAX_ENDPOINTS))
    fatal("LCI_endpoint_init: more than LCI_MAX_ENDPOINTS (%d) endpoints created",
          LCI_MAX_ENDPOINTS);
  endpoint* ep = make_endpoint(d, p, rt.next_endpoint_index++);
  // Collective: no peer sends to endpoint k before every rank has it.
  rt.boot->barrier();
  return ep;
}

void endpoint_destroy(endpoint* ep) {
  g_runtime->endpoints[ep->index].store(nullptr, std::memory_order_release);
  ep->magic = 0;
  ep->retire();
}

namespace {
std::mutex g_users_mutex;
int g_users = 0;
}  // namespace

bool runtime_acquire() {
  std::lock_guard<std::mutex> g(g_users_mutex);
  return g_users++ == 0;
}

bool runtime_release() {
  std::lock_guard<std::mutex> g(g_users_mutex);
  if (g_users == 0) fatal("LCI: the runtime was finalized more often than initialized");
  return --g_users == 0;
}

void runtime_initialize() {
  config_parse();
#ifdef LCI_PROFILE
  g_print_profile = settings().print_profile;
#endif
  g_runtime = new runtime;
  runtime& rt = *g_runtime;
  rt.boot = &bootstrap::acquire();
  LCI_RANK = rt.boot->rank();
  LCI_NUM_PROCESSES = rt.boot->size();
  g_nranks = static_cast<unsigned>(LCI_NUM_PROCESSES);
  peer_failure_initialize(LCI_NUM_PROCESSES, settings().peer_failure_continue);
  if (settings().peer_failure_continue) rt.boot->survive_failures();
  log_set_rank(LCI_RANK);
  // As in LCI 1.7.9: programs may use LCT's logging after LCI_initialize.
  LCT_init();
  LCT_set_rank(LCI_RANK);
  LCI_NUM_DEVICES = 0;

  device* d = device_create();
  LCI_UR_DEVICE = reinterpret_cast<LCI_device_t>(d);
  auto* ur_cq = new comp_queue(static_cast<size_t>(LCI_MAX_QUEUE_LENGTH));
  comp_registry::add(ur_cq);
  LCI_UR_CQ = static_cast<comp_base*>(ur_cq);
  plist barrier_plist;
  barrier_plist.msg_comp_type = LCI_COMPLETION_SYNC;
  barrier_plist.cmd_comp_type = LCI_COMPLETION_NONE;
  rt.barrier_ep = make_endpoint(d, barrier_plist, barrier_endpoint_index);
  plist defaults;
  defaults.default_comp = LCI_UR_CQ;
  LCI_UR_ENDPOINT = reinterpret_cast<LCI_endpoint_t>(endpoint_create(d, defaults));
  g_initialized.store(true, std::memory_order_release);
}

void runtime_finalize() {
  runtime& rt = *g_runtime;
  g_initialized.store(false, std::memory_order_release);
  endpoint_destroy(reinterpret_cast<endpoint*>(LCI_UR_ENDPOINT));
  LCI_UR_ENDPOINT = nullptr;
  endpoint_destroy(rt.barrier_ep);
  rt.barrier_ep = nullptr;
  comp_registry::retire(static_cast<comp_base*>(LCI_UR_CQ));
  LCI_UR_CQ = nullptr;
  // Devices the program did not free go too, LCI_UR_DEVICE last.
  while (!rt.devices.empty()) device_destroy(rt.devices.back());
  LCI_UR_DEVICE = nullptr;
  for (comp_sync* c : rt.abandoned_syncs) delete c;
  free_handlers();
  peer_failure_finalize();
  delete g_runtime;
  g_runtime = nullptr;
  bootstrap::release();
  LCT_fina();
}

}  // namespace lci

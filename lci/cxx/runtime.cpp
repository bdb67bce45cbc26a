// The LCI 2 interface: the process, runtimes, devices, endpoints, packet
// pools, matching engines, memory registration, progress (impl.hpp).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "lci.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/core/barrier.hpp"
#include "lci/core/config.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/reg_types.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/state_dump.hpp"
#include "lci/cxx/impl.hpp"
#include "lci/util/log.hpp"

namespace lci {

char g_target_marker[2];
allocator_default_t g_allocator_default;
const char* DEFAULT_NAME = "lci-default";

void* allocator_default_t::allocate(size_t size) { return std::malloc(size ? size : 1); }
void allocator_default_t::deallocate(void* ptr) { std::free(ptr); }

const char* get_errorcode_str(errorcode_t e) {
  switch (e) {
    case errorcode_t::done_min: return "done_min";
    case errorcode_t::done: return "done";
    case errorcode_t::done_backlog: return "done_backlog";
    case errorcode_t::done_max: return "done_max";
    case errorcode_t::posted_min: return "posted_min";
    case errorcode_t::posted: return "posted";
    case errorcode_t::posted_backlog: return "posted_backlog";
    case errorcode_t::posted_max: return "posted_max";
    case errorcode_t::retry_min: return "retry_min";
    case errorcode_t::retry: return "retry";
    case errorcode_t::retry_init: return "retry_init";
    case errorcode_t::retry_lock: return "retry_lock";
    case errorcode_t::retry_nopacket: return "retry_nopacket";
    case errorcode_t::retry_nomem: return "retry_nomem";
    case errorcode_t::retry_backlog: return "retry_backlog";
    case errorcode_t::retry_max: return "retry_max";
    case errorcode_t::fatal: return "fatal";
  }
  return "unknown";
}

const char* get_net_opcode_str(net_opcode_t op) {
  switch (op) {
    case net_opcode_t::SEND: return "SEND";
    case net_opcode_t::RECV: return "RECV";
    case net_opcode_t::WRITE: return "WRITE";
    case net_opcode_t::REMOTE_WRITE: return "REMOTE_WRITE";
    case net_opcode_t::READ: return "READ";
    case net_opcode_t::ERROR: return "ERROR";
    case net_opcode_t::FETCH_ADD: return "FETCH_ADD";
  }
  return "unknown";
}

namespace {
const char* algorithm_str(int a) {
  switch (a) {
    case 0: return "none";
    case 1: return "direct";
    case 2: return "tree";
    case 3: return "ring";
  }
  return "unknown";
}
}  // namespace

const char* get_broadcast_algorithm_str(broadcast_algorithm_t a) {
  return algorithm_str(static_cast<int>(a));
}
const char* get_reduce_scatter_algorithm_str(broadcast_algorithm_t a) {
  return algorithm_str(static_cast<int>(a));
}
const char* get_allreduce_algorithm_str(broadcast_algorithm_t a) {
  return algorithm_str(static_cast<int>(a));
}
const char* get_reduce_scatter_algorithm_str(reduce_scatter_algorithm_t a) {
  return algorithm_str(static_cast<int>(a));
}
const char* get_allreduce_algorithm_str(allreduce_algorithm_t a) {
  return algorithm_str(static_cast<int>(a));
}

namespace detail {
void throw_empty(const char* what) {
  throw std::runtime_error(std::string("lci::") + what +
                           "_t: the handle is empty (p_impl is nullptr)");
}
runtime_attr_t attr_of(const runtime_impl_t* p) { return p->attr; }
packet_pool_attr_t attr_of(const packet_pool_impl_t* p) { return p->attr; }
matching_engine_attr_t attr_of(const matching_engine_impl_t* p) { return p->attr; }
net_context_attr_t attr_of(const net_context_impl_t* p) { return p->attr; }
device_attr_t attr_of(const device_impl_t* p) { return p->attr; }
mr_attr_t attr_of(const mr_impl_t* p) { return p->attr; }
endpoint_attr_t attr_of(const endpoint_impl_t* p) { return p->attr; }
}  // namespace detail

// ---- the process -------------------------------------------------------------------

runtime_impl_t* g_default_runtime = nullptr;
device_impl_t* g_default_device = nullptr;
lci::device* g_default_core = nullptr;
std::atomic<long> g_progress_slow{1};

namespace {
// g_default_device (and g_default_core, and g_progress_slow's count of a
// missing default device) follow the global runtime's default device.
void sync_default_device() {
  device_impl_t* const old = g_default_device;
  g_default_device = g_default_runtime ? g_default_runtime->default_device : nullptr;
  g_default_core = g_default_device ? g_default_device->core : nullptr;
  if (old == nullptr && g_default_device != nullptr)
    g_progress_slow.fetch_sub(1, std::memory_order_release);
  else if (old != nullptr && g_default_device == nullptr)
    g_progress_slow.fetch_add(1, std::memory_order_release);
}
}  // namespace

namespace {

std::mutex g_global_mutex;
int g_global_refs = 0;
bootstrap::bootstrap* g_boot = nullptr;
global_attr_t* g_default_attr = nullptr;

// The compiled-in defaults: an attribute a program leaves at its default
// lets the core's own setting (environment, docs/configuration.md) decide.
global_attr_t builtin_defaults() {
  global_attr_t a{};
  a.packet_return_threshold = 4096;
  a.imm_nbits_tag = 16;
  a.imm_nbits_rcomp = 15;
  a.alloc_default_device = true;
  a.alloc_default_packet_pool = true;
  a.alloc_default_matching_engine = true;
  a.packet_size = LCI_PACKET_SIZE_DEFAULT;
  a.npackets = LCI_PACKET_NUM_DEFAULT;
  a.matching_engine_type = attr_matching_engine_type_t::map;
  a.sync_threshold = 1;
  a.zero_copy_am = false;
  a.cq_type = attr_cq_type_t::lcrq;
  a.cq_default_length = 65536;
  a.backend = attr_backend_t::ofi;
  a.ofi_provider_name = "";
  a.max_msg_size = LCI_USE_MAX_SINGLE_MESSAGE_SIZE_DEFAULT;
  a.max_inject_size = 64;
  a.ibv_gid_idx = -1;
  a.ibv_force_gid_auto_select = false;
  a.ibv_odp_strategy = attr_ibv_odp_strategy_t::none;
  a.ibv_prefetch_strategy = attr_ibv_prefetch_strategy_t::none;
  a.net_max_sends = LCI_BACKEND_MAX_SENDS_DEFAULT;
  a.net_max_recvs = LCI_BACKEND_MAX_RECVS_DEFAULT;
  a.net_max_cqes = LCI_BACKEND_MAX_CQES_DEFAULT;
  a.ofi_lock_mode = 0;
  a.alloc_default_endpoint = true;
  a.ibv_td_strategy = attr_ibv_td_strategy_t::per_qp;
  return a;
}

// The defaults as the environment sets them: the core's settings (LCI_ATTR_<name>
// are LCI 2's names of them, lci/core/settings.def) decide what the
// built-in defaults leave open.
global_attr_t defaults_from_environment() {
  config c;
  std::string error;
  if (!config_read([](const char* name) -> const char* { return std::getenv(name); }, c, error)) {
    LCI_WARN("lci::global_initialize: %s; the built-in defaults are used", error.c_str());
    c = config_defaults();
  }
  global_attr_t a = builtin_defaults();
  a.packet_size = static_cast<size_t>(c.packet_size);
  a.npackets = static_cast<size_t>(c.server_num_pkts);
  a.net_max_recvs = static_cast<size_t>(c.server_max_recvs);
  a.net_max_sends = static_cast<size_t>(c.server_max_sends);
  a.net_max_cqes = static_cast<size_t>(c.server_max_cqes);
  a.sync_threshold = c.attr_sync_threshold;
  a.zero_copy_am = c.attr_zero_copy_am;
  a.cq_default_length = c.attr_cq_default_length;
  a.alloc_default_device = c.attr_alloc_default_device;
  a.alloc_default_endpoint = c.attr_alloc_default_endpoint;
  return a;
}

// What the environment made the defaults (global_initialize): a device
// whose packet count or receive depth differs was given its own.
global_attr_t* g_env_attr = nullptr;

[[noreturn]] void no_global(const char* call) {
  throw std::runtime_error(std::string("lci::") + call +
                           ": LCI is not initialized (call lci::global_initialize or "
                           "lci::g_runtime_init first)");
}

}  // namespace

void global_initialize() {
  std::lock_guard<std::mutex> g(g_global_mutex);
  if (g_global_refs++ > 0) return;
  g_boot = &bootstrap::acquire();
  g_default_attr = new global_attr_t(defaults_from_environment());
  g_env_attr = new global_attr_t(*g_default_attr);
}

void global_finalize() {
  std::lock_guard<std::mutex> g(g_global_mutex);
  if (g_global_refs == 0)
    throw std::runtime_error("lci::global_finalize: called more often than global_initialize");
  if (--g_global_refs > 0) return;
  delete g_default_attr;
  g_default_attr = nullptr;
  delete g_env_attr;
  g_env_attr = nullptr;
  g_boot = nullptr;
  bootstrap::release();
}

int get_rank_me() {
  if (!g_boot) no_global("get_rank_me");
  return g_boot->rank();
}

int get_rank_n() {
  if (!g_boot) no_global("get_rank_n");
  return g_boot->size();
}

global_attr_t get_g_default_attr() {
  std::lock_guard<std::mutex> g(g_global_mutex);
  if (!g_default_attr) no_global("get_g_default_attr");
  return *g_default_attr;
}

void set_g_default_attr(const global_attr_t& attr) {
  std::lock_guard<std::mutex> g(g_global_mutex);
  if (!g_default_attr) no_global("set_g_default_attr");
  *g_default_attr = attr;
}

runtime_t get_g_runtime() { return runtime_t(static_cast<void*>(g_default_runtime)); }

runtime_impl_t* runtime_of(runtime_t rt) {
  if (rt.p_impl) return rt.p_impl;
  runtime_impl_t* r = g_default_runtime;
  if (__builtin_expect(r == nullptr, 0))
    throw std::runtime_error(
        "lci: no runtime (call lci::g_runtime_init, or pass .runtime() an allocated one)");
  return r;
}

device_impl_t* device_of(device_t d, runtime_impl_t* rt) {
  if (d.p_impl) return d.p_impl;
  device_impl_t* dev = rt->default_device;
  if (__builtin_expect(dev == nullptr, 0))
    throw std::runtime_error(
        "lci: the runtime has no default device (it was allocated with "
        "alloc_default_device(false)): pass .device()");
  return dev;
}

// ---- runtimes ------------------------------------------------------------------------

namespace detail {

namespace {

// The runtime's core, shared with the C API (runtime_acquire).
void core_acquire() {
  if (!runtime_acquire()) return;
  runtime_initialize();
  runtime_barrier();
  dump_signal_start(settings().dump_signal);
}

void core_release() {
  if (!runtime_release()) return;
  if (!g_any_peer_failed.load(std::memory_order_acquire)) runtime_barrier();
  dump_signal_stop();
  runtime_finalize();
}

// Core endpoints of `core` for the matching policies in `policies` (bit i:
// matching policy i), into out[i]: all four for a program's, rank_tag only
// for the collectives'.
void make_core_endpoints(lci::device* core, unsigned policies, lci::endpoint* (&out)[4]) {
  for (int policy = 0; policy < 4; ++policy) {
    if ((policies & (1u << policy)) == 0) continue;
    plist p;
    p.match_rank = (policy & 1) != 0;  // rank_only, rank_tag
    p.match_tag = (policy & 2) != 0;   // tag_only, rank_tag
    p.wide_tags = true;                // tags up to 2^32-1 (max_tag)
    p.cmd_comp_type = comp_type_any;
    p.msg_comp_type = comp_type_any;
    p.default_comp = nullptr;
    p.target_context = am_marker();
    p.lookup_comp = &lookup_rcomp;
    out[policy] = endpoint_create(core, p);
  }
}

void destroy_core_endpoints(lci::endpoint* (&eps)[4]) {
  for (lci::endpoint*& ep : eps) {
    if (ep) endpoint_destroy(ep);
    ep = nullptr;
  }
}

// An endpoint of d with core endpoints of its own (make_core_endpoints).
endpoint_impl_t* new_endpoint(device_impl_t* d, const char* name, void* user_context, int uid,
                              unsigned policies) {
  auto* e = new endpoint_impl_t;
  e->device = d;
  e->attr.uid = uid;
  e->attr.name = name ? name : DEFAULT_NAME;
  e->attr.user_context = user_context;
  make_core_endpoints(d->core, policies, e->by_policy);
  e->owns = true;
  return e;
}

// A program's endpoint: the runtime's shared core endpoints, so that what
// is sent from any endpoint matches a receive posted at any other.
endpoint_impl_t* make_endpoint(device_impl_t* d, const char* name, void* user_context) {
  auto* e = new endpoint_impl_t;
  e->device = d;
  e->attr.uid = static_cast<int>(d->endpoints.size());
  e->attr.name = name ? name : DEFAULT_NAME;
  e->attr.user_context = user_context;
  for (int policy = 0; policy < 4; ++policy) e->by_policy[policy] = d->rt->shared.by_policy[policy];
  d->endpoints.push_back(e);
  return e;
}

void free_endpoint_impl(endpoint_impl_t* e) {
  if (e->owns) destroy_core_endpoints(e->by_policy);
  delete e;
}

void destroy_device(device_impl_t* d) {
  // Nothing may be left in the backlog: it is posted before the device goes.
  while (d->backlog_size.load(std::memory_order_acquire) != 0) progress_device(d);
  for (endpoint_impl_t* e : d->endpoints) free_endpoint_impl(e);
  d->endpoints.clear();
  free_endpoint_impl(d->coll_endpoint);
  d->coll_endpoint = nullptr;
  runtime_impl_t::shared_core& s = d->rt->shared;
  if (--s.devices == 0) {
    for (matching_engine_impl_t* me : d->rt->engines) destroy_core_endpoints(me->by_policy);
    destroy_core_endpoints(s.by_policy);
    device_destroy(s.core);
    s.core = nullptr;
  }
  delete d;
}

}  // namespace

runtime_t alloc_runtime(const runtime_args& a, bool global) {
  if (global && g_default_runtime)
    throw std::runtime_error("lci::g_runtime_init: the global runtime exists already");
  global_initialize();
  const global_attr_t defaults = get_g_default_attr();
  core_acquire();
  auto* rt = new runtime_impl_t;
  alloc_net_states(rt);
  rt->global = global;
  runtime_attr_t& at = rt->attr;
  at.packet_return_threshold =
      (a.set_mask & 1u) ? a.packet_return_threshold : defaults.packet_return_threshold;
  at.imm_nbits_tag = (a.set_mask & 2u) ? a.imm_nbits_tag : defaults.imm_nbits_tag;
  at.imm_nbits_rcomp = (a.set_mask & 4u) ? a.imm_nbits_rcomp : defaults.imm_nbits_rcomp;
  at.alloc_default_device =
      (a.set_mask & 8u) ? a.alloc_default_device : defaults.alloc_default_device;
  at.alloc_default_packet_pool =
      (a.set_mask & 16u) ? a.alloc_default_packet_pool : defaults.alloc_default_packet_pool;
  at.alloc_default_matching_engine = (a.set_mask & 32u) ? a.alloc_default_matching_engine
                                                        : defaults.alloc_default_matching_engine;
  // Tags of up to 32 bits, the lower 16 in the message header (docs/lci2.md);
  // remote completion handles in a 64-bit field.
  at.max_tag = max_tag;
  at.max_imm_tag = max_imm_tag;
  at.max_rcomp = 0x7fffffffu;
  at.max_imm_rcomp = 0x7fffffffu;
  at.name = a.name ? a.name : DEFAULT_NAME;
  at.user_context = a.user_context;
  auto* nc = new net_context_impl_t;
  nc->attr.backend = defaults.backend;
  nc->attr.ofi_provider_name = defaults.ofi_provider_name;
  nc->attr.max_msg_size = defaults.max_msg_size;
  nc->attr.max_inject_size = defaults.max_inject_size;
  nc->attr.ibv_gid_idx = defaults.ibv_gid_idx;
  nc->attr.support_putimm = true;
  nc->attr.atomic_scope = net_atomic_scope_t::GLOBAL;  // executed by the target's CPU (net.cpp)
  nc->attr.name = DEFAULT_NAME;
  rt->default_net_context = nc;
  if (at.alloc_default_packet_pool) {
    auto* pool = new packet_pool_impl_t;
    pool->rt = rt;
    pool->attr.packet_size = static_cast<size_t>(LCI_PACKET_SIZE);
    pool->attr.npackets = defaults.npackets;
    pool->attr.name = DEFAULT_NAME;
    rt->default_packet_pool = pool;
  }
  if (at.alloc_default_matching_engine) {
    auto* me = new matching_engine_impl_t;
    me->attr.matching_engine_type = defaults.matching_engine_type;
    me->attr.name = DEFAULT_NAME;
    rt->default_matching_engine = me;
  }
  if (global) g_default_runtime = rt;
  if (at.alloc_default_device) {
    device_args da{};
    da.runtime = runtime_t(static_cast<void*>(rt));
    rt->default_device = detail::alloc_device(da).p_impl;
  }
  sync_default_device();
  return runtime_t(static_cast<void*>(rt));
}

void free_runtime(runtime_t* runtime, bool global) {
  runtime_impl_t* rt = global ? g_default_runtime : (runtime ? runtime->p_impl : nullptr);
  if (!rt)
    throw std::runtime_error(global ? "lci::g_runtime_fina: there is no global runtime"
                                    : "lci::free_runtime: the runtime handle is empty");
  // Devices the program did not free go with their runtime, the default last.
  while (!rt->devices.empty()) {
    device_impl_t* d = rt->devices.back();
    rt->devices.pop_back();
    destroy_device(d);
  }
  rt->default_device = nullptr;
  sync_default_device();
  delete rt->default_packet_pool;
  delete rt->default_matching_engine;
  for (matching_engine_impl_t* me : rt->engines) delete me;  // their endpoints went with the core
  rt->engines.clear();
  delete rt->default_net_context;
  free_net_states(rt);  // no core device is left to deliver to them
  if (g_default_runtime == rt) g_default_runtime = nullptr;
  sync_default_device();
  delete rt;
  if (runtime) *runtime = runtime_t();
  core_release();
  global_finalize();
}

// ---- devices, endpoints ----------------------------------------------------------------

device_t alloc_device(const device_args& a) {
  runtime_impl_t* rt = runtime_of(a.runtime);
  const global_attr_t defaults = get_g_default_attr();
  const global_attr_t builtin = *g_env_attr;
  auto* d = new device_impl_t;
  d->rt = rt;
  device_attr_t& at = d->attr;
  at.net_max_sends = (a.set_mask & 1u) ? a.net_max_sends : defaults.net_max_sends;
  at.net_max_recvs = (a.set_mask & 2u) ? a.net_max_recvs : defaults.net_max_recvs;
  at.net_max_cqes = (a.set_mask & 4u) ? a.net_max_cqes : defaults.net_max_cqes;
  at.ofi_lock_mode = (a.set_mask & 8u) ? a.ofi_lock_mode : defaults.ofi_lock_mode;
  at.alloc_default_endpoint =
      (a.set_mask & 16u) ? a.alloc_default_endpoint : defaults.alloc_default_endpoint;
  at.ibv_td_strategy = (a.set_mask & 32u) ? a.ibv_td_strategy : defaults.ibv_td_strategy;
  at.name = a.name ? a.name : DEFAULT_NAME;
  at.user_context = a.user_context;
  // A packet count or receive depth the program changed from what the
  // environment made it is the device's own; otherwise the core's settings
  // decide.
  lci::device_options opt;
  packet_pool_impl_t* pool = a.packet_pool.p_impl ? a.packet_pool.p_impl : rt->default_packet_pool;
  const size_t npackets = pool ? pool->attr.npackets : defaults.npackets;
  if (npackets != builtin.npackets) opt.npackets = npackets;
  if (at.net_max_recvs != builtin.net_max_recvs) opt.max_recvs = at.net_max_recvs;
  runtime_impl_t::shared_core& s = rt->shared;
  if (s.core == nullptr) {
    // The runtime's first device: the core device and the shared matching
    // endpoints (collective: every rank makes them in the same order).
    s.core = device_create(opt);
    s.core->net_layer = rt;
    d->core = s.core;
    make_core_endpoints(s.core, 0xfu, s.by_policy);
    for (matching_engine_impl_t* me : rt->engines) make_core_endpoints(s.core, 0xfu, me->by_policy);
  }
  d->core = s.core;
  d->nranks = static_cast<uint32_t>(LCI_NUM_PROCESSES);
  d->eager_max = static_cast<size_t>(LCI_MEDIUM_SIZE);
  ++s.devices;
  at.uid = static_cast<int>(rt->devices.size());
  rt->devices.push_back(d);
  if (pool && pool->device == nullptr) pool->device = d;
  if (at.alloc_default_endpoint) d->default_endpoint = make_endpoint(d, nullptr, nullptr);
  d->coll_endpoint = new_endpoint(d, "lci-collectives", nullptr, -1,
                                  1u << static_cast<unsigned>(matching_policy_t::rank_tag));
  return device_t(static_cast<void*>(d));
}

void free_device(device_t* device, runtime_t runtime) {
  if (!device || !device->p_impl) throw std::runtime_error("lci::free_device: empty handle");
  device_impl_t* d = device->p_impl;
  runtime_impl_t* rt = d->rt;
  for (size_t i = 0; i < rt->devices.size(); ++i)
    if (rt->devices[i] == d) {
      rt->devices.erase(rt->devices.begin() + static_cast<long>(i));
      break;
    }
  if (rt->default_device == d) rt->default_device = nullptr;
  sync_default_device();
  for (packet_pool_impl_t* pool : {rt->default_packet_pool})
    if (pool && pool->device == d) pool->device = rt->devices.empty() ? nullptr : rt->devices[0];
  destroy_device(d);
  *device = device_t();
  (void)runtime;
}

endpoint_t alloc_endpoint(device_t device, const char* name, void* user_context,
                          runtime_t runtime) {
  device_impl_t* d = device_of(device, runtime_of(runtime));
  endpoint_impl_t* e = make_endpoint(d, name, user_context);
  if (!d->default_endpoint) d->default_endpoint = e;
  return endpoint_t(static_cast<void*>(e));
}

void free_endpoint(endpoint_t* endpoint, runtime_t runtime) {
  if (!endpoint || !endpoint->p_impl) throw std::runtime_error("lci::free_endpoint: empty handle");
  endpoint_impl_t* e = endpoint->p_impl;
  device_impl_t* d = e->device;
  for (size_t i = 0; i < d->endpoints.size(); ++i)
    if (d->endpoints[i] == e) {
      d->endpoints.erase(d->endpoints.begin() + static_cast<long>(i));
      break;
    }
  if (d->default_endpoint == e) d->default_endpoint = nullptr;
  free_endpoint_impl(e);
  *endpoint = endpoint_t();
  (void)runtime;
}

endpoint_t get_default_endpoint(device_t device, runtime_t runtime) {
  return endpoint_t(static_cast<void*>(device_of(device, runtime_of(runtime))->default_endpoint));
}
device_t get_default_device(runtime_t runtime) {
  return device_t(static_cast<void*>(runtime_of(runtime)->default_device));
}
net_context_t get_default_net_context(runtime_t runtime) {
  return net_context_t(static_cast<void*>(runtime_of(runtime)->default_net_context));
}
packet_pool_t get_default_packet_pool(runtime_t runtime) {
  return packet_pool_t(static_cast<void*>(runtime_of(runtime)->default_packet_pool));
}
matching_engine_t get_default_matching_engine(runtime_t runtime) {
  return matching_engine_t(static_cast<void*>(runtime_of(runtime)->default_matching_engine));
}

net_context_t alloc_net_context(const char* name, void* user_context, runtime_t runtime) {
  runtime_impl_t* rt = runtime_of(runtime);
  auto* nc = new net_context_impl_t;
  nc->attr = rt->default_net_context->attr;
  nc->attr.name = name ? name : DEFAULT_NAME;
  nc->attr.user_context = user_context;
  return net_context_t(static_cast<void*>(nc));
}

void free_net_context(net_context_t* ctx, runtime_t runtime) {
  if (!ctx || !ctx->p_impl) throw std::runtime_error("lci::free_net_context: empty handle");
  if (ctx->p_impl != runtime_of(runtime)->default_net_context) delete ctx->p_impl;
  *ctx = net_context_t();
}

// ---- packet pools ------------------------------------------------------------------------

packet_pool_t alloc_packet_pool(size_t packet_size, size_t npackets, unsigned set_mask,
                                const char* name, void* user_context, runtime_t runtime) {
  runtime_impl_t* rt = runtime_of(runtime);
  const global_attr_t defaults = get_g_default_attr();
  if ((set_mask & 1u) && packet_size != static_cast<size_t>(LCI_PACKET_SIZE))
    LCI_WARN("lci::alloc_packet_pool: packet_size %zu ignored: every packet has LCI_PACKET_SIZE "
             "(%d) bytes (set LCI_PACKET_SIZE in the environment)",
             packet_size, LCI_PACKET_SIZE);
  auto* pool = new packet_pool_impl_t;
  pool->rt = rt;
  pool->attr.packet_size = static_cast<size_t>(LCI_PACKET_SIZE);
  pool->attr.npackets = (set_mask & 2u) ? npackets : defaults.npackets;
  pool->attr.name = name ? name : DEFAULT_NAME;
  pool->attr.user_context = user_context;
  return packet_pool_t(static_cast<void*>(pool));
}

void free_packet_pool(packet_pool_t* pool, runtime_t runtime) {
  if (!pool || !pool->p_impl) throw std::runtime_error("lci::free_packet_pool: empty handle");
  runtime_impl_t* rt = pool->p_impl->rt;
  if (rt->default_packet_pool == pool->p_impl) rt->default_packet_pool = nullptr;
  delete pool->p_impl;
  *pool = packet_pool_t();
  (void)runtime;
}

void register_packet_pool(packet_pool_t pool, device_t device, runtime_t runtime) {
  if (!pool.p_impl) throw std::runtime_error("lci::register_packet_pool: empty pool");
  device_impl_t* d = device_of(device, runtime_of(runtime));
  if (!pool.p_impl->device) pool.p_impl->device = d;
}

void deregister_packet_pool(packet_pool_t pool, device_t device, runtime_t runtime) {
  if (!pool.p_impl) throw std::runtime_error("lci::deregister_packet_pool: empty pool");
  device_impl_t* d = device_of(device, runtime_of(runtime));
  if (pool.p_impl->device == d) pool.p_impl->device = nullptr;
}

namespace {
lci::device* pool_device(packet_pool_t pool, runtime_t runtime) {
  runtime_impl_t* rt = runtime_of(runtime);
  packet_pool_impl_t* p = pool.p_impl ? pool.p_impl : rt->default_packet_pool;
  device_impl_t* d = p && p->device ? p->device : rt->default_device;
  if (!d && !rt->devices.empty()) d = rt->devices.front();
  if (!d) throw std::runtime_error("lci::get_upacket: the runtime has no device yet");
  return d->core;
}
}  // namespace

void* get_upacket(packet_pool_t pool, runtime_t runtime) {
  lci::device* d = pool_device(pool, runtime);
  packet* p = d->get_send_packet();
  if (!p) return nullptr;
  lci::device::hand_out(p);
  return p->payload();
}

void put_upacket(void* buffer, runtime_t) {
  lci::device* owner = foreign_pool_owner(buffer);
  if (!owner)
    throw std::runtime_error("lci::put_upacket: the buffer is not a packet of any device");
  owner->put_packet(static_cast<packet*>(owner->packets->packet_of(buffer)));
}

size_t get_max_bcopy_size(packet_pool_t, runtime_t) {
  return static_cast<size_t>(LCI_MEDIUM_SIZE);
}

// ---- matching engines ----------------------------------------------------------------------

matching_engine_t alloc_matching_engine(attr_matching_engine_type_t type, bool set,
                                        const char* name, void* user_context, runtime_t runtime) {
  runtime_impl_t* rt = runtime_of(runtime);
  auto* me = new matching_engine_impl_t;
  me->attr.matching_engine_type = set ? type : get_g_default_attr().matching_engine_type;
  me->attr.name = name ? name : DEFAULT_NAME;
  me->attr.user_context = user_context;
  me->rt = rt;
  if (rt->shared.core) make_core_endpoints(rt->shared.core, 0xfu, me->by_policy);
  rt->engines.push_back(me);
  return matching_engine_t(static_cast<void*>(me));
}

void free_matching_engine(matching_engine_t* engine, runtime_t runtime) {
  if (!engine || !engine->p_impl)
    throw std::runtime_error("lci::free_matching_engine: empty handle");
  runtime_impl_t* rt = runtime_of(runtime);
  matching_engine_impl_t* me = engine->p_impl;
  if (rt->default_matching_engine == me) rt->default_matching_engine = nullptr;
  if (me->rt) {
    destroy_core_endpoints(me->by_policy);
    auto& v = me->rt->engines;
    v.erase(std::remove(v.begin(), v.end(), me), v.end());
  }
  delete me;
  *engine = matching_engine_t();
}

matching_entry_val_t matching_engine_insert(matching_engine_t engine, matching_entry_key_t key,
                                            matching_entry_val_t value,
                                            matching_entry_type_t type, runtime_t runtime) {
  matching_engine_impl_t* me =
      engine.p_impl ? engine.p_impl : runtime_of(runtime)->default_matching_engine;
  if (!me) throw std::runtime_error("lci::matching_engine_insert: no matching engine");
  std::lock_guard<std::mutex> g(me->lock);
  // The oldest entry of this key decides: all entries of one key share a kind.
  for (auto it = me->entries.begin(); it != me->entries.end(); ++it) {
    if (it->key != key) continue;
    if (it->type == type) break;
    matching_entry_val_t v = it->value;
    me->entries.erase(it);
    return v;
  }
  me->entries.push_back({key, value, type});
  return nullptr;
}

// ---- allocator ----------------------------------------------------------------------------

void set_allocator(allocator_base_t* allocator, runtime_t runtime) {
  runtime_of(runtime)->allocator.store(allocator ? allocator : &g_allocator_default,
                                       std::memory_order_release);
}

allocator_base_t* get_allocator(runtime_t runtime) {
  return runtime_of(runtime)->allocator.load(std::memory_order_acquire);
}

// ---- memory registration ---------------------------------------------------------------------

mr_t register_memory(void* address, size_t size, device_t device, runtime_t runtime) {
  device_impl_t* d = device_of(device, runtime_of(runtime));
  LCI_segment_t seg = segment_register(*d->core, address, size);
  if (!seg)
    throw std::runtime_error("lci::register_memory: the network refused to register " +
                             std::to_string(size) + " bytes");
  auto* m = new mr_impl_t;
  m->device = d;
  m->segment = seg;
  m->address = address;
  m->size = size;
  m->attr.name = DEFAULT_NAME;
  return mr_t(static_cast<void*>(m));
}

void deregister_memory(mr_t* mr, runtime_t) {
  if (!mr || mr->is_empty()) throw std::runtime_error("lci::deregister_memory: empty handle");
  mr_impl_t* m = mr->p_impl;
  segment_deregister(m->segment);
  delete m;
  *mr = mr_t();
}

rmr_t get_rmr(mr_t mr, runtime_t) {
  if (mr.is_empty()) throw std::runtime_error("lci::get_rmr: empty handle");
  const mr_impl_t* m = mr.p_impl;
  const LCII_mr_t* seg = m->segment;
  rmr_t r;
  r.base = seg->base;
  r.mr_base = reinterpret_cast<uintptr_t>(seg);
  r.opaque_rkey = seg->rkey;
  r.length = seg->length;
  r.group = static_cast<uint32_t>(seg->group);
  r.flags = seg->virt ? 1u : 0u;
  return r;
}

// ---- progress ----------------------------------------------------------------------------------

namespace {

[[gnu::noinline, gnu::cold]] error_t progress_slow(device_t device, runtime_t runtime) {
  return progress_device(device_of(device, runtime_of(runtime))) ? errorcode_t::done
                                                                  : errorcode_t::retry;
}

}  // namespace

// Run once per poll of every wait loop: the usual call (the global
// runtime's default device, no backlog) is the core's idle check plus a
// few loads, with no frame of its own.
error_t progress(device_t device, endpoint_t, runtime_t runtime) {
  device_impl_t* d = device.p_impl;
  if (d == nullptr) {
    d = g_default_device;
    if (__builtin_expect(d == nullptr || runtime.p_impl != nullptr, 0))
      return progress_slow(device, runtime);
  } else if (__builtin_expect(runtime.p_impl == nullptr && g_default_runtime == nullptr, 0)) {
    return progress_slow(device, runtime);  // runtime_of's error
  }
  // The backlog and graphs' retried nodes are progress_device's (slow path).
  if (__builtin_expect(d->backlog_size.load(std::memory_order_acquire) != 0 ||
                           g_graph_retries.load(std::memory_order_relaxed) != 0,
                       0))
    return progress_slow(device_t(static_cast<void*>(d)), runtime);
  return d->core->progress() ? errorcode_t::done : errorcode_t::retry;
}

error_t progress_default() {
  if (__builtin_expect(g_progress_slow.load(std::memory_order_acquire) != 0, 0))
    return progress_slow(device_t(static_cast<void*>(g_default_device)), runtime_t());
  return g_default_core->progress() ? errorcode_t::done : errorcode_t::retry;
}

error_t test_drained(device_t device, runtime_t runtime) {
  device_impl_t* d = device_of(device, runtime_of(runtime));
  return d->backlog_size.load(std::memory_order_acquire) == 0 && d->core->backlog_empty()
             ? errorcode_t::done
             : errorcode_t::retry;
}

void wait_drained(device_t device, runtime_t runtime) {
  device_impl_t* d = device_of(device, runtime_of(runtime));
  while (test_drained(device_t(static_cast<void*>(d)), runtime).is_retry()) progress_device(d);
}

}  // namespace detail

}  // namespace lci

// The configuration table, its parse into lci::config, its printing, and
// the LCI_* globals of lci.h mirrored from it (see config.hpp).
#include "lci/core/config.hpp"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci.h"
#include "lci/core/config_values.hpp"
#include "lci/core/protocol.hpp"
#include "lci/util/log.hpp"
#include "lci/wait/parking.hpp"

// ---- globals of lci.h (mirrored from lci::g_config by config_parse) --------
int LCI_NUM_PROCESSES = 1;
int LCI_RANK = 0;
int LCI_NUM_DEVICES = 0;
int LCI_MAX_ENDPOINTS = 1024;
int LCI_MAX_TAG = 65535;
int LCI_MEDIUM_SIZE = LCI_PACKET_SIZE_DEFAULT - lci::packet_header_size;
int LCI_IOVEC_SIZE = 1;
size_t LCI_MAX_SINGLE_MESSAGE_SIZE = LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT;
int LCI_DEFAULT_TABLE_LENGTH = 65536;
int LCI_MAX_TABLE_LENGTH = INT_MAX;
int LCI_DEFAULT_QUEUE_LENGTH = 2 * LCI_SERVER_NUM_PKTS_DEFAULT;
int LCI_MAX_QUEUE_LENGTH = 2 * LCI_SERVER_NUM_PKTS_DEFAULT;
int LCI_MAX_SYNC_LENGTH = INT_MAX;
LCI_device_t LCI_UR_DEVICE = nullptr;
LCI_endpoint_t LCI_UR_ENDPOINT = nullptr;
LCI_comp_t LCI_UR_CQ = nullptr;

int LCI_PACKET_RETURN_THRESHOLD = 1024, LCI_IBV_USE_ODP = 0, LCI_TOUCH_LBUFFER = 0,
    LCI_USE_DREG = LCI_USE_DREG_DEFAULT, LCI_IBV_USE_PREFETCH = 0, LCI_PACKET_SIZE = LCI_PACKET_SIZE_DEFAULT,
    LCI_SERVER_NUM_PKTS = LCI_SERVER_NUM_PKTS_DEFAULT,
    LCI_SERVER_MAX_SENDS = LCI_SERVER_MAX_SENDS_DEFAULT,
    LCI_SERVER_MAX_RECVS = LCI_SERVER_MAX_RECVS_DEFAULT,
    LCI_SERVER_MAX_CQES = LCI_SERVER_MAX_CQES_DEFAULT, LCI_SEND_SLOW_DOWN_USEC = 0,
    LCI_RECV_SLOW_DOWN_USEC = 0, LCI_IBV_GID_IDX = -1, LCI_IBV_FORCE_GID_AUTO_SELECT = 0;
bool LCI_IBV_ENABLE_EVENT_POLLING_THREAD = false, LCI_IBV_ENABLE_TD = true,
     LCI_ENABLE_PRG_NET_ENDPOINT = true, LCI_UCX_USE_TRY_LOCK = false,
     LCI_UCX_PROGRESS_FOCUSED = false, LCI_USE_GLOBAL_PACKET_POOL = true;
LCI_rdv_protocol_t LCI_RDV_PROTOCOL = LCI_RDV_WRITEIMM;
uint64_t LCI_BACKEND_TRY_LOCK_MODE = 0, LCI_DEVICE_LOCK_MODE = 0;

namespace lci {

namespace {

// How a row's text is parsed and printed. `derived` rows are never read;
// `text` rows of the bootstrap are recorded as set and checked by it.
enum class kind {
  integer, size, boolean, rdv, try_lock_mode, device_lock_mode, log_level, text, wait_policy,
  backend, derived
};

struct entry {
  const char* name;
  kind type;
  config_category category;
  void* (*field)(config&);  // the member it sets (nullptr: wait policy, see below)
  long long deflt;          // default for numbers
  const char* help;         // for no_effect rows: why nothing changes
};

#define LCI_FIELD(member) [](config& c) -> void* { return &c.member; }

constexpr config_category effective = config_category::effective;
constexpr config_category derived = config_category::derived;
constexpr config_category no_effect = config_category::no_effect;
constexpr config_category boot = config_category::bootstrap;

#ifdef LCI_PROFILE
constexpr config_category profile_category = effective;
#define LCI_PROFILE_HELP "1: print each device's counters when it is freed"
#else
constexpr config_category profile_category = no_effect;
#define LCI_PROFILE_HELP "built without LCI_ENABLE_PROFILE: there are no counters to print"
#endif

// Every setting, its default and a line of help, in print order.
const entry table[] = {
    {"LCI_LOG_LEVEL", kind::log_level, effective, LCI_FIELD(log_threshold), 1, "error|warn|diag|info|debug|trace"},
    {"LCI_LOG_OUTFILE", kind::text, effective, LCI_FIELD(log_outfile), 0, "log destination (file, stdout, stderr; unset: stderr)"},
    {"LCI_MAX_ENDPOINTS", kind::integer, effective, LCI_FIELD(max_endpoints), 1024, "endpoints per process over its lifetime (1 ... 4094)"},
    {"LCI_PACKET_SIZE", kind::integer, effective, LCI_FIELD(packet_size), LCI_PACKET_SIZE_DEFAULT, "medium packet size in bytes (multiple of 64, at least 4160)"},
    {"LCI_MEDIUM_SIZE", kind::derived, derived, LCI_FIELD(medium_size), 0, "largest medium message: LCI_PACKET_SIZE - 64"},
    {"LCI_IOVEC_SIZE", kind::derived, derived, LCI_FIELD(iovec_size), 0, "long buffers per iovec: as many as fit in a medium packet, at most 256"},
    {"LCI_MAX_TAG", kind::derived, derived, LCI_FIELD(max_tag), 0, "largest tag (fixed)"},
    {"LCI_MAX_SYNC_LENGTH", kind::derived, derived, LCI_FIELD(max_sync_length), 0, "largest synchronizer count (fixed)"},
    {"LCI_SERVER_NUM_PKTS", kind::integer, effective, LCI_FIELD(server_num_pkts), LCI_SERVER_NUM_PKTS_DEFAULT, "packets in each device's pool (at least 8)"},
    {"LCI_DEFAULT_QUEUE_LENGTH", kind::integer, effective, LCI_FIELD(default_queue_length), 0, "capacity of LCI_queue_create queues (unset: 2 x LCI_SERVER_NUM_PKTS)"},
    {"LCI_MAX_QUEUE_LENGTH", kind::integer, effective, LCI_FIELD(max_queue_length), 0, "queue capacity (unset or smaller: LCI_DEFAULT_QUEUE_LENGTH)"},
    {"LCI_DEFAULT_TABLE_LENGTH", kind::integer, effective, LCI_FIELD(default_table_length), 65536, "matching-table buckets (at least 1)"},
    {"LCI_MAX_SINGLE_MESSAGE_SIZE", kind::size, effective, LCI_FIELD(max_single_message_size), LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT, "long transfers above it are split"},
    {"LCI_TOUCH_LBUFFER", kind::integer, effective, LCI_FIELD(touch_lbuffer), 0, "non-zero: zero every page of allocated long buffers"},
    {"LCI_SERVER_MAX_RECVS", kind::integer, effective, LCI_FIELD(server_max_recvs), LCI_SERVER_MAX_RECVS_DEFAULT, "receive packets kept posted (at least 1)"},
    {"LCI_USE_DREG", kind::integer, effective, LCI_FIELD(use_dreg), LCI_USE_DREG_DEFAULT, "cache LCI_SEGMENT_ALL registrations (1: where the backend does not pin pages; 0: register per use)"},
    {"LCI_REG_CACHE_MAX_ENTRIES", kind::integer, effective, LCI_FIELD(reg_cache_max_entries), 4096, "registrations a device's cache keeps (least recently used unused ones leave first)"},
    {"LCI_OFI_CQ_DATA_SIZE", kind::integer, effective, LCI_FIELD(ofi_cq_data_size), 0, "libfabric: bytes of immediate data used (0: the provider's; 4: as on 4-byte providers; 8)"},
    {"LCI_OFI_RMA_MESSAGES", kind::boolean, effective, LCI_FIELD(ofi_rma_messages), 1, "libfabric, providers with message authentication (all but shm): puts and gets travel as authenticated messages (0: the provider's RDMA, faster for long transfers, but its requests carry registration keys in clear; every rank must use the same)"},
    {"LCI_BACKEND", kind::backend, effective, LCI_FIELD(backend_request), 0, "ofi|ibv (unset: ibv if an active verbs port exists, else ofi)"},
    {"LCI_IBV_DEVICE", kind::text, effective, LCI_FIELD(ibv_device), 0, "verbs device name (unset: first with an active port)"},
    {"LCI_IBV_PORT", kind::integer, effective, LCI_FIELD(ibv_port), 0, "verbs port number (0: first active)"},
    {"LCI_IBV_GID_IDX", kind::integer, effective, LCI_FIELD(ibv_gid_index), -1, "verbs GID index (-1: automatic)"},
    {"LCI_IBV_GID_INDEX", kind::integer, effective, LCI_FIELD(ibv_gid_index), -1, "same as LCI_IBV_GID_IDX (wins when both are set)"},
    {"LCI_IBV_USE_ODP", kind::integer, effective, LCI_FIELD(ibv_use_odp), 0, "verbs: register with on-demand paging (non-zero)"},
    // Only when set: otherwise LCIX_set_wait_policy's choice (default threads) stays.
    {"LCI_WAIT_POLICY", kind::wait_policy, effective, nullptr, 0, "threads|spin|fibers|tbb (waits in LCI_sync_wait, LCI_queue_wait; unset: LCIX_set_wait_policy's choice)"},
    {"LCI_SHM", kind::boolean, effective, LCI_FIELD(shm), 1, "ranks on one host talk through LCI's native shared-memory transport (0: everything through the network backend)"},
    {"LCI_SHM_CMA", kind::boolean, effective, LCI_FIELD(shm_cma), 1, "native transport: move long messages and RMA with one cross-memory copy where the kernel allows it (0: pipeline them through shared memory)"},
    {"LCI_SHM_RING_SIZE", kind::integer, effective, LCI_FIELD(shm_ring_size), 256, "native transport: cells (one packet each) of each device's inbound ring; a power of two, 16 ... 65536"},
    {"LCI_RDV_PROTOCOL", kind::rdv, effective, LCI_FIELD(rdv_protocol), LCI_RDV_WRITEIMM, "write|writeimm"},
    {"LCI_PRINT_PROFILE", kind::boolean, profile_category, LCI_FIELD(print_profile), 0, LCI_PROFILE_HELP},
    {"LCI_TEST_HOOKS", kind::boolean, effective, LCI_FIELD(test_hooks), 0, "enable the LCIT_* fault-injection calls of the test suite (off: they return LCI_ERR_FEATURE_NA)"},

    {"LCI_MAX_TABLE_LENGTH", kind::integer, no_effect, LCI_FIELD(max_table_length), INT_MAX, "the matching table holds entries embedded in receives and packets, so it needs no limit of its own"},
    {"LCI_SERVER_MAX_SENDS", kind::integer, no_effect, LCI_FIELD(server_max_sends), LCI_SERVER_MAX_SENDS_DEFAULT, "sends in flight are bounded by the packet pool and the backend's send queue"},
    {"LCI_SERVER_MAX_CQES", kind::integer, no_effect, LCI_FIELD(server_max_cqes), LCI_SERVER_MAX_CQES_DEFAULT, "progress reads the completion queue in fixed batches of 16"},
    {"LCI_PACKET_RETURN_THRESHOLD", kind::integer, no_effect, LCI_FIELD(packet_return_threshold), 1024, "a packet always goes straight back to the pool of the device that owns it"},
    {"LCI_IBV_USE_PREFETCH", kind::integer, no_effect, LCI_FIELD(ibv_use_prefetch), 0, "on-demand-paging registrations are not prefetched"},
    {"LCI_IBV_ON_DEMAND", kind::boolean, no_effect, LCI_FIELD(ibv_on_demand), 0, "verbs connects every peer at start-up (on-demand connection is not implemented; see lci/backend/ibv/README.md)"},
    {"LCI_IBV_FORCE_GID_AUTO_SELECT", kind::integer, no_effect, LCI_FIELD(ibv_force_gid_auto_select), 0, "the GID is selected automatically whenever LCI_IBV_GID_IDX is -1"},
    {"LCI_IBV_ENABLE_TD", kind::boolean, no_effect, LCI_FIELD(ibv_enable_td), LCI_IBV_ENABLE_TD_DEFAULT, "verbs queue pairs are not grouped into thread domains"},
    {"LCI_IBV_ENABLE_EVENT_POLLING_THREAD", kind::boolean, no_effect, LCI_FIELD(ibv_enable_event_polling_thread), 0, "no thread polls asynchronous verbs events"},
    {"LCI_ENABLE_PRG_NET_ENDPOINT", kind::boolean, no_effect, LCI_FIELD(enable_prg_net_endpoint), LCI_ENABLE_PRG_NET_ENDPOINT_DEFAULT, "each device has one network endpoint, which LCI_progress always drives"},
    {"LCI_SEND_SLOW_DOWN_USEC", kind::integer, no_effect, LCI_FIELD(send_slow_down_usec), 0, "sends are never delayed on purpose"},
    {"LCI_RECV_SLOW_DOWN_USEC", kind::integer, no_effect, LCI_FIELD(recv_slow_down_usec), 0, "receives are never delayed on purpose"},
    {"LCI_BACKEND_TRY_LOCK_MODE", kind::try_lock_mode, no_effect, LCI_FIELD(backend_try_lock_mode), 0, "the backends use the network library's thread safety and their own fixed locking"},
    {"LCI_DEVICE_LOCK_MODE", kind::device_lock_mode, no_effect, LCI_FIELD(device_lock_mode), 0, "posting takes no device-wide lock; progress always uses a try-lock"},
    {"LCI_UCX_USE_TRY_LOCK", kind::boolean, no_effect, LCI_FIELD(ucx_use_try_lock), 0, "there is no UCX backend"},
    {"LCI_UCX_PROGRESS_FOCUSED", kind::boolean, no_effect, LCI_FIELD(ucx_progress_focused), 0, "there is no UCX backend (1 also sets LCI_UCX_USE_TRY_LOCK, as in LCI 1.7.9)"},
    {"LCI_USE_GLOBAL_PACKET_POOL", kind::boolean, no_effect, LCI_FIELD(use_global_packet_pool), 1, "each device has its own packet pool"},

    {"LCI_PMI", kind::text, boot, LCI_FIELD(pmi), 0, "lcrun|pmi1|pmix|local: forces the bootstrap (unset: chosen from the launcher's variables)"},
    {"LCT_PMI_BACKEND", kind::text, boot, LCI_FIELD(lct_pmi_backend), 0, "LCI 1.7.9's list of bootstraps to try (pmi1, pmi2, pmix, local), when LCI_PMI is unset"},
    {"LCI_LCRUN", kind::text, boot, LCI_FIELD(lcrun), 0, "set to 1 by lcrun: its PMI-1 server is reported as lcrun"},
};

#undef LCI_FIELD

constexpr size_t table_size = sizeof(table) / sizeof(table[0]);

// A malformed value, as config_read reports it.
struct malformed {
  std::string message;
};

[[noreturn]] void bad_value(const char* name, const char* value, const char* expected) {
  throw malformed{std::string("environment variable ") + name + "=\"" + value +
                  "\" is malformed (expected " + expected + ")"};
}

long long parse_number(const char* name, const char* value, long long lo, long long hi) {
  long long v = 0;
  if (!parse_decimal(value, lo, hi, v)) {
    char expected[96];
    snprintf(expected, sizeof(expected), "a decimal integer in [%lld, %lld]", lo, hi);
    bad_value(name, value, expected);
  }
  return v;
}

const char* const log_level_names[] = {"error", "warn", "diag", "info", "debug", "trace"};

const struct {
  const char* word;
  LCIX_wait_policy_t policy;
} wait_words[] = {{"threads", LCIX_WAIT_THREADS},
                  {"spin", LCIX_WAIT_SPIN},
                  {"fibers", LCIX_WAIT_FIBERS},
                  {"tbb", LCIX_WAIT_TBB}};

const struct {
  const char* word;
  uint64_t mode;
} device_lock_words[] = {{"none", LCI_DEVICE_LOCK_MODE_NONE},
                         {"block", LCI_DEVICE_LOCK_MODE_BLOCK},
                         {"try", LCI_DEVICE_LOCK_MODE_TRY}};

void apply(const entry& e, config& c, const char* value) {
  void* target = e.field ? e.field(c) : nullptr;
  switch (e.type) {
    case kind::integer:
      *static_cast<int*>(target) = static_cast<int>(parse_number(e.name, value, INT_MIN, INT_MAX));
      return;
    case kind::size:
      *static_cast<size_t*>(target) = static_cast<size_t>(parse_number(e.name, value, 1, LLONG_MAX));
      return;
    case kind::boolean:
      *static_cast<bool*>(target) = parse_number(e.name, value, 0, 1) != 0;
      return;
    case kind::rdv:
      if (!strcmp(value, "write")) *static_cast<LCI_rdv_protocol_t*>(target) = LCI_RDV_WRITE;
      else if (!strcmp(value, "writeimm")) *static_cast<LCI_rdv_protocol_t*>(target) = LCI_RDV_WRITEIMM;
      else bad_value(e.name, value, "write or writeimm");
      return;
    case kind::try_lock_mode:
      if (!parse_try_lock_mode(value, *static_cast<uint64_t*>(target)))
        bad_value(e.name, value, "a comma list of none,send,recv,poll,global,global_b");
      return;
    case kind::device_lock_mode:
      for (auto& w : device_lock_words)
        if (!strcmp(value, w.word)) { *static_cast<uint64_t*>(target) = w.mode; return; }
      bad_value(e.name, value, "none, block or try");
    case kind::log_level:
      for (int i = 0; i < 6; ++i)
        if (!strcmp(value, log_level_names[i])) { *static_cast<log_level*>(target) = static_cast<log_level>(i); return; }
      bad_value(e.name, value, "error, warn, diag, info, debug or trace");
    case kind::text:
      *static_cast<std::string*>(target) = value;
      return;
    case kind::backend:
      if (strcmp(value, "ofi") && strcmp(value, "ibv")) bad_value(e.name, value, "ofi or ibv");
      *static_cast<std::string*>(target) = value;
      return;
    case kind::wait_policy:
      for (auto& w : wait_words)
        if (!strcmp(value, w.word)) { c.wait_policy = w.policy; c.wait_policy_given = true; return; }
      bad_value(e.name, value, "threads, spin, fibers or tbb");
    case kind::derived:
      return;
  }
}

void set_default(const entry& e, config& c) {
  void* target = e.field ? e.field(c) : nullptr;
  switch (e.type) {
    case kind::integer:
    case kind::derived: *static_cast<int*>(target) = static_cast<int>(e.deflt); break;
    case kind::size: *static_cast<size_t*>(target) = static_cast<size_t>(e.deflt); break;
    case kind::boolean: *static_cast<bool*>(target) = e.deflt != 0; break;
    case kind::rdv: *static_cast<LCI_rdv_protocol_t*>(target) = static_cast<LCI_rdv_protocol_t>(e.deflt); break;
    case kind::try_lock_mode:
    case kind::device_lock_mode: *static_cast<uint64_t*>(target) = static_cast<uint64_t>(e.deflt); break;
    case kind::log_level: *static_cast<log_level*>(target) = static_cast<log_level>(e.deflt); break;
    case kind::text:
    case kind::backend: static_cast<std::string*>(target)->clear(); break;
    case kind::wait_policy: c.wait_policy_given = false; c.wait_policy = LCIX_WAIT_THREADS; break;
  }
}

size_t index_of(const char* name) {
  for (size_t i = 0; i < table_size; ++i)
    if (!strcmp(table[i].name, name)) return i;
  fatal("lci::config: no setting named %s", name);
}

// The value a limit check names: the variable's text when it was set, else
// the number in force.
std::string value_text(const env_lookup& env, const char* name, long long number) {
  if (const char* v = env(name)) return v;
  return std::to_string(number);
}

void check(bool ok, const env_lookup& env, const char* name, long long number, const char* expected) {
  if (!ok) bad_value(name, value_text(env, name, number).c_str(), expected);
}

void read_table(const env_lookup& env, config& c) {
  c.sources.assign(table_size, config_source::default_value);
  for (size_t i = 0; i < table_size; ++i) {
    const entry& e = table[i];
    if (e.type == kind::derived) {
      c.sources[i] = config_source::derived;
      continue;
    }
    // Two names of one member (LCI_IBV_GID_IDX, LCI_IBV_GID_INDEX): the
    // default is set by the first, so that the second does not undo it.
    bool first_of_member = true;
    for (size_t j = 0; j < i; ++j)
      if (table[j].field && e.field && table[j].field(c) == e.field(c)) first_of_member = false;
    if (first_of_member) set_default(e, c);
  }
  for (size_t i = 0; i < table_size; ++i) {
    const entry& e = table[i];
    if (e.type == kind::derived) continue;
    const char* value = env(e.name);
    if (!value) continue;
    apply(e, c, value);
    // Every name of the member now reports the environment.
    for (size_t j = 0; j < table_size; ++j)
      if (j == i || (table[j].field && e.field && table[j].field(c) == e.field(c)))
        c.sources[j] = config_source::environment;
  }
}

void derive(const env_lookup& env, config& c) {
  auto source = [&c](const char* name) -> config_source& { return c.sources[index_of(name)]; };
  // LCI_UCX_PROGRESS_FOCUSED implies the try-lock mode, as in LCI 1.7.9.
  if (c.ucx_progress_focused && !c.ucx_use_try_lock) {
    c.ucx_use_try_lock = true;
    source("LCI_UCX_USE_TRY_LOCK") = config_source::derived;
  }
  if (c.packet_size % 64 != 0 || c.packet_size - packet_header_size < 4096)
    bad_value("LCI_PACKET_SIZE", std::to_string(c.packet_size).c_str(),
              "a multiple of 64 of at least 4160");
  c.medium_size = c.packet_size - packet_header_size;
  check(c.server_num_pkts >= 8, env, "LCI_SERVER_NUM_PKTS", c.server_num_pkts, "at least 8");
  check(c.max_endpoints >= 1 && c.max_endpoints < max_endpoint_index, env, "LCI_MAX_ENDPOINTS",
        c.max_endpoints, "1 ... 4094");
  check(c.server_max_recvs >= 1, env, "LCI_SERVER_MAX_RECVS", c.server_max_recvs, "at least 1");
  check(c.reg_cache_max_entries >= 1, env, "LCI_REG_CACHE_MAX_ENTRIES", c.reg_cache_max_entries,
        "at least 1");
  check(c.ofi_cq_data_size == 0 || c.ofi_cq_data_size == 4 || c.ofi_cq_data_size == 8, env,
        "LCI_OFI_CQ_DATA_SIZE", c.ofi_cq_data_size, "0, 4 or 8");
  check(c.shm_ring_size >= 16 && c.shm_ring_size <= 65536 &&
            (c.shm_ring_size & (c.shm_ring_size - 1)) == 0,
        env, "LCI_SHM_RING_SIZE", c.shm_ring_size, "a power of two, 16 ... 65536");
  check(c.default_table_length >= 1, env, "LCI_DEFAULT_TABLE_LENGTH", c.default_table_length,
        "at least 1");
  if (source("LCI_DEFAULT_QUEUE_LENGTH") != config_source::environment) {
    c.default_queue_length = 2 * c.server_num_pkts;
    source("LCI_DEFAULT_QUEUE_LENGTH") = config_source::derived;
  }
  check(c.default_queue_length >= 1, env, "LCI_DEFAULT_QUEUE_LENGTH", c.default_queue_length,
        "at least 1");
  if (source("LCI_MAX_QUEUE_LENGTH") != config_source::environment ||
      c.max_queue_length < c.default_queue_length) {
    c.max_queue_length = c.default_queue_length;
    source("LCI_MAX_QUEUE_LENGTH") = config_source::derived;
  }
  c.max_tag = 65535;
  c.max_sync_length = INT_MAX;
  // Every message of the iovec protocol (iovec_header_size bytes of header,
  // iovec_buffer_size per long buffer) must fit in a medium packet beside at
  // least one byte of piggy-back data; see LCI_get_iovec_piggy_back_size.
  c.iovec_size = (c.medium_size - static_cast<int>(iovec_header_size) - 1) /
                 static_cast<int>(iovec_buffer_size);
  if (c.iovec_size > 256) c.iovec_size = 256;
}

const char* word_of(LCIX_wait_policy_t p) {
  for (auto& w : wait_words)
    if (w.policy == p) return w.word;
  return "?";
}

std::string format(const entry& e, const config& c) {
  config& m = const_cast<config&>(c);  // the accessors are shared with the parse
  const void* v = e.field ? e.field(m) : nullptr;
  switch (e.type) {
    case kind::integer:
    case kind::derived: return std::to_string(*static_cast<const int*>(v));
    case kind::size: return std::to_string(*static_cast<const size_t*>(v));
    case kind::boolean: return *static_cast<const bool*>(v) ? "1" : "0";
    case kind::rdv: return *static_cast<const LCI_rdv_protocol_t*>(v) == LCI_RDV_WRITE ? "write" : "writeimm";
    case kind::try_lock_mode: {
      static const struct { const char* word; uint64_t bit; } bits[] = {
          {"send", LCI_BACKEND_TRY_LOCK_SEND}, {"recv", LCI_BACKEND_TRY_LOCK_RECV},
          {"poll", LCI_BACKEND_TRY_LOCK_POLL}, {"global", LCI_BACKEND_TRY_LOCK_GLOBAL},
          {"global_b", LCI_BACKEND_LOCK_GLOBAL}};
      const uint64_t mode = *static_cast<const uint64_t*>(v);
      std::string s;
      for (auto& b : bits)
        if (mode & b.bit) s += (s.empty() ? "" : ",") + std::string(b.word);
      return s.empty() ? "none" : s;
    }
    case kind::device_lock_mode:
      for (auto& w : device_lock_words)
        if (w.mode == *static_cast<const uint64_t*>(v)) return w.word;
      return std::to_string(*static_cast<const uint64_t*>(v));
    case kind::log_level: return log_level_names[static_cast<int>(*static_cast<const log_level*>(v))];
    case kind::text:
    case kind::backend: {
      const std::string& s = *static_cast<const std::string*>(v);
      return s.empty() ? "(unset)" : s;
    }
    case kind::wait_policy:
      // Unset: the policy in force (LCIX_set_wait_policy's, threads by default).
      return word_of(c.wait_policy_given ? c.wait_policy : wait_policy());
  }
  return "?";
}

}  // namespace

config g_config = config_defaults();

const char* to_string(config_source s) {
  switch (s) {
    case config_source::default_value: return "default";
    case config_source::environment: return "environment";
    case config_source::derived: return "derived";
  }
  return "?";
}

const char* to_string(config_category c) {
  switch (c) {
    case config_category::effective: return "effective";
    case config_category::derived: return "derived";
    case config_category::no_effect: return "no_effect";
    case config_category::bootstrap: return "bootstrap";
  }
  return "?";
}

config_source config::source_of(const std::string& name) const {
  const size_t i = index_of(name.c_str());
  return i < sources.size() ? sources[i] : config_source::default_value;
}

bool config_read(const env_lookup& env, config& out, std::string& error) {
  config c;
  try {
    read_table(env, c);
    derive(env, c);
  } catch (const malformed& m) {
    error = m.message;
    return false;
  }
  out = std::move(c);
  return true;
}

bool config_read(const std::map<std::string, std::string>& env, config& out, std::string& error) {
  return config_read(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      out, error);
}

config config_defaults() {
  config c;
  std::string error;
  config_read([](const char*) -> const char* { return nullptr; }, c, error);
  return c;
}

std::vector<config_row> config_rows(const config& c) {
  std::vector<config_row> rows;
  rows.reserve(table_size);
  for (size_t i = 0; i < table_size; ++i) {
    const entry& e = table[i];
    rows.push_back({e.name, format(e, c),
                    i < c.sources.size() ? c.sources[i] : config_source::default_value,
                    e.category, e.help});
  }
  return rows;
}

void config_print(const config& c, FILE* out) {
  const std::vector<config_row> rows = config_rows(c);
  auto section = [&](const char* title, bool (*wanted)(config_category)) {
    fprintf(out, "# %s\n", title);
    for (const config_row& r : rows)
      if (wanted(r.category))
        fprintf(out, "%-36s %-12s %-11s # %s\n", r.name, r.value.c_str(), to_string(r.source),
                r.help);
  };
  section("LCI settings: name, effective value, source (default, environment, derived)",
          [](config_category k) { return k == config_category::effective || k == config_category::derived; });
  section("Read by the bootstrap when it starts (checked there)",
          [](config_category k) { return k == config_category::bootstrap; });
  section("Accepted for compatibility with LCI 1.7, no effect here (after #: why)",
          [](config_category k) { return k == config_category::no_effect; });
}

void config_print_current(FILE* out, bool initialized) {
  if (initialized) {
    config_print(g_config, out);
    return;
  }
  config c;
  std::string error;
  if (!config_read([](const char* name) -> const char* { return getenv(name); }, c, error)) {
    fprintf(out, "# LCI_initialize would stop: %s\n", error.c_str());
    return;
  }
  config_print(c, out);
}

const config& current_config() { return g_config; }

net::settings backend_settings() {
  const config& c = settings();
  net::settings s;
  s.backend_request = c.backend_request;
  s.ibv_device = c.ibv_device;
  s.ibv_port = c.ibv_port;
  s.ibv_gid_index = c.ibv_gid_index;
  s.ibv_use_odp = c.ibv_use_odp != 0;
  s.ibv_on_demand = c.ibv_on_demand;
  s.ofi_cq_data_size = c.ofi_cq_data_size;
  s.ofi_rma_messages = c.ofi_rma_messages;
  s.native_on = c.shm;
  s.native_cma = c.shm_cma;
  s.native_ring_cells = static_cast<uint64_t>(c.shm_ring_size);
  return s;
}

void config_parse() {
  config c;
  std::string error;
  if (!config_read([](const char* name) -> const char* { return getenv(name); }, c, error))
    fatal("LCI_initialize: %s", error.c_str());
  g_config = std::move(c);
  const config& s = g_config;

  log_set_level(s.log_threshold);
  log_set_outfile(s.log_outfile.c_str());
  if (s.wait_policy_given) wait_policy_set(s.wait_policy);

  // The globals of lci.h, for LCI 1.7 programs.
  LCI_MAX_ENDPOINTS = s.max_endpoints;
  LCI_PACKET_SIZE = s.packet_size;
  LCI_MEDIUM_SIZE = s.medium_size;
  LCI_IOVEC_SIZE = s.iovec_size;
  LCI_MAX_TAG = s.max_tag;
  LCI_MAX_SYNC_LENGTH = s.max_sync_length;
  LCI_SERVER_NUM_PKTS = s.server_num_pkts;
  LCI_DEFAULT_QUEUE_LENGTH = s.default_queue_length;
  LCI_MAX_QUEUE_LENGTH = s.max_queue_length;
  LCI_DEFAULT_TABLE_LENGTH = s.default_table_length;
  LCI_MAX_TABLE_LENGTH = s.max_table_length;
  LCI_MAX_SINGLE_MESSAGE_SIZE = s.max_single_message_size;
  LCI_TOUCH_LBUFFER = s.touch_lbuffer;
  LCI_SERVER_MAX_SENDS = s.server_max_sends;
  LCI_SERVER_MAX_RECVS = s.server_max_recvs;
  LCI_SERVER_MAX_CQES = s.server_max_cqes;
  LCI_PACKET_RETURN_THRESHOLD = s.packet_return_threshold;
  LCI_USE_DREG = s.use_dreg;
  LCI_IBV_USE_ODP = s.ibv_use_odp;
  LCI_IBV_USE_PREFETCH = s.ibv_use_prefetch;
  LCI_IBV_GID_IDX = s.ibv_gid_index;
  LCI_IBV_FORCE_GID_AUTO_SELECT = s.ibv_force_gid_auto_select;
  LCI_IBV_ENABLE_TD = s.ibv_enable_td;
  LCI_IBV_ENABLE_EVENT_POLLING_THREAD = s.ibv_enable_event_polling_thread;
  LCI_ENABLE_PRG_NET_ENDPOINT = s.enable_prg_net_endpoint;
  LCI_SEND_SLOW_DOWN_USEC = s.send_slow_down_usec;
  LCI_RECV_SLOW_DOWN_USEC = s.recv_slow_down_usec;
  LCI_RDV_PROTOCOL = s.rdv_protocol;
  LCI_BACKEND_TRY_LOCK_MODE = s.backend_try_lock_mode;
  LCI_DEVICE_LOCK_MODE = s.device_lock_mode;
  LCI_UCX_USE_TRY_LOCK = s.ucx_use_try_lock;
  LCI_UCX_PROGRESS_FOCUSED = s.ucx_progress_focused;
  LCI_USE_GLOBAL_PACKET_POOL = s.use_global_packet_pool;
}

}  // namespace lci

// The configuration table and the LCI_* globals it fills.
#include "lci/core/config.hpp"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci.h"
#include "lci/core/config_values.hpp"
#include "lci/util/log.hpp"
#include "lci/wait/parking.hpp"

// ---- globals of lci.h (constant after LCI_initialize) ----------------------
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

enum class kind {
  integer, size, boolean, rdv, try_lock_mode, device_lock_mode, log_level, string, wait_policy,
  backend
};

struct entry {
  const char* name;
  kind type;
  void* target;       // the global it sets (nullptr: handled specially)
  long long deflt;    // default for numbers; -1 = "derived, see config_parse"
  const char* help;
};

std::string g_log_outfile;

}  // namespace

std::string g_backend_request;
std::string g_ibv_device;
int g_ibv_port = 0;
bool g_ibv_on_demand = false;
int g_reg_cache_max_entries = 4096;
int g_ofi_cq_data_size = 0;

namespace {

// Every tunable, its default and a line of help.
entry table[] = {
    {"LCI_LOG_LEVEL", kind::log_level, nullptr, 1, "error|warn|diag|info|debug|trace"},
    {"LCI_LOG_OUTFILE", kind::string, &g_log_outfile, 0, "log destination (file, stdout, stderr)"},
    {"LCI_MAX_ENDPOINTS", kind::integer, &LCI_MAX_ENDPOINTS, 1024, "endpoints per process over its lifetime (<= 4095)"},
    {"LCI_PACKET_SIZE", kind::integer, &LCI_PACKET_SIZE, LCI_PACKET_SIZE_DEFAULT, "medium packet size in bytes (multiple of 64)"},
    {"LCI_SERVER_NUM_PKTS", kind::integer, &LCI_SERVER_NUM_PKTS, LCI_SERVER_NUM_PKTS_DEFAULT, "packets in each device's pool"},
    {"LCI_DEFAULT_QUEUE_LENGTH", kind::integer, &LCI_DEFAULT_QUEUE_LENGTH, -1, "capacity of LCI_queue_create queues (2 x packets)"},
    {"LCI_MAX_QUEUE_LENGTH", kind::integer, &LCI_MAX_QUEUE_LENGTH, -1, "growth limit of queues (= default length)"},
    {"LCI_DEFAULT_TABLE_LENGTH", kind::integer, &LCI_DEFAULT_TABLE_LENGTH, 65536, "matching-table buckets"},
    {"LCI_MAX_TABLE_LENGTH", kind::integer, &LCI_MAX_TABLE_LENGTH, INT_MAX, "matching-table entry limit"},
    {"LCI_MAX_SINGLE_MESSAGE_SIZE", kind::size, &LCI_MAX_SINGLE_MESSAGE_SIZE, LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT, "long transfers above it are split"},
    {"LCI_TOUCH_LBUFFER", kind::integer, &LCI_TOUCH_LBUFFER, 0, "touch every page of allocated long buffers"},
    {"LCI_SERVER_MAX_SENDS", kind::integer, &LCI_SERVER_MAX_SENDS, LCI_SERVER_MAX_SENDS_DEFAULT, "accepted, no effect"},
    {"LCI_SERVER_MAX_RECVS", kind::integer, &LCI_SERVER_MAX_RECVS, LCI_SERVER_MAX_RECVS_DEFAULT, "receive packets kept posted"},
    {"LCI_SERVER_MAX_CQES", kind::integer, &LCI_SERVER_MAX_CQES, LCI_SERVER_MAX_CQES_DEFAULT, "accepted, no effect"},
    {"LCI_PACKET_RETURN_THRESHOLD", kind::integer, &LCI_PACKET_RETURN_THRESHOLD, 1024, "accepted, no effect"},
    {"LCI_USE_DREG", kind::integer, &LCI_USE_DREG, LCI_USE_DREG_DEFAULT, "cache LCI_SEGMENT_ALL registrations (1: where the backend does not pin pages; 0: register per use)"},
    {"LCI_REG_CACHE_MAX_ENTRIES", kind::integer, &g_reg_cache_max_entries, 4096, "registrations a device's cache keeps (least recently used unused ones leave first)"},
    {"LCI_OFI_CQ_DATA_SIZE", kind::integer, &g_ofi_cq_data_size, 0, "libfabric: bytes of immediate data used (0: the provider's; 4: as on 4-byte providers)"},
    {"LCI_IBV_USE_ODP", kind::integer, &LCI_IBV_USE_ODP, 0, "verbs on-demand paging"},
    {"LCI_IBV_USE_PREFETCH", kind::integer, &LCI_IBV_USE_PREFETCH, 0, "accepted, no effect"},
    {"LCI_BACKEND", kind::backend, &g_backend_request, 0, "ofi|ibv (unset: ibv if an active verbs port exists, else ofi)"},
    {"LCI_IBV_DEVICE", kind::string, &g_ibv_device, 0, "verbs device name (unset: first with an active port)"},
    {"LCI_IBV_PORT", kind::integer, &g_ibv_port, 0, "verbs port number (0: first active)"},
    {"LCI_IBV_ON_DEMAND", kind::boolean, &g_ibv_on_demand, 0, "verbs: connect peers at first use (not yet: connects at start-up, see lci/backend/ibv/README.md)"},
    {"LCI_IBV_GID_IDX", kind::integer, &LCI_IBV_GID_IDX, -1, "verbs GID index (-1: automatic)"},
    {"LCI_IBV_GID_INDEX", kind::integer, &LCI_IBV_GID_IDX, -1, "same as LCI_IBV_GID_IDX"},
    {"LCI_IBV_FORCE_GID_AUTO_SELECT", kind::integer, &LCI_IBV_FORCE_GID_AUTO_SELECT, 0, "accepted, no effect"},
    {"LCI_IBV_ENABLE_TD", kind::boolean, &LCI_IBV_ENABLE_TD, 1, "accepted, no effect"},
    {"LCI_IBV_ENABLE_EVENT_POLLING_THREAD", kind::boolean, &LCI_IBV_ENABLE_EVENT_POLLING_THREAD, 0, "accepted, no effect"},
    {"LCI_ENABLE_PRG_NET_ENDPOINT", kind::boolean, &LCI_ENABLE_PRG_NET_ENDPOINT, 1, "accepted, no effect"},
    {"LCI_SEND_SLOW_DOWN_USEC", kind::integer, &LCI_SEND_SLOW_DOWN_USEC, 0, "accepted, no effect"},
    {"LCI_RECV_SLOW_DOWN_USEC", kind::integer, &LCI_RECV_SLOW_DOWN_USEC, 0, "accepted, no effect"},
    // Only when set: otherwise LCIX_set_wait_policy's choice (default threads) stays.
    {"LCI_WAIT_POLICY", kind::wait_policy, nullptr, 0, "threads|spin|fibers|tbb (waits in LCI_sync_wait, LCI_queue_wait)"},
    {"LCI_RDV_PROTOCOL", kind::rdv, &LCI_RDV_PROTOCOL, LCI_RDV_WRITEIMM, "write|writeimm"},
    {"LCI_BACKEND_TRY_LOCK_MODE", kind::try_lock_mode, &LCI_BACKEND_TRY_LOCK_MODE, 0, "accepted, no effect"},
    {"LCI_DEVICE_LOCK_MODE", kind::device_lock_mode, &LCI_DEVICE_LOCK_MODE, 0, "accepted, no effect"},
    {"LCI_UCX_USE_TRY_LOCK", kind::boolean, &LCI_UCX_USE_TRY_LOCK, 0, "accepted, no effect"},
    {"LCI_UCX_PROGRESS_FOCUSED", kind::boolean, &LCI_UCX_PROGRESS_FOCUSED, 0, "accepted, no effect"},
    {"LCI_USE_GLOBAL_PACKET_POOL", kind::boolean, &LCI_USE_GLOBAL_PACKET_POOL, 1, "accepted, no effect"},
};

[[noreturn]] void bad_value(const char* name, const char* value, const char* expected) {
  fatal("LCI_initialize: environment variable %s=\"%s\" is malformed (expected %s)", name,
        value, expected);
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

uint64_t parse_try_lock_mode(const char* name, const char* value) {
  uint64_t mode = 0;
  if (!lci::parse_try_lock_mode(value, mode))
    bad_value(name, value, "a comma list of none,send,recv,poll,global,global_b");
  return mode;
}

void apply(entry& e, const char* value) {
  switch (e.type) {
    case kind::integer:
      *static_cast<int*>(e.target) = static_cast<int>(parse_number(e.name, value, INT_MIN, INT_MAX));
      break;
    case kind::size:
      *static_cast<size_t*>(e.target) = static_cast<size_t>(parse_number(e.name, value, 1, LLONG_MAX));
      break;
    case kind::boolean:
      *static_cast<bool*>(e.target) = parse_number(e.name, value, 0, 1) != 0;
      break;
    case kind::rdv:
      if (!strcmp(value, "write")) *static_cast<LCI_rdv_protocol_t*>(e.target) = LCI_RDV_WRITE;
      else if (!strcmp(value, "writeimm")) *static_cast<LCI_rdv_protocol_t*>(e.target) = LCI_RDV_WRITEIMM;
      else bad_value(e.name, value, "write or writeimm");
      break;
    case kind::try_lock_mode:
      *static_cast<uint64_t*>(e.target) = parse_try_lock_mode(e.name, value);
      break;
    case kind::device_lock_mode:
      if (!strcmp(value, "none")) *static_cast<uint64_t*>(e.target) = LCI_DEVICE_LOCK_MODE_NONE;
      else if (!strcmp(value, "block")) *static_cast<uint64_t*>(e.target) = LCI_DEVICE_LOCK_MODE_BLOCK;
      else if (!strcmp(value, "try")) *static_cast<uint64_t*>(e.target) = LCI_DEVICE_LOCK_MODE_TRY;
      else bad_value(e.name, value, "none, block or try");
      break;
    case kind::log_level: {
      static const char* names[] = {"error", "warn", "diag", "info", "debug", "trace"};
      for (int i = 0; i < 6; ++i)
        if (!strcmp(value, names[i])) { log_set_level(static_cast<log_level>(i)); return; }
      bad_value(e.name, value, "error, warn, diag, info, debug or trace");
    }
    case kind::string:
      *static_cast<std::string*>(e.target) = value;
      break;
    case kind::backend:
      if (strcmp(value, "ofi") && strcmp(value, "ibv")) bad_value(e.name, value, "ofi or ibv");
      *static_cast<std::string*>(e.target) = value;
      break;
    case kind::wait_policy: {
      static const struct { const char* word; LCIX_wait_policy_t policy; } words[] = {
          {"threads", LCIX_WAIT_THREADS}, {"spin", LCIX_WAIT_SPIN},
          {"fibers", LCIX_WAIT_FIBERS}, {"tbb", LCIX_WAIT_TBB}};
      for (auto& w : words)
        if (!strcmp(value, w.word)) { wait_policy_set(w.policy); return; }
      bad_value(e.name, value, "threads, spin, fibers or tbb");
    }
  }
}

void set_default(entry& e) {
  switch (e.type) {
    case kind::integer: *static_cast<int*>(e.target) = static_cast<int>(e.deflt); break;
    case kind::size: *static_cast<size_t*>(e.target) = static_cast<size_t>(e.deflt); break;
    case kind::boolean: *static_cast<bool*>(e.target) = e.deflt != 0; break;
    case kind::rdv: *static_cast<LCI_rdv_protocol_t*>(e.target) = static_cast<LCI_rdv_protocol_t>(e.deflt); break;
    case kind::try_lock_mode:
    case kind::device_lock_mode: *static_cast<uint64_t*>(e.target) = static_cast<uint64_t>(e.deflt); break;
    case kind::log_level: log_set_level(static_cast<log_level>(e.deflt)); break;
    case kind::string:
    case kind::backend: static_cast<std::string*>(e.target)->clear(); break;
    case kind::wait_policy: break;  // see the table
  }
}

}  // namespace

void config_parse() {
  bool queue_default_set = false, queue_max_set = false;
  for (entry& e : table) {
    const char* value = getenv(e.name);
    if (e.deflt != -1) set_default(e);
    if (!value) continue;
    if (e.target == &LCI_DEFAULT_QUEUE_LENGTH) queue_default_set = true;
    if (e.target == &LCI_MAX_QUEUE_LENGTH) queue_max_set = true;
    apply(e, value);
  }
  // LCI_UCX_PROGRESS_FOCUSED implies the try-lock mode, as in LCI 1.7.9.
  if (LCI_UCX_PROGRESS_FOCUSED) LCI_UCX_USE_TRY_LOCK = true;
  log_set_outfile(g_log_outfile.c_str());

  // Derived values and their limits.
  if (LCI_PACKET_SIZE % 64 != 0 || LCI_PACKET_SIZE - packet_header_size < 4096) {
    char value[32];
    snprintf(value, sizeof(value), "%d", LCI_PACKET_SIZE);
    bad_value("LCI_PACKET_SIZE", value, "a multiple of 64 of at least 4160");
  }
  LCI_MEDIUM_SIZE = LCI_PACKET_SIZE - packet_header_size;
  if (LCI_SERVER_NUM_PKTS < 8) bad_value("LCI_SERVER_NUM_PKTS", getenv("LCI_SERVER_NUM_PKTS"), "at least 8");
  if (LCI_MAX_ENDPOINTS < 1 || LCI_MAX_ENDPOINTS >= max_endpoint_index)
    bad_value("LCI_MAX_ENDPOINTS", getenv("LCI_MAX_ENDPOINTS"), "1 ... 4094");
  if (LCI_SERVER_MAX_RECVS < 1) bad_value("LCI_SERVER_MAX_RECVS", getenv("LCI_SERVER_MAX_RECVS"), "at least 1");
  if (g_reg_cache_max_entries < 1) bad_value("LCI_REG_CACHE_MAX_ENTRIES", getenv("LCI_REG_CACHE_MAX_ENTRIES"), "at least 1");
  if (g_ofi_cq_data_size != 0 && g_ofi_cq_data_size != 4 && g_ofi_cq_data_size != 8)
    bad_value("LCI_OFI_CQ_DATA_SIZE", getenv("LCI_OFI_CQ_DATA_SIZE"), "0, 4 or 8");
  if (LCI_DEFAULT_TABLE_LENGTH < 1) bad_value("LCI_DEFAULT_TABLE_LENGTH", getenv("LCI_DEFAULT_TABLE_LENGTH"), "at least 1");
  if (!queue_default_set) LCI_DEFAULT_QUEUE_LENGTH = 2 * LCI_SERVER_NUM_PKTS;
  if (LCI_DEFAULT_QUEUE_LENGTH < 1) bad_value("LCI_DEFAULT_QUEUE_LENGTH", getenv("LCI_DEFAULT_QUEUE_LENGTH"), "at least 1");
  if (!queue_max_set) LCI_MAX_QUEUE_LENGTH = LCI_DEFAULT_QUEUE_LENGTH;
  if (LCI_MAX_QUEUE_LENGTH < LCI_DEFAULT_QUEUE_LENGTH) LCI_MAX_QUEUE_LENGTH = LCI_DEFAULT_QUEUE_LENGTH;
  LCI_MAX_TAG = 65535;
  LCI_MAX_SYNC_LENGTH = INT_MAX;
  // Every message of the iovec protocol (48 bytes of header, 24 per long
  // buffer) must fit in a medium packet beside at least one byte of
  // piggy-back data; see LCI_get_iovec_piggy_back_size.
  LCI_IOVEC_SIZE = (LCI_MEDIUM_SIZE - 48 - 1) / 24;
  if (LCI_IOVEC_SIZE > 256) LCI_IOVEC_SIZE = 256;
}

void config_dump(FILE* out) {
  for (entry& e : table) {
    const char* v = getenv(e.name);
    fprintf(out, "%-38s %-12s # %s\n", e.name, v ? v : "(default)", e.help);
  }
}

net::settings backend_settings() {
  net::settings s;
  s.backend_request = g_backend_request;
  s.ibv_device = g_ibv_device;
  s.ibv_port = g_ibv_port;
  s.ibv_gid_index = LCI_IBV_GID_IDX;
  s.ibv_use_odp = LCI_IBV_USE_ODP != 0;
  s.ibv_on_demand = g_ibv_on_demand;
  s.ofi_cq_data_size = g_ofi_cq_data_size;
  return s;
}

}  // namespace lci

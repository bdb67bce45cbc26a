// Run-time configuration: every setting in one table (config.cpp).
//
// config_read() turns an environment (a lookup function, so that tests can
// pass a map) into one lci::config that holds every effective value and
// where it came from (default, environment, or derived from other values).
// It has no side effects; a malformed value is returned as the one-line
// message "environment variable X=\"...\" is malformed (expected ...)".
//
// config_parse() runs it once on the process environment inside
// LCI_initialize, makes a malformed value fatal (prefixed with
// "LCI_initialize: "), applies what acts at once (log level and file, wait
// policy), stores the result, which settings() returns and which stays
// constant until the next LCI_initialize, and mirrors it into the LCI_*
// globals of lci.h that LCI 1.7 programs read. After that nothing reads an
// LCI_* setting of the core again. The
// bootstrap's own variables (LCI_PMI, LCI_LCRUN, LCT_PMI_BACKEND) are read
// and checked by the bootstrap, a lower layer; the table lists them
// (category bootstrap) so that they are printed and documented in one place.
//
// Categories: `effective` settings change what LCI does; `derived` rows are
// computed from others and never read from the environment; `no_effect`
// settings are accepted (and checked) for compatibility with LCI 1.7 and
// change nothing in this implementation, the help says why; `bootstrap`
// settings belong to the bootstrap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lci.h"
#include "lci/backend/net_types.hpp"
#include "lci/util/log.hpp"

// Internal C++ entry points that tools and unit tests (separate
// executables) call into liblci, which is built with hidden visibility.
#ifndef LCI_INTERNAL_EXPORT
#define LCI_INTERNAL_EXPORT __attribute__((visibility("default")))
#endif

namespace lci {

// Sizes derived from the configuration (the wire's sizes, packet_header_size
// and max_endpoint_index, are protocol.hpp's).
inline constexpr int barrier_endpoint_index = 4095;  // LCI's private endpoint

enum class config_source : uint8_t { default_value, environment, derived };
enum class config_category : uint8_t { effective, derived, no_effect, bootstrap };

// "default", "environment", "derived"; "effective", "derived", "no_effect",
// "bootstrap".
LCI_INTERNAL_EXPORT const char* to_string(config_source s);
LCI_INTERNAL_EXPORT const char* to_string(config_category c);

// Every effective value, named after its variable (LCI_PACKET_SIZE ->
// packet_size). Filled by config_read; a default-constructed config holds
// no meaningful values (use config_defaults()).
struct config {
  // Logging (applied by config_parse).
  log_level log_threshold = log_level::warn;     // LCI_LOG_LEVEL
  std::string log_outfile;                       // LCI_LOG_OUTFILE: "" (stderr)

  // Effective settings.
  int max_endpoints = 0;                         // LCI_MAX_ENDPOINTS
  int packet_size = 0;                           // LCI_PACKET_SIZE
  int server_num_pkts = 0;                       // LCI_SERVER_NUM_PKTS
  int default_queue_length = 0;                  // LCI_DEFAULT_QUEUE_LENGTH
  int max_queue_length = 0;                      // LCI_MAX_QUEUE_LENGTH
  int default_table_length = 0;                  // LCI_DEFAULT_TABLE_LENGTH
  size_t max_single_message_size = 0;            // LCI_MAX_SINGLE_MESSAGE_SIZE
  int touch_lbuffer = 0;                         // LCI_TOUCH_LBUFFER
  int server_max_recvs = 0;                      // LCI_SERVER_MAX_RECVS
  int use_dreg = 0;                              // LCI_USE_DREG
  int reg_cache_max_entries = 0;                 // LCI_REG_CACHE_MAX_ENTRIES
  int ofi_cq_data_size = 0;                      // LCI_OFI_CQ_DATA_SIZE: 0 (the provider's), 4 or 8
  bool ofi_rma_messages = true;                  // LCI_OFI_RMA_MESSAGES
  int ibv_use_odp = 0;                           // LCI_IBV_USE_ODP
  std::string backend_request;                   // LCI_BACKEND: "" (automatic), "ofi" or "ibv"
  std::string ibv_device;                        // LCI_IBV_DEVICE: "" (first with an active port)
  int ibv_port = 0;                              // LCI_IBV_PORT: 0 (first active)
  int ibv_gid_index = -1;                        // LCI_IBV_GID_IDX or LCI_IBV_GID_INDEX
  bool wait_policy_given = false;                // LCI_WAIT_POLICY set
  LCIX_wait_policy_t wait_policy = LCIX_WAIT_THREADS;  // its value (when given)
  bool shm = true;                               // LCI_SHM
  bool shm_cma = true;                           // LCI_SHM_CMA
  int shm_ring_size = 256;                       // LCI_SHM_RING_SIZE
  LCI_rdv_protocol_t rdv_protocol = LCI_RDV_WRITEIMM;  // LCI_RDV_PROTOCOL
  bool print_profile = false;                    // LCI_PRINT_PROFILE (LCI_PROFILE builds)
  bool test_hooks = false;                       // LCI_TEST_HOOKS

  // Derived (never read from the environment).
  int medium_size = 0;                           // LCI_MEDIUM_SIZE = packet_size - 64
  int iovec_size = 0;                            // LCI_IOVEC_SIZE
  int max_tag = 0;                               // LCI_MAX_TAG
  int max_sync_length = 0;                       // LCI_MAX_SYNC_LENGTH

  // Accepted, no effect (see the table for why).
  int max_table_length = 0;                      // LCI_MAX_TABLE_LENGTH
  int server_max_sends = 0;                      // LCI_SERVER_MAX_SENDS
  int server_max_cqes = 0;                       // LCI_SERVER_MAX_CQES
  int packet_return_threshold = 0;               // LCI_PACKET_RETURN_THRESHOLD
  int ibv_use_prefetch = 0;                      // LCI_IBV_USE_PREFETCH
  bool ibv_on_demand = false;                    // LCI_IBV_ON_DEMAND
  int ibv_force_gid_auto_select = 0;             // LCI_IBV_FORCE_GID_AUTO_SELECT
  bool ibv_enable_td = true;                     // LCI_IBV_ENABLE_TD
  bool ibv_enable_event_polling_thread = false;  // LCI_IBV_ENABLE_EVENT_POLLING_THREAD
  bool enable_prg_net_endpoint = true;           // LCI_ENABLE_PRG_NET_ENDPOINT
  int send_slow_down_usec = 0;                   // LCI_SEND_SLOW_DOWN_USEC
  int recv_slow_down_usec = 0;                   // LCI_RECV_SLOW_DOWN_USEC
  uint64_t backend_try_lock_mode = 0;            // LCI_BACKEND_TRY_LOCK_MODE
  uint64_t device_lock_mode = 0;                 // LCI_DEVICE_LOCK_MODE
  bool ucx_use_try_lock = false;                 // LCI_UCX_USE_TRY_LOCK
  bool ucx_progress_focused = false;             // LCI_UCX_PROGRESS_FOCUSED
  bool use_global_packet_pool = true;            // LCI_USE_GLOBAL_PACKET_POOL

  // The bootstrap's variables, as set ("" when unset; checked by the bootstrap).
  std::string pmi;                               // LCI_PMI
  std::string lcrun;                             // LCI_LCRUN
  std::string lct_pmi_backend;                   // LCT_PMI_BACKEND

  // Where each row of the table got its value, in table order.
  std::vector<config_source> sources;

  // The source of the row named `name` (fatal for a name not in the table).
  LCI_INTERNAL_EXPORT config_source source_of(const std::string& name) const;
};

// One row of the table, formatted: what LCIX_config_print prints.
struct config_row {
  const char* name;
  std::string value;  // effective value as the variable would spell it
  config_source source;
  config_category category;
  const char* help;   // for no_effect rows: why it changes nothing
};

// Looks up a variable; nullptr when it is unset ("" when set but empty).
using env_lookup = std::function<const char*(const char* name)>;

// The pure parse (see the top of this file). True and `out` filled, or false
// and `error` set ("environment variable X=\"v\" is malformed (expected ...)").
LCI_INTERNAL_EXPORT bool config_read(const env_lookup& env, config& out, std::string& error);
LCI_INTERNAL_EXPORT bool config_read(const std::map<std::string, std::string>& env, config& out,
                                     std::string& error);
// Every setting at its default (an empty environment).
LCI_INTERNAL_EXPORT config config_defaults();
// The rows of the table for `c`, in table order.
LCI_INTERNAL_EXPORT std::vector<config_row> config_rows(const config& c);
// Prints every row: "NAME  value  source  # help", no-effect and bootstrap
// rows in sections of their own.
LCI_INTERNAL_EXPORT void config_print(const config& c, FILE* out);
// What LCIX_config_print prints: settings() once LCI_initialize has parsed
// the environment, else a side-effect-free parse of the environment now (a
// malformed value is printed as the line LCI_initialize would die with).
LCI_INTERNAL_EXPORT void config_print_current(FILE* out, bool initialized);

// The stored configuration, parsed by the last LCI_initialize (defaults
// before). Constant while LCI is initialized. settings() is for the library
// itself (inline, no call); current_config() the same for tools and tests.
extern config g_config;
inline const config& settings() { return g_config; }
LCI_INTERNAL_EXPORT const config& current_config();

// The backends' part of the configuration (they read nothing else).
net::settings backend_settings();

// Parses the process environment into settings() and the lci.h globals
// and applies log level, log file and wait policy. Fatal on a malformed value.
void config_parse();

}  // namespace lci

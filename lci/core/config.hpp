// Run-time configuration: every tunable in one table.
//
// config_parse() reads each LCI_* environment variable exactly once (inside
// LCI_initialize), rejects malformed values with a message naming the
// variable, and fills the LCI_* globals of lci.h. Afterwards code reads the
// globals or the immutable attributes of a device; nothing calls getenv().
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "lci/backend/net_types.hpp"

namespace lci {

// Sizes derived from the configuration.
inline constexpr int packet_header_size = 64;     // internal header before each medium payload
inline constexpr int max_endpoint_index = 4095;   // 12 bits in the message header
inline constexpr int barrier_endpoint_index = 4095;  // LCI's private endpoint

// Settings without a global in lci.h, filled by config_parse.
extern std::string g_backend_request;  // LCI_BACKEND: "" (automatic), "ofi" or "ibv"
extern std::string g_ibv_device;       // LCI_IBV_DEVICE: "" (first with an active port)
extern int g_ibv_port;                 // LCI_IBV_PORT: 0 (first active)
extern bool g_ibv_on_demand;           // LCI_IBV_ON_DEMAND
extern int g_reg_cache_max_entries;    // LCI_REG_CACHE_MAX_ENTRIES
extern int g_ofi_cq_data_size;         // LCI_OFI_CQ_DATA_SIZE: 0 (the provider's), 4 or 8

// The backends' part of the configuration (they read nothing else).
net::settings backend_settings();

// Parses the environment into the globals. Fatal on a malformed value.
void config_parse();
// Writes "NAME=value  # help" lines for every entry (lci_info, debug logs).
void config_dump(FILE* out);

}  // namespace lci

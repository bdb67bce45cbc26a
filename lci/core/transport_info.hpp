// What a device's transports are and why, as key/value rows: lci_info prints
// them, and the info log repeats the routing line at device creation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lci.h"
#include "lci/core/config.hpp"

namespace lci {

using info_rows = std::vector<std::pair<std::string, std::string>>;

// Rows "transport.*" (which transport serves the ranks of this host and of
// other hosts, how many of each, why) and "shm.*" (how bulk data moves, the
// memory each device holds for the native transport and its bound).
LCI_INTERNAL_EXPORT info_rows transport_info(LCI_device_t device);

}  // namespace lci

// What verbs devices and ports this machine has, for the backend choice
// (lci/backend/select.hpp), the device's own port choice and tools/lci_info.
// Kept free of the rest of the library (no logging, no runtime) so that
// lci_info can compile it in as it is. Set-up only.
#pragma once

#include <string>
#include <vector>

#include "lci/backend/ibv/plan.hpp"

namespace lci::ibv {

// Every device ibv_get_device_list returns, with its ports' states. A
// device that cannot be opened or queried is listed with no ports (it
// cannot be chosen). `error` (may be null) receives why the list is empty
// when ibv_get_device_list itself fails.
std::vector<device_info> list_devices(std::string* error);

// The port LCI would use: choose_port over list_devices, with the device
// and port asked for (empty / 0: the first active one).
port_choice probe_port(const std::string& want_device, int want_port,
                       std::vector<device_info>* devices_out = nullptr);

}  // namespace lci::ibv

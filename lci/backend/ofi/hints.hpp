// The libfabric query behind every ofi_device, shared with tools/lci_info so
// that the tool reports the provider a device would really open. Set-up
// only; nothing here is on the data path.
#pragma once

#include <rdma/fabric.h>

#include <string>

namespace lci::ofi {

// The libfabric API version LCI asks for.
constexpr uint32_t api_version = FI_VERSION(1, 14);

// Hints for an RDM endpoint with send/recv with immediate data and RMA, in
// the memory-registration modes the backend handles. `bootstrap_name` is
// bootstrap::name(): a job confined to one machine (lcrun, local) prefers
// shm unless FI_PROVIDER says otherwise. Free with fi_freeinfo.
fi_info* make_hints(const std::string& bootstrap_name);

// fi_getinfo with make_hints(bootstrap_name): the providers that qualify,
// best first, in *out (free with fi_freeinfo). Returns fi_getinfo's status.
int get_info(const std::string& bootstrap_name, fi_info** out);

}  // namespace lci::ofi

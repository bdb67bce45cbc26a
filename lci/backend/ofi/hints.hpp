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
// Asks for FI_SOURCE (the provider names each message's sender) first, and
// only when no provider offers it, for the same without.
int get_info(const std::string& bootstrap_name, fi_info** out);

// How a device uses a provider's completion data (see ofi.hpp).
struct cq_data_plan {
  bool source_from_provider = false;  // the sender's rank is the message's FI_SOURCE address
  bool job_token = false;             // the high 32 bits carry the job's token
};

// The first entry of `list` the backend can use, or nullptr: immediate data
// of 8 bytes (rank or token in the high half), or of 4 bytes with FI_SOURCE.
// `cq_data_limit` (LCI_OFI_CQ_DATA_SIZE; 0: no limit) makes the backend use
// at most that many bytes, as a 4-byte provider would. *plan says how.
const fi_info* choose_info(const fi_info* list, size_t cq_data_limit, cq_data_plan* plan);

}  // namespace lci::ofi

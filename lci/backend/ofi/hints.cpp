// See hints.hpp. Kept free of the rest of the library (no logging, no
// runtime) so tools/lci_info can compile it in as it is.
#include "lci/backend/ofi/hints.hpp"

#include <cstdlib>
#include <cstring>

namespace lci::ofi {

fi_info* make_hints(const std::string& bootstrap_name) {
  fi_info* hints = fi_allocinfo();
  if (!hints) return nullptr;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  hints->mode = 0;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->tx_attr->op_flags = 0;
  // FI_PROVIDER, if set, is honoured by libfabric itself. Without it, a job
  // that lives on one machine (lcrun, or a lone process) uses shared memory
  // rather than whatever network libfabric lists first.
  if (!std::getenv("FI_PROVIDER") && (bootstrap_name == "lcrun" || bootstrap_name == "local"))
    hints->fabric_attr->prov_name = strdup("shm");
  return hints;
}

int get_info(const std::string& bootstrap_name, fi_info** out) {
  *out = nullptr;
  fi_info* hints = make_hints(bootstrap_name);
  if (!hints) return -FI_ENOMEM;
  hints->caps |= FI_SOURCE;
  int rc = fi_getinfo(api_version, nullptr, nullptr, 0, hints, out);
  if (rc == -FI_ENODATA) {
    hints->caps &= ~FI_SOURCE;
    rc = fi_getinfo(api_version, nullptr, nullptr, 0, hints, out);
  }
  fi_freeinfo(hints);
  return rc;
}

const fi_info* choose_info(const fi_info* list, size_t cq_data_limit, cq_data_plan* plan) {
  for (const fi_info* i = list; i != nullptr; i = i->next) {
    size_t bytes = i->domain_attr->cq_data_size;
    if (cq_data_limit && bytes > cq_data_limit) bytes = cq_data_limit;
    const bool source = i->caps & FI_SOURCE;
    if (bytes >= 8 || (bytes >= 4 && source)) {
      plan->source_from_provider = source;
      plan->job_token = source && bytes >= 8;
      return i;
    }
  }
  return nullptr;
}

}  // namespace lci::ofi

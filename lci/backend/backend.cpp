// Backend selection (see backend.hpp and select.hpp).
#include "lci/backend/backend.hpp"

#include "lci/core/config.hpp"
#include "lci/core/log.hpp"
#ifdef LCI_HAVE_IBV
#include "lci/backend/ibv/probe.hpp"
#endif

namespace lci::net {

namespace {
#ifdef LCI_HAVE_IBV
constexpr bool ibv_built = true;
#else
constexpr bool ibv_built = false;
#endif

backend_choice decide() {
  std::string unavailable;
#ifdef LCI_HAVE_IBV
  if (g_backend_request != "ofi") {
    const ibv::port_choice port = ibv::probe_port(g_ibv_device, g_ibv_port);
    if (port.device < 0) unavailable = port.error;
  }
#endif
  backend_choice c = choose_backend(g_backend_request, ibv_built, unavailable);
  if (!c.error.empty()) fatal("%s", c.error.c_str());
  LCI_LOG(info, "network backend: %s (%s)", c.kind == backend_kind::ibv ? "ibv" : "ofi",
          c.reason.c_str());
  return c;
}
}  // namespace

const backend_choice& process_backend() {
  static const backend_choice choice = decide();  // thread-safe, once per process
  return choice;
}

backend_device::backend_device(bootstrap::bootstrap& boot, int group_index)
    : kind_(process_backend().kind) {
#ifdef LCI_HAVE_IBV
  if (kind_ == backend_kind::ibv) {
    ibv_.emplace(boot, group_index);
    return;
  }
#endif
  ofi_.emplace(boot, group_index);
}

}  // namespace lci::net

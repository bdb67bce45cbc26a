// Backend selection (see backend.hpp and select.hpp).
#include "lci/backend/backend.hpp"

#include "lci/util/log.hpp"
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

backend_choice decide(const settings& s) {
  std::string unavailable;
#ifdef LCI_HAVE_IBV
  if (s.backend_request != "ofi") {
    const ibv::port_choice port = ibv::probe_port(s.ibv_device, s.ibv_port);
    if (port.device < 0) unavailable = port.error;
  }
#endif
  backend_choice c = choose_backend(s.backend_request, ibv_built, unavailable);
  if (!c.error.empty()) fatal("%s", c.error.c_str());
  LCI_LOG(info, "network backend: %s (%s)", c.kind == backend_kind::ibv ? "ibv" : "ofi",
          c.reason.c_str());
  return c;
}
}  // namespace

const backend_choice& process_backend(const settings& s) {
  static const backend_choice choice = decide(s);  // thread-safe, once per process
  return choice;
}

backend_device::backend_device(bootstrap::bootstrap& boot, int group_index, const settings& s)
    : kind_(process_backend(s).kind) {
#ifdef LCI_HAVE_IBV
  if (kind_ == backend_kind::ibv) {
    ibv_.emplace(boot, group_index, s);
    return;
  }
#endif
  ofi_.emplace(boot, group_index, s);
}

}  // namespace lci::net

// Backend selection (see backend.hpp and select.hpp).
#include "lci/backend/backend.hpp"

#include <algorithm>

#include "lci/util/log.hpp"
#include "lci/util/random.hpp"
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
  if (!c.error.empty()) fatal_exit(1, "%s", c.error.c_str());  // a setting that cannot be met
  LCI_LOG(info, "network backend: %s (%s)", c.kind == backend_kind::ibv ? "ibv" : "ofi",
          c.reason.c_str());
  return c;
}
}  // namespace

const backend_choice& process_backend(const settings& s) {
  static const backend_choice choice = decide(s);  // thread-safe, once per process
  return choice;
}

network_device::network_device(bootstrap::bootstrap& boot, int group_index, const settings& s)
    : kind_(process_backend(s).kind) {
#ifdef LCI_HAVE_IBV
  if (kind_ == backend_kind::ibv) {
    ibv_.emplace(boot, group_index, s);
    return;
  }
#endif
  ofi_.emplace(boot, group_index, s);
}

backend_device::backend_device(bootstrap::bootstrap& boot, int group_index, const settings& s) {
  // The network backend is decided (and a request that cannot be met is
  // fatal) even where every peer turns out to be on this host.
  process_backend(s);
  const int nranks = boot.size(), me = boot.rank();
  report_.native_on = s.native_on;
  report_.native_reason = s.native_on ? "LCI_SHM=1" : "LCI_SHM=0";
  if (s.native_on) {
    native::options o;
    o.ring_cells = s.native_ring_cells;
    o.map_all = s.native_map_all;
    o.max_payload = s.max_payload;
    o.cma = s.native_cma;
    o.test_no_cma_rank = s.native_test_no_cma_rank;
    o.report_evidence = s.report_evidence;
    o.is_failed = s.is_failed;
    native_.emplace(me, nranks, group_index, o);
  }
  // One exchange decides every route: "host key,segment address", or "off".
  const std::string key = "native" + std::to_string(group_index);
  const std::string mine = native_ ? native::host_key() + "," + native_->address() : "off";
  boot.put(key, mine);
  boot.fence();
  std::vector<std::string> hosts(static_cast<size_t>(nranks)), addresses(hosts.size());
  const std::vector<std::string> published = boot.get_all(key);
  for (int r = 0; r < nranks; ++r) {
    const std::string& v = r == me ? mine : published[static_cast<size_t>(r)];
    const size_t comma = v.find(',');
    if (v == "off" || comma == std::string::npos) {
      hosts[static_cast<size_t>(r)] = "off/" + std::to_string(r);  // a host of its own
    } else {
      hosts[static_cast<size_t>(r)] = v.substr(0, comma);
      addresses[static_cast<size_t>(r)] = v.substr(comma + 1);
    }
  }
  std::vector<bool> local(hosts.size());
  // Whether every rank reaches every other natively (a rank with the
  // transport off is a host of its own).
  bool one_host = !addresses[0].empty();
  for (size_t r = 0; r < hosts.size(); ++r) {
    local[r] = native_ && hosts[r] == hosts[static_cast<size_t>(me)];
    one_host = one_host && hosts[r] == hosts[0];
  }
  if (native_) native_->attach(addresses, local);
  // Every rank has mapped its local peers' segments (and named its ptracer):
  // the segments' descriptors close, and cross-memory attach is tested.
  // Every rank takes this fence, the transport on or off.
  boot.fence();
  if (native_) native_->attached();
  // Every rank sees the same keys, so every rank decides the same here.
  if (!one_host) net_.emplace(boot, group_index, s);
  if (net_ && !native_) ofi_alone_ = net_->ofi_device();
  routes_.resize(hosts.size());
  for (size_t r = 0; r < hosts.size(); ++r) {
    routes_[r] = local[r] ? route::native : route::network;
    (local[r] ? report_.local_peers : report_.remote_peers) += 1;
  }
  report_.network_open = net_.has_value();
  if (native_ && net_) native_->count_posted(true);
  if (native_) native_inject_ = native_->max_inject();
  if (net_) net_inject_ = net_->max_inject();
  LCI_LOG(info, "device %d: %d rank(s) on this host through %s, %d on other hosts through %s",
          group_index, report_.local_peers,
          report_.native_on ? "native shared memory" : "the network", report_.remote_peers,
          net_ ? net_->provider_name() : "(no network backend needed)");
}

mr backend_device::register_memory(void* addr, size_t len, mr_access a) {
  mr m;
  if (net_) {
    m = net_->register_memory(addr, len, a);
    if (!m.handle) return m;
  } else {
    m.handle = this;  // nothing to hold: cross-memory attach needs no registration
    m.rkey = random_bits();
  }
  if (native_ && !native_->record_registration(addr, len, a, m.rkey)) {
    // The native transport cannot publish the key: refused (the program may retry).
    if (net_)
      net_->deregister_memory(m);
    return mr{};
  }
  return m;
}

void backend_device::deregister_memory(mr& m) {
  if (native_) native_->forget_registration(m.rkey);
  if (net_)
    net_->deregister_memory(m);
  else
    m.handle = nullptr;
}

}  // namespace lci::net

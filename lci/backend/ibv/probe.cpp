// See probe.hpp.
#include "lci/backend/ibv/probe.hpp"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

namespace lci::ibv {

std::vector<device_info> list_devices(std::string* error) {
  std::vector<device_info> out;
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) {
    // ENOSYS: no kernel support (no ib_uverbs); other errno: as reported.
    if (error)
      *error = std::string("ibv_get_device_list failed: ") + std::strerror(errno ? errno : ENOSYS);
    return out;
  }
  for (int i = 0; i < n; ++i) {
    device_info d;
    d.name = ibv_get_device_name(list[i]);
    if (ibv_context* ctx = ibv_open_device(list[i])) {
      ibv_device_attr attr;
      if (ibv_query_device(ctx, &attr) == 0) {
        for (int p = 1; p <= attr.phys_port_cnt; ++p) {
          ibv_port_attr pa;
          if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pa) != 0) continue;
          port_info pi;
          pi.number = p;
          pi.active = pa.state == IBV_PORT_ACTIVE;
          pi.link_layer = pa.link_layer;
          d.ports.push_back(pi);
        }
      }
      ibv_close_device(ctx);
    }
    out.push_back(std::move(d));
  }
  ibv_free_device_list(list);
  return out;
}

port_choice probe_port(const std::string& want_device, int want_port,
                       std::vector<device_info>* devices_out) {
  std::string error;
  std::vector<device_info> devs = list_devices(&error);
  port_choice c = choose_port(devs, want_device, want_port);
  if (devs.empty() && !error.empty() && want_device.empty()) c.error = "no active verbs device found (" + error + ")";
  if (devices_out) *devices_out = std::move(devs);
  return c;
}

}  // namespace lci::ibv

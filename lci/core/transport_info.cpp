// Transport rows for lci_info (transport_info.hpp).
#include "lci/core/transport_info.hpp"

#include <fstream>

#include "lci/core/device.hpp"

namespace lci {

namespace {
std::string yama_note() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(f >> scope)) return "";
  if (scope >= 2)
    return " (kernel.yama.ptrace_scope=" + std::to_string(scope) +
           " refuses it: bulk data will be pipelined)";
  return " (kernel.yama.ptrace_scope=" + std::to_string(scope) + ")";
}
}  // namespace

info_rows transport_info(LCI_device_t handle) {
  info_rows rows;
  const device& d = *to_device(handle);
  const net::backend_device& n = *d.net;
  const net::route_report& rep = n.report();
  const config& cfg = settings();
  rows.emplace_back("transport.this_host",
                    rep.native_on ? "native shared memory" : "network backend");
  rows.emplace_back("transport.this_host.reason",
                    rep.native_on ? rep.native_reason + " (LCI_SHM=0 turns it off)"
                                  : rep.native_reason);
  rows.emplace_back("transport.this_host.ranks", std::to_string(rep.local_peers));
  if (const native::native_device* s = n.native())
    rows.emplace_back("transport.this_host.connected",
                      std::to_string(s->connected_peers()) +
                          " (local peers whose segment this rank has mapped: all with at most "
                          "LCI_SHM_MAP_ALL ranks on the host, else those it has talked to)");
  std::string other;
  if (n.has_network())
    other = std::string("network backend ") +
            (n.kind() == net::backend_kind::ibv ? "ibv" : "ofi") + " (" + n.provider_name() + ")";
  else
    other = "none opened: every rank of the job is on this host";
  rows.emplace_back("transport.other_hosts", other);
  rows.emplace_back("transport.other_hosts.ranks", std::to_string(rep.remote_peers));
  if (const native::native_device* s = n.native()) {
    std::string bulk;
    if (!cfg.shm_cma)
      bulk = "pipelined through shared memory (LCI_SHM_CMA=0)";
    else if (s->pipelined_peers() > 0)
      bulk = "pipelined through shared memory for " + std::to_string(s->pipelined_peers()) +
             " peer(s): the kernel refused cross-memory attach";
    else
      bulk = "one cross-memory copy (process_vm_readv/writev)" + yama_note();
    rows.emplace_back("shm.bulk_data", bulk);
    rows.emplace_back(
        "shm.attach_rights",
        s->ptracer() ? "pid " + std::to_string(s->ptracer()) +
                           " (the local ranks' nearest common ancestor) and its descendants "
                           "(PR_SET_PTRACER, Yama ptrace_scope 1)"
                     : std::string("none named: the user's own processes as the kernel allows "
                                   "(PR_SET_PTRACER is set only with Yama ptrace_scope 1 and "
                                   "local peers)"));
    rows.emplace_back("shm.cell_checks",
                      "each field read once and checked before use (kind, a local rank of "
                      "this job as source, length, registrations, operations in flight); a "
                      "bad cell is dropped and counted like a malformed network message");
    rows.emplace_back("shm.ring_cells", std::to_string(cfg.shm_ring_size) + " (LCI_SHM_RING_SIZE)");
    rows.emplace_back("shm.cell_bytes", std::to_string(native::cell_size_for(d.recv_size)));
    rows.emplace_back("shm.memory_per_device",
                      std::to_string(s->segment_size() + s->private_size()) + " bytes (" +
                          std::to_string(s->segment_size()) + " shared, " +
                          std::to_string(s->private_size()) +
                          " private; bounded by LCI_SHM_RING_SIZE and LCI_PACKET_SIZE)");
  }
  return rows;
}

}  // namespace lci

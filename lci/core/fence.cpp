// Fences: LCI_fence_wait (this process's operations on an endpoint complete
// locally) and LCI_gfence_wait (every process's operations on the endpoint
// group complete locally and at their targets).
//
// gfence: each process announces to every peer how many operations it issued
// to it on the endpoint (cumulative counts, tagged with the fence round),
// then progresses until, from every peer, the announcement of this round
// arrived and as many operations completed here as were announced; a barrier
// ends it, so no process leaves before every target is done.
#include "lci/core/fence.hpp"

#include <cstring>

#include "lci/core/barrier.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/runtime.hpp"
#include "lci/util/log.hpp"

namespace lci {

void fence_wait(endpoint* ep) {
  device& d = *ep->dev;
  while (ep->in_flight() > 0) d.progress();
}

namespace {

// A peer's gfence announcement arrived.
arrival on_gfence(device& d, packet* p) {
  gfence_payload g;
  memcpy(&g, p->payload(), sizeof(g));
  const int origin = p->in.src_rank;
  endpoint* ep = endpoint_by_index(g.endpoint);
  if (!ep || ep->dev != &d) {
    LCI_WARN("dropped a gfence announcement from rank %d for endpoint %u", origin, g.endpoint);
    return arrival::repost;
  }
  ep->gfence_issued[origin].store(g.issued, std::memory_order_relaxed);
  ep->gfence_round[origin].store(g.round, std::memory_order_release);
  return arrival::repost;
}

LCI_CONTROL_ARRIVAL(control_kind::gfence, on_gfence);

}  // namespace

bool gfence_wait(endpoint* ep) {
  device& d = *ep->dev;
  const int n = LCI_NUM_PROCESSES;
  fence_wait(ep);
  const uint32_t round = ++ep->gfence_my_round;
  for (int r = 0; r < n; ++r) {
    gfence_payload g{ep->index, round, ep->issued.total(r)};
    send_control(d, r, make_control_imm(control_kind::gfence), &g, sizeof(g));
  }
  // A failed peer (LCI_PEER_FAILURE=continue) is not waited for: its
  // operations here never complete, and the fence reports the failure.
  for (int r = 0; r < n; ++r) {
    while ((ep->gfence_round[r].load(std::memory_order_acquire) < round ||
            ep->done.total(r) < ep->gfence_issued[r].load(std::memory_order_relaxed)) &&
           !peer_refused(r))
      d.progress();
  }
  // Everyone's targets are done; a barrier (driving this device too) ends it.
  // It fails once a peer failed, as does the fence.
  return runtime_barrier_with(d) && !g_any_peer_failed.load(std::memory_order_acquire);
}

}  // namespace lci

// LCI's own barrier (LCI_barrier, and the one inside LCI_initialize and
// LCI_finalize): a dissemination barrier of short messages over LCI's
// private endpoint; tags from barrier_tag (runtime.hpp).
#include <cstring>

#include "lci/core/barrier.hpp"

#include "lci/comp/sync.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/runtime.hpp"

namespace lci {

bool runtime_barrier() { return runtime_barrier_with(*g_runtime->barrier_ep->dev); }

bool runtime_barrier_with(device& also) {
  runtime& rt = *g_runtime;
  const int n = LCI_NUM_PROCESSES;
  if (n == 1) return true;
  if (g_any_peer_failed.load(std::memory_order_acquire)) return false;
  endpoint* ep = rt.barrier_ep;
  device& d = *ep->dev;
  // Not in the registry: no message can name it. On the heap: a barrier
  // given up after a peer failed leaves its receive posted, and the object
  // it signals must outlive it (freed at LCI_finalize).
  auto* sync = new comp_sync(1);
  auto give_up = [&] {
    std::lock_guard<std::mutex> g(rt.devices_mutex);
    rt.abandoned_syncs.push_back(sync);
    return false;
  };
  const uint32_t seq = rt.barrier_seq++;
  LCI_short_t token;
  memset(&token, 0, sizeof(token));
  // Dissemination: in round k, signal rank+2^k and wait for rank-2^k.
  uint32_t round = 0;
  for (int dist = 1; dist < n; dist <<= 1, ++round) {
    const int to = (LCI_RANK + dist) % n;
    const int from = (LCI_RANK - dist + n) % n;
    const LCI_tag_t tag = barrier_tag(seq, round);
    post_recv(ep, from, tag, nullptr, 0, false, sync, nullptr);
    while (send_eager(ep, msg_kind::short_msg, &token, LCI_SHORT_SIZE, to, tag, nullptr,
                      nullptr) != post_status::ok) {
      d.progress();
      if (&also != &d) also.progress();
      if (g_any_peer_failed.load(std::memory_order_acquire)) return give_up();
    }
    // (A receive from a failed peer completes with an error; a living
    // peer that saw the failure first stops sending: both end the wait.)
    LCI_request_t r;
    while (!sync->test(&r)) {
      d.progress();
      if (&also != &d) also.progress();
      if (g_any_peer_failed.load(std::memory_order_acquire)) return give_up();
    }
    if (r.flag != LCI_OK) return give_up();
  }
  delete sync;
  return true;
}

}  // namespace lci

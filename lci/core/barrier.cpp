// LCI's own barrier (LCI_barrier, and the one inside LCI_initialize and
// LCI_finalize): a dissemination barrier of short messages over LCI's
// private endpoint; tags from barrier_tag (runtime.hpp).
#include <cstring>

#include "lci/core/barrier.hpp"

#include "lci/comp/sync.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/runtime.hpp"

namespace lci {

void runtime_barrier() { runtime_barrier_with(*g_runtime->barrier_ep->dev); }

void runtime_barrier_with(device& also) {
  runtime& rt = *g_runtime;
  const int n = LCI_NUM_PROCESSES;
  if (n == 1) return;
  endpoint* ep = rt.barrier_ep;
  device& d = *ep->dev;
  comp_sync sync(1);  // not in the registry: no message can name it
  const uint32_t seq = rt.barrier_seq++;
  LCI_short_t token;
  memset(&token, 0, sizeof(token));
  // Dissemination: in round k, signal rank+2^k and wait for rank-2^k.
  uint32_t round = 0;
  for (int dist = 1; dist < n; dist <<= 1, ++round) {
    const int to = (LCI_RANK + dist) % n;
    const int from = (LCI_RANK - dist + n) % n;
    const LCI_tag_t tag = barrier_tag(seq, round);
    post_recv(ep, from, tag, nullptr, 0, false, &sync, nullptr);
    while (send_eager(ep, msg_kind::short_msg, &token, LCI_SHORT_SIZE, to, tag, nullptr,
                      nullptr) != post_status::ok) {
      d.progress();
      if (&also != &d) also.progress();
    }
    while (!sync.test(nullptr)) {
      d.progress();
      if (&also != &d) also.progress();
    }
  }
}

}  // namespace lci

// RDMA pieces are sized per native peer (exactly 3 ranks on one host,
// LCI_SHM=1, LCI_TEST_HOOKS=1): on a device created after
// LCIT_native_refuse_cma(2), every rank's bulk data to rank 2 is pipelined
// through the rings, one cell per piece, while cross-memory attach still
// serves ranks 0 and 1. The longest piece towards a rank served by
// cross-memory attach must stay unlimited (one peer without it must not
// shrink everyone's transfers to one cell), and long messages between
// every pair arrive intact either way.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr size_t k_long = size_t(1) << 20;

void run() {
  OK(LCIT_native_refuse_cma(2));
  LCI_device_t dev;
  OK(LCI_device_init(&dev));
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, dev, plist));
  OK(LCI_plist_free(&plist));

  const int me = LCI_RANK;
  for (int r = 0; r < 3; ++r) {
    const size_t piece = LCIT_rdma_piece(dev, r);
    const bool pipelined = r == 2;
    if (pipelined)
      EXPECT(piece <= static_cast<size_t>(LCI_MEDIUM_SIZE) + 4096,
             "rank %d: piece towards rank %d is %zu bytes, more than a cell", me, r, piece);
    else
      EXPECT(piece >= k_long, "rank %d: piece towards rank %d is %zu bytes (one pipelined peer "
             "shrank it)", me, r, piece);
  }
  allgather_u64(0);

  // Every ordered pair: one long message, every byte checked.
  comp cq(LCI_COMPLETION_QUEUE);
  std::vector<uint8_t> out(k_long), in(k_long);
  LCI_segment_t out_seg, in_seg;
  OK(LCI_memory_register(dev, out.data(), k_long, &out_seg));
  OK(LCI_memory_register(dev, in.data(), k_long, &in_seg));
  for (int from = 0; from < 3; ++from)
    for (int to = 0; to < 3; ++to) {
      if (from == to || (me != from && me != to)) continue;
      phase("long message from rank %d to rank %d", from, to);
      const LCI_tag_t tag = static_cast<LCI_tag_t>(from * 3 + to);
      if (me == to) {
        memset(in.data(), 0, k_long);
        LCI_lbuffer_t lb{in_seg, in.data(), k_long};
        RETRY(LCI_recvl(ep, lb, from, tag, cq.handle(), nullptr));
      } else {
        fill(out.data(), k_long, seed_of(from, to));
        LCI_lbuffer_t lb{out_seg, out.data(), k_long};
        RETRY(LCI_sendl(ep, lb, to, tag, cq.handle(), nullptr));
      }
      deadline d;
      LCI_request_t r;
      while (LCI_queue_pop(cq.handle(), &r) != LCI_OK) {
        LCI_progress(dev);
        d.check("the long message");
      }
      EXPECT(r.flag == LCI_OK, "long message %d -> %d: flag %d", from, to, r.flag);
      if (me == to) {
        const size_t bad = mismatch(in.data(), k_long, seed_of(from, to));
        EXPECT(bad == SIZE_MAX, "byte %zu of the message from rank %d differs", bad, from);
      }
    }
  allgather_u64(0);
  OK(LCI_memory_deregister(&out_seg));
  OK(LCI_memory_deregister(&in_seg));
  OK(LCI_endpoint_free(&ep));
  OK(LCI_device_free(&dev));
}

}  // namespace

int main() {
  harness_init(180);
  if (LCI_NUM_PROCESSES != 3) die("needs exactly 3 ranks");
  run();
  return harness_finish("native_mixed_pieces");
}

// One-sided operations on memory its owner deregistered (np 2, or 1 for a
// rank's own memory): rank r registers a buffer, gives its segment to its
// left neighbour, deregisters it and keeps the memory (every byte the
// sentinel). The neighbour's LCI_putl and LCI_getl with the old segment
// must fail (the call returns LCI_ERR_FATAL, or the operation completes
// with a flag other than LCI_OK), as a NIC refuses a released key: the
// buffer stays untouched. A put into a live registration afterwards works.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

bool refused(const char* what, LCI_error_t rc, comp& lc) {
  if (rc == LCI_ERR_FATAL) return true;
  EXPECT(rc == LCI_OK, "%s returned %d", what, rc);
  if (rc != LCI_OK) return false;
  const LCI_request_t r = lc.take1(what);
  EXPECT(r.flag != LCI_OK, "%s: completed with LCI_OK on deregistered memory", what);
  return r.flag != LCI_OK;
}

void run() {
  const int me = LCI_RANK, n = LCI_NUM_PROCESSES;
  const int right = (me + 1) % n;
  const size_t len = size_t(64) << 10;
  uint8_t* gone = static_cast<uint8_t*>(
      mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  uint8_t* live = static_cast<uint8_t*>(
      mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (gone == MAP_FAILED || live == MAP_FAILED) die("mmap");
  memset(gone, k_sentinel, len);
  memset(live, k_sentinel, len);
  LCI_segment_t gone_seg, live_seg;
  OK(LCI_memory_register(LCI_UR_DEVICE, gone, len, &gone_seg));
  OK(LCI_memory_register(LCI_UR_DEVICE, live, len, &live_seg));
  auto gone_regions = exchange_regions(gone_seg, gone, len);
  auto live_regions = exchange_regions(live_seg, live, len);
  OK(LCI_memory_deregister(&gone_seg));
  allgather_u64(0);  // every rank's buffer is deregistered

  comp lc(LCI_COMPLETION_QUEUE);
  lbuf local(mem_kind::lalloc, len);
  fill(local.data(), len, seed_of(static_cast<uint32_t>(me), 1));
  const remote_region& rr = gone_regions[static_cast<size_t>(right)];
  int refusals = 0;
  for (size_t size : {size_t(8192), len}) {
    phase("putl of %zu bytes into deregistered memory", size);
    refusals += refused("putl", LCI_putl(LCI_UR_ENDPOINT, local.view(size), lc.handle(), right, 1,
                                         remote_lbuffer(rr, 0, size), LCI_DEFAULT_COMP_REMOTE,
                                         nullptr),
                        lc);
    phase("getl of %zu bytes from deregistered memory", size);
    LCI_lbuffer_t into = local.view(size);
    refusals += refused("getl", LCI_getl(LCI_UR_ENDPOINT, &into, size, lc.handle(), right, 1,
                                         remote_lbuffer(rr, 0, size), LCI_DEFAULT_COMP_REMOTE,
                                         nullptr),
                        lc);
  }
  EXPECT(refusals == 4, "%d of 4 operations on deregistered memory refused", refusals);
  allgather_u64(0);  // every rank's operations are over
  size_t bad = not_byte(gone, 0, len, k_sentinel);
  EXPECT(bad == SIZE_MAX, "byte %zu of the deregistered buffer was written", bad);

  phase("putl into live memory");
  const remote_region& lr = live_regions[static_cast<size_t>(right)];
  RETRY(LCI_putl(LCI_UR_ENDPOINT, local.view(len), lc.handle(), right, 2,
                 remote_lbuffer(lr, 0, len), LCI_DEFAULT_COMP_REMOTE, nullptr));
  EXPECT(lc.take1("the live putl").flag == LCI_OK, "putl into live memory failed");
  allgather_u64(0);
  const int left = (me + n - 1) % n;
  bad = mismatch(live, len, seed_of(static_cast<uint32_t>(left), 1));
  EXPECT(bad == SIZE_MAX, "byte %zu of the live buffer differs", bad);
  // Target completions of the live put (LCI_UR_CQ) are not checked here.
  release_regions(gone_regions);
  release_regions(live_regions);
  OK(LCI_memory_deregister(&live_seg));
  munmap(gone, len);
  munmap(live, len);
}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("one_sided_deregistered");
}

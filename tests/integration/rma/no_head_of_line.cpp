// A large transfer never holds up other traffic to its target (exactly 3
// ranks on one host, the native transport with cross-memory attach,
// LCI_RDV_PROTOCOL=writeimm). Rank 0 sends rank 1 one long message of
// k_big bytes, copied in one piece; meanwhile rank 2 keeps sending rank 1
// small messages (LCI_putma). Rank 1 counts the small messages it takes
// while the copy is visibly under way (the first byte of its buffer
// written, the last not yet): a transport that holds a cell of rank 1's
// ring during the copy lets none through. Counts, not times: at least
// k_min_during must arrive in that window.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr size_t k_big = size_t(512) << 20;
constexpr int k_min_during = 3;
constexpr LCI_tag_t k_big_tag = 5, k_small_tag = 6, k_stop_tag = 7;
constexpr uint8_t k_byte = 0x5A;

void* map(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("cannot map %zu bytes", n);
  return p;
}

void sender_of_big() {
  char* src = static_cast<char*>(map(k_big));
  memset(src, k_byte, k_big);
  LCI_segment_t seg;
  OK(LCI_memory_register(LCI_UR_DEVICE, src, k_big, &seg));
  allgather_u64(0);  // everyone ready
  comp cq(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t lb{seg, src, k_big};
  RETRY(LCI_sendl(LCI_UR_ENDPOINT, lb, 1, k_big_tag, cq.handle(), nullptr));
  const LCI_request_t r = cq.take1("the long message's completion");
  EXPECT(r.flag == LCI_OK, "sendl failed: %d", r.flag);
  allgather_u64(0);
  OK(LCI_memory_deregister(&seg));
  munmap(src, k_big);
}

void target() {
  volatile uint8_t* dst = static_cast<volatile uint8_t*>(map(k_big));
  LCI_segment_t seg;
  OK(LCI_memory_register(LCI_UR_DEVICE, const_cast<uint8_t*>(dst), k_big, &seg));
  comp cq(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t lb{seg, const_cast<uint8_t*>(dst), k_big};
  RETRY(LCI_recvl(LCI_UR_ENDPOINT, lb, 0, k_big_tag, cq.handle(), nullptr));
  allgather_u64(0);  // everyone ready
  long before = 0, during = 0, after = 0;
  bool done = false;
  deadline d;
  while (!done) {
    LCI_progress(LCI_UR_DEVICE);
    LCI_request_t req;
    while (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_OK) {
      const bool started = dst[0] == k_byte, finished = dst[k_big - 1] == k_byte;
      EXPECT(req.flag == LCI_OK && req.rank == 2 && req.tag == k_small_tag,
             "small message {flag %d, rank %d, tag %u}", req.flag, req.rank, req.tag);
      (finished ? after : started ? during : before) += 1;
      LCI_mbuffer_free(req.data.mbuffer);
    }
    done = cq.pending() > 0;
    d.check("the long message");
  }
  const LCI_request_t r = cq.take1("the long message");
  EXPECT(r.flag == LCI_OK && r.data.lbuffer.length == k_big, "recvl {flag %d, %zu bytes}",
         r.flag, r.data.lbuffer.length);
  size_t bad = SIZE_MAX;
  for (size_t i = 0; i < k_big && bad == SIZE_MAX; i += 4096)
    if (dst[i] != k_byte) bad = i;
  EXPECT(bad == SIZE_MAX, "byte %zu of the long message differs", bad);
  printf("rank 1: small messages taken before the copy %ld, during it %ld, after it %ld\n",
         before, during, after);
  EXPECT(during >= k_min_during,
         "only %ld small messages got through while the copy ran (at least %d expected)", during,
         k_min_during);
  // Stop the small sender.
  char stop = 1;
  LCI_mbuffer_t mb{&stop, 1};
  RETRY(LCI_putma(LCI_UR_ENDPOINT, mb, 2, k_stop_tag, LCI_DEFAULT_COMP_REMOTE));
  allgather_u64(0);
  OK(LCI_memory_deregister(&seg));
  munmap(const_cast<uint8_t*>(dst), k_big);
}

void small_sender() {
  allgather_u64(0);  // everyone ready
  char byte = 0;
  long sent = 0;
  bool stop = false;
  deadline d;
  while (!stop) {
    LCI_mbuffer_t mb{&byte, 1};
    if (LCI_putma(LCI_UR_ENDPOINT, mb, 1, k_small_tag, LCI_DEFAULT_COMP_REMOTE) == LCI_OK) ++sent;
    LCI_progress(LCI_UR_DEVICE);
    LCI_request_t req;
    while (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_OK) {
      stop = stop || req.tag == k_stop_tag;
      LCI_mbuffer_free(req.data.mbuffer);
    }
    d.check("rank 1's stop message");
  }
  printf("rank 2: sent %ld small messages\n", sent);
  allgather_u64(0);
}

}  // namespace

int main() {
  harness_init(240);
  if (LCI_NUM_PROCESSES != 3) die("needs exactly 3 ranks");
  if (LCIX_transport_of(LCI_UR_DEVICE, 1) != LCIX_TRANSPORT_NATIVE)
    die("rank 1 is not served by the native transport (run with LCI_SHM=1 on one host)");
  if (LCI_RANK == 0)
    sender_of_big();
  else if (LCI_RANK == 1)
    target();
  else
    small_sender();
  return harness_finish("no_head_of_line");
}

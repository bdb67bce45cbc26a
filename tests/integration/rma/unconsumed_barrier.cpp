// More one-sided medium messages waiting unconsumed at a rank than its
// packet pool holds do not stop LCI_barrier, and none of them is lost.
//
// Rank 0 puts --messages medium messages (LCI_putma, into LCI_UR_CQ) to
// rank 1, which does not pop its queue; then every rank enters LCI_barrier.
// Each message held by the queue keeps a packet of rank 1's pool, so past
// LCI_SERVER_NUM_PKTS of them the barrier's own message can only arrive if
// the surplus is kept elsewhere. After the barrier rank 1 pops and checks
// every message: each index exactly once, from rank 0, with its tag, length
// and bytes.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

// At least 4 bytes (the index), at most a few hundred: the surplus is kept
// on the heap while the barrier runs.
size_t length_of(uint32_t i) { return 4 + (i * 37u) % 250u; }
LCI_tag_t tag_of(uint32_t i) { return static_cast<LCI_tag_t>(i % 50000u); }

void send_all(uint32_t count) {
  std::vector<uint8_t> buf(LCI_MEDIUM_SIZE);
  for (uint32_t i = 0; i < count; ++i) {
    phase("putma %u of %u", i, count);
    const size_t n = length_of(i);
    memcpy(buf.data(), &i, 4);
    fill(buf.data() + 4, n - 4, seed_of(i, 0));
    LCI_mbuffer_t m{buf.data(), n};
    RETRY(LCI_putma(LCI_UR_ENDPOINT, m, 1, tag_of(i), LCI_DEFAULT_COMP_REMOTE));
  }
}

void take_all(uint32_t count) {
  std::vector<uint8_t> seen(count, 0);
  deadline d;
  uint32_t taken = 0;
  while (taken < count) {
    phase("popping message %u of %u", taken, count);
    LCI_request_t r;
    if (LCI_queue_pop(LCI_UR_CQ, &r) != LCI_OK) {
      progress(d, "the messages after the barrier");
      continue;
    }
    ++taken;
    const size_t n = r.data.mbuffer.length;
    uint32_t i = UINT32_MAX;
    if (n >= 4) memcpy(&i, r.data.mbuffer.address, 4);
    EXPECT(r.flag == LCI_OK && r.rank == 0, "message {flag %d, rank %d}", r.flag, r.rank);
    if (i < count) {
      EXPECT(seen[i] == 0, "message %u delivered twice", i);
      seen[i] = 1;
      EXPECT(r.tag == tag_of(i), "message %u: tag %u", i, r.tag);
      EXPECT(n == length_of(i), "message %u: %zu bytes, not %zu", i, n, length_of(i));
      if (n == length_of(i)) {
        const size_t bad = mismatch(static_cast<uint8_t*>(r.data.mbuffer.address) + 4, n - 4,
                                    seed_of(i, 0));
        EXPECT(bad == SIZE_MAX, "message %u: byte %zu differs", i, bad + 4);
      }
    } else {
      EXPECT(false, "a message with index %u (of %u) and %zu bytes", i, count, n);
    }
    LCI_mbuffer_free(r.data.mbuffer);
  }
  // Nothing more than was sent.
  for (int k = 0; k < 1000; ++k) LCI_progress(LCI_UR_DEVICE);
  LCI_request_t extra;
  EXPECT(LCI_queue_pop(LCI_UR_CQ, &extra) != LCI_OK, "a message more than the %u sent", count);
  uint32_t missing = 0;
  for (uint32_t i = 0; i < count; ++i) missing += seen[i] == 0;
  EXPECT(missing == 0, "%u of %u messages never delivered", missing, count);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t count = 9000;
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--messages") == 0) count = static_cast<uint32_t>(atol(argv[i + 1]));
  harness_init(150);
  if (LCI_NUM_PROCESSES < 2) die("needs 2 ranks");
  if (LCI_RANK == 0) send_all(count);
  phase("LCI_barrier with %u messages unconsumed at rank 1", count);
  OK(LCI_barrier());
  if (LCI_RANK == 1) take_all(count);
  return harness_finish("unconsumed_barrier");
}

// Messages lost after tcp reported them sent are named, however much
// traffic follows them.
//
// Two ranks over tcp, LCI_TEST_HOOKS=1, LCI_OFI_HEARTBEAT_GRACE=1. After a
// first exchange (so that heartbeats flow both ways), rank 0 loses its
// next k_lost messages (LCIT_lose_next_sends: counted as sent, completed,
// never sent, as a connection that took them and then broke would), then
// both ranks keep exchanging messages. Each heartbeat of rank 0 arrives
// after more of rank 0's messages than were lost, so the count of what
// arrived makes up for the lost ones; rank 1 must still find the shortfall
// at every heartbeat and end the job naming rank 0's lost messages within
// a few seconds. If the exchanges run on for k_limit_s, the loss went
// unnamed: the program says so and fails.
//
// usage: lost_send   (2 ranks under lcrun, FI_PROVIDER=tcp)
#include <cstdio>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr int k_lost = 2;
constexpr size_t k_len = 1000;
constexpr double k_limit_s = 40;

void ping(LCI_tag_t tag) {
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> b(k_len, 0);
  const int peer = 1 - LCI_RANK;
  OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{b.data(), k_len}, peer, tag, q.handle(), nullptr));
  std::vector<char> s(k_len);
  fill(s.data(), k_len, seed_of(9, tag));
  RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{s.data(), k_len}, peer, tag));
  const LCI_request_t r = q.take1("the exchange", 20);
  EXPECT(r.flag == LCI_OK && r.rank == peer && r.data.mbuffer.length == k_len,
         "exchange {flag %d, rank %d, %zu bytes}", r.flag, r.rank, r.data.mbuffer.length);
  const size_t bad = mismatch(b.data(), k_len, seed_of(9, tag));
  EXPECT(bad == SIZE_MAX, "byte %zu of exchange %u differs", bad, tag);
}

}  // namespace

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs 2 ranks");
  ping(1);
  ping(2);
  if (LCI_RANK == 0) {
    phase("losing %d messages", k_lost);
    OK(LCIT_lose_next_sends(k_lost));
    std::vector<char> m(k_len, 'x');
    for (int i = 0; i < k_lost; ++i)
      RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), k_len}, 1,
                      static_cast<LCI_tag_t>(500 + i)));
  }
  phase("exchanging after the loss");
  deadline limit(k_limit_s);
  int rounds = 0;
  while (!limit.passed()) ping(static_cast<LCI_tag_t>(1000 + rounds++ % 1000));
  EXPECT(false, "%d exchanges over %g s after rank 0 lost %d messages, and no rank named the loss",
         rounds, k_limit_s, k_lost);
  return harness_finish("lost_send");
}

// Survivors continue: a send whose connection broke is suspicion, not
// death (lci/core/peer_failure.hpp).
//
// Two ranks over tcp, LCI_PEER_FAILURE=continue, LCI_TEST_HOOKS=1. After
// a first exchange (so that heartbeats flow both ways), rank 0 makes its
// next k_failed message sends fail as if their connection had broken
// before they left (LCIT_fail_next_sends), and sends k_count medium
// messages to rank 1. Rank 1 is alive: rank 0 must not declare it failed,
// the failed sends must go out again once rank 1 proved alive (its
// heartbeat), and rank 1 must receive every message once, with its bytes.
// Then both ranks exchange once more and finalize; lcrun exits 0.
//
// usage: broken_send   (2 ranks under lcrun, FI_PROVIDER=tcp)
#include <cstdio>
#include <cstring>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr int k_count = 16, k_failed = 4;
constexpr size_t k_len = 1000;  // past the inject size: a send with a completion

void ping(LCI_tag_t tag) {
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> b(k_len, 0);
  const int peer = 1 - LCI_RANK;
  OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{b.data(), k_len}, peer, tag, q.handle(), nullptr));
  std::vector<char> s(k_len, 'p');
  RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{s.data(), k_len}, peer, tag));
  const LCI_request_t r = q.take1("the exchange");
  EXPECT(r.flag == LCI_OK && b[0] == 'p', "exchange {flag %d}", r.flag);
}

}  // namespace

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs 2 ranks");
  ping(100);
  ping(101);
  if (LCI_RANK == 0) {
    phase("sends with %d of them failed as if the connection broke", k_failed);
    OK(LCIT_fail_next_sends(k_failed));
    std::vector<char> m(k_len);
    for (int i = 0; i < k_count; ++i) {
      fill(m.data(), k_len, seed_of(7, static_cast<uint32_t>(i)));
      RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), k_len}, 1,
                      static_cast<LCI_tag_t>(i)));
    }
  } else {
    phase("receiving every message");
    comp q(LCI_COMPLETION_QUEUE);
    std::vector<std::vector<char>> bufs(k_count, std::vector<char>(k_len, 0));
    for (int i = 0; i < k_count; ++i)
      OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{bufs[i].data(), k_len}, 0,
                   static_cast<LCI_tag_t>(i), q.handle(), nullptr));
    for (int i = 0; i < k_count; ++i) {
      const LCI_request_t r = q.take1("a message from rank 0", 30);
      EXPECT(r.flag == LCI_OK && r.rank == 0 && r.tag < k_count && r.data.mbuffer.length == k_len,
             "recvm {flag %d, rank %d, tag %u, %zu bytes}", r.flag, r.rank, r.tag,
             r.data.mbuffer.length);
      if (r.flag != LCI_OK || r.tag >= k_count) continue;
      const size_t bad = mismatch(bufs[r.tag].data(), k_len, seed_of(7, r.tag));
      EXPECT(bad == SIZE_MAX, "byte %zu of message %u differs", bad, r.tag);
    }
  }
  EXPECT(LCIX_peer_failed(1 - LCI_RANK) == 0, "rank %d declared its living peer failed",
         LCI_RANK);
  ping(102);
  return harness_finish("broken_send");
}

// Survivors continue when a rank's first contact with a local peer comes
// after that peer died (LCI_SHM_MAP_ALL=0: segments are mapped at the first
// contact; LCI_PEER_FAILURE=continue, lcrun --keep-going, 4 ranks).
//
// Rank 3 (the victim) kills itself after an LCI_barrier. LCI's barrier is a
// dissemination barrier (rank r sends to r+1 and r+2 of 4), so rank 0 has
// never sent to rank 3. Rank 0 waits until the victim is gone, then sends
// to it: its segment cannot be opened any more, and the send must end in
// LCI_ERR_FATAL once rank 3 is declared failed, never in a fatal error of
// the job or a crash (the native transport maps a private stand-in segment
// for it and finds it dead at its next check). Ranks 1 and 2 wait until
// they learn of the failure. The survivors then finalize; lcrun reports
// the victim (exit 137).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 4) die("needs 4 ranks");
  const int victim = 3;
  LCI_barrier();
  if (LCI_RANK == victim) raise(SIGKILL);
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::seconds(20);
  if (LCI_RANK == 0) {
    // Long enough for lcrun to reap the victim (its /proc entries are gone).
    usleep(500000);
    std::vector<char> m(64, 'x');
    LCI_error_t rc = LCI_OK;
    int sends = 0;
    while (clock::now() < end) {
      rc = LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), m.size()}, victim, 1);
      ++sends;
      if (rc == LCI_ERR_FATAL) break;
      LCI_progress(LCI_UR_DEVICE);
    }
    EXPECT(rc == LCI_ERR_FATAL, "a send to the dead rank %d returned %d after %d tries", victim,
           rc, sends);
  } else {
    while (!LCIX_peer_failed(victim) && clock::now() < end) LCI_progress(LCI_UR_DEVICE);
  }
  EXPECT(LCIX_peer_failed(victim) == 1, "rank %d is not known failed", victim);
  for (int r = 0; r < victim; ++r)
    EXPECT(LCIX_peer_failed(r) == 0, "living rank %d is known failed", r);
  return harness_finish("first_contact_dead");
}

/* The parent's program: LCI_* and LCT_* names through lci.h alone, and the
 * packet size the parent chose with LCI_PACKET_SIZE_DEFAULT=16384. */
#include <lci.h>
#include <stdio.h>

int main(void) {
  LCI_initialize();
  LCT_time_t t0 = LCT_now();
  LCI_barrier();
  int ok = LCI_PACKET_SIZE_DEFAULT == 16384 && LCI_MEDIUM_SIZE > 8192 &&
           LCI_MEDIUM_SIZE < 16384 && LCT_now() >= t0;
  printf("rank %d of %d: parent_app %s (LCI_MEDIUM_SIZE %d)\n", LCI_RANK, LCI_NUM_PROCESSES,
         ok ? "ok" : "FAILED", LCI_MEDIUM_SIZE);
  LCI_finalize();
  return ok ? 0 : 1;
}

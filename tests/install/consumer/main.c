/* Sends one short message around a ring and checks it. */
#include <lci.h>
#include <string.h>

int main(void) {
  LCI_initialize();
  int peer = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  int from = (LCI_RANK + LCI_NUM_PROCESSES - 1) % LCI_NUM_PROCESSES;
  LCI_short_t v;
  memset(&v, 0, sizeof(v));
  *(int*)&v = 42 + LCI_RANK;
  LCI_recvs(LCI_UR_ENDPOINT, from, 1, LCI_UR_CQ, NULL);
  LCI_barrier();
  while (LCI_sends(LCI_UR_ENDPOINT, v, peer, 1) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  LCI_request_t r;
  while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  int ok = r.rank == from && *(int*)&r.data.immediate == 42 + from;
  LCI_finalize();
  printf("rank %d: consumer %s\n", LCI_RANK, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

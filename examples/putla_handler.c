/*
 * putla_handler.c - one-sided long puts into buffers the target allocates,
 * delivered to a handler.
 *
 * Shows:
 *   - an endpoint whose message port completes through a handler that is
 *     also its default completion object:
 *       LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER)
 *       LCI_plist_set_default_comp(plist, handler)
 *     so a put naming LCI_DEFAULT_COMP_REMOTE runs that handler at the target;
 *   - LCI_putla: a rendezvous into an LCI long buffer that the target
 *     allocates; the origin's buffer (from LCI_lbuffer_alloc) is LCI's until
 *     the origin's completion (command port: the default queue LCI_UR_CQ);
 *     a completion with flag LCI_ERR_RETRY means the target could not
 *     allocate and nothing arrived: the put may simply be issued again;
 *   - the target owns the delivered buffer and frees it with
 *     LCI_lbuffer_free; a handler must not call LCI, so it only checks and
 *     records the request, and main() frees the buffers afterwards.
 *
 * Rank r puts NMSG messages of different sizes to rank r+1 (ring; a lone
 * rank puts to itself).
 * Run:  lcrun -n 2 ./putla_handler
 * Exits 0 if every message arrived intact, once, with the expected request.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lci.h"

#define NMSG 4
static const size_t sizes[NMSG] = {1, 12345, (size_t)1 << 16, (size_t)1 << 20};

static char pattern(int sender, int msg, size_t i) { return (char)(sender * 31 + msg * 7 + i); }

/* Filled by the handler. Handlers run inside LCI calls of this program's
 * only thread here; a program with several progressing threads would need
 * atomics. */
static int origin;                  /* the rank expected to put to us */
static LCI_request_t arrived[NMSG]; /* requests, in arrival order */
static int narrived;
static int handler_errors;

static void on_put(LCI_request_t req) {
  size_t i;
  const char* data = req.data.lbuffer.address;
  int ok = req.flag == LCI_OK && req.rank == origin && req.type == LCI_LONG && req.tag < NMSG &&
           req.user_context == NULL && narrived < NMSG &&
           req.data.lbuffer.length == sizes[req.tag] && req.data.lbuffer.segment != NULL;
  for (i = 0; ok && i < req.data.lbuffer.length; i++)
    if (data[i] != pattern(origin, (int)req.tag, i)) ok = 0;
  if (!ok) handler_errors++;
  if (narrived < NMSG) arrived[narrived++] = req; /* freed by main() */
}

int main(void) {
  LCI_comp_t handler;
  LCI_plist_t plist;
  LCI_endpoint_t ep;
  LCI_lbuffer_t bufs[NMSG];
  int target, m, local_done = 0, retries = 0, errors = 0;
  int seen[NMSG] = {0};
  size_t i;

  LCI_initialize();
  target = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  origin = (LCI_RANK + LCI_NUM_PROCESSES - 1) % LCI_NUM_PROCESSES;

  /* Every process creates the same endpoints in the same order. */
  LCI_handler_create(LCI_UR_DEVICE, on_put, &handler);
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER);
  LCI_plist_set_default_comp(plist, handler);
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);

  for (m = 0; m < NMSG; m++) {
    while (LCI_lbuffer_alloc(LCI_UR_DEVICE, sizes[m], &bufs[m]) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
    for (i = 0; i < sizes[m]; i++) ((char*)bufs[m].address)[i] = pattern(LCI_RANK, m, i);
    while (LCI_putla(ep, bufs[m], LCI_UR_CQ, target, (LCI_tag_t)m, LCI_DEFAULT_COMP_REMOTE,
                     &bufs[m]) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
  }

  /* Progress until our puts are done here and the peer's have arrived. */
  while (local_done < NMSG || narrived < NMSG) {
    LCI_request_t req;
    LCI_progress(LCI_UR_DEVICE);
    if (LCI_queue_pop(LCI_UR_CQ, &req) != LCI_OK) continue;
    m = (int)((LCI_lbuffer_t*)req.user_context - bufs);
    if (m < 0 || m >= NMSG || req.rank != target || req.tag != (LCI_tag_t)m ||
        req.type != LCI_LONG || req.data.lbuffer.address != bufs[m].address) {
      errors++;
      local_done++;
    } else if (req.flag == LCI_ERR_RETRY) {
      /* The target was short of memory; nothing arrived. Try again. */
      retries++;
      while (LCI_putla(ep, bufs[m], LCI_UR_CQ, target, (LCI_tag_t)m, LCI_DEFAULT_COMP_REMOTE,
                       &bufs[m]) == LCI_ERR_RETRY)
        LCI_progress(LCI_UR_DEVICE);
    } else {
      if (req.flag != LCI_OK) errors++;
      local_done++;
    }
  }

  /* Outside the handler now: each message once, then give the buffers back. */
  for (m = 0; m < narrived; m++) {
    if (arrived[m].tag < NMSG && seen[arrived[m].tag]++) errors++;
    LCI_lbuffer_free(arrived[m].data.lbuffer);
  }
  for (m = 0; m < NMSG; m++) LCI_lbuffer_free(bufs[m]);
  errors += handler_errors;

  LCI_barrier();
  printf("putla_handler: rank %d -> %d, %d puts up to %zu bytes (%d retried): %s (%d errors)\n",
         LCI_RANK, target, NMSG, sizes[NMSG - 1], retries, errors ? "FAIL" : "PASS", errors);
  LCI_endpoint_free(&ep);
  LCI_finalize();
  return errors ? 1 : 0;
}

/*
 * pingpong_medium_sync.c - ping-pong of medium messages, completion by a
 * synchronizer.
 *
 * Shows:
 *   - building an endpoint from a property list: the message port (receives)
 *     signals a synchronizer instead of the default queue;
 *   - LCI_sync_create with threshold 1: it triggers after one completion;
 *     LCI_sync_test returns LCI_OK once (copying the request out and resetting
 *     the synchronizer for reuse), LCI_ERR_RETRY before that;
 *   - LCI_sendm retried on LCI_ERR_RETRY, LCI_recvm into a user buffer.
 * LCI_sync_wait would block without driving progress, so with a single
 * thread we loop on LCI_sync_test + LCI_progress.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself).
 * Run:  lcrun -n 2 ./pingpong_medium_sync [iterations per size]
 * Exits 0 if every message arrived intact with the expected rank, tag, length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

static char pattern(int sender, int iter, size_t i) { return (char)(sender * 31 + iter * 7 + i); }

static void fill(char* buf, size_t len, int sender, int iter) {
  size_t i;
  for (i = 0; i < len; i++) buf[i] = pattern(sender, iter, i);
}

static int check(const char* buf, size_t len, int sender, int iter) {
  size_t i;
  for (i = 0; i < len; i++)
    if (buf[i] != pattern(sender, iter, i)) return 0;
  return 1;
}

static void send_medium(LCI_endpoint_t ep, char* buf, size_t len, int peer, LCI_tag_t tag,
                        int iter) {
  LCI_mbuffer_t msg;
  fill(buf, len, LCI_RANK, iter);
  msg.address = buf;
  msg.length = len;
  while (LCI_sendm(ep, msg, peer, tag) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
}

static int wait_recv(LCI_comp_t sync, char* buf, size_t len, int peer, LCI_tag_t tag,
                     int iter) {
  LCI_request_t req; /* threshold 1: LCI_sync_test writes exactly one request */
  while (LCI_sync_test(sync, &req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  return req.flag == LCI_OK && req.rank == peer && req.tag == tag && req.type == LCI_MEDIUM &&
         req.data.mbuffer.address == buf && req.data.mbuffer.length == len &&
         req.user_context == NULL && check(buf, len, peer, iter);
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  size_t sizes[] = {0, 1, 64, 2048, 0 /* LCI_MEDIUM_SIZE, set below */};
  const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  int peer, pinger, s, i, errors = 0;
  char *sbuf, *rbuf;
  LCI_plist_t plist;
  LCI_endpoint_t ep;
  LCI_comp_t sync;

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer;
  sizes[nsizes - 1] = (size_t)LCI_MEDIUM_SIZE;
  sbuf = malloc((size_t)LCI_MEDIUM_SIZE);
  rbuf = malloc((size_t)LCI_MEDIUM_SIZE);

  /* Every process creates its endpoints in the same order with the same
   * properties: the k-th endpoints of all processes talk to each other. */
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist); /* the endpoint keeps its own copy */
  LCI_sync_create(LCI_UR_DEVICE, 1, &sync);

  for (s = 0; s < nsizes; s++) {
    for (i = 0; i < iters; i++) {
      LCI_tag_t tag = (LCI_tag_t)s;
      LCI_mbuffer_t in;
      in.address = rbuf;
      in.length = (size_t)LCI_MEDIUM_SIZE; /* capacity; the completion reports the size */
      LCI_recvm(ep, in, peer, tag, sync, NULL);
      if (pinger) {
        send_medium(ep, sbuf, sizes[s], peer, tag, i);
        if (!wait_recv(sync, rbuf, sizes[s], peer, tag, i)) errors++;
      } else {
        if (!wait_recv(sync, rbuf, sizes[s], peer, tag, i)) errors++;
        send_medium(ep, sbuf, sizes[s], peer, tag, i);
      }
    }
  }

  LCI_barrier(); /* free the endpoint only once no peer can still address it */
  printf("pingpong_medium_sync: rank %d <-> %d: %s (%d errors)\n", LCI_RANK, peer,
         errors ? "FAIL" : "PASS", errors);
  LCI_sync_free(&sync);
  LCI_endpoint_free(&ep);
  free(sbuf);
  free(rbuf);
  LCI_finalize();
  return errors ? 1 : 0;
}

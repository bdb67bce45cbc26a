/*
 * pingpong_short_queue.c - ping-pong of short messages, completion by queue.
 *
 * Shows:
 *   - LCI_sends: a short message is an LCI_short_t (LCI_SHORT_SIZE = 32 bytes)
 *     passed by value; the send is done when the call returns LCI_OK;
 *   - LCI_ERR_RETRY: the network is momentarily busy; nothing was sent, so
 *     drive progress and try again;
 *   - LCI_recvs completing into the default completion queue LCI_UR_CQ,
 *     which LCI_queue_pop polls;
 *   - LCI_progress: nothing completes unless somebody calls it.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself).
 * Run:  lcrun -n 2 ./pingpong_short_queue [iterations]
 * Exits 0 if every message arrived intact with the expected rank and tag.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

/* The bytes `sender` puts in message number `iter`. */
static void fill(LCI_short_t* s, int sender, int iter) {
  int i;
  for (i = 0; i < LCI_SHORT_SIZE; i++) s->val[i] = (char)(sender * 31 + iter + i);
}

static int check(const LCI_short_t* s, int sender, int iter) {
  LCI_short_t expect;
  fill(&expect, sender, iter);
  return memcmp(s->val, expect.val, LCI_SHORT_SIZE) == 0;
}

static void send_short(int peer, LCI_tag_t tag, int iter) {
  LCI_short_t msg;
  fill(&msg, LCI_RANK, iter);
  /* LCI_ERR_RETRY means "had no effect": progress frees resources, then retry. */
  while (LCI_sends(LCI_UR_ENDPOINT, msg, peer, tag) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
}

/* Waits for the one receive we have posted and checks what it reports. */
static int wait_short(int peer, LCI_tag_t tag, int iter, void* ctx) {
  LCI_request_t req;
  while (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  return req.flag == LCI_OK && req.rank == peer && req.tag == tag &&
         req.type == LCI_IMMEDIATE && req.user_context == ctx &&
         check(&req.data.immediate, peer, iter);
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 1000;
  int peer, pinger, i, errors = 0;
  int ctx_marker; /* any pointer works as user_context; LCI hands it back */

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer; /* talking to oneself: ping only */

  for (i = 0; i < iters; i++) {
    LCI_tag_t tag = (LCI_tag_t)(i % (LCI_MAX_TAG + 1));
    /* Post the receive first: it can then match the message on arrival. The
     * default endpoint matches on (rank, tag) and completes into LCI_UR_CQ. */
    LCI_recvs(LCI_UR_ENDPOINT, peer, tag, LCI_UR_CQ, &ctx_marker);
    if (pinger) {
      send_short(peer, tag, i);
      if (!wait_short(peer, tag, i, &ctx_marker)) errors++;
    } else {
      if (!wait_short(peer, tag, i, &ctx_marker)) errors++;
      send_short(peer, tag, i);
    }
  }

  LCI_barrier();
  printf("pingpong_short_queue: rank %d <-> %d, %d iterations: %s (%d errors)\n", LCI_RANK,
         peer, iters, errors ? "FAIL" : "PASS", errors);
  LCI_finalize();
  return errors ? 1 : 0;
}

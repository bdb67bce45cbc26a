/*
 * pingpong_long_queue.c - ping-pong of long messages, completion by queue.
 *
 * Shows:
 *   - LCI_sendl / LCI_recvl: a rendezvous moves the data straight from the
 *     sender's buffer into the receiver's, any length; the send buffer is
 *     LCI's until its completion arrives;
 *   - two ways of naming the memory of a long buffer:
 *       the send buffer is registered once with LCI_memory_register and
 *       every message names that segment;
 *       the receive buffer uses LCI_SEGMENT_ALL: LCI registers it on the
 *       fly (through its registration cache) and releases it itself;
 *   - one completion queue (LCI_queue_create) for both the send and the
 *     receive completions, told apart by their user_context, since entries
 *     of different operations come in no promised order.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself), for
 * sizes 16 KiB .. 4 MiB.
 * Run:  lcrun -n 2 ./pingpong_long_queue [iterations per size]
 * Exits 0 if every message arrived intact with the expected completion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

#define MIN_SIZE ((size_t)16 << 10)
#define MAX_SIZE ((size_t)4 << 20)
#define GUARD ((char)0x5A) /* marks receive-buffer bytes LCI must not touch */

static LCI_comp_t cq;
static char *sbuf, *rbuf;
static LCI_segment_t sseg;       /* sbuf's registration */
static int send_done, recv_done; /* set by pop_one() from the queue entries */
static int errors;

static char pattern(int sender, int iter, size_t i) {
  return (char)(sender * 31 + iter * 7 + i + (i >> 12));
}

/* Pops one entry (progressing while the queue is empty) and checks it. */
static void pop_one(int peer, LCI_tag_t tag, size_t len) {
  LCI_request_t req;
  while (LCI_queue_pop(cq, &req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  if (req.flag != LCI_OK || req.rank != peer || req.tag != tag || req.type != LCI_LONG ||
      req.data.lbuffer.length != len)
    errors++;
  if (req.user_context == sbuf) {
    /* A send completion hands back the buffer exactly as passed. */
    if (req.data.lbuffer.address != sbuf || req.data.lbuffer.segment != sseg) errors++;
    send_done = 1;
  } else if (req.user_context == rbuf) {
    /* LCI_SEGMENT_ALL is reported as passed, not as LCI's own registration. */
    if (req.data.lbuffer.address != rbuf || req.data.lbuffer.segment != LCI_SEGMENT_ALL) errors++;
    recv_done = 1;
  } else {
    errors++;
  }
}

static void send_long(size_t len, int peer, LCI_tag_t tag, int iter) {
  LCI_lbuffer_t msg;
  size_t i;
  for (i = 0; i < len; i++) sbuf[i] = pattern(LCI_RANK, iter, i);
  msg.segment = sseg;
  msg.address = sbuf;
  msg.length = len;
  send_done = 0;
  /* LCI_ERR_RETRY: nothing was started; progress, then retry. */
  while (LCI_sendl(LCI_UR_ENDPOINT, msg, peer, tag, cq, sbuf) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
}

static void post_recv(int peer, LCI_tag_t tag) {
  LCI_lbuffer_t into;
  memset(rbuf, GUARD, MAX_SIZE);
  into.segment = LCI_SEGMENT_ALL;
  into.address = rbuf;
  into.length = MAX_SIZE; /* capacity; the completion reports the sent length */
  recv_done = 0;
  LCI_recvl(LCI_UR_ENDPOINT, into, peer, tag, cq, rbuf); /* never LCI_ERR_RETRY */
}

/* The message bytes, and the untouched guard bytes after them. */
static void check_data(size_t len, int sender, int iter) {
  size_t i;
  for (i = 0; i < len; i++)
    if (rbuf[i] != pattern(sender, iter, i)) {
      errors++;
      return;
    }
  for (; i < MAX_SIZE; i++)
    if (rbuf[i] != GUARD) {
      errors++;
      return;
    }
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 10;
  int peer, pinger, i, nsizes = 0;
  size_t len;

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer;
  sbuf = malloc(MAX_SIZE);
  rbuf = malloc(MAX_SIZE);
  LCI_queue_create(LCI_UR_DEVICE, &cq);
  LCI_memory_register(LCI_UR_DEVICE, sbuf, MAX_SIZE, &sseg);

  for (len = MIN_SIZE; len <= MAX_SIZE; len *= 2, nsizes++) {
    LCI_tag_t tag = (LCI_tag_t)nsizes; /* one tag per size */
    for (i = 0; i < iters; i++) {
      post_recv(peer, tag);
      if (pinger) send_long(len, peer, tag, i);
      while (!recv_done) pop_one(peer, tag, len);
      check_data(len, peer, i);
      if (!pinger) send_long(len, peer, tag, i);
      /* The send buffer is refilled next time: wait until LCI is done with it. */
      while (!send_done) pop_one(peer, tag, len);
    }
  }

  LCI_barrier();
  printf("pingpong_long_queue: rank %d <-> %d, %d sizes %zu .. %zu bytes: %s (%d errors)\n",
         LCI_RANK, peer, nsizes, MIN_SIZE, MAX_SIZE, errors ? "FAIL" : "PASS", errors);
  LCI_memory_deregister(&sseg);
  LCI_queue_free(&cq);
  free(sbuf);
  free(rbuf);
  LCI_finalize();
  return errors ? 1 : 0;
}

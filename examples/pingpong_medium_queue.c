/*
 * pingpong_medium_queue.c - ping-pong of medium messages, completion by queue.
 *
 * Shows:
 *   - LCI_sendm: sends up to LCI_MEDIUM_SIZE bytes from the caller's memory;
 *     LCI copies them, so the buffer is reusable as soon as LCI_OK returns;
 *     LCI_ERR_RETRY means nothing was sent: progress, then retry;
 *   - LCI_recvm: receives into the caller's buffer (capacity in .length) and
 *     reports the sent length in the completion; later bytes are untouched;
 *   - completion through the default queue LCI_UR_CQ, polled with
 *     LCI_queue_pop while LCI_progress drives the network.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself), for
 * several sizes from 0 to LCI_MEDIUM_SIZE bytes.
 * Run:  lcrun -n 2 ./pingpong_medium_queue [iterations per size]
 * Exits 0 if every message arrived intact with the expected rank, tag, length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

#define GUARD ((char)0x5A) /* marks receive-buffer bytes LCI must not touch */

static char pattern(int sender, int iter, size_t i) { return (char)(sender * 31 + iter * 7 + i); }

static void fill(char* buf, size_t len, int sender, int iter) {
  size_t i;
  for (i = 0; i < len; i++) buf[i] = pattern(sender, iter, i);
}

/* The message bytes, and the guard bytes after them up to `capacity`. */
static int check(const char* buf, size_t len, size_t capacity, int sender, int iter) {
  size_t i;
  for (i = 0; i < len; i++)
    if (buf[i] != pattern(sender, iter, i)) return 0;
  for (; i < capacity; i++)
    if (buf[i] != GUARD) return 0;
  return 1;
}

static void send_medium(char* buf, size_t len, int peer, LCI_tag_t tag, int iter) {
  LCI_mbuffer_t msg;
  fill(buf, len, LCI_RANK, iter);
  msg.address = buf;
  msg.length = len;
  while (LCI_sendm(LCI_UR_ENDPOINT, msg, peer, tag) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
}

static void post_recv(char* buf, size_t capacity, int peer, LCI_tag_t tag) {
  LCI_mbuffer_t into;
  memset(buf, GUARD, capacity);
  into.address = buf;
  into.length = capacity;
  /* Receive posts never return LCI_ERR_RETRY. user_context: the buffer itself. */
  LCI_recvm(LCI_UR_ENDPOINT, into, peer, tag, LCI_UR_CQ, buf);
}

static int wait_recv(char* buf, size_t len, size_t capacity, int peer, LCI_tag_t tag, int iter) {
  LCI_request_t req;
  while (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  return req.flag == LCI_OK && req.rank == peer && req.tag == tag && req.type == LCI_MEDIUM &&
         req.data.mbuffer.address == buf && req.data.mbuffer.length == len &&
         req.user_context == buf && check(buf, len, capacity, peer, iter);
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  size_t sizes[] = {0, 1, 8, 100, 1024, 4096, 0 /* LCI_MEDIUM_SIZE, set below */};
  const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  int peer, pinger, s, i, errors = 0;
  size_t capacity;
  char *sbuf, *rbuf;

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer;
  capacity = (size_t)LCI_MEDIUM_SIZE; /* a run-time value: ask LCI, don't assume */
  sizes[nsizes - 1] = capacity;
  sbuf = malloc(capacity);
  rbuf = malloc(capacity);

  for (s = 0; s < nsizes; s++) {
    for (i = 0; i < iters; i++) {
      LCI_tag_t tag = (LCI_tag_t)s; /* one tag per size; any tag <= LCI_MAX_TAG works */
      post_recv(rbuf, capacity, peer, tag);
      if (pinger) {
        send_medium(sbuf, sizes[s], peer, tag, i);
        if (!wait_recv(rbuf, sizes[s], capacity, peer, tag, i)) errors++;
      } else {
        if (!wait_recv(rbuf, sizes[s], capacity, peer, tag, i)) errors++;
        send_medium(sbuf, sizes[s], peer, tag, i);
      }
    }
  }

  LCI_barrier();
  printf("pingpong_medium_queue: rank %d <-> %d, %d sizes up to %zu bytes: %s (%d errors)\n",
         LCI_RANK, peer, nsizes, capacity, errors ? "FAIL" : "PASS", errors);
  free(sbuf);
  free(rbuf);
  LCI_finalize();
  return errors ? 1 : 0;
}

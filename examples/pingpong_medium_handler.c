/*
 * pingpong_medium_handler.c - ping-pong of medium messages, completion by a
 * handler (active-message style).
 *
 * Shows:
 *   - an endpoint whose message port type is LCI_COMPLETION_HANDLER;
 *   - LCI_handler_create: wraps a C function as a completion object; LCI calls
 *     it with the completed request from inside LCI_progress (or from the
 *     receive call itself, if the message had already arrived);
 *   - handlers must be short and must not call LCI: this one only records the
 *     request; the main loop does the checking and the replying.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself).
 * Run:  lcrun -n 2 ./pingpong_medium_handler [iterations per size]
 * Exits 0 if every message arrived intact with the expected rank, tag, length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

/* Written by the handler, read by main. Only this thread calls LCI_progress,
 * so the handler runs on it and plain variables suffice; a program with
 * several progress threads would need atomics here. */
static LCI_request_t g_last;
static int g_arrived = 0;

static void on_recv(LCI_request_t request) {
  g_last = request;
  g_arrived++;
}

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

/* Progresses until the handler has run `expected` times in total. */
static int wait_recv(int expected, char* buf, size_t len, int peer, LCI_tag_t tag, int iter) {
  while (g_arrived < expected) LCI_progress(LCI_UR_DEVICE);
  return g_arrived == expected && g_last.flag == LCI_OK && g_last.rank == peer &&
         g_last.tag == tag && g_last.type == LCI_MEDIUM && g_last.data.mbuffer.address == buf &&
         g_last.data.mbuffer.length == len && g_last.user_context == buf &&
         check(buf, len, peer, iter);
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  size_t sizes[] = {0, 1, 64, 2048, 0 /* LCI_MEDIUM_SIZE, set below */};
  const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  int peer, pinger, s, i, posted = 0, errors = 0;
  char *sbuf, *rbuf;
  LCI_plist_t plist;
  LCI_endpoint_t ep;
  LCI_comp_t handler;

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer;
  sizes[nsizes - 1] = (size_t)LCI_MEDIUM_SIZE;
  sbuf = malloc((size_t)LCI_MEDIUM_SIZE);
  rbuf = malloc((size_t)LCI_MEDIUM_SIZE);

  LCI_handler_create(LCI_UR_DEVICE, on_recv, &handler); /* there is no free call */
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER);
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);

  for (s = 0; s < nsizes; s++) {
    for (i = 0; i < iters; i++) {
      LCI_tag_t tag = (LCI_tag_t)s;
      LCI_mbuffer_t in;
      in.address = rbuf;
      in.length = (size_t)LCI_MEDIUM_SIZE;
      /* The handler may already run inside this call if the message is here. */
      LCI_recvm(ep, in, peer, tag, handler, rbuf);
      posted++;
      if (pinger) {
        send_medium(ep, sbuf, sizes[s], peer, tag, i);
        if (!wait_recv(posted, rbuf, sizes[s], peer, tag, i)) errors++;
      } else {
        if (!wait_recv(posted, rbuf, sizes[s], peer, tag, i)) errors++;
        send_medium(ep, sbuf, sizes[s], peer, tag, i);
      }
    }
  }

  LCI_barrier(); /* free the endpoint only once no peer can still address it */
  printf("pingpong_medium_handler: rank %d <-> %d, %d messages handled: %s (%d errors)\n",
         LCI_RANK, peer, g_arrived, errors ? "FAIL" : "PASS", errors);
  LCI_endpoint_free(&ep);
  free(sbuf);
  free(rbuf);
  LCI_finalize();
  return errors ? 1 : 0;
}

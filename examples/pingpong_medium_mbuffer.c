/*
 * pingpong_medium_mbuffer.c - zero-copy ping-pong with LCI medium buffers.
 *
 * Shows who owns an LCI medium buffer at each step:
 *   - LCI_mbuffer_alloc: takes a pre-registered buffer (capacity
 *     LCI_MEDIUM_SIZE) from the device's pool; LCI_ERR_RETRY if the pool is
 *     empty right now. The caller writes the message straight into it.
 *   - LCI_sendmn: sends it without an extra copy. On LCI_OK the buffer is
 *     LCI's again (do not touch or free it); on LCI_ERR_RETRY it is still ours.
 *   - LCI_recvmn: LCI delivers the message in one of its pool buffers; the
 *     completion carries its address and the message length, and the receiver
 *     now owns it: either LCI_mbuffer_free it, or (as the ponger does here)
 *     reuse it for the reply and hand it back with LCI_sendmn.
 *
 * Rank r talks to rank r^1 (a lone or last odd rank talks to itself).
 * Run:  lcrun -n 2 ./pingpong_medium_mbuffer [iterations per size]
 * Exits 0 if every message arrived intact with the expected rank, tag, length.
 */
#include <stdio.h>
#include <stdlib.h>

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

/* Fills an LCI buffer we own with our pattern and gives it away. */
static void send_mbuffer(LCI_mbuffer_t buf, size_t len, int peer, LCI_tag_t tag, int iter) {
  fill((char*)buf.address, len, LCI_RANK, iter);
  buf.length = len; /* the message size; the capacity stays LCI_MEDIUM_SIZE */
  while (LCI_sendmn(LCI_UR_ENDPOINT, buf, peer, tag) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
}

/* Waits for the posted LCI_recvmn; returns the buffer LCI delivered, or
 * {NULL, 0} if the completion was not what we expected. */
static LCI_mbuffer_t wait_mbuffer(size_t len, int peer, LCI_tag_t tag, int iter, void* ctx) {
  LCI_request_t req;
  LCI_mbuffer_t none = {NULL, 0};
  while (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  if (req.flag != LCI_OK || req.rank != peer || req.tag != tag || req.type != LCI_MEDIUM ||
      req.user_context != ctx || req.data.mbuffer.address == NULL ||
      req.data.mbuffer.length != len ||
      !check((const char*)req.data.mbuffer.address, len, peer, iter)) {
    if (req.type == LCI_MEDIUM && req.data.mbuffer.address) LCI_mbuffer_free(req.data.mbuffer);
    return none;
  }
  return req.data.mbuffer;
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  size_t sizes[] = {0, 1, 64, 2048, 0 /* LCI_MEDIUM_SIZE, set below */};
  const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  int peer, pinger, s, i, errors = 0;
  static int ctx; /* user_context: any address, handed back untouched */

  LCI_initialize();
  peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  pinger = LCI_RANK <= peer;
  sizes[nsizes - 1] = (size_t)LCI_MEDIUM_SIZE;

  for (s = 0; s < nsizes; s++) {
    for (i = 0; i < iters; i++) {
      LCI_tag_t tag = (LCI_tag_t)s;
      LCI_mbuffer_t buf;
      /* No buffer argument: LCI picks the buffer. The completion is required,
       * it is the only way to learn where the message is. */
      LCI_recvmn(LCI_UR_ENDPOINT, peer, tag, LCI_UR_CQ, &ctx);
      if (pinger) {
        while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &buf) == LCI_ERR_RETRY)
          LCI_progress(LCI_UR_DEVICE);
        send_mbuffer(buf, sizes[s], peer, tag, i); /* buf is LCI's from here on */
        buf = wait_mbuffer(sizes[s], peer, tag, i, &ctx);
        if (buf.address)
          LCI_mbuffer_free(buf); /* the reply is ours: give it back to the pool */
        else
          errors++;
      } else {
        buf = wait_mbuffer(sizes[s], peer, tag, i, &ctx);
        if (!buf.address) { /* bad message: count it, but still reply */
          errors++;
          while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &buf) == LCI_ERR_RETRY)
            LCI_progress(LCI_UR_DEVICE);
        }
        send_mbuffer(buf, sizes[s], peer, tag, i); /* reuse the request's buffer */
      }
    }
  }

  LCI_barrier();
  printf("pingpong_medium_mbuffer: rank %d <-> %d: %s (%d errors)\n", LCI_RANK, peer,
         errors ? "FAIL" : "PASS", errors);
  LCI_finalize();
  return errors ? 1 : 0;
}

/*
 * compat_globals_queue.c - source compatibility with LCI 1.7.x: written the
 * way the LCI 1.7.9 tests are.
 *
 * Uses the run-time globals (LCI_RANK, LCI_NUM_PROCESSES, LCI_MEDIUM_SIZE as
 * a loop bound, LCI_MAX_TAG, LCI_UR_DEVICE, LCI_UR_ENDPOINT, LCI_UR_CQ), polls
 * LCI_UR_CQ with LCI_queue_pop, casts LCI_short_t to uint64_t*, builds a
 * tag-matching endpoint with LCI_plist_set_match_type(plist, LCI_MATCH_TAG)
 * and receives on it with LCI_RANK_ANY, and calls LCI_plist_decode and
 * LCI_queue_len (stubs in 1.7.9, implemented here).
 *
 * Rank r talks to r^1 (itself when alone or the last of an odd count); the
 * tag-matching part gathers one message from every rank at rank 0.
 * Exits 0 if all checks pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

static int nerrors = 0;
static int short_context; /* its address is a user_context */

#define EXPECT(cond)                                                                 \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", LCI_RANK, __FILE__,    \
              __LINE__, #cond);                                                      \
      ++nerrors;                                                                     \
    }                                                                                \
  } while (0)

static LCI_request_t pop_one(LCI_comp_t cq) {
  LCI_request_t request;
  while (LCI_queue_pop(cq, &request) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  return request;
}

/* Short messages on the default endpoint: rank+tag matching, LCI_UR_CQ. */
static void test_short(int peer) {
  int i;
  for (i = 0; i < 100; ++i) {
    LCI_short_t src;
    LCI_request_t request;
    LCI_tag_t tag = (LCI_tag_t)(i * 97) % (LCI_tag_t)(LCI_MAX_TAG + 1);
    *(uint64_t*)&src = 158 + 1000 * (uint64_t)LCI_RANK + (uint64_t)i;
    LCI_recvs(LCI_UR_ENDPOINT, peer, tag, LCI_UR_CQ, &short_context);
    while (LCI_sends(LCI_UR_ENDPOINT, src, peer, tag) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
    request = pop_one(LCI_UR_CQ);
    EXPECT(request.flag == LCI_OK);
    EXPECT(request.rank == peer);
    EXPECT(request.tag == tag);
    EXPECT(request.type == LCI_IMMEDIATE);
    EXPECT(request.user_context == &short_context);
    EXPECT(*(uint64_t*)&request.data.immediate == 158 + 1000 * (uint64_t)peer + (uint64_t)i);
  }
}

/* Medium messages of every size 0 ... LCI_MEDIUM_SIZE on the default endpoint.
 * Both sides post, send, then wait for both their receive completions. */
static void test_medium(int peer) {
  int size;
  char* send_buf = (char*)malloc(LCI_MEDIUM_SIZE);
  char* recv_buf = (char*)malloc(LCI_MEDIUM_SIZE);
  LCI_tag_t tag = 0;
  for (size = 0; size <= LCI_MEDIUM_SIZE; size = size < 64 ? size + 1 : size + 1021) {
    LCI_mbuffer_t src, dst;
    LCI_request_t request;
    int k;
    tag = (tag + 1) % (LCI_tag_t)(LCI_MAX_TAG + 1);
    for (k = 0; k < size; ++k) send_buf[k] = (char)(LCI_RANK + k);
    memset(recv_buf, 0x7f, LCI_MEDIUM_SIZE);
    src.address = send_buf;
    src.length = (size_t)size;
    dst.address = recv_buf;
    dst.length = (size_t)LCI_MEDIUM_SIZE;
    LCI_recvm(LCI_UR_ENDPOINT, dst, peer, tag, LCI_UR_CQ, NULL);
    while (LCI_sendm(LCI_UR_ENDPOINT, src, peer, tag) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
    request = pop_one(LCI_UR_CQ);
    EXPECT(request.flag == LCI_OK);
    EXPECT(request.rank == peer);
    EXPECT(request.tag == tag);
    EXPECT(request.type == LCI_MEDIUM);
    EXPECT(request.data.mbuffer.address == recv_buf);
    EXPECT(request.data.mbuffer.length == (size_t)size);
    for (k = 0; k < size; ++k)
      if (recv_buf[k] != (char)(peer + k)) break;
    EXPECT(k == size);
    for (k = size; k < LCI_MEDIUM_SIZE; ++k)
      if (recv_buf[k] != 0x7f) break;
    EXPECT(k == LCI_MEDIUM_SIZE); /* nothing past the sent length is written */
  }
  free(send_buf);
  free(recv_buf);
}

/* A tag-matching endpoint: rank 0 receives one message from every rank with
 * LCI_RANK_ANY; the completion names the real sender. */
static void test_tag_matching(void) {
  LCI_plist_t plist;
  LCI_endpoint_t ep;
  char description[256];
  const LCI_tag_t tag = 42;
  int sender_value = LCI_RANK;
  LCI_mbuffer_t src;
  int i;

  LCI_plist_create(&plist);
  LCI_plist_set_match_type(plist, LCI_MATCH_TAG);
  description[0] = '\0';
  EXPECT(LCI_plist_decode(plist, description) == LCI_OK);
  EXPECT(strlen(description) > 0 && strlen(description) < 256);
  if (LCI_RANK == 0) printf("plist: %s\n", description);
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);

  if (LCI_RANK == 0) {
    int* values = (int*)malloc(sizeof(int) * LCI_NUM_PROCESSES);
    int* seen = (int*)calloc(LCI_NUM_PROCESSES, sizeof(int));
    size_t len = 0;
    for (i = 0; i < LCI_NUM_PROCESSES; ++i) {
      LCI_mbuffer_t dst;
      dst.address = &values[i];
      dst.length = sizeof(int);
      LCI_recvm(ep, dst, LCI_RANK_ANY, tag, LCI_UR_CQ, &values[i]);
    }
    src.address = &sender_value;
    src.length = sizeof(int);
    while (LCI_sendm(ep, src, 0, tag) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
    /* Let every completion accumulate, then count them with LCI_queue_len. */
    while (LCI_queue_len(LCI_UR_CQ, &len) == LCI_OK && len < (size_t)LCI_NUM_PROCESSES)
      LCI_progress(LCI_UR_DEVICE);
    EXPECT(len == (size_t)LCI_NUM_PROCESSES);
    for (i = 0; i < LCI_NUM_PROCESSES; ++i) {
      LCI_request_t request = pop_one(LCI_UR_CQ);
      int value;
      EXPECT(request.flag == LCI_OK);
      EXPECT(request.tag == tag);
      EXPECT(request.type == LCI_MEDIUM);
      EXPECT(request.data.mbuffer.length == sizeof(int));
      EXPECT(request.data.mbuffer.address == request.user_context);
      value = *(int*)request.data.mbuffer.address;
      EXPECT(request.rank == value);
      if (value >= 0 && value < LCI_NUM_PROCESSES) ++seen[value];
    }
    for (i = 0; i < LCI_NUM_PROCESSES; ++i) EXPECT(seen[i] == 1);
    EXPECT(LCI_queue_len(LCI_UR_CQ, &len) == LCI_OK && len == 0);
    free(values);
    free(seen);
  } else {
    src.address = &sender_value;
    src.length = sizeof(int);
    while (LCI_sendm(ep, src, 0, tag) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  }
  LCI_barrier();
  LCI_endpoint_free(&ep);
}

int main(int argc, char** argv) {
  int peer;
  (void)argc;
  (void)argv;
  LCI_initialize();
  EXPECT(LCI_NUM_PROCESSES >= 1);
  EXPECT(LCI_RANK >= 0 && LCI_RANK < LCI_NUM_PROCESSES);
  EXPECT(LCI_MEDIUM_SIZE >= 4096);
  EXPECT(LCI_MAX_TAG == 65535);
  EXPECT(LCI_UR_DEVICE != NULL && LCI_UR_ENDPOINT != NULL && LCI_UR_CQ != NULL);
  peer = LCI_RANK ^ 1;
  if (peer >= LCI_NUM_PROCESSES) peer = LCI_RANK;

  test_short(peer);
  LCI_barrier();
  test_medium(peer);
  LCI_barrier();
  test_tag_matching();

  printf("compat_globals_queue: rank %d of %d: %s (%d errors)\n", LCI_RANK, LCI_NUM_PROCESSES,
         nerrors ? "FAIL" : "PASS", nerrors);
  LCI_finalize();
  return nerrors ? 1 : 0;
}

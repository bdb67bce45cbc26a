/*
 * compat_pingpong_sync.c - source compatibility with LCI 1.7.x: the medium
 * ping-pong as LCI 1.7.x programs write it.
 *
 * A synchronizer on the message port of an endpoint made on LCI_UR_DEVICE;
 * LCI_sendm retried with `while (... == LCI_ERR_RETRY) LCI_progress(...)`;
 * LCI_recvm into the synchronizer, polled with LCI_sync_test(sync, NULL).
 * Compiled as strict C99 and linked with a plain `-llci` command line (no
 * CMake target), as a program outside this build would be.
 *
 * Rank r talks to r^1 (itself when alone or the last of an odd count).
 * Usage: compat_pingpong_sync [iterations]   Exits 0 if all checks pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

int main(int argc, char** argv) {
  int niters = 100;
  int peer, i, size, nerrors = 0;
  char *send_buf, *recv_buf;
  LCI_plist_t plist;
  LCI_endpoint_t ep;
  LCI_comp_t sync;
  LCI_mbuffer_t src, dst;

  if (argc > 1) niters = atoi(argv[1]);

  LCI_initialize();
  peer = LCI_RANK ^ 1;
  if (peer >= LCI_NUM_PROCESSES) peer = LCI_RANK;

  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);
  LCI_sync_create(LCI_UR_DEVICE, 1, &sync);

  send_buf = (char*)malloc(LCI_MEDIUM_SIZE);
  recv_buf = (char*)malloc(LCI_MEDIUM_SIZE);

  for (size = 1; size <= LCI_MEDIUM_SIZE; size *= 2) {
    for (i = 0; i < niters; ++i) {
      memset(recv_buf, 0, size);
      src.address = send_buf;
      src.length = size;
      dst.address = recv_buf;
      dst.length = size;
      if (LCI_RANK <= peer) {
        /* ping: send, then receive the echo */
        memset(send_buf, 'a' + i % 26, size);
        while (LCI_sendm(ep, src, peer, i) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
        LCI_recvm(ep, dst, peer, i, sync, NULL);
        while (LCI_sync_test(sync, NULL) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
      } else {
        /* pong: receive, then send the same bytes back */
        LCI_recvm(ep, dst, peer, i, sync, NULL);
        while (LCI_sync_test(sync, NULL) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
        memcpy(send_buf, recv_buf, size);
        while (LCI_sendm(ep, src, peer, i) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
      }
      {
        int k;
        for (k = 0; k < size; ++k)
          if (recv_buf[k] != (char)('a' + i % 26)) {
            ++nerrors;
            break;
          }
      }
    }
  }

  LCI_barrier();
  printf("compat_pingpong_sync: rank %d of %d: %s (%d errors)\n", LCI_RANK,
         LCI_NUM_PROCESSES, nerrors ? "FAIL" : "PASS", nerrors);
  LCI_sync_free(&sync);
  LCI_endpoint_free(&ep);
  free(send_buf);
  free(recv_buf);
  LCI_finalize();
  return nerrors ? 1 : 0;
}

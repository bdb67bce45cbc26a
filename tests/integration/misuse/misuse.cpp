// Misuse that a release build refuses instead of corrupting memory,
// crashing or hanging: each --case makes one mistake of the list below on a
// single rank (no launcher) and checks that the call returns LCI_ERR_FATAL;
// the test registration checks the library's line naming the call, the
// argument and the fix, and that the program then exits 0 (it prints
// "misuse CASE: refused").
//
//   sendm_too_long     LCI_sendm of 100,000 bytes (over LCI_MEDIUM_SIZE)
//   putm_too_long      LCI_putm of 100,000 bytes
//   barrier_before     LCI_barrier before LCI_initialize
//   finalize_before    LCI_finalize before LCI_initialize
//   sendm_before       LCI_sendm on LCI_UR_ENDPOINT before LCI_initialize
//   progress_before    LCI_progress(LCI_UR_DEVICE) before LCI_initialize
//   finalize_twice     LCI_finalize after LCI_finalize
//   sendm_after        LCI_sendm on LCI_UR_ENDPOINT after LCI_finalize
//   null_sync_test     LCI_sync_test(NULL)
//   null_recvm         LCI_recvm on a NULL endpoint
//   rank_out_of_range  LCI_sendm to rank 5 of 1
//   recv_rank_range    LCI_recvm from rank 5 of 1 (a rank-and-tag endpoint)
//   sync_to_queue_pop  LCI_queue_pop of a synchronizer
//   queue_to_sync_test LCI_sync_test of a completion queue
//   tag_70000          LCI_sends with tag 70000 (over LCI_MAX_TAG)
//   sync_threshold     LCI_sync_create with threshold -1
//   queue_free_twice   LCI_queue_free of a queue freed already
//
// And a crash reported as one: --case segfault (under lcrun, 2 ranks):
// rank 1 writes through a NULL pointer after LCI_initialize; lcrun must say
// it was killed by SIGSEGV (not "exited with status 1", which PSM's handler
// would make of it), and no PSM *.btr file may appear.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"

namespace {

int refused(const char* which, LCI_error_t rc) {
  if (rc != LCI_ERR_FATAL) {
    std::printf("misuse %s: returned %d, not LCI_ERR_FATAL\n", which, static_cast<int>(rc));
    return 1;
  }
  std::printf("misuse %s: refused\n", which);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--case") != 0) {
    std::fprintf(stderr, "usage: misuse --case NAME\n");
    return 2;
  }
  const std::string c = argv[2];
  const char* w = argv[2];
  std::vector<char> big(100000, 'x');
  const LCI_mbuffer_t too_long{big.data(), big.size()};
  char small[8] = {};
  const LCI_mbuffer_t fits{small, sizeof(small)};

  // Before LCI_initialize.
  if (c == "barrier_before") return refused(w, LCI_barrier());
  if (c == "finalize_before") return refused(w, LCI_finalize());
  if (c == "sendm_before") return refused(w, LCI_sendm(LCI_UR_ENDPOINT, fits, 0, 1));
  if (c == "progress_before") return refused(w, LCI_progress(LCI_UR_DEVICE));

  if (LCI_initialize() != LCI_OK) return 3;
  if (c == "segfault") {
    if (LCI_RANK == 1) {
      volatile int* nowhere = nullptr;
      *nowhere = 1;
    }
    LCI_barrier();  // rank 0 waits here until lcrun ends it
    LCI_finalize();
    return 0;
  }
  int status = -1;
  if (c == "sendm_too_long") status = refused(w, LCI_sendm(LCI_UR_ENDPOINT, too_long, 0, 1));
  if (c == "putm_too_long") status = refused(w, LCI_putm(LCI_UR_ENDPOINT, too_long, 0, 1, fits, 0));
  if (c == "null_sync_test") {
    LCI_request_t r;
    status = refused(w, LCI_sync_test(nullptr, &r));
  }
  if (c == "null_recvm") status = refused(w, LCI_recvm(nullptr, fits, 0, 1, LCI_UR_CQ, nullptr));
  if (c == "rank_out_of_range") status = refused(w, LCI_sendm(LCI_UR_ENDPOINT, fits, 5, 1));
  if (c == "recv_rank_range") {
    LCI_comp_t sync;
    LCI_sync_create(LCI_UR_DEVICE, 1, &sync);
    LCI_plist_t plist;
    LCI_plist_create(&plist);
    LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
    LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG);
    LCI_endpoint_t ep;
    LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
    status = refused(w, LCI_recvm(ep, fits, 5, 1, sync, nullptr));
    LCI_endpoint_free(&ep);
    LCI_plist_free(&plist);
    LCI_sync_free(&sync);
  }
  if (c == "sync_to_queue_pop") {
    LCI_comp_t sync;
    LCI_sync_create(LCI_UR_DEVICE, 1, &sync);
    LCI_request_t r;
    status = refused(w, LCI_queue_pop(sync, &r));
    LCI_sync_free(&sync);
  }
  if (c == "queue_to_sync_test") {
    LCI_request_t r;
    status = refused(w, LCI_sync_test(LCI_UR_CQ, &r));
  }
  if (c == "tag_70000") {
    LCI_short_t s{};
    status = refused(w, LCI_sends(LCI_UR_ENDPOINT, s, 0, 70000));
  }
  if (c == "sync_threshold") {
    LCI_comp_t sync = nullptr;
    status = refused(w, LCI_sync_create(LCI_UR_DEVICE, -1, &sync));
  }
  if (c == "queue_free_twice") {
    LCI_comp_t cq;
    LCI_queue_create(LCI_UR_DEVICE, &cq);
    if (LCI_queue_free(&cq) != LCI_OK) status = 1;
    else status = refused(w, LCI_queue_free(&cq));
  }
  if (c == "finalize_twice" || c == "sendm_after") {
    if (LCI_finalize() != LCI_OK) return 4;
    return refused(w, c == "finalize_twice" ? LCI_finalize()
                                            : LCI_sendm(LCI_UR_ENDPOINT, fits, 0, 1));
  }
  if (status < 0) {
    std::fprintf(stderr, "misuse: no case %s\n", w);
    return 2;
  }
  LCI_finalize();
  return status;
}

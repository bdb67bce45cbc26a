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
// And what both builds accept alike (the program prints "misuse CASE:
// accepted" after checking the result):
//   sync_on_queue_port LCI_recvm on LCI_UR_ENDPOINT (whose message port
//                      signals a queue) with a synchronizer: the message
//                      from this rank arrives and the synchronizer reports
//                      it; so does a synchronizer as the default completion
//                      of a queue port (the target of LCI_putm)
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

// Progresses until `sync` has triggered (bounded: 10^7 passes).
bool wait_sync(LCI_comp_t sync, LCI_request_t* r) {
  for (long i = 0; i < 10000000; ++i) {
    if (LCI_sync_test(sync, r) == LCI_OK) return true;
    LCI_progress(LCI_UR_DEVICE);
  }
  return false;
}

// sync_on_queue_port: 0 if the synchronizers got both messages.
int sync_on_queue_port(const char* which) {
  LCI_comp_t sync;
  if (LCI_sync_create(LCI_UR_DEVICE, 1, &sync) != LCI_OK) return 1;
  char in[8] = {};
  char out[8] = "medium";
  LCI_request_t r{};
  const LCI_error_t posted = LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{in, sizeof(in)}, 0, 7,
                                       sync, reinterpret_cast<void*>(0x5));
  if (posted != LCI_OK) {
    std::printf("misuse %s: LCI_recvm returned %d\n", which, static_cast<int>(posted));
    return 1;
  }
  while (LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{out, sizeof(out)}, 0, 7) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
  if (!wait_sync(sync, &r) || std::memcmp(in, out, sizeof(out)) != 0 || r.tag != 7 ||
      r.rank != 0 || r.user_context != reinterpret_cast<void*>(0x5)) {
    std::printf("misuse %s: the receive did not complete as sent\n", which);
    return 1;
  }
  // A synchronizer as the default completion of a queue-typed message port.
  LCI_comp_t target;
  LCI_sync_create(LCI_UR_DEVICE, 1, &target);
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_default_comp(plist, target);
  LCI_endpoint_t ep = nullptr;
  const LCI_error_t made = LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);
  if (made != LCI_OK) {
    std::printf("misuse %s: LCI_endpoint_init returned %d\n", which, static_cast<int>(made));
    return 1;
  }
  while (LCI_putma(ep, LCI_mbuffer_t{out, sizeof(out)}, 0, 9, LCI_DEFAULT_COMP_REMOTE) ==
         LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
  const bool put_arrived = wait_sync(target, &r) && r.tag == 9 && r.type == LCI_MEDIUM &&
                           r.data.mbuffer.length == sizeof(out) &&
                           std::memcmp(r.data.mbuffer.address, out, sizeof(out)) == 0;
  if (put_arrived) LCI_mbuffer_free(r.data.mbuffer);
  LCI_endpoint_free(&ep);
  LCI_sync_free(&target);
  LCI_sync_free(&sync);
  if (!put_arrived) {
    std::printf("misuse %s: the put did not reach the default synchronizer\n", which);
    return 1;
  }
  std::printf("misuse %s: accepted\n", which);
  return 0;
}

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
  if (c == "sync_on_queue_port") status = sync_on_queue_port(w);
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

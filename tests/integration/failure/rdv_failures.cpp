// Failures inside a rendezvous, one per --case (exactly 2 ranks):
//
//   failed_rdv      The RDMA writes of an LCI_sendl or LCI_putla fail at the
//                   origin (made to fail by LCIT_fail_next_rdma,
//                   LCI_TEST_HOOKS=1): the origin completes with an error and
//                   so does the target (a recvl into the program's buffer, a
//                   dynamic recvl, the putla's target completion), never
//                   LCI_OK on data that did not arrive. A sendl and a putla
//                   after them arrive intact.
//   recvl_no_memory Rank 1 caps its address space (RLIMIT_AS) and posts a
//                   dynamic LCI_recvl for a 4 GiB message: the process aborts
//                   with a message (API: a dynamic receive that cannot
//                   allocate aborts). The test registration expects the job
//                   to fail with that message.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr size_t k_len = size_t(256) << 10;  // well above LCI_MEDIUM_SIZE: a rendezvous
constexpr double k_short_wait_s = 20;

void case_failed_rdv() {
  const bool origin = LCI_RANK == 0;
  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);

  phase("sendl whose writes fail, into the receiver's buffer");
  if (origin) {
    lbuf b(mem_kind::registered, k_len);
    fill(b.data(), k_len, 71);
    OK(LCIT_fail_next_rdma());
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, b.view(), 1, 71, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the failed sendl's completion", k_short_wait_s);
    EXPECT(r.flag != LCI_OK, "a sendl whose writes failed completed with LCI_OK");
  } else {
    lbuf b(mem_kind::registered, k_len);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, b.view(), 0, 71, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the recvl of the failed sendl", k_short_wait_s);
    EXPECT(r.flag != LCI_OK, "a recvl whose data never arrived completed with LCI_OK");
  }
  LCI_barrier();

  phase("sendl whose writes fail, into a dynamic recvl");
  if (origin) {
    lbuf b(mem_kind::registered, k_len);
    fill(b.data(), k_len, 72);
    OK(LCIT_fail_next_rdma());
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, b.view(), 1, 72, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the failed sendl's completion", k_short_wait_s);
    EXPECT(r.flag != LCI_OK, "a sendl whose writes failed completed with LCI_OK");
  } else {
    lbuf b(mem_kind::dynamic, 0);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, b.view(), 0, 72, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the dynamic recvl of the failed sendl", k_short_wait_s);
    EXPECT(r.flag != LCI_OK, "a dynamic recvl whose data never arrived completed with LCI_OK");
    if (r.data.lbuffer.address) LCI_lbuffer_free(r.data.lbuffer);
  }
  LCI_barrier();

  phase("putla whose writes fail");
  if (origin) {
    lbuf b(mem_kind::registered, k_len);
    fill(b.data(), k_len, 73);
    OK(LCIT_fail_next_rdma());
    RETRY(LCI_putla(LCI_UR_ENDPOINT, b.view(), lc.handle(), 1, 73, LCI_DEFAULT_COMP_REMOTE,
                    nullptr));
    const LCI_request_t r = lc.take1("the failed putla's completion", k_short_wait_s);
    EXPECT(r.flag != LCI_OK, "a putla whose writes failed completed with LCI_OK");
  } else {
    const LCI_request_t r = ur->take1("the target completion of the failed putla", k_short_wait_s);
    EXPECT(r.flag != LCI_OK && r.tag == 73 && r.rank == 0,
           "the target of a putla whose data never arrived completed with {flag %d, tag %u}",
           r.flag, r.tag);
    if (r.data.lbuffer.address) LCI_lbuffer_free(r.data.lbuffer);
  }
  LCI_barrier();

  phase("sendl and putla after the failed ones");
  if (origin) {
    lbuf b(mem_kind::registered, k_len);
    fill(b.data(), k_len, 74);
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, b.view(), 1, 74, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendl's completion", k_short_wait_s).flag == LCI_OK, "sendl failed");
    fill(b.data(), k_len, 75);
    RETRY(LCI_putla(LCI_UR_ENDPOINT, b.view(), lc.handle(), 1, 75, LCI_DEFAULT_COMP_REMOTE,
                    nullptr));
    EXPECT(lc.take1("the putla's completion", k_short_wait_s).flag == LCI_OK, "putla failed");
  } else {
    lbuf b(mem_kind::registered, k_len);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, b.view(), 0, 74, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the recvl", k_short_wait_s);
    EXPECT(r.flag == LCI_OK && r.data.lbuffer.length == k_len, "recvl {flag %d, %zu bytes}",
           r.flag, r.data.lbuffer.length);
    const size_t bad = mismatch(b.data(), k_len, 74);
    EXPECT(bad == SIZE_MAX, "byte %zu of the sendl differs", bad);
    const LCI_request_t t = ur->take1("the putla's target completion", k_short_wait_s);
    EXPECT(t.flag == LCI_OK && t.tag == 75 && t.data.lbuffer.length == k_len,
           "putla target {flag %d, tag %u, %zu bytes}", t.flag, t.tag, t.data.lbuffer.length);
    if (t.flag == LCI_OK && t.data.lbuffer.length == k_len) {
      const size_t pbad = mismatch(t.data.lbuffer.address, k_len, 75);
      EXPECT(pbad == SIZE_MAX, "byte %zu of the putla differs", pbad);
    }
    if (t.data.lbuffer.address) LCI_lbuffer_free(t.data.lbuffer);
  }
  LCI_barrier();
}

void case_recvl_no_memory() {
  constexpr size_t k_huge = size_t(4) << 30;
  comp lc(LCI_COMPLETION_QUEUE);
  if (LCI_RANK == 0) {
    void* huge = mmap(nullptr, k_huge, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (huge == MAP_FAILED) die("mmap(4 GiB, MAP_NORESERVE) failed");
    LCI_barrier();
    LCI_lbuffer_t b{LCI_SEGMENT_ALL, huge, k_huge};
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, b, 1, 81, lc.handle(), nullptr));
    // The receiver aborts; this rank waits (bounded) for the launcher to end it.
    lc.take1("the sendl's completion (the receiver should have aborted)", 60);
    die("the receiver of a message it cannot allocate did not abort");
  } else {
    limit_address_space_to_current_plus(size_t(1) << 30);
    void* probe = malloc(k_huge);
    if (probe) die("malloc(4 GiB) succeeded under RLIMIT_AS; cannot test the abort");
    LCI_barrier();
    lbuf b(mem_kind::dynamic, 0);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, b.view(), 0, 81, lc.handle(), nullptr));
    const LCI_request_t r = lc.take1("the dynamic recvl (should have aborted)", 60);
    die("a dynamic recvl that cannot allocate completed (flag %d) instead of aborting", r.flag);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 2 && strcmp(argv[1], "--case") == 0 ? argv[2] : "";
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  if (which == "failed_rdv")
    case_failed_rdv();
  else if (which == "recvl_no_memory")
    case_recvl_no_memory();
  else
    die("usage: rdv_failures --case failed_rdv|recvl_no_memory");
  return harness_finish(("rdv_failures " + which).c_str());
}

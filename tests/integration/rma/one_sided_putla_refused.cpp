// A put into a target-allocated buffer that the target cannot allocate:
// nothing arrives at the target, the origin's completion says LCI_ERR_RETRY,
// and the put can be reissued. Rank 1 (the target) caps its own address space
// (RLIMIT_AS) so that a 4 GiB allocation fails; rank 0 (the origin) puts
// 4 GiB from an untouched MAP_NORESERVE mapping with LCI_putla, and an iovec
// with a 4 GiB element with LCI_putva, then smaller ones that fit.
// Needs exactly 2 ranks.
#include <dirent.h>
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

namespace {

constexpr size_t k_huge = size_t(4) << 30;
constexpr size_t k_fits = size_t(1) << 20;

// The target's completions must not include a refused put.
void expect_no_target_completion(const char* what) {
  deadline d(0.3);
  while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
  size_t len = 0;
  LCI_queue_len(LCI_UR_CQ, &len);
  EXPECT(len == 0, "%s: the target got %zu completions", what, len);
}

void run() {
  const bool origin = LCI_RANK == 0;
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  comp lc(LCI_COMPLETION_QUEUE);
  void* huge = nullptr;
  if (origin) {
    huge = mmap(nullptr, k_huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                -1, 0);
    if (huge == MAP_FAILED) die("mmap(4 GiB, MAP_NORESERVE) failed");
  } else {
    // Room for what LCI already uses and 1 GiB more: a 4 GiB allocation fails.
    limit_address_space_to_current_plus(size_t(1) << 30);
    void* probe = malloc(k_huge);
    if (probe) die("malloc(4 GiB) succeeded under RLIMIT_AS; cannot test the refusal");
  }
  LCI_barrier();

  // putla of 4 GiB: refused.
  phase("putla the target cannot allocate");
  if (origin) {
    LCI_lbuffer_t b{LCI_SEGMENT_ALL, huge, k_huge};
    RETRY(LCI_putla(LCI_UR_ENDPOINT, b, lc.handle(), 1, 1, LCI_DEFAULT_COMP_REMOTE, huge));
    const LCI_request_t r = lc.take1("the refused putla's completion");
    EXPECT(r.flag == LCI_ERR_RETRY, "refused putla: flag %d, expected LCI_ERR_RETRY", r.flag);
    EXPECT(r.rank == 1 && r.tag == 1 && r.type == LCI_LONG && same_lbuffer(r.data.lbuffer, b) &&
               r.user_context == huge,
           "refused putla request {%d, %u, %d}", r.rank, r.tag, r.type);
  } else {
    expect_no_target_completion("refused putla");
  }
  LCI_barrier();

  // Reissued with a size that fits: it arrives.
  phase("putla reissued");
  if (origin) {
    lbuf b(mem_kind::lalloc, k_fits);
    fill(b.data(), k_fits, 42);
    RETRY(LCI_putla(LCI_UR_ENDPOINT, b.view(), lc.handle(), 1, 2, LCI_DEFAULT_COMP_REMOTE, nullptr));
    EXPECT(lc.take1("the reissued putla's completion").flag == LCI_OK, "reissued putla failed");
  } else {
    const LCI_request_t r = ur->take1("the reissued putla");
    EXPECT(r.flag == LCI_OK && r.rank == 0 && r.tag == 2 && r.type == LCI_LONG &&
               r.data.lbuffer.length == k_fits,
           "reissued putla target request {%d, %d, %u, %d, %zu}", r.flag, r.rank, r.tag, r.type,
           r.data.lbuffer.length);
    if (r.data.lbuffer.address && r.data.lbuffer.length == k_fits)
      EXPECT(mismatch(r.data.lbuffer.address, k_fits, 42) == SIZE_MAX, "reissued putla data");
    EXPECT(LCI_lbuffer_free(r.data.lbuffer) == LCI_OK, "lbuffer_free");
  }
  LCI_barrier();

  // putva with one element the target cannot allocate: refused as a whole.
  phase("putva the target cannot allocate");
  if (origin) {
    lbuf small(mem_kind::seg_all, 4096);
    LCI_lbuffer_t arr[2] = {small.view(), {LCI_SEGMENT_ALL, huge, k_huge}};
    char pb[8] = "piggy";
    LCI_iovec_t iov{{pb, sizeof(pb)}, arr, 2};
    RETRY(LCI_putva(LCI_UR_ENDPOINT, iov, lc.handle(), 1, 3, LCI_DEFAULT_COMP_REMOTE, arr));
    const LCI_request_t r = lc.take1("the refused putva's completion");
    EXPECT(r.flag == LCI_ERR_RETRY, "refused putva: flag %d, expected LCI_ERR_RETRY", r.flag);
    EXPECT(r.rank == 1 && r.tag == 3 && r.type == LCI_IOVEC && r.data.iovec.lbuffers == arr &&
               r.data.iovec.count == 2 && r.user_context == arr,
           "refused putva request {%d, %u, %d}", r.rank, r.tag, r.type);
  } else {
    expect_no_target_completion("refused putva");
  }
  LCI_barrier();
  if (origin) munmap(huge, k_huge);
}

}  // namespace

int main() {
  harness_init(240);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  run();
  return harness_finish("one_sided_putla_refused");
}

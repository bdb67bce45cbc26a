// Edge cases of the rendezvous and one-sided protocols, one per --case:
//
//   getv_empty_piggy  LCI_getv whose remote piggy-back length is 0 while the
//                     local piggy-back buffer is not empty completes at the
//                     origin (data read, local piggy-back bytes untouched) and
//                     at the target.
//   recvl_zero        LCI_recvl into a non-NULL buffer of capacity 0 completes
//                     at both sides (the message is truncated to 0 bytes).
//   failed_rdma_fence A putl/getl/putv/getv that fails at the network (made
//                     to fail by LCIT_fail_next_rdma, LCI_TEST_HOOKS=1)
//                     completes with an error at the origin only, and then
//                     LCI_fence_wait and LCI_gfence_wait return on every rank.
//   retry_trailer     LCI_putmac of an LCI medium buffer with a remote
//                     completion that the network refuses (LCI_ERR_RETRY)
//                     leaves every byte of the caller's buffer as it was.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <sys/mman.h>
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

int g_me, g_n, g_right, g_left;
constexpr double k_short_wait_s = 20;

void case_getv_empty_piggy() {
  phase("getv with an empty remote piggy-back");
  constexpr size_t len = 3000;
  lbuf target(mem_kind::registered, len);
  fill(target.data(), len, seed_of(1, static_cast<uint32_t>(g_me)));
  auto regions = exchange_regions(target.segment(), target.data(), len);
  const remote_region& peer = regions[static_cast<size_t>(g_right)];

  lbuf local(mem_kind::registered, len);
  char piggy[64];
  memset(piggy, k_sentinel, sizeof(piggy));
  LCI_lbuffer_t lb = local.view();
  LCI_iovec_t liov;
  liov.piggy_back.address = piggy;
  liov.piggy_back.length = sizeof(piggy);  // a capacity: the remote sends 0 bytes
  liov.lbuffers = &lb;
  liov.count = 1;
  LCI_lbuffer_t rb = remote_lbuffer(peer, 0, len);
  LCI_iovec_t riov;
  riov.piggy_back.address = nullptr;
  riov.piggy_back.length = 0;
  riov.lbuffers = &rb;
  riov.count = 1;

  comp lc(LCI_COMPLETION_QUEUE);
  auto dflt = comp::borrow_queue(LCI_UR_CQ);
  RETRY(LCI_getv(LCI_UR_ENDPOINT, liov, lc.handle(), g_right, 21, riov, LCI_DEFAULT_COMP_REMOTE,
                 &lc));
  // Serve the peer's getv (its target completion) while waiting for ours.
  const LCI_request_t t = dflt->take1("target completion of the peer's getv", k_short_wait_s);
  EXPECT(t.flag == LCI_OK && t.type == LCI_IOVEC && t.rank == g_left && t.tag == 21 &&
             t.data.iovec.count == 1 && t.data.iovec.piggy_back.length == 0,
         "target completion {flag %d, type %d, rank %d, tag %u, count %d, piggy %zu}", t.flag,
         t.type, t.rank, t.tag, t.data.iovec.count, t.data.iovec.piggy_back.length);
  free(t.data.iovec.lbuffers);
  const LCI_request_t o = lc.take1("origin completion of getv", k_short_wait_s);
  EXPECT(o.flag == LCI_OK && o.type == LCI_IOVEC && o.rank == g_right && o.user_context == &lc &&
             o.data.iovec.lbuffers == &lb && o.data.iovec.piggy_back.address == piggy &&
             o.data.iovec.piggy_back.length == sizeof(piggy),
         "origin completion {flag %d, type %d, rank %d, piggy %p+%zu}", o.flag, o.type, o.rank,
         o.data.iovec.piggy_back.address, o.data.iovec.piggy_back.length);
  const size_t bad = mismatch(local.data(), len, seed_of(1, static_cast<uint32_t>(g_right)));
  EXPECT(bad == SIZE_MAX, "byte %zu of the data read differs", bad);
  const size_t touched = not_byte(piggy, 0, sizeof(piggy), k_sentinel);
  EXPECT(touched == SIZE_MAX, "byte %zu of the local piggy-back buffer was written", touched);
  LCI_fence_wait(LCI_UR_ENDPOINT);
  allgather(nullptr, 0);  // everyone is done reading before the memory goes
  release_regions(regions);
}

void case_recvl_zero() {
  phase("recvl into a buffer of capacity 0");
  constexpr size_t len = 100;
  std::vector<uint8_t> src(len), dst(16, k_sentinel);
  fill(src.data(), len, 7);
  comp sc(LCI_COMPLETION_QUEUE), rc(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t rbuf{LCI_SEGMENT_ALL, dst.data(), 0};
  OK(LCI_recvl(LCI_UR_ENDPOINT, rbuf, g_left, 31, rc.handle(), &rc));
  allgather(nullptr, 0);  // the receive is posted before the message leaves
  LCI_lbuffer_t sbuf{LCI_SEGMENT_ALL, src.data(), len};
  RETRY(LCI_sendl(LCI_UR_ENDPOINT, sbuf, g_right, 31, sc.handle(), &sc));
  const LCI_request_t s = sc.take1("send completion", k_short_wait_s);
  EXPECT(s.flag == LCI_OK && s.type == LCI_LONG && s.rank == g_right &&
             s.data.lbuffer.address == src.data() && s.data.lbuffer.length == len,
         "send completion {flag %d, rank %d, %p+%zu}", s.flag, s.rank, s.data.lbuffer.address,
         s.data.lbuffer.length);
  const LCI_request_t r = rc.take1("receive completion", k_short_wait_s);
  EXPECT(r.flag == LCI_OK && r.type == LCI_LONG && r.rank == g_left && r.tag == 31 &&
             r.data.lbuffer.address == dst.data() && r.data.lbuffer.length == 0,
         "receive completion {flag %d, rank %d, %p+%zu}", r.flag, r.rank, r.data.lbuffer.address,
         r.data.lbuffer.length);
  const size_t touched = not_byte(dst.data(), 0, dst.size(), k_sentinel);
  EXPECT(touched == SIZE_MAX, "byte %zu of the 0-byte receive buffer was written", touched);
  LCI_fence_wait(LCI_UR_ENDPOINT);
  allgather(nullptr, 0);
}

void case_failed_rdma_fence() {
  phase("failed putl/getl/putv/getv, then fences");
  constexpr size_t len = 4096;
  lbuf target(mem_kind::registered, len);
  auto regions = exchange_regions(target.segment(), target.data(), len);
  const remote_region& peer = regions[static_cast<size_t>(g_right)];
  std::vector<uint8_t> src(len), dst(len, k_sentinel);
  fill(src.data(), len, 9);
  comp lc(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t l{LCI_SEGMENT_ALL, src.data(), len};
  LCI_lbuffer_t g{LCI_SEGMENT_ALL, dst.data(), len};
  LCI_lbuffer_t rb = remote_lbuffer(peer, 0, len);
  char piggy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  LCI_iovec_t lv{{piggy, sizeof(piggy)}, &l, 1};
  LCI_iovec_t gv{{piggy, sizeof(piggy)}, &g, 1};
  LCI_iovec_t rv{{target.data(), sizeof(piggy)}, &rb, 1};
  // Each operation below is failed by the hook as the network would fail it.
  OK(LCIT_fail_next_rdma());
  RETRY(LCI_putl(LCI_UR_ENDPOINT, l, lc.handle(), g_right, 41, rb, LCI_DEFAULT_COMP_REMOTE,
                 nullptr));
  OK(LCIT_fail_next_rdma());
  RETRY(LCI_getl(LCI_UR_ENDPOINT, &g, len, lc.handle(), g_right, 42, rb,
                 LCI_DEFAULT_COMP_REMOTE, nullptr));
  OK(LCIT_fail_next_rdma());
  RETRY(LCI_putv(LCI_UR_ENDPOINT, lv, lc.handle(), g_right, 43, rv, LCI_DEFAULT_COMP_REMOTE,
                 nullptr));
  OK(LCIT_fail_next_rdma());
  RETRY(LCI_getv(LCI_UR_ENDPOINT, gv, lc.handle(), g_right, 44, rv, LCI_DEFAULT_COMP_REMOTE,
                 nullptr));
  for (const LCI_request_t& r : lc.take(4, "completions of the failed operations",
                                        k_short_wait_s))
    EXPECT(r.flag != LCI_OK, "a failed operation (tag %u) completed with LCI_OK", r.tag);
  phase("LCI_fence_wait after failed operations");
  LCI_fence_wait(LCI_UR_ENDPOINT);
  phase("LCI_gfence_wait after failed operations");
  LCI_gfence_wait(LCI_UR_ENDPOINT);
  size_t queued = 0;
  LCI_queue_len(LCI_UR_CQ, &queued);
  EXPECT(queued == 0, "%zu target completions of failed operations arrived", queued);
  const size_t touched = not_byte(target.data(), 0, len, k_sentinel);
  EXPECT(touched == SIZE_MAX, "byte %zu of the target memory was written", touched);

  allgather(nullptr, 0);  // every rank checked its memory before the next put
  phase("a put after the failed ones, then gfence");
  RETRY(LCI_putl(LCI_UR_ENDPOINT, l, lc.handle(), g_right, 45, rb, LCI_DEFAULT_COMP_REMOTE,
                 nullptr));
  EXPECT(lc.take1("completion of the put", k_short_wait_s).flag == LCI_OK, "the put failed");
  LCI_gfence_wait(LCI_UR_ENDPOINT);
  auto dflt = comp::borrow_queue(LCI_UR_CQ);
  const LCI_request_t t = dflt->take1("target completion of the put", k_short_wait_s);
  EXPECT(t.flag == LCI_OK && t.tag == 45 && t.rank == g_left, "target completion {%d, tag %u}",
         t.flag, t.tag);
  const size_t bad = mismatch(target.data(), len, 9);
  EXPECT(bad == SIZE_MAX, "byte %zu of the put differs", bad);
  allgather(nullptr, 0);
  release_regions(regions);
}

void case_retry_trailer() {
  phase("putmac refused by the network");
  if (g_n != 2) die("needs exactly 2 ranks");
  comp target_cq(LCI_COMPLETION_QUEUE);
  const uint64_t peer_cq = allgather_u64(target_cq.remote())[static_cast<size_t>(1 - g_me)];
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t len = medium - 64;  // above every provider's inject size, room for a trailer
  uint64_t sent = 0;
  if (g_me == 0) {
    comp lc(LCI_COMPLETION_QUEUE);
    std::vector<LCI_mbuffer_t> bufs;
    bool refused = false;
    // The peer does not progress for a while: sends pile up until the
    // network refuses one. No progress here either.
    deadline d(k_short_wait_s);
    while (!refused && !d.passed() && bufs.size() < 6000) {
      LCI_mbuffer_t b;
      if (LCI_mbuffer_alloc(LCI_UR_DEVICE, &b) != LCI_OK) break;
      fill(b.address, medium, seed_of(5, static_cast<uint32_t>(bufs.size())));
      LCI_mbuffer_t m{b.address, len};
      const LCI_error_t rc = LCI_putmac(LCI_UR_ENDPOINT, m, 1, 51, peer_cq, lc.handle(), &lc);
      if (rc == LCI_ERR_RETRY) {
        refused = true;
        const size_t bad =
            mismatch(b.address, medium, seed_of(5, static_cast<uint32_t>(bufs.size())));
        EXPECT(bad == SIZE_MAX,
               "byte %zu of a %zu-byte medium buffer changed although LCI_putmac returned "
               "LCI_ERR_RETRY", bad, len);
        LCI_mbuffer_free(b);
        break;
      }
      OK(rc);
      bufs.push_back(b);
    }
    EXPECT(refused, "the network took %zu sends without refusing one; nothing was checked",
           bufs.size());
    sent = bufs.size();
    allgather_u64(sent);
    for (const LCI_request_t& r : lc.take(static_cast<size_t>(sent), "local completions"))
      EXPECT(r.flag == LCI_OK, "putmac completed with %d", r.flag);
    for (LCI_mbuffer_t& b : bufs) OK(LCI_mbuffer_free(b));
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    sent = allgather_u64(0)[0];
    for (const LCI_request_t& r : target_cq.take(static_cast<size_t>(sent), "target completions"))
      OK(LCI_mbuffer_free(r.data.mbuffer));
  }
  allgather(nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 2 && strcmp(argv[1], "--case") == 0 ? argv[2] : "";
  harness_init(100);
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  if (which == "getv_empty_piggy")
    case_getv_empty_piggy();
  else if (which == "recvl_zero")
    case_recvl_zero();
  else if (which == "failed_rdma_fence")
    case_failed_rdma_fence();
  else if (which == "retry_trailer")
    case_retry_trailer();
  else
    die("usage: protocol_edges --case getv_empty_piggy|recvl_zero|failed_rdma_fence|retry_trailer");
  return harness_finish(("protocol_edges " + which).c_str());
}

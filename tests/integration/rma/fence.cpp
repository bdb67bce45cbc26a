// Bulk completion. LCI_fence_wait on an endpoint whose command port is
// LCI_COMPLETION_NONE completes silent LCI_sendl/LCI_putl/LCI_getl: after it
// the data a get read is in place and the local buffers are reusable
// (overwriting them must not change what the target receives), and after a
// barrier the target sees the data. On an endpoint with a queue command port
// the fence consumes no completion. LCI_gfence_wait (collective): afterwards
// every rank holds every rank's puts and sends, target completions are
// signalled, and no rank left it before all entered (it is a barrier too).
#include <dirent.h>
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

namespace {

int g_me, g_n, g_right, g_left;
constexpr size_t k_len = 256 * 1024 + 13;  // bytes per operation

// This rank's target memory: slot p is written by rank p's puts, slot n is
// read by everyone's gets.
std::unique_ptr<lbuf> g_region;
std::vector<remote_region> g_regions;
uint8_t* slot(int p) { return g_region->data() + static_cast<size_t>(p) * k_len; }
size_t slot_offset(int p) { return static_cast<size_t>(p) * k_len; }

uint32_t put_seed(int from, int it) { return seed_of(static_cast<uint32_t>(from), 1, static_cast<uint32_t>(it)); }
uint32_t send_seed(int from, int it) { return seed_of(static_cast<uint32_t>(from), 2, static_cast<uint32_t>(it)); }
uint32_t owner_seed(int owner, int it) { return seed_of(static_cast<uint32_t>(owner), 3, static_cast<uint32_t>(it)); }

LCI_endpoint_t make_endpoint(LCI_comp_type_t cmd, LCI_comp_t dflt) {
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, cmd));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE));
  OK(LCI_plist_set_default_comp(plist, dflt));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  LCI_plist_free(&plist);
  return ep;
}

// Target completions of one putl (into slot[from]) and one getl (of slot n) from `from`.
void check_target_pair(const std::vector<LCI_request_t>& reqs, int from, LCI_tag_t tag) {
  int puts = 0, gets = 0;
  for (const auto& r : reqs) {
    EXPECT(r.flag == LCI_OK && r.rank == from && r.tag == tag && r.type == LCI_LONG &&
               r.user_context == nullptr && r.data.lbuffer.segment == g_region->segment() &&
               r.data.lbuffer.length == k_len,
           "target request {%d, %d, %u, %d, {%p, %p, %zu}, %p}", r.flag, r.rank, r.tag, r.type,
           (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length,
           r.user_context);
    if (r.data.lbuffer.address == slot(from)) ++puts;
    if (r.data.lbuffer.address == slot(g_n)) ++gets;
  }
  EXPECT(puts == 1 && gets == 1, "target completions: %d for the put, %d for the get", puts, gets);
}

// fence_wait with silent operations, around the ring.
void test_fence_silent(LCI_endpoint_t ep, comp& dq, int it) {
  phase("fence_wait, command port NONE, iteration %d", it);
  const LCI_tag_t tag = static_cast<LCI_tag_t>(10 + it);
  comp rq(LCI_COMPLETION_QUEUE);
  fill(slot(g_n), k_len, owner_seed(g_me, it));
  memset(slot(g_left), k_sentinel, k_len);
  lbuf rbuf(mem_kind::seg_all, k_len), sbuf(mem_kind::registered, k_len),
      pbuf(mem_kind::seg_all, k_len), gbuf(mem_kind::lalloc, k_len);
  OK(LCI_recvl(ep, rbuf.view(), g_left, tag, rq.handle(), nullptr));
  fill(sbuf.data(), k_len, send_seed(g_me, it));
  fill(pbuf.data(), k_len, put_seed(g_me, it));
  LCI_barrier();
  const remote_region& rr = g_regions[static_cast<size_t>(g_right)];
  RETRY(LCI_sendl(ep, sbuf.view(), g_right, tag, nullptr, nullptr));
  RETRY(LCI_putl(ep, pbuf.view(), nullptr, g_right, tag, remote_lbuffer(rr, slot_offset(g_me), k_len),
                 LCI_DEFAULT_COMP_REMOTE, nullptr));
  LCI_lbuffer_t gb = gbuf.view();
  RETRY(LCI_getl(ep, &gb, k_len, nullptr, g_right, tag, remote_lbuffer(rr, slot_offset(g_n), k_len),
                 LCI_DEFAULT_COMP_REMOTE, nullptr));
  EXPECT(LCI_fence_wait(ep) == LCI_OK, "fence_wait");
  // The get is complete: its data is here.
  size_t bad = mismatch(gbuf.data(), k_len, owner_seed(g_right, it));
  EXPECT(bad == SIZE_MAX, "after fence_wait the getl data is not in place (first bad byte %zu)", bad);
  // The send and put buffers are ours again.
  memset(sbuf.data(), 0x55, k_len);
  memset(pbuf.data(), 0x55, k_len);
  LCI_barrier();
  bad = mismatch(slot(g_left), k_len, put_seed(g_left, it));
  EXPECT(bad == SIZE_MAX, "after the left's fence_wait and a barrier its putl data is not here "
         "(first bad byte %zu: 0x%02x)", bad, bad == SIZE_MAX ? 0 : slot(g_left)[bad]);
  const LCI_request_t r = rq.take1("the receive of a silent sendl");
  EXPECT(r.flag == LCI_OK && r.rank == g_left && r.tag == tag && r.data.lbuffer.length == k_len,
         "recvl request {%d, %d, %u, %zu}", r.flag, r.rank, r.tag, r.data.lbuffer.length);
  bad = mismatch(rbuf.data(), k_len, send_seed(g_left, it));
  EXPECT(bad == SIZE_MAX, "silent sendl data differs at %zu", bad);
  check_target_pair(dq.take(2, "target completions of silent putl/getl"), g_left, tag);
  LCI_barrier();
}

// fence_wait on a queue command port leaves every completion in the queue.
void test_fence_keeps_completions(LCI_endpoint_t ep, comp& dq) {
  phase("fence_wait, command port queue");
  const LCI_tag_t tag = 30;
  comp rq(LCI_COMPLETION_QUEUE), lq(LCI_COMPLETION_QUEUE);
  fill(slot(g_n), k_len, owner_seed(g_me, 99));
  lbuf rbuf(mem_kind::seg_all, k_len), sbuf(mem_kind::seg_all, k_len),
      pbuf(mem_kind::registered, k_len), gbuf(mem_kind::seg_all, k_len);
  OK(LCI_recvl(ep, rbuf.view(), g_left, tag, rq.handle(), nullptr));
  fill(sbuf.data(), k_len, send_seed(g_me, 99));
  fill(pbuf.data(), k_len, put_seed(g_me, 99));
  LCI_barrier();
  const remote_region& rr = g_regions[static_cast<size_t>(g_right)];
  RETRY(LCI_sendl(ep, sbuf.view(), g_right, tag, lq.handle(), &sbuf));
  RETRY(LCI_putl(ep, pbuf.view(), lq.handle(), g_right, tag,
                 remote_lbuffer(rr, slot_offset(g_me), k_len), LCI_DEFAULT_COMP_REMOTE, &pbuf));
  LCI_lbuffer_t gb = gbuf.view();
  RETRY(LCI_getl(ep, &gb, k_len, lq.handle(), g_right, tag,
                 remote_lbuffer(rr, slot_offset(g_n), k_len), LCI_DEFAULT_COMP_REMOTE, &gbuf));
  EXPECT(LCI_fence_wait(ep) == LCI_OK, "fence_wait");
  size_t len = 0;
  LCI_queue_len(lq.handle(), &len);
  EXPECT(len == 3, "after fence_wait the command queue holds %zu completions, not 3", len);
  for (const auto& r : lq.take(3, "origin completions")) {
    const lbuf* b = static_cast<const lbuf*>(r.user_context);
    EXPECT(b == &sbuf || b == &pbuf || b == &gbuf, "user_context %p", r.user_context);
    if (b != &sbuf && b != &pbuf && b != &gbuf) continue;
    EXPECT(r.flag == LCI_OK && r.rank == g_right && r.tag == tag && r.type == LCI_LONG &&
               same_lbuffer(r.data.lbuffer, b->view()),
           "origin request {%d, %d, %u, %d}", r.flag, r.rank, r.tag, r.type);
  }
  EXPECT(mismatch(gbuf.data(), k_len, owner_seed(g_right, 99)) == SIZE_MAX, "getl data differs");
  rq.take1("the receive");
  EXPECT(mismatch(rbuf.data(), k_len, send_seed(g_left, 99)) == SIZE_MAX, "sendl data differs");
  check_target_pair(dq.take(2, "target completions"), g_left, tag);
  LCI_barrier();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
      .count();
}

// gfence_wait: all-to-all silent puts, sends and gets, then every effect is visible.
void test_gfence(LCI_endpoint_t ep, comp& dq, int it) {
  phase("gfence_wait, iteration %d", it);
  const LCI_tag_t tag = static_cast<LCI_tag_t>(100 + it);
  comp rq(LCI_COMPLETION_QUEUE);
  fill(slot(g_n), k_len, owner_seed(g_me, it));
  for (int p = 0; p < g_n; ++p) memset(slot(p), k_sentinel, k_len);
  std::vector<std::unique_ptr<lbuf>> rbufs, sbufs, pbufs, gbufs;
  for (int p = 0; p < g_n; ++p) {
    rbufs.emplace_back(new lbuf(mem_kind::seg_all, k_len));
    OK(LCI_recvl(ep, rbufs.back()->view(), p, tag, rq.handle(), rbufs.back().get()));
  }
  LCI_barrier();
  if (g_me == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int p = 0; p < g_n; ++p) {
    const remote_region& rr = g_regions[static_cast<size_t>(p)];
    sbufs.emplace_back(new lbuf(mem_kind::seg_all, k_len));
    fill(sbufs.back()->data(), k_len, send_seed(g_me, it) + static_cast<uint32_t>(p));
    RETRY(LCI_sendl(ep, sbufs.back()->view(), p, tag, nullptr, nullptr));
    pbufs.emplace_back(new lbuf(mem_kind::registered, k_len));
    fill(pbufs.back()->data(), k_len, put_seed(g_me, it) + static_cast<uint32_t>(p));
    RETRY(LCI_putl(ep, pbufs.back()->view(), nullptr, p, tag,
                   remote_lbuffer(rr, slot_offset(g_me), k_len), LCI_DEFAULT_COMP_REMOTE, nullptr));
    gbufs.emplace_back(new lbuf(mem_kind::lalloc, k_len));
    LCI_lbuffer_t gb = gbufs.back()->view();
    RETRY(LCI_getl(ep, &gb, k_len, nullptr, p, tag, remote_lbuffer(rr, slot_offset(g_n), k_len),
                   LCI_DEFAULT_COMP_REMOTE, nullptr));
  }
  const int64_t entered = now_ns();
  EXPECT(LCI_gfence_wait(ep) == LCI_OK, "gfence_wait");
  const int64_t left = now_ns();
  // Everything is visible now, without further progress.
  for (int p = 0; p < g_n; ++p) {
    size_t bad = mismatch(slot(p), k_len, put_seed(p, it) + static_cast<uint32_t>(g_me));
    EXPECT(bad == SIZE_MAX, "after gfence_wait rank %d's putl data is not here (byte %zu)", p, bad);
    bad = mismatch(gbufs[static_cast<size_t>(p)]->data(), k_len, owner_seed(p, it));
    EXPECT(bad == SIZE_MAX, "after gfence_wait the getl from rank %d is not here (byte %zu)", p, bad);
  }
  size_t len = 0;
  LCI_queue_len(rq.handle(), &len);
  EXPECT(len == static_cast<size_t>(g_n), "after gfence_wait %zu of %d receives completed", len, g_n);
  len = 0;
  LCI_queue_len(dq.handle(), &len);
  EXPECT(len == static_cast<size_t>(2 * g_n),
         "after gfence_wait %zu of %d target completions are signalled", len, 2 * g_n);
  // It was a barrier: nobody left before everyone entered.
  auto entries = allgather(&entered, sizeof(entered));
  for (int p = 0; p < g_n; ++p) {
    int64_t e;
    memcpy(&e, entries[static_cast<size_t>(p)].data(), sizeof(e));
    EXPECT(left >= e, "left gfence_wait %.3f ms before rank %d entered it", (e - left) / 1e6, p);
  }
  for (const auto& r : rq.take(static_cast<size_t>(g_n), "receives")) {
    const lbuf* b = static_cast<const lbuf*>(r.user_context);
    const int p = r.rank;
    EXPECT(r.flag == LCI_OK && p >= 0 && p < g_n && b == rbufs[static_cast<size_t>(p)].get() &&
               r.data.lbuffer.length == k_len,
           "receive request {%d, %d, %p}", r.flag, p, r.user_context);
    if (p >= 0 && p < g_n)
      EXPECT(mismatch(rbufs[static_cast<size_t>(p)]->data(), k_len,
                      send_seed(p, it) + static_cast<uint32_t>(g_me)) == SIZE_MAX,
             "sendl data from %d differs", p);
  }
  auto targets = dq.take(static_cast<size_t>(2 * g_n), "target completions");
  for (int p = 0; p < g_n; ++p) {
    std::vector<LCI_request_t> mine;
    for (auto& r : targets)
      if (r.rank == p) mine.push_back(r);
    check_target_pair(mine, p, tag);
  }
  LCI_barrier();
}

void run() {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_region.reset(new lbuf(mem_kind::lalloc, static_cast<size_t>(g_n + 1) * k_len));
  g_regions = exchange_regions(g_region->segment(), g_region->data(), g_region->capacity());
  comp dq(LCI_COMPLETION_QUEUE), dq2(LCI_COMPLETION_QUEUE);
  LCI_endpoint_t silent = make_endpoint(LCI_COMPLETION_NONE, dq.handle());
  LCI_endpoint_t loud = make_endpoint(LCI_COMPLETION_QUEUE, dq2.handle());
  for (int it = 0; it < 3; ++it) test_fence_silent(silent, dq, it);
  test_fence_keeps_completions(loud, dq2);
  for (int it = 0; it < 3; ++it) test_gfence(silent, dq, it);
  phase("gfence_wait as a plain barrier");
  for (int it = 0; it < 3; ++it) EXPECT(LCI_gfence_wait(LCI_UR_ENDPOINT) == LCI_OK, "gfence_wait");
  EXPECT(dq.pending() == 0 && dq2.pending() == 0, "extra target completions");
  LCI_endpoint_free(&silent);
  LCI_endpoint_free(&loud);
  release_regions(g_regions);
  LCI_barrier();
  g_region.reset();
}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("fence");
}

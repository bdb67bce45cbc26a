// The blocking and batch calls of the completion objects with the real
// runtime: LCI_queue_wait, LCI_queue_wait_multiple, LCI_queue_pop_multiple,
// LCI_sync_wait (threshold k) and LCI_sync_signal. Waits do not progress, so
// a dedicated thread calls LCI_progress meanwhile (as a task runtime would).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lci.h"

namespace {

constexpr int k = 8;

void send_values(LCI_endpoint_t ep, int peer, LCI_tag_t base, int count) {
  for (int i = 0; i < count; ++i) {
    LCI_short_t v;
    memset(&v, 0, sizeof(v));
    *reinterpret_cast<int*>(&v) = 1000 * LCI_RANK + i;
    while (LCI_sends(ep, v, peer, base + static_cast<LCI_tag_t>(i)) == LCI_ERR_RETRY) {
    }
  }
}

void check(const LCI_request_t& r, int from, LCI_tag_t base) {
  const int i = static_cast<int>(r.tag - base);
  EXPECT(r.flag == LCI_OK && r.rank == from && r.type == LCI_IMMEDIATE, "request fields");
  EXPECT(i >= 0 && i < k, "tag %u", r.tag);
  EXPECT(*reinterpret_cast<const int*>(&r.data.immediate) == 1000 * from + i, "value");
}
}  // namespace

int main() {
  LCI_initialize();
  const int peer = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  const int from = (LCI_RANK - 1 + LCI_NUM_PROCESSES) % LCI_NUM_PROCESSES;
  std::atomic<bool> stop{false};
  std::thread progress([&] {
    while (!stop.load(std::memory_order_relaxed)) LCI_progress(LCI_UR_DEVICE);
  });
  LCI_endpoint_t ep = LCI_UR_ENDPOINT;  // queue on both ports, LCI_UR_CQ

  // LCI_queue_wait, one at a time.
  LCI_comp_t cq;
  LCI_queue_create(LCI_UR_DEVICE, &cq);
  for (int i = 0; i < k; ++i) LCI_recvs(ep, from, 100 + static_cast<LCI_tag_t>(i), cq, nullptr);
  send_values(ep, peer, 100, k);
  for (int i = 0; i < k; ++i) {
    LCI_request_t r;
    EXPECT(LCI_queue_wait(cq, &r) == LCI_OK, "queue_wait");
    check(r, from, 100);
  }

  // LCI_queue_wait_multiple: exactly k at once.
  for (int i = 0; i < k; ++i) LCI_recvs(ep, from, 200 + static_cast<LCI_tag_t>(i), cq, nullptr);
  send_values(ep, peer, 200, k);
  std::vector<LCI_request_t> reqs(k);
  EXPECT(LCI_queue_wait_multiple(cq, k, reqs.data()) == LCI_OK, "wait_multiple");
  for (auto& r : reqs) check(r, from, 200);
  size_t len = 99;
  LCI_queue_len(cq, &len);
  EXPECT(len == 0, "queue holds %zu after wait_multiple", len);

  // LCI_queue_pop_multiple: whatever is there, possibly 0, never more than asked.
  size_t got = 0, n = 0;
  EXPECT(LCI_queue_pop_multiple(cq, 4, reqs.data(), &n) == LCI_OK && n == 0, "empty pop_multiple");
  for (int i = 0; i < k; ++i) LCI_recvs(ep, from, 300 + static_cast<LCI_tag_t>(i), cq, nullptr);
  send_values(ep, peer, 300, k);
  while (got < static_cast<size_t>(k)) {
    EXPECT(LCI_queue_pop_multiple(cq, 3, reqs.data() + got, &n) == LCI_OK, "pop_multiple");
    EXPECT(n <= 3, "pop_multiple returned %zu > 3", n);
    got += n;
  }
  for (auto& r : reqs) check(r, from, 300);
  LCI_queue_free(&cq);

  // LCI_sync_wait with threshold k: all k requests at once, then reusable.
  LCI_comp_t sync;
  LCI_sync_create(LCI_UR_DEVICE, k, &sync);
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  LCI_endpoint_t eps;
  LCI_endpoint_init(&eps, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);
  for (int round = 0; round < 2; ++round) {
    const LCI_tag_t base = 400 + static_cast<LCI_tag_t>(round * 100);
    for (int i = 0; i < k; ++i) LCI_recvs(eps, from, base + static_cast<LCI_tag_t>(i), sync, nullptr);
    send_values(eps, peer, base, k);
    EXPECT(LCI_sync_wait(sync, reqs.data()) == LCI_OK, "sync_wait");
    for (auto& r : reqs) check(r, from, base);
    EXPECT(LCI_sync_test(sync, nullptr) == LCI_ERR_RETRY, "sync not reset");
  }

  // LCI_sync_signal: the request comes back verbatim, flag included.
  LCI_comp_t one;
  LCI_sync_create(LCI_UR_DEVICE, 1, &one);
  LCI_request_t mine;
  memset(&mine, 0, sizeof(mine));
  mine.flag = LCI_ERR_RETRY;
  mine.rank = 12345;
  mine.tag = 77;
  mine.user_context = &mine;
  LCI_sync_signal(one, mine);
  LCI_request_t back;
  EXPECT(LCI_sync_wait(one, &back) == LCI_OK, "sync_wait after signal");
  EXPECT(back.flag == LCI_ERR_RETRY && back.rank == 12345 && back.tag == 77 &&
             back.user_context == &mine, "signalled request changed");
  LCI_sync_free(&one);
  LCI_sync_free(&sync);

  stop.store(true);
  progress.join();
  LCI_endpoint_free(&eps);
  LCI_finalize();
  return lci_test::report("waits");
}

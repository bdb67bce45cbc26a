// Back-pressure: nothing accepted with LCI_OK is lost.
//
// Rank 0 sends several times more medium messages than a packet pool holds
// to rank 1, which posts no receive for a while (but progresses, so its pool
// fills with early arrivals). Then rank 1 posts every receive; all messages
// must arrive with their contents intact. Also checks that LCI_mbuffer_alloc
// says LCI_ERR_RETRY once the pool is empty, and works again after frees.
//
// Run with a small pool, e.g. LCI_SERVER_NUM_PKTS=64, on 2 ranks.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "harness.hpp"
#include "lci.h"

namespace {

using clock_type = std::chrono::steady_clock;

size_t size_of(int i) { return (i % 3 == 0) ? 6000 : (i % 3 == 1) ? 100 : 2000; }
unsigned char byte_of(int i, size_t j) { return static_cast<unsigned char>(i * 7 + j * 3 + 5); }

void exhaust_pool() {
  std::vector<LCI_mbuffer_t> held;
  LCI_mbuffer_t b;
  while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &b) == LCI_OK) {
    held.push_back(b);
    if (held.size() > static_cast<size_t>(LCI_SERVER_NUM_PKTS)) break;
  }
  EXPECT(held.size() <= static_cast<size_t>(LCI_SERVER_NUM_PKTS),
         "allocated %zu buffers from a pool of %d", held.size(), LCI_SERVER_NUM_PKTS);
  EXPECT(LCI_mbuffer_alloc(LCI_UR_DEVICE, &b) == LCI_ERR_RETRY, "empty pool did not say retry");
  for (auto& h : held) LCI_mbuffer_free(h);
  EXPECT(LCI_mbuffer_alloc(LCI_UR_DEVICE, &b) == LCI_OK, "pool did not recover after frees");
  LCI_mbuffer_free(b);
}
}  // namespace

int main() {
  LCI_initialize();
  exhaust_pool();
  LCI_barrier();
  const int count = 8 * LCI_SERVER_NUM_PKTS;
  const auto deadline = clock_type::now() + std::chrono::seconds(60);
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  LCI_endpoint_t ep;
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);

  if (LCI_RANK == 0) {
    std::vector<unsigned char> buf(6000);
    long retries = 0;
    for (int i = 0; i < count; ++i) {
      for (size_t j = 0; j < size_of(i); ++j) buf[j] = byte_of(i, j);
      LCI_mbuffer_t m;
      m.address = buf.data();
      m.length = size_of(i);
      while (LCI_sendm(ep, m, 1, static_cast<LCI_tag_t>(i)) == LCI_ERR_RETRY) {
        ++retries;
        LCI_progress(LCI_UR_DEVICE);
        if (clock_type::now() > deadline) {
          fprintf(stderr, "rank 0: timed out sending message %d\n", i);
          return 1;
        }
      }
    }
    printf("rank 0: sent %d messages (pool of %d packets), %ld retries\n", count,
           LCI_SERVER_NUM_PKTS, retries);
  } else if (LCI_RANK == 1) {
    // Let the early messages pile up: progress, but post nothing.
    const auto until = clock_type::now() + std::chrono::milliseconds(500);
    while (clock_type::now() < until) LCI_progress(LCI_UR_DEVICE);
    LCI_comp_t sync;
    LCI_sync_create(LCI_UR_DEVICE, count, &sync);
    std::vector<std::vector<unsigned char>> bufs(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      bufs[static_cast<size_t>(i)].assign(static_cast<size_t>(LCI_MEDIUM_SIZE), 0);
      LCI_mbuffer_t m;
      m.address = bufs[static_cast<size_t>(i)].data();
      m.length = static_cast<size_t>(LCI_MEDIUM_SIZE);
      EXPECT(LCI_recvm(ep, m, 0, static_cast<LCI_tag_t>(i), sync, bufs[static_cast<size_t>(i)].data()) == LCI_OK,
             "recvm %d", i);
    }
    std::vector<LCI_request_t> reqs(static_cast<size_t>(count));
    while (LCI_sync_test(sync, reqs.data()) == LCI_ERR_RETRY) {
      LCI_progress(LCI_UR_DEVICE);
      if (clock_type::now() > deadline) {
        fprintf(stderr, "rank 1: timed out waiting for messages\n");
        return 1;
      }
    }
    for (auto& r : reqs) {
      const int i = static_cast<int>(r.tag);
      EXPECT(r.flag == LCI_OK && r.rank == 0 && r.type == LCI_MEDIUM, "request fields");
      EXPECT(r.data.mbuffer.length == size_of(i), "message %d length %zu", i, r.data.mbuffer.length);
      EXPECT(r.user_context == bufs[static_cast<size_t>(i)].data(), "user_context of %d", i);
      bool ok = true;
      for (size_t j = 0; j < size_of(i); ++j)
        ok &= bufs[static_cast<size_t>(i)][j] == byte_of(i, j);
      EXPECT(ok, "message %d contents differ", i);
    }
    LCI_sync_free(&sync);
    printf("rank 1: received and checked %d messages\n", count);
  }
  LCI_endpoint_free(&ep);
  LCI_finalize();
  return lci_test::report("backpressure");
}

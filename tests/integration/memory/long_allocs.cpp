// The long-message path allocates nothing in steady state.
//
// Every C++ heap allocation of the process (the global operator new, which
// every heap object and container of liblci goes through) is counted while
// the ranks exchange long messages after a warm-up: sendl/recvl round trips
// of 64 KiB and 1 MiB from and into registered segments and LCI_SEGMENT_ALL
// buffers (one rendezvous each: RTS, RTR, RDMA write), and putl into the
// peer's registered memory with the target's default completion (write,
// then a notify message). The count of every measured phase must be 0, and
// every received byte must match. libfabric's own malloc use is not C++ and
// not counted. Ranks: 2 (rank 0 starts each round trip).
//
// LCI_SEGMENT_ALL buffers allocate nothing once their registration is
// cached (LCI_USE_DREG=1). Registered per use instead (--per-use: the
// default where caching is off), each use allocates its region record and
// backend handle beside the provider's registration: at most 2 per
// registration, 4 per round trip per rank, which is what --per-use allows.
#include <cstdio>
#include <string>

#include "count_new.hpp"
#include "harness.hpp"

using count_new::g_news;
using count_new::sync_endpoint;
using count_new::wait_sync;

using namespace lci_test;

namespace {

constexpr int k_tag = 11;

// Pops one request from `queue`, driving progress.
void wait_queue(LCI_comp_t queue, LCI_request_t* req, const char* what) {
  deadline d;
  while (LCI_queue_pop(queue, req) != LCI_OK) progress(d, what);
}

// One phase: `warmup` then `iters` sendl/recvl round trips of `size` bytes
// from `send` into `recv`; returns the allocations of the measured part.
long round_trips(LCI_endpoint_t ep, const lbuf& send, const lbuf& recv, size_t size, int warmup,
                 int iters) {
  const int peer = 1 - LCI_RANK;
  LCI_comp_t sync_s, sync_r;
  ok(LCI_sync_create(LCI_UR_DEVICE, 1, &sync_s), "LCI_sync_create");
  ok(LCI_sync_create(LCI_UR_DEVICE, 1, &sync_r), "LCI_sync_create");
  LCI_lbuffer_t sb = send.view(size), rb = recv.view(size);
  long before = 0;
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) before = g_news.load();
    const uint32_t seed = seed_of(static_cast<uint32_t>(i), static_cast<uint32_t>(size));
    LCI_request_t req;
    if (LCI_RANK == 0) {
      if (i < 2 || i == warmup + iters - 1) fill(sb.address, size, seed);
      retry_call([&] { return LCI_recvl(ep, rb, peer, k_tag, sync_r, nullptr); },
                 "LCI_recvl");
      retry_call([&] { return LCI_sendl(ep, sb, peer, k_tag, sync_s, nullptr); },
                 "LCI_sendl");
      wait_sync(sync_s, &req, "sendl");
      wait_sync(sync_r, &req, "recvl");
    } else {
      retry_call([&] { return LCI_recvl(ep, rb, peer, k_tag, sync_r, nullptr); },
                 "LCI_recvl");
      wait_sync(sync_r, &req, "recvl");
      // The echo carries what arrived.
      LCI_lbuffer_t echo = rb;
      retry_call([&] { return LCI_sendl(ep, echo, peer, k_tag, sync_s, nullptr); },
                 "LCI_sendl");
      wait_sync(sync_s, &req, "sendl");
    }
    EXPECT(req.flag == LCI_OK, "round trip %d: flag %d", i, static_cast<int>(req.flag));
    if (LCI_RANK == 0 && (i < 2 || i == warmup + iters - 1)) {
      const size_t bad = mismatch(rb.address, size, seed);
      EXPECT(bad == SIZE_MAX, "round trip %d of %zu bytes: byte %zu differs", i, size, bad);
    }
  }
  const long news = g_news.load() - before;
  LCI_sync_free(&sync_s);
  LCI_sync_free(&sync_r);
  return news;
}

// putl of `size` bytes on LCI_UR_ENDPOINT into the peer's region, the
// target completion to the endpoint's default (LCI_UR_CQ), each
// acknowledged by a short message; the origin's completions go to a queue.
long putl_phase(const lbuf& src, const remote_region& peer_region, size_t size, int warmup,
                int iters) {
  const int peer = 1 - LCI_RANK;
  LCI_comp_t queue;
  ok(LCI_queue_create(LCI_UR_DEVICE, &queue), "LCI_queue_create");
  LCI_lbuffer_t lb = src.view(size);
  long before = 0;
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) before = g_news.load();
    LCI_request_t req;
    if (LCI_RANK == 0) {
      LCI_lbuffer_t rb = remote_lbuffer(peer_region, 0, size);
      retry_call([&] { return LCI_putl(LCI_UR_ENDPOINT, lb, queue, peer, k_tag, rb, 0, nullptr); },
                 "LCI_putl");
      wait_queue(queue, &req, "putl");
      EXPECT(req.flag == LCI_OK, "putl %d: flag %d", i, static_cast<int>(req.flag));
    } else {
      wait_queue(LCI_UR_CQ, &req, "putl target");
      EXPECT(req.type == LCI_LONG && req.rank == peer && req.data.lbuffer.length == size,
             "putl %d target: type %d rank %d length %zu", i, static_cast<int>(req.type),
             req.rank, req.data.lbuffer.length);
      LCI_short_t ack{};
      retry_call([&] { return LCI_sends(LCI_UR_ENDPOINT, ack, peer, k_tag + 1); }, "LCI_sends");
    }
    if (LCI_RANK == 0) {
      retry_call([&] { return LCI_recvs(LCI_UR_ENDPOINT, peer, k_tag + 1, queue, nullptr); },
                 "LCI_recvs");
      wait_queue(queue, &req, "ack");
    }
  }
  const long news = g_news.load() - before;
  LCI_queue_free(&queue);
  return news;
}

}  // namespace

int main(int argc, char** argv) {
  const bool per_use = argc > 1 && std::string(argv[1]) == "--per-use";
  harness_init(240);
  if (LCI_NUM_PROCESSES != 2) die("long_allocs runs on 2 ranks");
  constexpr size_t k_big = size_t{1} << 20;
  constexpr int k_warmup = 20, k_iters = 200;
  LCI_endpoint_t ep = sync_endpoint();
  for (mem_kind kind : {mem_kind::registered, mem_kind::seg_all}) {
    lbuf send(kind, k_big), recv(kind, k_big);
    for (size_t size : {size_t{64} << 10, k_big}) {
      phase("sendl/recvl %zu bytes, %s", size, mem_name(kind));
      const long news = round_trips(ep, send, recv, size, k_warmup, k_iters);
      const long allowed = per_use && kind == mem_kind::seg_all ? 4L * k_iters : 0;
      EXPECT(news <= allowed, "%ld heap allocations in %d round trips of %zu bytes (%s), %ld allowed",
             news, k_iters, size, mem_name(kind), allowed);
      std::printf("rank %d: sendl/recvl %zu bytes, %s: %ld allocations in %d round trips\n",
                  LCI_RANK, size, mem_name(kind), news, k_iters);
    }
  }
  {
    lbuf target(mem_kind::registered, k_big), src(mem_kind::registered, k_big);
    auto regions = exchange_regions(target.segment(), target.data(), k_big);
    phase("putl 64 KiB");
    const long news = putl_phase(src, regions[static_cast<size_t>(1 - LCI_RANK)], size_t{64} << 10,
                                 k_warmup, k_iters);
    EXPECT(news == 0, "%ld heap allocations in %d putl", news, k_iters);
    std::printf("rank %d: putl 65536 bytes: %ld allocations in %d operations\n", LCI_RANK, news,
                k_iters);
    release_regions(regions);
  }
  ok(LCI_endpoint_free(&ep), "LCI_endpoint_free");
  return harness_finish("long_allocs");
}

// Many threads, many peers, all message kinds at once: every thread of every
// rank sends short (LCI_sends), medium (LCI_sendm) and long (LCI_sendl)
// messages to the same-numbered thread of every rank (itself included) and
// receives theirs, iteration after iteration, without waiting in between, so
// each rank has short, medium and long traffic to and from several peers in
// flight from all its threads. Threads use endpoints with queue, synchronizer
// or handler completions. Every byte and every request field is checked.
//
// usage: long_threads [--threads T] [--iters I]
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
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

int g_threads = 4;
int g_iters = 12;
size_t g_page = 4096;

enum kind { k_short = 0, k_medium = 1, k_long = 2 };

struct slot {
  kind k = k_short;
  int peer = 0;
  LCI_tag_t tag = 0;
  size_t size = 0;
  uint32_t seed = 0;
  mem_kind mk = mem_kind::seg_all;
  std::vector<uint8_t> mbuf;  // recvm target
  std::unique_ptr<lbuf> lb;
  LCI_lbuffer_t passed{};
  int done = 0;
};

LCI_tag_t tag_of(int thread, int it, kind k) {
  return static_cast<LCI_tag_t>((thread * g_iters + it) * 3 + k);
}
size_t medium_size(int src, int dst, int thread, int it) {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t choices[] = {0, 1, 100, g_page, m - 1, m};
  return choices[static_cast<size_t>(src + dst * 2 + thread + it) % 6];
}
size_t long_size(int src, int dst, int thread, int it) {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t choices[] = {1, g_page - 1, m + 1, 65539, 300001};
  return choices[static_cast<size_t>(src * 3 + dst + thread * 2 + it) % 5];
}
mem_kind send_kind(int i) {
  const mem_kind k[] = {mem_kind::seg_all, mem_kind::lalloc, mem_kind::registered};
  return k[i % 3];
}
mem_kind recv_kind(int i) {
  const mem_kind k[] = {mem_kind::seg_all, mem_kind::dynamic, mem_kind::lmemalign};
  return k[i % 3];
}

slot* owner(const LCI_request_t& r, std::vector<slot>& slots) {
  auto* s = static_cast<slot*>(r.user_context);
  const bool ours = s >= slots.data() && s < slots.data() + slots.size();
  EXPECT(ours, "user_context %p is not one of ours", r.user_context);
  if (!ours) return nullptr;
  EXPECT(s->done == 0, "completed twice");
  ++s->done;
  return s;
}

void check_recv(const LCI_request_t& r, slot& s) {
  EXPECT(r.flag == LCI_OK, "flag %d", r.flag);
  EXPECT(r.rank == s.peer, "rank %d, expected %d", r.rank, s.peer);
  EXPECT(r.tag == s.tag, "tag %u, expected %u", r.tag, s.tag);
  if (s.k == k_short) {
    EXPECT(r.type == LCI_IMMEDIATE, "short type %d", r.type);
    EXPECT(mismatch(r.data.immediate.val, LCI_SHORT_SIZE, s.seed) == SIZE_MAX,
           "short payload from %d differs", s.peer);
  } else if (s.k == k_medium) {
    EXPECT(r.type == LCI_MEDIUM, "medium type %d", r.type);
    EXPECT(r.data.mbuffer.address == s.mbuf.data() && r.data.mbuffer.length == s.size,
           "medium buffer {%p, %zu}, expected {%p, %zu}", r.data.mbuffer.address,
           r.data.mbuffer.length, (void*)s.mbuf.data(), s.size);
    EXPECT(mismatch(s.mbuf.data(), s.size, s.seed) == SIZE_MAX, "medium payload differs");
    EXPECT(not_byte(s.mbuf.data(), s.size, s.mbuf.size(), k_sentinel) == SIZE_MAX,
           "medium receive wrote past the message");
  } else {
    const LCI_lbuffer_t& got = r.data.lbuffer;
    EXPECT(r.type == LCI_LONG, "long type %d", r.type);
    EXPECT(got.length == s.size, "long length %zu, sent %zu", got.length, s.size);
    if (s.mk == mem_kind::dynamic) {
      EXPECT(got.address != nullptr, "NULL receive delivered no buffer");
      if (got.address && got.length == s.size)
        EXPECT(mismatch(got.address, s.size, s.seed) == SIZE_MAX, "long payload differs");
      EXPECT(LCI_lbuffer_free(got) == LCI_OK, "lbuffer_free");
    } else {
      EXPECT(same_lbuffer({got.segment, got.address, s.passed.length},
                          s.passed),
             "long receive buffer is not the posted one");
      EXPECT(mismatch(s.lb->data(), s.size, s.seed) == SIZE_MAX, "long payload differs");
      EXPECT(not_byte(s.lb->data(), s.size, s.lb->capacity(), k_sentinel) == SIZE_MAX,
             "long receive wrote past the message");
    }
  }
}

void thread_main(int t, LCI_endpoint_t ep, LCI_comp_type_t type, thread_barrier& tb) {
  const int me = LCI_RANK, n = LCI_NUM_PROCESSES;
  phase("thread %d (%s completions)", t, comp_name(type));
  const size_t nrecv = static_cast<size_t>(g_iters * n * 3);
  const size_t nsend = static_cast<size_t>(g_iters * n);  // sendl only
  comp rc(type, static_cast<int>(nrecv)), sc(type, static_cast<int>(nsend));
  std::vector<slot> recvs(nrecv), sends(nsend);
  size_t ri = 0, si = 0;
  tb.wait();
  if (t == 0) LCI_barrier();
  tb.wait();
  for (int it = 0; it < g_iters; ++it) {
    // Receives for this iteration from everyone (some of it may be here already) ...
    for (int p = 0; p < n; ++p)
      for (int k = 0; k < 3; ++k) {
        slot& s = recvs[ri++];
        s.k = static_cast<kind>(k);
        s.peer = p;
        s.tag = tag_of(t, it, s.k);
        s.seed = seed_of(static_cast<uint32_t>(p), static_cast<uint32_t>(me),
                         static_cast<uint32_t>(s.tag));
        LCI_error_t rc_post = LCI_OK;
        if (s.k == k_short) {
          rc_post = LCI_recvs(ep, p, s.tag, rc.handle(), &s);
        } else if (s.k == k_medium) {
          s.size = medium_size(p, me, t, it);
          s.mbuf.assign(static_cast<size_t>(LCI_MEDIUM_SIZE), k_sentinel);
          LCI_mbuffer_t b{s.mbuf.data(), s.mbuf.size()};
          rc_post = LCI_recvm(ep, b, p, s.tag, rc.handle(), &s);
        } else {
          s.size = long_size(p, me, t, it);
          s.mk = recv_kind(it + p + t);
          s.lb.reset(new lbuf(s.mk, s.size + 64));
          s.passed = s.mk == mem_kind::dynamic ? s.lb->view(0) : s.lb->view();
          rc_post = LCI_recvl(ep, s.passed, p, s.tag, rc.handle(), &s);
        }
        EXPECT(rc_post == LCI_OK, "receive post returned %d", rc_post);
      }
    // ... then this iteration's messages to everyone.
    for (int p = 0; p < n; ++p) {
      LCI_short_t v;
      const LCI_tag_t ts = tag_of(t, it, k_short), tm = tag_of(t, it, k_medium),
                      tl = tag_of(t, it, k_long);
      fill(v.val, LCI_SHORT_SIZE, seed_of(static_cast<uint32_t>(me), static_cast<uint32_t>(p), ts));
      RETRY(LCI_sends(ep, v, p, ts));
      std::vector<uint8_t> m(medium_size(me, p, t, it));
      fill(m.data(), m.size(), seed_of(static_cast<uint32_t>(me), static_cast<uint32_t>(p), tm));
      LCI_mbuffer_t mb{m.empty() ? nullptr : m.data(), m.size()};
      RETRY(LCI_sendm(ep, mb, p, tm));
      slot& s = sends[si++];
      s.k = k_long;
      s.peer = p;
      s.tag = tl;
      s.size = long_size(me, p, t, it);
      s.seed = seed_of(static_cast<uint32_t>(me), static_cast<uint32_t>(p), tl);
      s.mk = send_kind(it + p + 2 * t);
      s.lb.reset(new lbuf(s.mk, s.size));
      fill(s.lb->data(), s.size, s.seed);
      s.passed = s.lb->view(s.size);
      RETRY(LCI_sendl(ep, s.passed, p, tl, sc.handle(), &s));
    }
    // Drive progress a little so that traffic overlaps with the next posts.
    for (int i = 0; i < 10; ++i) LCI_progress(LCI_UR_DEVICE);
  }
  for (const auto& r : rc.take(nrecv, "receives", 120)) {
    slot* s = owner(r, recvs);
    if (s) check_recv(r, *s);
  }
  for (const auto& r : sc.take(nsend, "long send completions", 120)) {
    slot* s = owner(r, sends);
    if (!s) continue;
    EXPECT(r.flag == LCI_OK && r.rank == s->peer && r.tag == s->tag && r.type == LCI_LONG &&
               same_lbuffer(r.data.lbuffer, s->passed),
           "sendl completion {%d, %d, %u, %d, {%p, %p, %zu}}", r.flag, r.rank, r.tag, r.type,
           (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length);
  }
  EXPECT(rc.pending() == 0 && sc.pending() == 0, "extra completions");
  tb.wait();
  if (t == 0) LCI_barrier();
  tb.wait();
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) g_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) g_iters = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: long_threads [--threads T] [--iters I]\n");
      return 2;
    }
  }
  if (g_threads < 1 || g_threads > 16 || g_iters < 1 || g_iters > 100) {
    fprintf(stderr, "long_threads: 1 <= T <= 16, 1 <= I <= 100\n");
    return 2;
  }
  harness_init(240);
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const LCI_comp_type_t types[] = {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC,
                                   LCI_COMPLETION_HANDLER};
  LCI_endpoint_t eps[3];
  for (int i = 0; i < 3; ++i) {
    LCI_plist_t plist;
    OK(LCI_plist_create(&plist));
    OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, types[i]));
    OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, types[i]));
    OK(LCI_endpoint_init(&eps[i], LCI_UR_DEVICE, plist));
    LCI_plist_free(&plist);
  }
  thread_barrier tb(g_threads);
  std::vector<std::thread> threads;
  for (int t = 1; t < g_threads; ++t)
    threads.emplace_back([&, t] { thread_main(t, eps[t % 3], types[t % 3], tb); });
  thread_main(0, eps[0], types[0], tb);
  for (auto& th : threads) th.join();
  for (auto& ep : eps) LCI_endpoint_free(&ep);
  return harness_finish("long_threads");
}

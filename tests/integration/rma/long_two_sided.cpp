// Long two-sided messages, LCI_sendl/LCI_recvl, around a ring (rank r sends
// to r+1 and receives from r-1; one rank talks to itself).
//
// A round is one endpoint (rank+tag or tag matching; queue, synchronizer or
// handler completion on each port) and one order (receives posted before the
// messages are sent, or after they arrived). In a round every size (0, 1,
// page-1, page, LCI_MEDIUM_SIZE+1, 1 MiB; 64 MiB with --big) travels with
// every pairing of buffer kinds: LCI_memory_register'ed, LCI_lbuffer_alloc,
// LCI_lbuffer_memalign and LCI_SEGMENT_ALL on both sides, plus NULL receive
// addresses (LCI allocates, the receiver frees with LCI_lbuffer_free).
// Receive buffers are 100 bytes larger than the message; those bytes must stay
// untouched. Every byte and every request field of both sides is checked.
//
// usage: long_two_sided [--big] [--split] [--quick]
//   --big    adds 64 MiB messages to two rounds
//   --split  sizes around 1002 and 1 MiB; needs LCI_MAX_SINGLE_MESSAGE_SIZE=1002
//   --quick  only the rounds with the same completion type on both ports
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

// One message: how it is sent and received, and what came back.
struct slot {
  size_t size = 0;
  mem_kind skind = mem_kind::seg_all, rkind = mem_kind::seg_all;
  int peer = 0;
  LCI_tag_t tag = 0;
  uint32_t seed = 0;
  std::unique_ptr<lbuf> buf;
  LCI_lbuffer_t passed{};
  int done = 0;
};

struct round_spec {
  LCI_match_t match;
  LCI_comp_type_t cmd, msg;
  bool late;
  bool big;
};

size_t g_page = 4096;
bool g_split = false;

std::vector<size_t> sizes() {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  if (g_split) return {0, 1, 1001, 1002, 1003, 2004, 2005, g_page, m + 1, 1 << 20};
  return {0, 1, g_page - 1, g_page, m + 1, 1 << 20};
}

// (send kind, receive kind): every kind on both sides, NULL receives twice.
const std::pair<mem_kind, mem_kind> k_pairs[] = {
    {mem_kind::registered, mem_kind::registered}, {mem_kind::lalloc, mem_kind::dynamic},
    {mem_kind::lmemalign, mem_kind::seg_all},     {mem_kind::seg_all, mem_kind::lalloc},
    {mem_kind::seg_all, mem_kind::dynamic},       {mem_kind::registered, mem_kind::lmemalign},
};

void make_slots(const round_spec& rs, int round, std::vector<slot>& sends,
                std::vector<slot>& recvs) {
  const int me = LCI_RANK, n = LCI_NUM_PROCESSES;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  std::vector<std::pair<size_t, std::pair<mem_kind, mem_kind>>> list;
  for (size_t s : sizes())
    for (auto& p : k_pairs) list.push_back({s, p});
  if (rs.big) {
    list.push_back({size_t(64) << 20, {mem_kind::registered, mem_kind::registered}});
    list.push_back({size_t(64) << 20, {mem_kind::seg_all, mem_kind::dynamic}});
  }
  sends.resize(list.size());
  recvs.resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      slot& s = side ? recvs[i] : sends[i];
      s.size = list[i].first;
      s.skind = list[i].second.first;
      s.rkind = list[i].second.second;
      s.peer = side ? left : right;
      const int src = side ? left : me;
      s.tag = static_cast<LCI_tag_t>(src * 128 + static_cast<int>(i));
      s.seed = seed_of(static_cast<uint32_t>(src), static_cast<uint32_t>(round),
                       static_cast<uint32_t>(i));
    }
  }
}

void post_receives(const round_spec& rs, LCI_endpoint_t ep, comp& c, std::vector<slot>& recvs) {
  for (auto& s : recvs) {
    // Larger than the message: the bytes past it must stay untouched.
    s.buf.reset(new lbuf(s.rkind, s.size + 100));
    s.passed = s.rkind == mem_kind::dynamic ? s.buf->view(0) : s.buf->view();
    const int from = rs.match == LCI_MATCH_TAG ? LCI_RANK_ANY : s.peer;
    EXPECT(LCI_recvl(ep, s.passed, from, s.tag, c.handle(), &s) == LCI_OK, "recvl");
  }
}

void send_all(LCI_endpoint_t ep, comp& c, std::vector<slot>& sends) {
  for (auto& s : sends) {
    s.buf.reset(new lbuf(s.skind, s.size));
    fill(s.buf->data(), s.size, s.seed);
    s.passed = s.buf->view(s.size);
    RETRY(LCI_sendl(ep, s.passed, s.peer, s.tag, c.handle(), &s));
  }
}

// Matches each request to its slot through user_context.
slot* owner(const LCI_request_t& r, std::vector<slot>& slots) {
  auto* s = static_cast<slot*>(r.user_context);
  const bool ours = s >= slots.data() && s < slots.data() + slots.size();
  EXPECT(ours, "user_context %p is not one of ours", r.user_context);
  if (!ours) return nullptr;
  EXPECT(s->done == 0, "tag %u completed twice", s->tag);
  ++s->done;
  return s;
}

void check_receives(const std::vector<LCI_request_t>& reqs, std::vector<slot>& recvs) {
  for (const auto& r : reqs) {
    slot* s = owner(r, recvs);
    if (!s) continue;
    const LCI_lbuffer_t& got = r.data.lbuffer;
    EXPECT(r.flag == LCI_OK, "recv flag %d", r.flag);
    EXPECT(r.rank == s->peer, "recv rank %d, expected %d", r.rank, s->peer);
    EXPECT(r.tag == s->tag, "recv tag %u, expected %u", r.tag, s->tag);
    EXPECT(r.type == LCI_LONG, "recv type %d", r.type);
    EXPECT(got.length == s->size, "recv length %zu, sent %zu (%s -> %s)", got.length, s->size,
           mem_name(s->skind), mem_name(s->rkind));
    if (s->rkind == mem_kind::dynamic) {
      EXPECT(s->size == 0 || got.address != nullptr, "NULL receive delivered no buffer");
      if (got.address && got.length == s->size) {
        size_t bad = mismatch(got.address, s->size, s->seed);
        EXPECT(bad == SIZE_MAX, "%zu bytes into an LCI buffer differ at %zu", s->size, bad);
      }
      EXPECT(LCI_lbuffer_free(got) == LCI_OK, "lbuffer_free of a received buffer");
    } else {
      EXPECT(got.segment == s->passed.segment && got.address == s->passed.address,
             "recv buffer {%p, %p}, posted {%p, %p}", (void*)got.segment, got.address,
             (void*)s->passed.segment, s->passed.address);
      size_t bad = mismatch(s->buf->data(), s->size, s->seed);
      EXPECT(bad == SIZE_MAX, "%zu bytes %s -> %s differ at %zu", s->size, mem_name(s->skind),
             mem_name(s->rkind), bad);
      bad = not_byte(s->buf->data(), s->size, s->buf->capacity(), k_sentinel);
      EXPECT(bad == SIZE_MAX, "byte %zu past a %zu-byte message was written", bad, s->size);
    }
  }
}

void check_sends(const std::vector<LCI_request_t>& reqs, std::vector<slot>& sends) {
  for (const auto& r : reqs) {
    slot* s = owner(r, sends);
    if (!s) continue;
    EXPECT(r.flag == LCI_OK, "send flag %d", r.flag);
    EXPECT(r.rank == s->peer, "send rank %d, expected %d", r.rank, s->peer);
    EXPECT(r.tag == s->tag, "send tag %u, expected %u", r.tag, s->tag);
    EXPECT(r.type == LCI_LONG, "send type %d", r.type);
    EXPECT(same_lbuffer(r.data.lbuffer, s->passed),
           "send completion buffer {%p, %p, %zu}, passed {%p, %p, %zu}",
           (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length,
           (void*)s->passed.segment, s->passed.address, s->passed.length);
    EXPECT(mismatch(s->buf->data(), s->size, s->seed) == SIZE_MAX, "the send buffer changed");
  }
}

void run_round(const round_spec& rs, int round) {
  phase("round %d: %s match, command %s, message %s, receive %s%s", round,
        rs.match == LCI_MATCH_TAG ? "tag" : "rank+tag", comp_name(rs.cmd), comp_name(rs.msg),
        rs.late ? "after arrival" : "first", rs.big ? ", 64 MiB" : "");
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, rs.match));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, rs.cmd));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, rs.msg));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  LCI_plist_free(&plist);

  std::vector<slot> sends, recvs;
  make_slots(rs, round, sends, recvs);
  comp rc(rs.msg, static_cast<int>(recvs.size())), sc(rs.cmd, static_cast<int>(sends.size()));
  if (!rs.late) {
    post_receives(rs, ep, rc, recvs);
    LCI_barrier();
    send_all(ep, sc, sends);
  } else {
    send_all(ep, sc, sends);
    LCI_barrier();
    // Let the ready-to-send messages arrive before the receives exist.
    deadline d(0.005);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    post_receives(rs, ep, rc, recvs);
  }
  check_receives(rc.take(recvs.size(), "long receives"), recvs);
  check_sends(sc.take(sends.size(), "long send completions"), sends);
  EXPECT(rc.pending() == 0, "extra receive completions");
  EXPECT(sc.pending() == 0, "extra send completions");
  LCI_barrier();
  recvs.clear();
  sends.clear();
  LCI_endpoint_free(&ep);
}

}  // namespace

int main(int argc, char** argv) {
  bool big = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--big")) big = true;
    else if (!strcmp(argv[i], "--split")) g_split = true;
    else if (!strcmp(argv[i], "--quick")) quick = true;
    else {
      fprintf(stderr, "usage: long_two_sided [--big] [--split] [--quick]\n");
      return 2;
    }
  }
  harness_init(240);
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (g_split && LCI_MAX_SINGLE_MESSAGE_SIZE != 1002)
    die("--split needs LCI_MAX_SINGLE_MESSAGE_SIZE=1002 (it is %zu)", LCI_MAX_SINGLE_MESSAGE_SIZE);

  const std::pair<LCI_comp_type_t, LCI_comp_type_t> ports[] = {
      {LCI_COMPLETION_QUEUE, LCI_COMPLETION_QUEUE},     {LCI_COMPLETION_SYNC, LCI_COMPLETION_SYNC},
      {LCI_COMPLETION_HANDLER, LCI_COMPLETION_HANDLER}, {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC},
      {LCI_COMPLETION_SYNC, LCI_COMPLETION_HANDLER},    {LCI_COMPLETION_HANDLER, LCI_COMPLETION_QUEUE},
  };
  int round = 0;
  for (LCI_match_t match : {LCI_MATCH_RANKTAG, LCI_MATCH_TAG})
    for (auto& p : ports) {
      if (quick && p.first != p.second) continue;
      for (bool late : {false, true}) {
        const bool with_big = big && (round == 0 || round == 13);
        run_round({match, p.first, p.second, late, with_big}, round);
        ++round;
        if (g_failures.load()) break;
      }
    }
  return harness_finish("long_two_sided");
}

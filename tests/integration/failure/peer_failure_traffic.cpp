// Survivors continue in the middle of all-to-all traffic
// (LCI_PEER_FAILURE=continue, under lcrun --keep-going, 4 ranks).
//
// Round 0: every rank exchanges with every other one, per peer: a medium
// message and a long message both ways (recvm/sendm, recvl/sendl), a putl
// into the peer's registered region and a getl from it (remote completion
// at the peer), a putv of two buffers and a getv of two buffers with
// piggy-back bytes (the getv then waits for the peer's reply). Every
// completion is checked (flag, rank, tag, bytes); each rank then counts what
// its device holds (LCIT_resources: free packets, rendezvous ids, matching
// entries, backlog).
// Round 1: the same operations are issued, then the victim (rank 2: in the
// collectives' tree, rank 3's parent) is gone: --mode kill, it SIGKILLs
// itself right after issuing; --mode inject, the survivors mark it failed
// with LCIT_fail_peer (it dies a few seconds later, unseen). The survivors
// call LCI_gfence_wait in the middle of it, which must return
// LCI_ERR_FATAL, not wait. Every round-1 operation completes exactly once:
// with a survivor, LCI_OK and its bytes; with the victim, LCI_OK and its
// bytes (it got there first) or LCI_ERR_FATAL and the victim's rank, and at
// least one does the latter. LCI_fence_wait returns; the remote completions
// from the survivors all arrive. The LCIX collectives (allreducem,
// allreducel, barrier) and LCI_barrier complete at every survivor with
// LCI_ERR_FATAL: none waits for the victim, none reports LCI_OK on a
// result that misses its contribution. The survivors then run another full
// round among themselves (all LCI_OK, bytes checked), and the device holds
// what it held after round 0: nothing of the victim's is left.
//
// usage: peer_failure_traffic --mode kill|inject
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lci.h"

#include "harness.hpp"
#include "test_hooks.h"

using namespace lci_test;

namespace {

constexpr size_t k_med = 1024;
constexpr size_t k_long = size_t(64) << 10;
constexpr size_t k_piggy = 16;
constexpr int k_ops = 8;  // per peer and round: the kinds below
enum op_kind { op_recvm, op_recvl, op_sendl, op_putl, op_getl, op_putv, op_getv, op_sendm };
const char* const k_names[k_ops] = {"recvm", "recvl", "sendl", "putl",
                                    "getl",  "putv",  "getv",  "sendm"};

int g_n = 0, g_me = 0, g_victim = 0;

uint32_t u(int x) { return static_cast<uint32_t>(x); }
LCI_tag_t tag_of(int round, op_kind k) { return static_cast<LCI_tag_t>(100 + round * 16 + k); }

constexpr int k_rounds = 3;

// This rank's registered region: per round and origin o, four areas of
// k_long: 0 putl lands, 1 and 2 putv lands, 3 (round 0, o = this rank) its
// own data, read by getl and getv; then a piggy-back area per round and
// origin. (Per round: a survivor may start the next round while another
// still checks this one's.)
struct region {
  std::unique_ptr<lbuf> mem;
  std::vector<remote_region> of;  // every rank's region
  static size_t area(int origin, int k, int round = 0) {
    return ((static_cast<size_t>(round) * g_n + origin) * 4 + k) * k_long;
  }
  static size_t piggy(int origin, int round) {
    return area(0, 0, k_rounds) + (static_cast<size_t>(round) * g_n + origin) * k_piggy;
  }
  static size_t length() { return piggy(0, k_rounds); }
};

// The buffers of one operation (origin side and receive side).
struct slot {
  op_kind kind;
  int peer;
  int round;
  std::vector<uint8_t> m;
  std::unique_ptr<lbuf> a, b;  // long buffers (b: an iovec's second one)
  LCI_lbuffer_t arr[2];
  std::vector<uint8_t> piggy;
  bool done = false;
};

uint32_t seed(int from, int to, int round, int k) { return seed_of(u(from), u(to), u(round), u(k)); }

// Issues round `round`'s operations with every peer in `peers`; the slots
// of their completions (each request's user_context) go to `out`.
void issue(int round, const std::vector<int>& peers, region& reg, comp& q,
           std::vector<std::unique_ptr<slot>>& out) {
  auto add = [&](op_kind k, int p) {
    out.emplace_back(new slot{k, p, round, {}, nullptr, nullptr, {}, {}});
    return out.back().get();
  };
  // Receives first (also the victim's, so that its failure meets them).
  for (int p : peers) {
    slot* s = add(op_recvm, p);
    s->m.assign(k_med, 0);
    OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{s->m.data(), k_med}, p, tag_of(round, op_recvm),
                 q.handle(), s));
    s = add(op_recvl, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long));
    OK(LCI_recvl(LCI_UR_ENDPOINT, s->a->view(), p, tag_of(round, op_recvl), q.handle(), s));
  }
  for (int p : peers) {
    const remote_region& rr = reg.of[static_cast<size_t>(p)];
    std::vector<uint8_t> m(k_med);
    fill(m.data(), k_med, seed(g_me, p, round, op_recvm));
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), k_med}, p, tag_of(round, op_recvm)));

    slot* s = add(op_sendl, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long));
    fill(s->a->data(), k_long, seed(g_me, p, round, op_recvl));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, s->a->view(), p, tag_of(round, op_recvl), q.handle(), s));

    s = add(op_putl, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long));
    fill(s->a->data(), k_long, seed(g_me, p, round, op_putl));
    RETRY(LCI_putl(LCI_UR_ENDPOINT, s->a->view(), q.handle(), p, tag_of(round, op_putl),
                   remote_lbuffer(rr, region::area(g_me, 0, round), k_long), LCI_DEFAULT_COMP_REMOTE, s));

    s = add(op_getl, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long));
    LCI_lbuffer_t lb = s->a->view();
    RETRY(LCI_getl(LCI_UR_ENDPOINT, &lb, k_long, q.handle(), p, tag_of(round, op_getl),
                   remote_lbuffer(rr, region::area(p, 3), k_long), LCI_DEFAULT_COMP_REMOTE, s));

    s = add(op_putv, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long / 2));
    s->b.reset(new lbuf(mem_kind::registered, k_long / 2));
    fill(s->a->data(), k_long / 2, seed(g_me, p, round, 50));
    fill(s->b->data(), k_long / 2, seed(g_me, p, round, 51));
    s->piggy.assign(k_piggy, 0);
    fill(s->piggy.data(), k_piggy, seed(g_me, p, round, 52));
    s->arr[0] = s->a->view();
    s->arr[1] = s->b->view();
    LCI_lbuffer_t rarr[2] = {remote_lbuffer(rr, region::area(g_me, 1, round), k_long / 2),
                             remote_lbuffer(rr, region::area(g_me, 2, round), k_long / 2)};
    LCI_iovec_t lv{LCI_mbuffer_t{s->piggy.data(), k_piggy}, s->arr, 2};
    LCI_iovec_t rv{LCI_mbuffer_t{reinterpret_cast<char*>(rr.addr) + region::piggy(g_me, round),
                                 k_piggy},
                   rarr, 2};
    RETRY(LCI_putv(LCI_UR_ENDPOINT, lv, q.handle(), p, tag_of(round, op_putv), rv,
                   LCI_DEFAULT_COMP_REMOTE, s));

    s = add(op_getv, p);
    s->a.reset(new lbuf(mem_kind::registered, k_long / 2));
    s->b.reset(new lbuf(mem_kind::registered, k_long / 2));
    s->piggy.assign(k_piggy, 0);
    s->arr[0] = s->a->view();
    s->arr[1] = s->b->view();
    LCI_lbuffer_t garr[2] = {remote_lbuffer(rr, region::area(p, 3), k_long / 2),
                             remote_lbuffer(rr, region::area(p, 3) + k_long / 2, k_long / 2)};
    // The peer's piggy-back bytes: its own data area's first bytes.
    LCI_iovec_t glv{LCI_mbuffer_t{s->piggy.data(), k_piggy}, s->arr, 2};
    LCI_iovec_t grv{LCI_mbuffer_t{reinterpret_cast<char*>(rr.addr) + region::area(p, 3), k_piggy},
                    garr, 2};
    RETRY(LCI_getv(LCI_UR_ENDPOINT, glv, q.handle(), p, tag_of(round, op_getv), grv,
                   LCI_DEFAULT_COMP_REMOTE, s));
  }
}

// Checks one completion of this rank's operation or receive.
bool check_one(const LCI_request_t& r) {
  auto* s = static_cast<slot*>(r.user_context);
  EXPECT(!s->done, "the %s with rank %d (round %d) completed twice", k_names[s->kind], s->peer,
         s->round);
  s->done = true;
  const bool with_victim = s->peer == g_victim;
  if (r.flag != LCI_OK) {
    EXPECT(with_victim && r.flag == LCI_ERR_FATAL && r.rank == g_victim,
           "the %s with rank %d (round %d) completed with {flag %d, rank %d}", k_names[s->kind],
           s->peer, s->round, r.flag, r.rank);
    return true;
  }
  EXPECT(r.rank == s->peer, "the %s with rank %d completed naming rank %d", k_names[s->kind],
         s->peer, r.rank);
  const int p = s->peer, me = g_me, rd = s->round;
  switch (s->kind) {
    case op_recvm:
      EXPECT(r.data.mbuffer.length == k_med &&
                 mismatch(s->m.data(), k_med, seed(p, me, rd, op_recvm)) == SIZE_MAX,
             "the medium message from rank %d (round %d) differs", p, rd);
      break;
    case op_recvl:
      EXPECT(r.data.lbuffer.length == k_long &&
                 mismatch(s->a->data(), k_long, seed(p, me, rd, op_recvl)) == SIZE_MAX,
             "the long message from rank %d (round %d) differs", p, rd);
      break;
    case op_getl:
      EXPECT(mismatch(s->a->data(), k_long, seed(p, p, 0, 3)) == SIZE_MAX,
             "the getl from rank %d read other bytes", p);
      break;
    case op_getv:
      EXPECT(mismatch(s->a->data(), k_long / 2, seed(p, p, 0, 3)) == SIZE_MAX &&
                 memcmp(s->piggy.data(), s->a->data(), k_piggy) == 0,
             "the getv from rank %d read other bytes or piggy-back bytes", p);
      break;
    default:
      break;
  }
  return false;
}

// Waits for every slot of `slots` to complete; returns how many failed.
int complete_all(comp& q, std::vector<std::unique_ptr<slot>>& slots, const char* what) {
  int failed = 0;
  for (const LCI_request_t& r : q.take(slots.size(), what)) failed += check_one(r) ? 1 : 0;
  return failed;
}

// Remote completions on LCI_UR_CQ (puts and gets that reached this rank's
// memory): `want` from each rank in `from`; others (the victim's) are counted.
void drain_remote(const std::vector<int>& from, int want, region& reg, int round) {
  std::vector<int> got(static_cast<size_t>(g_n), 0);
  auto enough = [&] {
    for (int p : from)
      if (got[static_cast<size_t>(p)] < want) return false;
    return true;
  };
  deadline d(30);
  while (!enough()) {
    LCI_request_t r;
    if (LCI_queue_pop(LCI_UR_CQ, &r) != LCI_OK) {
      progress(d, "the remote completions of puts and gets");
      continue;
    }
    EXPECT(r.flag == LCI_OK && r.rank >= 0 && r.rank < g_n, "a remote completion {flag %d, rank %d}",
           r.flag, r.rank);
    if (r.rank < 0 || r.rank >= g_n) continue;
    ++got[static_cast<size_t>(r.rank)];
    if (r.type == LCI_IOVEC) {
      // A putv (its piggy-back bytes land in the piggy-back area; a getv's
      // name the data area): its bytes and piggy-back bytes.
      if (r.rank != g_victim && r.data.iovec.count == 2 &&
          r.data.iovec.piggy_back.address ==
              reg.mem->data() + region::piggy(r.rank, round))
        EXPECT(mismatch(reg.mem->data() + region::area(r.rank, 1, round), k_long / 2,
                        seed(r.rank, g_me, round, 50)) == SIZE_MAX &&
                   mismatch(reg.mem->data() + region::area(r.rank, 2, round), k_long / 2,
                            seed(r.rank, g_me, round, 51)) == SIZE_MAX &&
                   mismatch(r.data.iovec.piggy_back.address, k_piggy,
                            seed(r.rank, g_me, round, 52)) == SIZE_MAX,
               "the putv from rank %d (round %d) differs", r.rank, round);
      free(r.data.iovec.lbuffers);
    }
  }
}

LCIT_resources_t resources() {
  LCIT_resources_t r;
  memset(&r, 0, sizeof(r));
  OK(LCIT_resources(LCI_UR_DEVICE, &r));
  return r;
}

void sum_op(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint64_t*>(dst);
  const auto* s = static_cast<const uint64_t*>(src);
  for (size_t i = 0; i < n / sizeof(uint64_t); ++i) d[i] += s[i];
}

// A collective on LCI_UR_ENDPOINT must complete (bounded) with `expect`.
void collective(const char* what, LCIX_collective_t h, comp& c, LCI_error_t expect) {
  deadline d(20);
  while (h)  // (LCI_OK: it moved; done once the handle is NULL)
    if (LCIX_coll_progress(&h) != LCI_OK) progress(d, what);
  const LCI_request_t r = c.take1(what, 20);
  EXPECT(r.flag == expect, "%s completed with %d, expected %d", what, r.flag, expect);
}

void run(const std::string& mode) {
  g_n = LCI_NUM_PROCESSES;
  g_me = LCI_RANK;
  g_victim = 2;
  if (g_n != 4) die("runs on 4 ranks");
  region reg;
  const size_t region_len = region::length();
  reg.mem.reset(new lbuf(mem_kind::registered, region_len));
  memset(reg.mem->data(), 0, region_len);
  fill(reg.mem->data() + region::area(g_me, 3), k_long, seed(g_me, g_me, 0, 3));
  reg.of = exchange_regions(reg.mem->segment(), reg.mem->data(), region_len);

  std::vector<int> all, survivors;
  for (int p = 0; p < g_n; ++p) {
    if (p == g_me) continue;
    all.push_back(p);
    if (p != g_victim) survivors.push_back(p);
  }
  comp q(LCI_COMPLETION_QUEUE);

  phase("round 0 with every rank");
  std::vector<std::unique_ptr<slot>> r0;
  issue(0, all, reg, q, r0);
  EXPECT(complete_all(q, r0, "round 0") == 0, "an operation of round 0 failed");
  drain_remote(all, 4, reg, 0);
  OK(LCI_barrier());
  const LCIT_resources_t before = resources();

  phase("round 1, the victim dies");
  std::vector<std::unique_ptr<slot>> r1;
  issue(1, all, reg, q, r1);
  if (g_me == g_victim) {
    if (mode == "inject") sleep(5);  // no progress: the others decide without it
    std::fprintf(stderr, "rank %d: killing itself\n", g_me);
    std::fflush(stderr);
    raise(SIGKILL);
  }
  if (mode == "inject") OK(LCIT_fail_peer(g_victim));
  phase("LCI_gfence_wait while the victim is gone");
  EXPECT(LCI_gfence_wait(LCI_UR_ENDPOINT) == LCI_ERR_FATAL,
         "LCI_gfence_wait did not report the failed rank");
  phase("round 1's completions");
  const int failed = complete_all(q, r1, "round 1");
  EXPECT(failed > 0, "no operation with the failed rank %d completed with LCI_ERR_FATAL",
         g_victim);
  std::printf("rank %d: round 1: %d of %zu operations with rank %d failed\n", g_me, failed,
              r1.size() / all.size(), g_victim);
  OK(LCI_fence_wait(LCI_UR_ENDPOINT));
  drain_remote(survivors, 4, reg, 1);

  phase("the collectives after the failure");
  comp cc(LCI_COMPLETION_QUEUE);
  uint64_t vals[4] = {1, 2, 3, 4};
  LCIX_collective_t h = nullptr;
  OK(LCIX_allreducem(LCI_UR_ENDPOINT, LCI_mbuffer_t{vals, sizeof(vals)}, &sum_op, 7, cc.handle(),
                     nullptr, &h));
  collective("LCIX_allreducem", h, cc, LCI_ERR_FATAL);
  lbuf big(mem_kind::registered, k_long);
  OK(LCIX_allreducel(LCI_UR_ENDPOINT, big.view(), &sum_op, 8, cc.handle(), nullptr, &h));
  collective("LCIX_allreducel", h, cc, LCI_ERR_FATAL);
  OK(LCIX_barrier(LCI_UR_ENDPOINT, 9, cc.handle(), nullptr, &h));
  collective("LCIX_barrier", h, cc, LCI_ERR_FATAL);
  EXPECT(LCI_barrier() == LCI_ERR_FATAL, "LCI_barrier did not report the failed rank");

  phase("round 2 among the survivors");
  std::vector<std::unique_ptr<slot>> r2;
  issue(2, survivors, reg, q, r2);
  EXPECT(complete_all(q, r2, "round 2") == 0, "an operation among the survivors failed");
  drain_remote(survivors, 4, reg, 2);

  phase("resources after");
  // Settled: every survivor finished round 2 (a message exchange among
  // them) before anyone counts.
  OK(LCI_fence_wait(LCI_UR_ENDPOINT));
  for (int i = 0; i < 1000; ++i) LCI_progress(LCI_UR_DEVICE);
  const LCIT_resources_t after = resources();
  EXPECT(after.rendezvous == 0 && after.matching == 0 && after.backlog == 0,
         "left after the failure: %zu rendezvous, %zu matching entries, %zu backlog entries",
         after.rendezvous, after.matching, after.backlog);
  EXPECT(after.packets_free + before.receives_missing >= before.packets_free + after.receives_missing,
         "packets free: %zu after (%zu receives missing), %zu before (%zu missing)",
         after.packets_free, after.receives_missing, before.packets_free, before.receives_missing);
  std::printf("rank %d: resources before/after: packets free %zu/%zu of %zu, rendezvous %zu/%zu, "
              "matching %zu/%zu, backlog %zu/%zu\n",
              g_me, before.packets_free, after.packets_free, after.packets_total, before.rendezvous,
              after.rendezvous, before.matching, after.matching, before.backlog, after.backlog);
  release_regions(reg.of);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 2 && strcmp(argv[1], "--mode") == 0 ? argv[2] : "";
  if (mode != "kill" && mode != "inject") {
    std::fprintf(stderr, "usage: peer_failure_traffic --mode kill|inject\n");
    return 2;
  }
  harness_init(120);
  run(mode);
  phase("LCI_finalize among the survivors");
  OK(LCI_finalize());
  return report(("peer_failure_traffic " + mode).c_str());
}

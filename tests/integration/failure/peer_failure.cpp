// Survivors continue (LCI_PEER_FAILURE=continue, under lcrun --keep-going):
// the last rank (the victim) dies after the others posted receives for it;
// the others go on without it.
//
// Before the victim dies, every survivor posts receives naming it (recvs to
// a queue, recvm to a synchronizer, recvl to a queue, recvm to a handler),
// a receive on a tag-matching endpoint (any sender) and a sendl the victim
// never receives (its rendezvous waits for an RTR), then all ranks meet in
// LCI_barrier, and the victim waits for a message from every survivor
// saying it left the barrier. Then the victim is gone:
//   --mode kill    it kills itself with SIGKILL; the survivors must detect
//                  it (the native transport: within a second);
//   --mode inject  the survivors mark it failed with LCIT_fail_peer (the
//                  deterministic path, LCI_TEST_HOOKS=1), and it then kills
//                  itself all the same, so lcrun has a rank to report.
// With --exit the victim ends with _exit(3) instead of SIGKILL (neither
// LCI_finalize nor the launcher's finalize): Hydra's mpiexec ends the whole
// job when a rank dies by a signal, even with -disable-auto-cleanup, but
// lets the others run on when one exits.
// Each survivor then checks: each receive naming the victim, and the sendl,
// completed exactly once with LCI_ERR_FATAL, the victim's rank, its tag and
// type; the
// LCIX_on_peer_failure callback ran exactly once, for the victim;
// LCIX_peer_failed says so (and not for the living); 10,000 tries of every
// kind of new operation naming the victim return LCI_ERR_FATAL, never
// LCI_ERR_RETRY; LCI_barrier returns LCI_ERR_FATAL. Then the survivors run a
// full exchange among themselves (medium and long messages, every byte
// checked), the tag-matching receive is matched by a living rank, and they
// finalize. It prints the time from the barrier to the first failed
// completion.
//
// usage: peer_failure --mode kill|inject [--exit]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr LCI_tag_t k_tag_s = 11, k_tag_m = 12, k_tag_l = 13, k_tag_any = 14, k_tag_rdv = 15,
                    k_tag_h = 17;
constexpr LCI_tag_t k_tag_left = 16;  // a survivor left the barrier
constexpr LCI_tag_t k_tag_x = 20;  // the survivors' exchange
constexpr size_t k_long = size_t(128) << 10;
constexpr double k_detect_s = 10;  // a bound, not a timing: detection takes < 1 s

std::atomic<int> g_callbacks{0};
std::atomic<int> g_callback_rank{-1};

void on_failure(int rank, void* ctx) {
  ++*static_cast<std::atomic<int>*>(ctx);
  g_callback_rank.store(rank);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void check_failed(const LCI_request_t& r, int victim, LCI_tag_t tag, LCI_data_type_t type,
                  const char* what) {
  EXPECT(r.flag == LCI_ERR_FATAL && r.rank == victim && r.tag == tag && r.type == type,
         "%s completed with {flag %d, rank %d, tag %u, type %d}, expected {LCI_ERR_FATAL, %d, "
         "%u, %d}",
         what, r.flag, r.rank, r.tag, r.type, victim, tag, type);
}

// New operations naming the dead rank: LCI_ERR_FATAL at once, every time.
void new_operations_refused(int victim) {
  phase("new operations to the failed rank");
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> m(64, 'x');
  lbuf l(mem_kind::registered, 4096);
  LCI_short_t s;
  memset(&s, 0, sizeof(s));
  int fatal = 0, retry = 0, other = 0;
  auto count = [&](LCI_error_t e) {
    if (e == LCI_ERR_FATAL) ++fatal;
    else if (e == LCI_ERR_RETRY) ++retry;
    else ++other;
  };
  constexpr int k_tries = 10000;
  for (int i = 0; i < k_tries; ++i) {
    LCI_mbuffer_t mb{m.data(), m.size()};
    count(LCI_sends(LCI_UR_ENDPOINT, s, victim, 1));
    count(LCI_sendm(LCI_UR_ENDPOINT, mb, victim, 1));
    count(LCI_sendl(LCI_UR_ENDPOINT, l.view(), victim, 1, q.handle(), nullptr));
    count(LCI_recvm(LCI_UR_ENDPOINT, mb, victim, 1, q.handle(), nullptr));
    count(LCI_putma(LCI_UR_ENDPOINT, mb, victim, 1, LCI_DEFAULT_COMP_REMOTE));
    if (i % 1000 == 0) LCI_progress(LCI_UR_DEVICE);
  }
  EXPECT(fatal == 5 * k_tries && retry == 0 && other == 0,
         "of %d new operations to the failed rank %d returned LCI_ERR_FATAL, %d LCI_ERR_RETRY, "
         "%d something else",
         5 * k_tries, fatal, retry, other);
  size_t queued = 0;
  LCI_queue_len(q.handle(), &queued);
  EXPECT(queued == 0, "%zu refused operations completed anyway", queued);
}

// Every survivor sends every other survivor a medium and a long message.
void survivors_exchange(int victim) {
  phase("exchange among the survivors");
  const int n = LCI_NUM_PROCESSES;
  comp q(LCI_COMPLETION_QUEUE);
  const size_t mlen = 512;
  std::vector<std::vector<uint8_t>> min(static_cast<size_t>(n), std::vector<uint8_t>(mlen));
  std::vector<std::unique_ptr<lbuf>> lin;
  for (int p = 0; p < n; ++p) lin.emplace_back(new lbuf(mem_kind::registered, k_long));
  int expected = 0;
  for (int p = 0; p < n; ++p) {
    if (p == victim || p == LCI_RANK) continue;
    LCI_mbuffer_t b{min[static_cast<size_t>(p)].data(), mlen};
    OK(LCI_recvm(LCI_UR_ENDPOINT, b, p, k_tag_x, q.handle(), nullptr));
    OK(LCI_recvl(LCI_UR_ENDPOINT, lin[static_cast<size_t>(p)]->view(), p, k_tag_x + 1,
                 q.handle(), nullptr));
    expected += 2;
  }
  std::vector<uint8_t> mout(mlen);
  lbuf lout(mem_kind::registered, k_long);
  comp sq(LCI_COMPLETION_QUEUE);
  int sends = 0;
  for (int p = 0; p < n; ++p) {
    if (p == victim || p == LCI_RANK) continue;
    fill(mout.data(), mlen, seed_of(static_cast<uint32_t>(LCI_RANK), static_cast<uint32_t>(p), 1));
    LCI_mbuffer_t b{mout.data(), mlen};
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, p, k_tag_x));
    fill(lout.data(), k_long, seed_of(static_cast<uint32_t>(LCI_RANK), static_cast<uint32_t>(p), 2));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, lout.view(), p, k_tag_x + 1, sq.handle(), nullptr));
    for (const LCI_request_t& r : sq.take(1, "a survivor's sendl"))
      EXPECT(r.flag == LCI_OK, "a sendl to rank %d completed with %d", p, r.flag);
    ++sends;
  }
  for (const LCI_request_t& r : q.take(static_cast<size_t>(expected), "the survivors' messages")) {
    EXPECT(r.flag == LCI_OK && r.rank != victim, "a survivor's message {flag %d, rank %d}",
           r.flag, r.rank);
    if (r.flag != LCI_OK || r.rank < 0 || r.rank >= n) continue;
    const auto from = static_cast<uint32_t>(r.rank), me = static_cast<uint32_t>(LCI_RANK);
    if (r.type == LCI_MEDIUM) {
      EXPECT(r.data.mbuffer.length == mlen &&
                 mismatch(min[from].data(), mlen, seed_of(from, me, 1)) == SIZE_MAX,
             "the medium message from rank %u differs", from);
    } else {
      EXPECT(r.type == LCI_LONG && r.data.lbuffer.length == k_long &&
                 mismatch(lin[from]->data(), k_long, seed_of(from, me, 2)) == SIZE_MAX,
             "the long message from rank %u differs", from);
    }
  }
  (void)sends;
}

// Everything up to LCI_finalize (the objects that hold LCI resources go
// before it).
void run(const std::string& mode, bool exits) {
  const int n = LCI_NUM_PROCESSES;
  const int victim = n - 1;
  if (n < 3) die("needs at least 3 ranks");
  OK(LCIX_on_peer_failure(&on_failure, &g_callbacks));

  // A tag-matching endpoint: its receive names no rank and must stay posted.
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, LCI_MATCH_TAG));
  comp any_q(LCI_COMPLETION_QUEUE);
  OK(LCI_plist_set_default_comp(plist, any_q.handle()));
  LCI_endpoint_t tag_ep;
  OK(LCI_endpoint_init(&tag_ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));

  // An endpoint whose message port signals synchronizers, for the recvm.
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC));
  LCI_endpoint_t sync_ep;
  OK(LCI_endpoint_init(&sync_ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));

  // ... and one whose message port runs handlers.
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER));
  LCI_endpoint_t handler_ep;
  OK(LCI_endpoint_init(&handler_ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));

  comp q(LCI_COMPLETION_QUEUE);
  comp sync(LCI_COMPLETION_SYNC);
  comp handler(LCI_COMPLETION_HANDLER);
  std::vector<char> mbuf(256, 0), anybuf(256, 0), hbuf(256, 0);
  lbuf lb(mem_kind::registered, k_long), sb(mem_kind::registered, k_long);
  comp sq(LCI_COMPLETION_QUEUE);
  if (LCI_RANK != victim) {
    phase("posting receives from the victim");
    OK(LCI_recvs(LCI_UR_ENDPOINT, victim, k_tag_s, q.handle(), &q));
    OK(LCI_recvm(sync_ep, LCI_mbuffer_t{mbuf.data(), mbuf.size()}, victim, k_tag_m,
                 sync.handle(), &sync));
    OK(LCI_recvl(LCI_UR_ENDPOINT, lb.view(), victim, k_tag_l, q.handle(), &lb));
    OK(LCI_recvm(handler_ep, LCI_mbuffer_t{hbuf.data(), hbuf.size()}, victim, k_tag_h,
                 handler.handle(), &handler));
    OK(LCI_recvm(tag_ep, LCI_mbuffer_t{anybuf.data(), anybuf.size()}, LCI_RANK_ANY, k_tag_any,
                 any_q.handle(), nullptr));
    // A long message the victim never receives: its rendezvous waits for an RTR.
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, sb.view(), victim, k_tag_rdv, sq.handle(), &sb));
  }
  phase("barrier with the victim");
  OK(LCI_barrier());
  // The victim dies only once every survivor has left the barrier: one
  // still waiting in it would notice the death there and LCI_barrier would
  // return LCI_ERR_FATAL. Each survivor tells it so.
  if (LCI_RANK != victim) {
    LCI_short_t left;
    memset(&left, 0, sizeof(left));
    RETRY(LCI_sends(LCI_UR_ENDPOINT, left, victim, k_tag_left));
  } else {
    comp lq(LCI_COMPLETION_QUEUE);
    for (int p = 0; p < victim; ++p)
      OK(LCI_recvs(LCI_UR_ENDPOINT, p, k_tag_left, lq.handle(), nullptr));
    lq.take(static_cast<size_t>(victim), "the survivors leaving the barrier");
  }
  if (LCI_RANK == victim) {
    // (inject: the survivors mark it failed first and have finished with
    // it, their connections to it unused, by the time it dies)
    if (mode == "inject") sleep(3);
    std::fprintf(stderr, "rank %d: %s\n", LCI_RANK,
                 exits ? "exiting with status 3" : "killing itself");
    std::fflush(stderr);
    if (exits) _exit(3);
    raise(SIGKILL);
  }
  const double t0 = now_s();
  if (mode == "inject") OK(LCIT_fail_peer(victim));

  phase("the receives naming the failed rank");
  const std::vector<LCI_request_t> two = q.take(2, "the recvs and recvl from the failed rank",
                                                k_detect_s);
  const double detected = now_s() - t0;
  for (const LCI_request_t& r : two)
    if (r.user_context == &q)
      check_failed(r, victim, k_tag_s, LCI_IMMEDIATE, "LCI_recvs");
    else
      check_failed(r, victim, k_tag_l, LCI_LONG, "LCI_recvl");
  EXPECT(two[0].user_context != two[1].user_context, "one receive completed twice");
  check_failed(sync.take1("the recvm from the failed rank"), victim, k_tag_m, LCI_MEDIUM,
               "LCI_recvm");
  const LCI_request_t hr = handler.take1("the recvm (handler) from the failed rank");
  check_failed(hr, victim, k_tag_h, LCI_MEDIUM, "LCI_recvm to a handler");
  EXPECT(hr.user_context == &handler, "the handler's request names another context");
  const LCI_request_t s = sq.take1("the sendl to the failed rank");
  check_failed(s, victim, k_tag_rdv, LCI_LONG, "LCI_sendl waiting for its RTR");
  EXPECT(s.user_context == &sb && s.data.lbuffer.address == sb.data(),
         "the failed sendl's request names another buffer");
  std::printf("rank %d: rank %d's failure known after %.3f s (%s)\n", LCI_RANK, victim, detected,
              mode.c_str());

  phase("the callback and LCIX_peer_failed");
  for (int i = 0; i < 100 && g_callbacks.load() == 0; ++i) LCI_progress(LCI_UR_DEVICE);
  EXPECT(g_callbacks.load() == 1 && g_callback_rank.load() == victim,
         "the peer-failure callback ran %d times (last for rank %d)", g_callbacks.load(),
         g_callback_rank.load());
  EXPECT(LCIX_peer_failed(victim) == 1, "LCIX_peer_failed(%d) is 0", victim);
  for (int p = 0; p < victim; ++p)
    EXPECT(LCIX_peer_failed(p) == 0, "LCIX_peer_failed(%d) is 1 for a living rank", p);

  new_operations_refused(victim);
  phase("LCI_barrier after the failure");
  EXPECT(LCI_barrier() == LCI_ERR_FATAL, "LCI_barrier did not report the failed rank");

  survivors_exchange(victim);

  phase("the tag-matching receive, matched by a living rank");
  // Survivor r sends to survivor (r + 1) mod victim, on the tag-matching endpoint.
  const int to = (LCI_RANK + 1) % victim;
  std::vector<char> tok(256);
  fill(tok.data(), tok.size(), seed_of(static_cast<uint32_t>(LCI_RANK), 7, 7));
  RETRY(LCI_sendm(tag_ep, LCI_mbuffer_t{tok.data(), tok.size()}, to, k_tag_any));
  const LCI_request_t a = any_q.take1("the tag-matching receive");
  const int from = (LCI_RANK + victim - 1) % victim;
  EXPECT(a.flag == LCI_OK && a.rank == from &&
             mismatch(anybuf.data(), anybuf.size(), seed_of(static_cast<uint32_t>(from), 7, 7)) ==
                 SIZE_MAX,
         "the tag-matching receive: {flag %d, rank %d}, expected rank %d's bytes", a.flag, a.rank,
         from);
  EXPECT(g_callbacks.load() == 1, "the callback ran again (%d times)", g_callbacks.load());

  OK(LCI_endpoint_free(&tag_ep));
  OK(LCI_endpoint_free(&sync_ep));
  OK(LCI_endpoint_free(&handler_ep));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 2 && strcmp(argv[1], "--mode") == 0 ? argv[2] : "";
  const bool exits = argc == 4 && strcmp(argv[3], "--exit") == 0;
  if ((mode != "kill" && mode != "inject") || (argc != 3 && !exits)) {
    std::fprintf(stderr, "usage: peer_failure --mode kill|inject [--exit]\n");
    return 2;
  }
  harness_init(120);
  run(mode, exits);
  phase("LCI_finalize among the survivors");
  OK(LCI_finalize());
  return report(("peer_failure " + mode).c_str());
}

// A rank dies in the middle of a job; the job must end, not hang.
//
// The ranks first exchange medium messages all-to-all (every byte checked),
// then every rank but the victim posts a receive from the victim and drives
// LCI_progress until it arrives. The victim never sends it:
//   --mode kill  it says so on stderr and kills itself with SIGKILL; the
//                launcher must notice, end the other ranks and name it;
//   --mode exit  it ends with status 0 without LCI_finalize, which a launcher
//                takes for a rank that finished: on the native intra-node
//                transport the others must notice that a local peer is gone
//                and end the job naming it;
//   --mode exit-busy  as exit, but the surviving ranks (exactly two) keep
//                streaming messages to each other instead of waiting, so
//                their progress calls are seldom idle: the native transport
//                must notice the dead peer all the same;
//   --mode hang  it stops calling LCI (sleeps); no launcher can notice, so
//                the others must give up by themselves after --wait-seconds,
//                naming the rank they waited for, and exit with status 3.
// The waits of the surviving ranks are bounded in both modes (--wait-seconds,
// and the harness watchdog), so they end even if no launcher kills them.
//
// usage: rank_failure [--mode kill|exit|exit-busy|hang] [--victim R] [--wait-seconds S] [--rounds N]
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"
#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_never_tag = 999;

// Every rank sends one medium message to every rank (itself too) per round.
void all_to_all(int rounds) {
  const int n = LCI_NUM_PROCESSES;
  const size_t len =
      static_cast<size_t>(LCI_MEDIUM_SIZE) < 1024 ? static_cast<size_t>(LCI_MEDIUM_SIZE) : 1024;
  comp cq(LCI_COMPLETION_QUEUE);
  std::vector<std::vector<uint8_t>> in(static_cast<size_t>(n), std::vector<uint8_t>(len));
  std::vector<uint8_t> out(len);
  for (int round = 0; round < rounds; ++round) {
    phase("all-to-all round %d", round);
    const LCI_tag_t tag = static_cast<LCI_tag_t>(round);
    for (int p = 0; p < n; ++p) {
      LCI_mbuffer_t b{in[static_cast<size_t>(p)].data(), len};
      OK(LCI_recvm(LCI_UR_ENDPOINT, b, p, tag, cq.handle(), in[static_cast<size_t>(p)].data()));
    }
    for (int p = 0; p < n; ++p) {
      fill(out.data(), len,
           seed_of(static_cast<uint32_t>(LCI_RANK), static_cast<uint32_t>(p), tag));
      LCI_mbuffer_t b{out.data(), len};
      RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, p, tag));
    }
    for (const LCI_request_t& r : cq.take(static_cast<size_t>(n), "all-to-all receives")) {
      EXPECT(r.flag == LCI_OK && r.rank >= 0 && r.rank < n && r.tag == tag &&
                 r.data.mbuffer.length == len &&
                 r.user_context == in[static_cast<size_t>(r.rank)].data(),
             "request {flag %d, rank %d, tag %u, length %zu}", static_cast<int>(r.flag), r.rank,
             r.tag, r.data.mbuffer.length);
      if (r.rank >= 0 && r.rank < n) {
        size_t bad =
            mismatch(in[static_cast<size_t>(r.rank)].data(), len,
                     seed_of(static_cast<uint32_t>(r.rank), static_cast<uint32_t>(LCI_RANK), tag));
        EXPECT(bad == SIZE_MAX, "byte %zu from rank %d differs", bad, r.rank);
      }
    }
  }
}

[[noreturn]] void usage_error(const char* what) {
  fprintf(stderr,
          "rank_failure: %s\nusage: rank_failure [--mode kill|exit|exit-busy|hang] [--victim R] "
          "[--wait-seconds S] [--rounds N]\n",
          what);
  exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "kill";
  int victim = 1, rounds = 20;
  double wait_s = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--mode")
      mode = v;
    else if (a == "--victim")
      victim = atoi(v);
    else if (a == "--wait-seconds")
      wait_s = atof(v);
    else if (a == "--rounds")
      rounds = atoi(v);
    else
      usage_error(("unknown option " + a).c_str());
  }
  if (mode != "kill" && mode != "exit" && mode != "exit-busy" && mode != "hang")
    usage_error("--mode is kill, exit, exit-busy or hang");
  if (wait_s <= 0 || rounds < 1) usage_error("--wait-seconds and --rounds must be positive");

  harness_init(wait_s + 60);
  if (LCI_NUM_PROCESSES < 2 || victim < 0 || victim >= LCI_NUM_PROCESSES)
    die("needs at least 2 ranks and a victim among them (victim %d of %d)", victim,
        LCI_NUM_PROCESSES);
  all_to_all(rounds);
  LCI_barrier();

  if (LCI_RANK == victim) {
    phase("victim");
    // The others are (about to be) in their progress loops below.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (mode == "kill") {
      fprintf(stderr, "rank_failure: rank %d (pid %ld) kills itself with SIGKILL\n", LCI_RANK,
              static_cast<long>(getpid()));
      fflush(stderr);
      remove_own_shm_files();
      raise(SIGKILL);
    }
    if (mode == "exit" || mode == "exit-busy") {
      fprintf(stderr, "rank_failure: rank %d (pid %ld) exits without LCI_finalize\n", LCI_RANK,
              static_cast<long>(getpid()));
      fflush(stderr);
      _exit(0);
    }
    fprintf(stderr, "rank_failure: rank %d (pid %ld) stops communicating\n", LCI_RANK,
            static_cast<long>(getpid()));
    fflush(stderr);
    // Bounded: the others give up after wait_s; the launcher ends this rank then.
    std::this_thread::sleep_for(std::chrono::duration<double>(wait_s + 30));
    die("nobody ended this rank within %g s", wait_s + 30);
  }

  if (mode == "exit-busy") {
    if (LCI_NUM_PROCESSES != 3) die("--mode exit-busy needs exactly 3 ranks");
    const int partner = 3 - victim - LCI_RANK;  // the other survivor
    phase("streaming messages to rank %d while rank %d dies", partner, victim);
    // Each survivor streams small messages to the other and takes the
    // other's: almost every progress call finds one. A window of 64
    // messages in flight (one sent per one taken) keeps the partner's
    // packets from filling up with messages it has not taken yet (it may
    // still be in the barrier).
    deadline d(wait_s);
    long exchanged = 0;
    int credits = 64;
    char byte = 0;
    while (!d.passed()) {
      LCI_mbuffer_t mb{&byte, 1};
      if (credits > 0 &&
          LCI_putma(LCI_UR_ENDPOINT, mb, partner, 1, LCI_DEFAULT_COMP_REMOTE) == LCI_OK) {
        --credits;
        ++exchanged;
      }
      LCI_progress(LCI_UR_DEVICE);
      LCI_request_t r;
      while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_OK) {
        LCI_mbuffer_free(r.data.mbuffer);
        ++credits;
      }
    }
    die("rank %d's death went unnoticed for %g s while this rank was busy (%ld exchanges)",
        victim, wait_s, exchanged);
  }

  // A message the victim never sends: wait for it, for at most wait_s.
  phase("waiting for rank %d", victim);
  std::vector<uint8_t> buf(16);
  comp cq(LCI_COMPLETION_QUEUE);
  LCI_mbuffer_t b{buf.data(), buf.size()};
  OK(LCI_recvm(LCI_UR_ENDPOINT, b, victim, k_never_tag, cq.handle(), nullptr));
  deadline d(wait_s);
  LCI_request_t r;
  while (LCI_queue_pop(cq.handle(), &r) != LCI_OK) {
    if (d.passed())
      die("no message from rank %d within %g s; it died or hangs, giving up", victim, wait_s);
    if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) std::this_thread::yield();
  }
  die("a message from rank %d arrived, but it never sends one", victim);
}

// The job side of the outsider test (outsider.sh): two ranks on the tcp
// provider exchange checked traffic while a process outside the job
// (outsider_attacker.cpp, another user id where possible) connects to rank
// 0's port and sends it forged messages and RDMA operations.
//
// Rank 0 publishes, in <dir>/victim.info, what an attacker would aim at:
// its pid, the address of a buffer it never registered ("secret"), the
// address of a buffer it registered (a legitimate LCI_putm target for the
// job's own ranks), a completion handle of its own, rank 1's pid (whose
// port a hijacker claims), and the registered buffer's keys: the one peers
// name it by and the provider's own (LCIT_segment_keys). The keys stand
// for whatever an outsider could read off the wire or a taken-over
// connection: the attacker's RDMA with them must not complete either. Both ranks then run
// rounds of sendm/sendl/putm traffic in both directions, every byte checked,
// until <dir>/attack_done appears (bounded). At the end: the secret and the
// registered buffer are unchanged except where the job's own peer wrote,
// no completion of the attacker's reached a queue, and rank 0 counted
// dropped messages (LCIT_dropped_messages).
//
// Usage: outsider_job <dir>   (under lcrun -n 2, FI_PROVIDER=tcp)
#include <unistd.h>

#include <cstdint>
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

constexpr double k_step_s = 30;
constexpr double k_attack_limit_s = 330;  // the attack must end before this
constexpr size_t k_medium = 1000;
constexpr size_t k_long = size_t(64) << 10;
constexpr size_t k_buf = 4096;
constexpr char k_secret = 'S';
constexpr char k_target = 'T';

bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// One round: `from` sends a medium and a long message and puts a medium
// message into the peer's registered buffer (offset 0); the other checks.
void exchange(int round, int from, comp& lc, std::vector<char>& target, uint64_t peer_target) {
  const uint32_t tag = static_cast<uint32_t>(round % 1000);
  const int peer = 1 - LCI_RANK;
  if (LCI_RANK == from) {
    std::vector<char> medium(k_medium);
    fill(medium.data(), k_medium, seed_of(1, tag + 7u * static_cast<uint32_t>(from)));
    LCI_mbuffer_t mb{medium.data(), k_medium};
    RETRY(LCI_sendmc(LCI_UR_ENDPOINT, mb, peer, tag, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendmc's completion", k_step_s).flag == LCI_OK, "sendmc failed");
    lbuf lb(mem_kind::seg_all, k_long);
    fill(lb.data(), k_long, seed_of(2, tag + 7u * static_cast<uint32_t>(from)));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, lb.view(), peer, tag, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendl's completion", k_step_s).flag == LCI_OK, "sendl failed");
    fill(medium.data(), k_medium, seed_of(3, tag + 7u * static_cast<uint32_t>(from)));
    LCI_mbuffer_t rb{reinterpret_cast<void*>(peer_target), k_medium};
    RETRY(LCI_putm(LCI_UR_ENDPOINT, mb, peer, tag, rb, LCI_DEFAULT_COMP_REMOTE));
  } else {
    std::vector<char> medium(k_medium, 0);
    LCI_mbuffer_t mb{medium.data(), k_medium};
    RETRY(LCI_recvm(LCI_UR_ENDPOINT, mb, from, tag, lc.handle(), nullptr));
    const LCI_request_t m = lc.take1("the medium message", k_step_s);
    EXPECT(m.flag == LCI_OK && m.rank == from && m.data.mbuffer.length == k_medium,
           "recvm {flag %d, rank %d, %zu bytes}", m.flag, m.rank, m.data.mbuffer.length);
    size_t bad = mismatch(medium.data(), k_medium, seed_of(1, tag + 7u * static_cast<uint32_t>(from)));
    EXPECT(bad == SIZE_MAX, "round %d: byte %zu of the medium message differs", round, bad);
    lbuf lb(mem_kind::seg_all, k_long);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, lb.view(), from, tag, lc.handle(), nullptr));
    const LCI_request_t l = lc.take1("the long message", k_step_s);
    EXPECT(l.flag == LCI_OK && l.data.lbuffer.length == k_long, "recvl {flag %d, %zu bytes}",
           l.flag, l.data.lbuffer.length);
    bad = mismatch(lb.data(), k_long, seed_of(2, tag + 7u * static_cast<uint32_t>(from)));
    EXPECT(bad == SIZE_MAX, "round %d: byte %zu of the long message differs", round, bad);
    auto ur = comp::borrow_queue(LCI_UR_CQ);
    const LCI_request_t t = ur->take1("the putm", k_step_s);
    EXPECT(t.flag == LCI_OK && t.rank == from && t.tag == tag &&
               t.data.mbuffer.address == target.data() && t.data.mbuffer.length == k_medium,
           "putm target {flag %d, rank %d, tag %u, %p, %zu bytes}", t.flag, t.rank, t.tag,
           t.data.mbuffer.address, t.data.mbuffer.length);
    bad = mismatch(target.data(), k_medium, seed_of(3, tag + 7u * static_cast<uint32_t>(from)));
    EXPECT(bad == SIZE_MAX, "round %d: byte %zu of the putm differs", round, bad);
    memset(target.data(), k_target, k_medium);
  }
}

// OUTSIDER_SILENT=1 (outsider.sh hold): a burst of k_burst medium
// messages from `from`, so that sends are in flight when the outsider
// takes a connection over; the other rank receives and checks each.
constexpr int k_burst = 64;
void burst(int round, int from, comp& lc) {
  const int peer = 1 - LCI_RANK;
  const uint32_t tag = 2000u + static_cast<uint32_t>(round % 1000);
  std::vector<std::vector<char>> bufs(k_burst, std::vector<char>(k_medium));
  if (LCI_RANK == from) {
    for (int i = 0; i < k_burst; ++i) {
      fill(bufs[i].data(), k_medium, seed_of(4 + static_cast<uint32_t>(i), tag));
      memcpy(bufs[i].data(), &i, sizeof i);  // which one (patterns of two may be equal)
      LCI_mbuffer_t mb{bufs[i].data(), k_medium};
      RETRY(LCI_sendm(LCI_UR_ENDPOINT, mb, peer, tag));
    }
    return;
  }
  for (int i = 0; i < k_burst; ++i) {
    LCI_mbuffer_t mb{bufs[i].data(), k_medium};
    RETRY(LCI_recvm(LCI_UR_ENDPOINT, mb, from, tag, lc.handle(), nullptr));
  }
  // Messages of one tag from one rank arrive in any order: each must be
  // one of the burst's, every one exactly once.
  std::vector<int> seen(k_burst, 0);
  for (int i = 0; i < k_burst; ++i) {
    const LCI_request_t m = lc.take1("a message of the burst", k_step_s);
    EXPECT(m.flag == LCI_OK && m.rank == from && m.data.mbuffer.length == k_medium,
           "burst recvm {flag %d, rank %d, %zu bytes}", m.flag, m.rank, m.data.mbuffer.length);
    const char* got = static_cast<const char*>(m.data.mbuffer.address);
    int which = -1;
    memcpy(&which, got, sizeof which);
    if (which < 0 || which >= k_burst) which = -1;
    for (size_t b = sizeof which; which >= 0 && b < k_medium; ++b)
      if (static_cast<uint8_t>(got[b]) != pat(seed_of(4 + static_cast<uint32_t>(which), tag), b))
        which = -1;
    const bool first = which >= 0 && seen[which]++ == 0;
    EXPECT(first, "round %d: a message of the burst differs or came twice", round);
  }
}

}  // namespace

int main(int argc, char** argv) {
  harness_init(240);
  if (argc != 2) die("usage: outsider_job <dir>");
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  const std::string dir = argv[1];

  std::vector<char> secret(k_buf, k_secret);  // never registered
  std::vector<char> target(k_buf, k_target);  // registered: the peer's putm target
  {
    registration registered(target.data(), target.size());
    comp expl(LCI_COMPLETION_QUEUE);
    const auto targets = allgather_u64(reinterpret_cast<uintptr_t>(target.data()));
    const auto pids = allgather_u64(static_cast<uint64_t>(getpid()));
    uint64_t peer_key = 0, provider_key = 0;
    EXPECT(LCIT_segment_keys(registered.segment(), &peer_key, &provider_key) == LCI_OK,
           "LCIT_segment_keys failed (is LCI_TEST_HOOKS=1 set?)");
    if (LCI_RANK == 0) {
      const std::string tmp = dir + "/victim.info.tmp";
      FILE* f = fopen(tmp.c_str(), "w");
      if (!f) die("cannot write %s", tmp.c_str());
      fprintf(f, "%d %llu %llu %llu %llu %llu %llu\n", static_cast<int>(getpid()),
              static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(secret.data())),
              static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(target.data())),
              static_cast<unsigned long long>(expl.remote()),
              static_cast<unsigned long long>(pids[1]),
              static_cast<unsigned long long>(peer_key),
              static_cast<unsigned long long>(provider_key));
      fclose(f);
      if (rename(tmp.c_str(), (dir + "/victim.info").c_str()) != 0) die("rename failed");
    }
    comp lc(LCI_COMPLETION_QUEUE);
    deadline limit(k_attack_limit_s);
    int round = 0;
    for (;; ++round) {
      phase("round %d", round);
      exchange(round, 1, lc, target, targets[0]);
      exchange(round, 0, lc, target, targets[1]);
      if (getenv("OUTSIDER_SILENT")) {
        burst(round, 0, lc);
        burst(round, 1, lc);
      }
      // Rank 0 decides when the attack is over (or its time is up).
      const bool over = LCI_RANK == 0 && (file_exists(dir + "/attack_done") || limit.passed());
      if (allgather_u64(over ? 1 : 0)[0]) break;
    }
    EXPECT(!limit.passed(), "the outsider did not finish within %g s", k_attack_limit_s);
    // Messages of the attacker's still in the socket: progress a little more.
    if (LCI_RANK == 0) {
      deadline drain(2);
      while (!drain.passed()) LCI_progress(LCI_UR_DEVICE);
    }
    LCI_barrier();
    phase("checks after %d rounds", round + 1);
    size_t bad = not_byte(secret.data(), 0, secret.size(), k_secret);
    EXPECT(bad == SIZE_MAX, "byte %zu of the unregistered buffer changed", bad);
    bad = not_byte(target.data(), 0, target.size(), k_target);
    EXPECT(bad == SIZE_MAX, "byte %zu of the registered buffer changed", bad);
    size_t queued = 0;
    LCI_queue_len(LCI_UR_CQ, &queued);
    EXPECT(queued == 0, "%zu completions of forged messages reached the default queue", queued);
    LCI_queue_len(expl.handle(), &queued);
    EXPECT(queued == 0, "%zu completions of forged messages reached the explicit queue", queued);
    // OUTSIDER_SILENT=1 (outsider.sh hold): the outsider sends nothing.
    if (LCI_RANK == 0 && getenv("OUTSIDER_SILENT") == nullptr) {
      const uint64_t dropped = LCIT_dropped_messages();
      printf("rank 0: %llu messages dropped\n", static_cast<unsigned long long>(dropped));
      EXPECT(dropped > 0, "rank 0 dropped no message, but the outsider sent some");
    }
    LCI_barrier();
  }
  return harness_finish("outsider_job");
}

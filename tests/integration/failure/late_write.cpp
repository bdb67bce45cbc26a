// Survivors continue: a rank marked failed while it still had a long
// message under way cannot complete another rank's receive.
//
// Three ranks, LCI_PEER_FAILURE=continue, LCI_TEST_HOOKS=1: rank 0 (the
// target) receives a long message from rank 1 (the failed one) and then
// one from rank 2 (the living one). Rank 0 sends its RTR to rank 1, marks
// rank 1 failed (LCIT_fail_peer: its receive completes with LCI_ERR_FATAL
// and its rendezvous id is free again), and posts the receive from rank 2,
// whose RTS takes that id. Only then does rank 1 act on its RTR: its write
// and the notice of its end reach rank 0 naming the old id. Rank 2 writes
// only after that. The receive from rank 2 must still be waiting when rank
// 1's late write has been dealt with, and then complete with rank 2's
// bytes. Rank 0's buffer for rank 1 is one it registered itself, so it
// stays registered and the late write is accepted where it lands. (Where a
// write with immediate data does not name its writer, libfabric shm, such
// a late write used to complete whatever op had the id: this test failed
// there. With LCI_PEER_FAILURE=continue the end of a write is a FIN there,
// which names its sender. The native transport and tcp refuse the late
// write.)
//
// The steps are ordered through marker files in a directory of the job's
// own (rank 1 and rank 2 must not make progress at chosen moments, so an
// LCI message cannot tell them when to go on). In the end rank 1 kills
// itself, as a failed rank would be; lcrun --keep-going reports it.
//
// usage: late_write (3 ranks under lcrun --keep-going)
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr int k_target = 0, k_failed = 1, k_living = 2;
constexpr LCI_tag_t k_tag_failed = 1, k_tag_living = 2;
constexpr size_t k_len = 16 << 10;

// This job's marker files (created in main).
std::unique_ptr<marker_dir> g_markers;

// Waits for another rank's marker, driving LCI meanwhile only if `drive`
// (ranks 1 and 2 must not act on what arrived until they are told).
void wait_marker(const char* name, bool drive = false) {
  deadline d(60);
  while (!g_markers->exists(name)) {
    if (drive) {
      progress(d, name);
      continue;
    }
    d.check(name);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Drives LCI for `ms` milliseconds, or until `q` holds a completion (then
// *out gets it and the result is true).
bool progress_for(int ms, LCI_comp_t q, LCI_request_t* out) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (LCI_queue_pop(q, out) == LCI_OK) return true;
    LCI_progress(LCI_UR_DEVICE);
  }
  return LCI_queue_pop(q, out) == LCI_OK;
}

size_t matching_entries() {
  LCIT_resources_t r;
  OK(LCIT_resources(LCI_UR_DEVICE, &r));
  return r.matching;
}

// Rank 0: drives progress until the posted receive was matched (its RTR is out).
void progress_until_matched(const char* what) {
  deadline d(30);
  while (matching_entries() != 0) progress(d, what);
}

void target() {
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> from_failed(k_len, 0), from_living(k_len, static_cast<char>(k_sentinel));
  // Registered by the program, so it stays registered after the receive
  // ends (as an LCI-allocated buffer does until the program frees it): the
  // late write is accepted by the provider and lands there.
  registration failed_reg(from_failed.data(), k_len);
  phase("the receive from the rank to fail");
  OK(LCI_recvl(LCI_UR_ENDPOINT, LCI_lbuffer_t{failed_reg.segment(), from_failed.data(), k_len},
               k_failed, k_tag_failed, q.handle(), nullptr));
  wait_marker("rts");
  progress_until_matched("rank 1's RTS");
  phase("rank 1 marked failed");
  OK(LCIT_fail_peer(k_failed));
  const LCI_request_t f = q.take1("the receive from the failed rank");
  EXPECT(f.flag == LCI_ERR_FATAL && f.rank == k_failed && f.tag == k_tag_failed,
         "the receive from the failed rank: {flag %d, rank %d, tag %u}", f.flag, f.rank, f.tag);

  phase("the receive from the living rank");
  OK(LCI_recvl(LCI_UR_ENDPOINT, LCI_lbuffer_t{LCI_SEGMENT_ALL, from_living.data(), k_len},
               k_living, k_tag_living, q.handle(), nullptr));
  g_markers->touch("swept");
  progress_until_matched("rank 2's RTS");
  g_markers->touch("rtr_to_living");
  phase("rank 1's late write");
  wait_marker("late_done", true);
  // Its notice was sent before rank 1 said so; a moment of progress takes it in.
  LCI_request_t early;
  const bool done_early = progress_for(500, q.handle(), &early);
  EXPECT(!done_early,
         "the receive from rank 2 completed (flag %d, rank %d) before rank 2 wrote: rank 1's "
         "late write completed it",
         done_early ? early.flag : 0, done_early ? early.rank : -1);

  phase("rank 2's write");
  g_markers->touch("go_living");
  if (!done_early) {
    const LCI_request_t l = q.take1("the receive from the living rank");
    EXPECT(l.flag == LCI_OK && l.rank == k_living && l.tag == k_tag_living &&
               l.data.lbuffer.length == k_len,
           "the receive from the living rank: {flag %d, rank %d, tag %u, %zu bytes}", l.flag,
           l.rank, l.tag, l.data.lbuffer.length);
  }
  const size_t bad = mismatch(from_living.data(), k_len, seed_of(k_living, 2));
  EXPECT(bad == SIZE_MAX, "the living rank's bytes differ at offset %zu", bad);
  g_markers->touch("end");
}

void failed() {
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> data(k_len);
  fill(data.data(), k_len, seed_of(k_failed, 1));
  phase("the send to rank 0");
  RETRY(LCI_sendl(LCI_UR_ENDPOINT, LCI_lbuffer_t{LCI_SEGMENT_ALL, data.data(), k_len}, k_target,
                  k_tag_failed, q.handle(), nullptr));
  g_markers->touch("rts");
  wait_marker("rtr_to_living");
  // Rank 0 has failed this rank and given its receive's id to rank 2; the
  // RTR it sent before is handled now. The send need not complete: rank 0
  // refuses this rank's write (the native transport, tcp) or the provider
  // keeps it in flight (libfabric shm), so a second of progress, or its
  // completion.
  phase("the late write");
  LCI_request_t r;
  progress_for(1000, q.handle(), &r);
  g_markers->touch("late_done");
  wait_marker("end");
  g_markers->touch("failed_left");
  std::fflush(stdout);
  raise(SIGKILL);
}

void living() {
  comp q(LCI_COMPLETION_QUEUE);
  std::vector<char> data(k_len);
  fill(data.data(), k_len, seed_of(k_living, 2));
  wait_marker("swept");
  phase("the send to rank 0");
  RETRY(LCI_sendl(LCI_UR_ENDPOINT, LCI_lbuffer_t{LCI_SEGMENT_ALL, data.data(), k_len}, k_target,
                  k_tag_living, q.handle(), nullptr));
  wait_marker("go_living");
  const LCI_request_t s = q.take1("the send to rank 0");
  EXPECT(s.flag == LCI_OK, "the send to rank 0 ended with flag %d", s.flag);
  wait_marker("end");
  g_markers->touch("living_left");
  // Rank 1 dies now; this rank need not wait to detect it.
  OK(LCIT_fail_peer(k_failed));
}

}  // namespace

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 3) die("needs 3 ranks");
  g_markers = std::make_unique<marker_dir>("late_write");
  if (LCI_RANK == k_target)
    target();
  else if (LCI_RANK == k_failed)
    failed();
  else
    living();
  if (LCI_RANK == k_target) {
    wait_marker("failed_left");
    wait_marker("living_left");
    g_markers->remove();
  }
  phase("LCI_finalize among the survivors");
  OK(LCI_finalize());
  return report("late_write");
}

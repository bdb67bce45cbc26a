// Survivors continue: a rank declared failed reaches no memory of the
// survivors any more.
//
// Two ranks, LCI_PEER_FAILURE=continue, LCI_TEST_HOOKS=1. Rank 0 registers
// a 32 KiB window (every byte k_window) and publishes it; then it declares
// rank 1 failed (LCIT_fail_peer), although rank 1 lives on. Rank 1, which
// does not know, puts 32 KiB of k_put into the window (LCI_putl) and gets
// 32 KiB from it (LCI_getl), and drives progress for 2 s. Rank 0 drives
// progress meanwhile (so that the requests arrive) and then checks the
// window: unchanged; rank 1 checks that neither operation completed
// LCI_OK, and its get buffer received nothing.
//
// With --cma (the native transport with cross-memory attach) the put and
// the get are done by rank 1's own process_vm_writev/readv, which rank 0
// cannot refuse (docs/failure.md): the test then asserts that, so that a
// change of it is noticed: both complete LCI_OK and the window is written.
//
// The steps are ordered through marker files (rank 0 cannot send to a rank
// it declared failed). In the end rank 1 kills itself, as a failed rank
// would be; lcrun --keep-going reports it.
//
// usage: dead_rma [--cma]   (2 ranks under lcrun --keep-going)
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr size_t k_len = 32 << 10;
constexpr uint8_t k_window = 0x57, k_put = 0x58, k_get_sentinel = 0x11;
// This job's marker files (created in main).
std::unique_ptr<marker_dir> g_markers;

// Waits (at most 60 s) for a marker, driving LCI meanwhile.
void wait_marker(const char* name) {
  deadline d(60);
  while (!g_markers->exists(name)) progress(d, name);
}

}  // namespace

int main(int argc, char** argv) {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs 2 ranks");
  const bool cma = argc == 2 && std::strcmp(argv[1], "--cma") == 0;
  g_markers = std::make_unique<marker_dir>("dead_rma");
  auto owned = std::make_unique<lbuf>(mem_kind::registered, k_len);
  lbuf& window = *owned;
  std::memset(window.data(), k_window, k_len);
  std::vector<remote_region> regions = exchange_regions(window.segment(), window.data(), k_len);
  LCI_barrier();
  if (LCI_RANK == 0) {
    phase("rank 1 declared failed");
    OK(LCIT_fail_peer(1));
    g_markers->touch("declared");
    wait_marker("done");
    // What may still be in flight from rank 1: a little more progress.
    deadline d(1);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    size_t changed = 0;
    for (size_t i = 0; i < k_len; ++i) changed += window.data()[i] != k_window;
    if (cma)
      EXPECT(changed == k_len, "cross-memory attach: %zu of %zu bytes of the window written "
             "by the rank declared failed (all expected: it cannot be refused)", changed, k_len);
    else
      EXPECT(changed == 0, "%zu bytes of the window written by the rank declared failed", changed);
    g_markers->touch("checked");
    wait_marker("left");
    g_markers->remove();
    release_regions(regions);
    owned.reset();
    phase("LCI_finalize among the survivors");
    OK(LCI_finalize());
    return report("dead_rma");
  }
  wait_marker("declared");
  phase("putl and getl on the window of rank 0, which declared this rank failed");
  comp q(LCI_COMPLETION_QUEUE);
  lbuf source(mem_kind::registered, k_len), got(mem_kind::registered, k_len);
  std::memset(source.data(), k_put, k_len);
  std::memset(got.data(), k_get_sentinel, k_len);
  RETRY(LCI_putl(LCI_UR_ENDPOINT, source.view(), q.handle(), 0, 1,
                 remote_lbuffer(regions[0], 0, k_len), LCI_DEFAULT_COMP_REMOTE, nullptr));
  LCI_lbuffer_t lb = got.view();
  RETRY(LCI_getl(LCI_UR_ENDPOINT, &lb, k_len, q.handle(), 0, 2,
                 remote_lbuffer(regions[0], 0, k_len), LCI_DEFAULT_COMP_REMOTE, nullptr));
  int ok = 0, failed = 0;
  deadline d(2);
  while (!d.passed()) {
    LCI_progress(LCI_UR_DEVICE);
    LCI_request_t r;
    while (LCI_queue_pop(q.handle(), &r) == LCI_OK) (r.flag == LCI_OK ? ok : failed)++;
  }
  size_t fetched = 0;
  // The get reads the window's bytes, or the put's if the put landed first.
  for (size_t i = 0; i < k_len; ++i) fetched += got.data()[i] != k_get_sentinel;
  printf("rank 1: %d operation(s) completed LCI_OK, %d with an error, %zu bytes of the window "
         "read\n", ok, failed, fetched);
  if (cma) {
    EXPECT(ok == 2 && fetched == k_len, "cross-memory attach: %d of 2 completed LCI_OK, %zu bytes "
           "read (expected: both, every byte; it cannot be refused)", ok, fetched);
  } else {
    EXPECT(ok == 0, "%d of the put and the get completed LCI_OK at the rank declared failed", ok);
    EXPECT(fetched == 0, "%zu bytes of rank 0's window read by the rank declared failed", fetched);
  }
  g_markers->touch("done");
  wait_marker("checked");
  report("dead_rma");
  g_markers->touch("left");
  std::fflush(stdout);
  std::fflush(stderr);
  raise(SIGKILL);
}

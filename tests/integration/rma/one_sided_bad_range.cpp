// One-sided operations on remote ranges outside what the target registered
// must be refused: LCI_putl/LCI_getl whose remote range runs past the end of
// the target's registration, starts before it, or lies wholly outside it.
// A debug build (LCI_DEBUG) returns LCI_ERR_FATAL from the call; a release
// build completes the operation with a flag other than LCI_OK. Either way the
// target's memory around the registration stays untouched, the target sees
// no successful completion, and a correct put afterwards still works.
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

int g_me, g_n, g_right, g_left;

// Issues one out-of-range operation; true if it was refused either way.
bool refused(const char* what, LCI_error_t rc, comp& lc) {
  if (rc == LCI_ERR_FATAL) return true;
  EXPECT(rc == LCI_OK, "%s returned %d", what, rc);
  if (rc != LCI_OK) return false;
  const LCI_request_t r = lc.take1(what);
  EXPECT(r.flag != LCI_OK, "%s: completed with LCI_OK", what);
  return r.flag != LCI_OK;
}

// Everything LCI-owned lives inside run(), released before LCI_finalize.
void run() {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = 16 * page;
  // Three regions' worth of memory; only the middle one is registered.
  uint8_t* all = static_cast<uint8_t*>(aligned_alloc(page, 3 * len));
  if (!all) die("aligned_alloc");
  memset(all, k_sentinel, 3 * len);
  uint8_t* base = all + len;
  LCI_segment_t seg;
  OK(LCI_memory_register(LCI_UR_DEVICE, base, len, &seg));
  auto regions = exchange_regions(seg, base, len);
  const remote_region& rr = regions[static_cast<size_t>(g_right)];

  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  lbuf local(mem_kind::lalloc, 2 * page);
  fill(local.data(), 2 * page, seed_of(static_cast<uint32_t>(g_me), 1));
  struct bad_case {
    const char* what;
    bool get;
    long offset;  // from the start of the registration
    size_t length;
  };
  const bad_case cases[] = {
      {"putl past the end", false, static_cast<long>(len) - 10, 100},
      {"putl before the start", false, -100, 50},
      {"putl straddling the start", false, -64, 128},
      {"putl wholly outside", false, static_cast<long>(len + page), 100},
      {"getl past the end", true, static_cast<long>(len) - 10, 100},
      {"getl before the start", true, -100, 50},
  };
  LCI_tag_t tag = 1;
  for (const bad_case& c : cases) {
    phase("%s", c.what);
    LCI_barrier();
    LCI_lbuffer_t remote;
    remote.segment = rr.seg;
    remote.address = reinterpret_cast<void*>(rr.addr + static_cast<uintptr_t>(c.offset));
    remote.length = c.length;
    LCI_error_t rc;
    deadline retry_until;
    for (;;) {
      if (c.get) {
        LCI_lbuffer_t lb = local.view();
        rc = LCI_getl(LCI_UR_ENDPOINT, &lb, c.length, lc.handle(), g_right, tag, remote,
                      LCI_DEFAULT_COMP_REMOTE, nullptr);
      } else {
        rc = LCI_putl(LCI_UR_ENDPOINT, local.view(c.length), lc.handle(), g_right, tag, remote,
                      LCI_DEFAULT_COMP_REMOTE, nullptr);
      }
      if (rc != LCI_ERR_RETRY) break;
      progress(retry_until, c.what);
    }
    EXPECT(refused(c.what, rc, lc), "%s was not refused", c.what);
    // Give a wrongly accepted operation time to show up at the target.
    deadline d(0.2);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    LCI_barrier();
    LCI_request_t r;
    while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_OK)
      EXPECT(r.flag != LCI_OK, "%s: the target got a successful completion from %d", c.what,
             r.rank);
    size_t bad = not_byte(all, 0, 3 * len, k_sentinel);
    EXPECT(bad == SIZE_MAX, "%s: target memory at offset %ld from the registration changed", c.what,
           static_cast<long>(bad) - static_cast<long>(len));
    ++tag;
  }

  // The endpoint still works: a put inside the registration.
  phase("a correct putl after the refused ones");
  LCI_barrier();
  RETRY(LCI_putl(LCI_UR_ENDPOINT, local.view(page), lc.handle(), g_right, tag,
                 remote_lbuffer(rr, page, page), LCI_DEFAULT_COMP_REMOTE, nullptr));
  EXPECT(lc.take1("the correct putl").flag == LCI_OK, "the correct putl failed");
  const LCI_request_t t = ur->take1("the correct putl at the target");
  EXPECT(t.flag == LCI_OK && t.rank == g_left && t.tag == tag, "target request {%d, %d, %u}",
         t.flag, t.rank, t.tag);
  EXPECT(mismatch(base + page, page, seed_of(static_cast<uint32_t>(g_left), 1)) == SIZE_MAX,
         "the correct putl's data differs");
  LCI_barrier();
  release_regions(regions);
  LCI_barrier();
  OK(LCI_memory_deregister(&seg));
  free(all);

}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("one_sided_bad_range");
}

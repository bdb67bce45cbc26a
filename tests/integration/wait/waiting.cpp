// Waiting policies with real completions from the peer (2 ranks).
//
// Rank 0 waits, rank 1 sends; on both ranks a dedicated thread drives
// LCI_progress (waits do not progress). Phases, selected by --phase (all by
// default):
//   fibers   N fibers (default 10,000) on a 2-thread LCIX fiber pool each
//            post LCI_recvs with their own synchronizer and LCI_sync_wait;
//   tbb      1,000 oneTBB tasks do the same;
//   sleep    an OS thread waits ~1 s for a message the peer sends late, and
//            must use almost no CPU meanwhile (a resource bound, generous so
//            that a loaded machine passes; no timing is asserted).
// Every received request is checked: flag, rank, tag, type, data, context.
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lci.h"

namespace {

constexpr LCI_tag_t fiber_base = 0, tbb_base = 20000, go_tag = 30000, late_tag = 30001;

// Receives complete into synchronizers, so they use an endpoint whose
// message port signals synchronizers (LCI_UR_ENDPOINT's signals a queue).
LCI_endpoint_t g_ep;

uint64_t value_of(LCI_tag_t tag) { return 0x5eed0000ull + 7ull * tag; }

void send_value(LCI_tag_t tag) {
  LCI_short_t v;
  memset(&v, 0, sizeof(v));
  const uint64_t x = value_of(tag);
  memcpy(&v, &x, sizeof(x));
  LCI_error_t rc;
  while ((rc = LCI_sends(g_ep, v, 1 - LCI_RANK, tag)) == LCI_ERR_RETRY) {
    if (LCIX_fiber_yield() != LCI_OK) std::this_thread::yield();
  }
  EXPECT(rc == LCI_OK, "LCI_sends of tag %u returned %d", tag, rc);
}

// Posts a receive of `tag` from the peer with its own synchronizer, waits,
// checks the request. Runs on a fiber, a TBB task or a thread.
void recv_and_check(LCI_tag_t tag) {
  LCI_comp_t sync;
  LCI_sync_create(LCI_UR_DEVICE, 1, &sync);
  void* ctx = reinterpret_cast<void*>(static_cast<uintptr_t>(tag) + 1);
  LCI_error_t rc;
  while ((rc = LCI_recvs(g_ep, 1 - LCI_RANK, tag, sync, ctx)) == LCI_ERR_RETRY) {
    if (LCIX_fiber_yield() != LCI_OK) std::this_thread::yield();
  }
  EXPECT(rc == LCI_OK, "LCI_recvs of tag %u returned %d", tag, rc);
  if (rc != LCI_OK) {  // nothing will ever signal it
    LCI_sync_free(&sync);
    return;
  }
  LCI_request_t r;
  EXPECT(LCI_sync_wait(sync, &r) == LCI_OK, "LCI_sync_wait");
  uint64_t x;
  memcpy(&x, &r.data.immediate, sizeof(x));
  EXPECT(r.flag == LCI_OK && r.rank == 1 - LCI_RANK && r.tag == tag && r.type == LCI_IMMEDIATE &&
             r.user_context == ctx && x == value_of(tag),
         "request of tag %u: flag %d rank %d tag %u type %d value %llx", tag, r.flag, r.rank,
         r.tag, r.type, static_cast<unsigned long long>(x));
  LCI_sync_free(&sync);
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void phase_fibers(int n) {
  if (LCI_RANK == 1) {
    for (int i = 0; i < n; ++i) send_value(fiber_base + static_cast<LCI_tag_t>(i));
    return;
  }
  LCIX_set_wait_policy(LCIX_WAIT_FIBERS);
  LCIX_fiber_pool_t pool;
  EXPECT(LCIX_fiber_pool_create(2, &pool) == LCI_OK, "pool");
  for (int i = 0; i < n; ++i)
    LCIX_fiber_spawn(
        pool, [](void* p) { recv_and_check(static_cast<LCI_tag_t>(reinterpret_cast<uintptr_t>(p))); },
        reinterpret_cast<void*>(static_cast<uintptr_t>(fiber_base + i)));
  EXPECT(LCIX_fiber_pool_join(pool) == LCI_OK, "join");
  EXPECT(LCIX_fiber_pool_free(&pool) == LCI_OK && pool == nullptr, "free");
  printf("rank 0: %d fibers received and checked their messages\n", n);
}

void phase_tbb(int n) {
  if (LCI_RANK == 1) {
    for (int i = 0; i < n; ++i) send_value(tbb_base + static_cast<LCI_tag_t>(i));
    return;
  }
  LCIX_set_wait_policy(LCIX_WAIT_TBB);
  tbb::task_arena arena(2);
  arena.execute([&] {
    tbb::task_group tg;
    for (int i = 0; i < n; ++i) tg.run([i] { recv_and_check(tbb_base + static_cast<LCI_tag_t>(i)); });
    tg.wait();
  });
  printf("rank 0: %d TBB tasks received and checked their messages\n", n);
}

void phase_sleep() {
  LCIX_set_wait_policy(LCIX_WAIT_THREADS);
  if (LCI_RANK == 1) {
    recv_and_check(go_tag);  // rank 0 is about to wait
    std::this_thread::sleep_for(std::chrono::seconds(1));
    send_value(late_tag);
    return;
  }
  double cpu = 0, wall = 0;
  std::thread waiter([&] {
    LCI_comp_t sync;
    LCI_sync_create(LCI_UR_DEVICE, 1, &sync);
    LCI_error_t rc;
    while ((rc = LCI_recvs(g_ep, 1, late_tag, sync, &cpu)) == LCI_ERR_RETRY)
      std::this_thread::yield();
    EXPECT(rc == LCI_OK, "LCI_recvs of the late message returned %d", rc);
    if (rc != LCI_OK) {
      LCI_sync_free(&sync);
      return;
    }
    send_value(go_tag);
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    LCI_request_t r;
    LCI_sync_wait(sync, &r);
    cpu = thread_cpu_seconds() - c0;
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    uint64_t x;
    memcpy(&x, &r.data.immediate, sizeof(x));
    EXPECT(r.flag == LCI_OK && r.rank == 1 && r.tag == late_tag && r.user_context == &cpu &&
               x == value_of(late_tag), "late request");
    LCI_sync_free(&sync);
  });
  waiter.join();
  printf("rank 0: waited %.3f s for the late message using %.4f s of CPU\n", wall, cpu);
  // Resource check: a futex sleeper uses microseconds of CPU; a spinner
  // would use about the whole wait.
  EXPECT(cpu < 0.2, "waiter used %.3f s of CPU during a %.3f s wait", cpu, wall);
}
}  // namespace

int main(int argc, char** argv) {
  std::string phase = "all";
  int nfibers = 10000;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--phase") && i + 1 < argc) phase = argv[++i];
    else if (!strcmp(argv[i], "--fibers") && i + 1 < argc) nfibers = atoi(argv[++i]);
  }
  LCI_initialize();
  if (LCI_NUM_PROCESSES != 2) {
    fprintf(stderr, "waiting: needs exactly 2 ranks\n");
    LCI_finalize();
    return 1;
  }
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_SYNC);
  LCI_endpoint_init(&g_ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);
  std::atomic<bool> stop{false};
  std::thread progress([&] {
    while (!stop.load(std::memory_order_relaxed)) LCI_progress(LCI_UR_DEVICE);
  });
  if (phase == "all" || phase == "fibers") phase_fibers(nfibers);
  if (phase == "all" || phase == "tbb") phase_tbb(1000);
  if (phase == "all" || phase == "sleep") phase_sleep();
  stop.store(true);
  progress.join();
  LCI_barrier();
  LCI_endpoint_free(&g_ep);
  LCI_finalize();
  return lci_test::report("waiting");
}

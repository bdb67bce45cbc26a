// Receive capacities, medium-buffer frees and segment/device pairing, in
// release and debug builds (LCI_TEST_DEBUG_BUILD=1: the library validates
// arguments and answers bad ones with LCI_ERR_FATAL).
//
//  - LCI_recvv and the local iovec of LCI_getv take a piggy-back *capacity*
//    larger than LCI_get_iovec_piggy_back_size(count): accepted and completed.
//  - LCI_mbuffer_free of a pointer inside a medium buffer: refused in debug
//    builds, harmless in release builds; a double free and the free of a
//    buffer a send consumed are refused in debug builds.
//  - Debug builds: a segment registered on another device, a remote segment
//    of another device group, an endpoint of a freed device, and a property
//    list whose explicitly set default completion does not suit its message
//    port are refused.
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

#ifndef LCI_TEST_DEBUG_BUILD
#define LCI_TEST_DEBUG_BUILD 0
#endif

namespace {

int g_me, g_n, g_right, g_left;
constexpr bool k_debug = LCI_TEST_DEBUG_BUILD != 0;

void receive_capacities() {
  phase("recvv with a large piggy-back capacity");
  constexpr size_t len = 2000;
  const size_t limit = LCI_get_iovec_piggy_back_size(1);
  std::vector<char> big_piggy(limit + 256, 0);
  std::vector<uint8_t> src(len), dst(len, k_sentinel);
  fill(src.data(), len, 3);
  char piggy_out[40];
  fill(piggy_out, sizeof(piggy_out), 4);
  comp rc(LCI_COMPLETION_QUEUE), sc(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t rb{LCI_SEGMENT_ALL, dst.data(), len};
  LCI_iovec_t riov{{big_piggy.data(), big_piggy.size()}, &rb, 1};
  const LCI_error_t posted = LCI_recvv(LCI_UR_ENDPOINT, riov, g_left, 61, rc.handle(), &rc);
  EXPECT(posted == LCI_OK, "LCI_recvv with a %zu-byte piggy-back capacity returned %d",
         big_piggy.size(), posted);
  allgather(nullptr, 0);
  LCI_lbuffer_t sb{LCI_SEGMENT_ALL, src.data(), len};
  LCI_iovec_t siov{{piggy_out, sizeof(piggy_out)}, &sb, 1};
  RETRY(LCI_sendv(LCI_UR_ENDPOINT, siov, g_right, 61, sc.handle(), &sc));
  EXPECT(sc.take1("sendv completion", 20).flag == LCI_OK, "sendv failed");
  if (posted == LCI_OK) {
    const LCI_request_t r = rc.take1("recvv completion", 20);
    EXPECT(r.flag == LCI_OK && r.data.iovec.piggy_back.length == sizeof(piggy_out) &&
               r.data.iovec.count == 1 && r.data.iovec.lbuffers[0].length == len,
           "recvv completion {flag %d, piggy %zu}", r.flag, r.data.iovec.piggy_back.length);
    EXPECT(mismatch(big_piggy.data(), sizeof(piggy_out), 4) == SIZE_MAX, "piggy-back bytes");
    EXPECT(mismatch(dst.data(), len, 3) == SIZE_MAX, "data bytes");
  }

  phase("getv with a large local piggy-back capacity");
  lbuf target(mem_kind::registered, len);
  fill(target.data(), len, seed_of(8, static_cast<uint32_t>(g_me)));
  char remote_piggy[24];
  fill(remote_piggy, sizeof(remote_piggy), seed_of(9, static_cast<uint32_t>(g_me)));
  registration piggy_registered(remote_piggy, sizeof(remote_piggy));  // the peer's getv reads it
  auto regions = exchange_regions(target.segment(), target.data(), len);
  const auto addrs = allgather_u64(reinterpret_cast<uintptr_t>(remote_piggy));
  LCI_lbuffer_t remote = remote_lbuffer(regions[static_cast<size_t>(g_right)], 0, len);
  LCI_iovec_t rv{{reinterpret_cast<void*>(addrs[static_cast<size_t>(g_right)]),
                  sizeof(remote_piggy)}, &remote, 1};
  std::fill(big_piggy.begin(), big_piggy.end(), 0);
  std::fill(dst.begin(), dst.end(), k_sentinel);
  LCI_iovec_t lv{{big_piggy.data(), big_piggy.size()}, &rb, 1};
  comp gc(LCI_COMPLETION_QUEUE);
  const LCI_error_t got = LCI_getv(LCI_UR_ENDPOINT, lv, gc.handle(), g_right, 62, rv,
                                   LCI_DEFAULT_COMP_REMOTE, nullptr);
  EXPECT(got == LCI_OK, "LCI_getv with a %zu-byte local piggy-back capacity returned %d",
         big_piggy.size(), got);
  auto dflt = comp::borrow_queue(LCI_UR_CQ);
  const LCI_request_t t = dflt->take1("target completion of the peer's getv", 20);
  free(t.data.iovec.lbuffers);
  if (got == LCI_OK) {
    EXPECT(gc.take1("getv completion", 20).flag == LCI_OK, "getv failed");
    EXPECT(mismatch(big_piggy.data(), sizeof(remote_piggy),
                    seed_of(9, static_cast<uint32_t>(g_right))) == SIZE_MAX,
           "piggy-back bytes read");
    EXPECT(mismatch(dst.data(), len, seed_of(8, static_cast<uint32_t>(g_right))) == SIZE_MAX,
           "data bytes read");
  }
  allgather(nullptr, 0);
  release_regions(regions);
}

void mbuffer_frees() {
  phase("LCI_mbuffer_free of bad addresses");
  LCI_mbuffer_t a;
  RETRY(LCI_mbuffer_alloc(LCI_UR_DEVICE, &a));
  LCI_mbuffer_t inside{static_cast<char*>(a.address) + 100, 10};
  const LCI_error_t interior = LCI_mbuffer_free(inside);
  if (k_debug) {
    EXPECT(interior == LCI_ERR_FATAL, "freeing an interior pointer returned %d", interior);
    OK(LCI_mbuffer_free(a));
  }
  // Release builds: the interior free released the buffer (it did not crash).
  if (k_debug) {
    const LCI_error_t twice = LCI_mbuffer_free(a);
    EXPECT(twice == LCI_ERR_FATAL, "a double free returned %d", twice);
  }

  // Two allocations after all that must be distinct buffers.
  LCI_mbuffer_t b, c;
  RETRY(LCI_mbuffer_alloc(LCI_UR_DEVICE, &b));
  RETRY(LCI_mbuffer_alloc(LCI_UR_DEVICE, &c));
  EXPECT(b.address != c.address, "the same medium buffer %p was handed out twice", b.address);
  OK(LCI_mbuffer_free(c));

  if (k_debug) {
    phase("LCI_mbuffer_free of a buffer a send consumed");
    comp rc(LCI_COMPLETION_QUEUE);
    char in[64];
    OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{in, sizeof(in)}, g_left, 63, rc.handle(), nullptr));
    allgather(nullptr, 0);
    b.length = 32;
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, g_right, 63));
    EXPECT(LCI_mbuffer_free(b) == LCI_ERR_FATAL, "freeing a consumed buffer was accepted");
    rc.take1("medium receive", 20);
    LCI_mbuffer_t stack{in, sizeof(in)};
    EXPECT(LCI_mbuffer_free(stack) == LCI_ERR_FATAL, "freeing program memory was accepted");
  } else {
    OK(LCI_mbuffer_free(b));
  }
  allgather(nullptr, 0);
}

void device_pairing() {
  if (!k_debug) return;
  phase("segments of another device");
  LCI_device_t dev2;
  OK(LCI_device_init(&dev2));
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  LCI_comp_t cq2;
  OK(LCI_queue_create(dev2, &cq2));
  OK(LCI_plist_set_default_comp(plist, cq2));
  LCI_endpoint_t ep2;
  OK(LCI_endpoint_init(&ep2, dev2, plist));

  std::vector<uint8_t> mem(4096, 0);
  LCI_segment_t seg2;
  OK(LCI_memory_register(dev2, mem.data(), mem.size(), &seg2));
  LCI_lbuffer_t on2{seg2, mem.data(), mem.size()};
  LCI_comp_t cq = LCI_UR_CQ;
  EXPECT(LCI_sendl(LCI_UR_ENDPOINT, on2, g_right, 1, cq, nullptr) == LCI_ERR_FATAL,
         "LCI_sendl with another device's segment was accepted");
  EXPECT(LCI_recvl(LCI_UR_ENDPOINT, on2, g_left, 1, cq, nullptr) == LCI_ERR_FATAL,
         "LCI_recvl with another device's segment was accepted");
  LCI_iovec_t v{{nullptr, 0}, &on2, 1};
  EXPECT(LCI_sendv(LCI_UR_ENDPOINT, v, g_right, 1, cq, nullptr) == LCI_ERR_FATAL,
         "LCI_sendv with another device's segment was accepted");

  // A remote segment of device group 1 used on an endpoint of group 0.
  char str[256];
  OK(LCI_segment_serialize(seg2, str));
  LCI_segment_t remote2;
  OK(LCI_segment_deserialize(str, &remote2));
  std::vector<uint8_t> local(4096, 0);
  LCI_lbuffer_t l{LCI_SEGMENT_ALL, local.data(), local.size()};
  LCI_lbuffer_t r{remote2, mem.data(), mem.size()};
  EXPECT(LCI_putl(LCI_UR_ENDPOINT, l, cq, g_right, 1, r, 0, nullptr) == LCI_ERR_FATAL,
         "LCI_putl into another device group's segment was accepted");
  EXPECT(LCI_getl(LCI_UR_ENDPOINT, &l, l.length, cq, g_right, 1, r, 0, nullptr) == LCI_ERR_FATAL,
         "LCI_getl from another device group's segment was accepted");
  OK(LCI_memory_deregister(&remote2));

  // Every build signals a completion object as its own kind, whatever the
  // port's type: a queue as the default of a sync message port is accepted
  // (every rank makes this endpoint, so the endpoint numbers stay aligned).
  phase("a default completion of another kind than the port's");
  LCI_plist_t other;
  OK(LCI_plist_create(&other));
  OK(LCI_plist_set_comp_type(other, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC));
  OK(LCI_plist_set_default_comp(other, LCI_UR_CQ));
  LCI_endpoint_t ep_other = nullptr;
  EXPECT(LCI_endpoint_init(&ep_other, LCI_UR_DEVICE, other) == LCI_OK,
         "LCI_endpoint_init with a queue as the default of a sync message port was refused");
  if (ep_other) OK(LCI_endpoint_free(&ep_other));
  OK(LCI_plist_free(&other));

  phase("objects of a freed device");
  OK(LCI_memory_deregister(&seg2));
  OK(LCI_queue_free(&cq2));
  OK(LCI_plist_free(&plist));
  LCI_endpoint_t stale = ep2;
  OK(LCI_device_free(&dev2));
  EXPECT(LCI_sends(stale, LCI_short_t{}, g_right, 1) == LCI_ERR_FATAL,
         "an endpoint of a freed device was accepted");
  EXPECT(LCI_fence_wait(stale) == LCI_ERR_FATAL, "an endpoint of a freed device was accepted");
}

}  // namespace

int main() {
  harness_init(100);
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  receive_capacities();
  mbuffer_frees();
  device_pairing();
  return harness_finish("buffer_checks");
}

// Resources the network refuses, one per --case (exactly 2 ranks; the
// fault-injection hooks need LCI_TEST_HOOKS=1):
//
//   backlog_refused_recv  Rank 0 holds every packet of its pool (LCI_mbuffer_alloc)
//                   while rank 1 reads its memory with LCI_getv and puts a
//                   medium message into it: the getv's piggy-back reply (larger
//                   than any inject size) waits in rank 0's backlog and a
//                   receive is missing. Then one packet comes back and the
//                   next receive post is refused (LCIT_refuse_next_recv_posts):
//                   the progress pass that sends the reply re-posts the receive
//                   first, and the refused post must queue behind the reply in
//                   the same backlog without deadlocking. The getv completes
//                   with every byte checked.
//   registration_failures  Registrations fail (LCIT_fail_next_registrations):
//                   LCI_memory_register, LCI_lbuffer_alloc and
//                   LCI_lbuffer_memalign return LCI_ERR_RETRY with their output
//                   untouched; sendl, sendv, putla, putva, putl and getl whose
//                   LCI_SEGMENT_ALL buffers cannot be registered return
//                   LCI_ERR_RETRY with nothing sent or signalled; a recvl, a
//                   dynamic recvl, a recvv, a putla and a putva target that cannot
//                   register refuse the rendezvous: the origin completes with
//                   LCI_ERR_RETRY, the receive stays posted, and the reissued
//                   message arrives intact.
//   readonly_source LCI_sendl, LCI_sendv, LCI_putla and LCI_putl from a PROT_READ
//                   mapping (LCI_SEGMENT_ALL) arrive intact.
//   piece_limit     Devices take the backend's largest message as 65537 bytes
//                   (LCIT_limit_message_size, before LCI_initialize; a longer
//                   RDMA piece is fatal): 1 MiB sendl, sendv, putla, putl and
//                   getl arrive intact.
//   pieces          The same transfers without the hook (run with a small
//                   LCI_MAX_SINGLE_MESSAGE_SIZE).
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <sys/mman.h>
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

constexpr size_t k_len = size_t(256) << 10;  // a rendezvous

// ---- backlog_refused_recv ----------------------------------------------------

void case_backlog_refused_recv() {
  constexpr size_t k_long = 4096;
  constexpr size_t k_piggy = 6000;  // above shm's 4096-byte and tcp's 64-byte inject size
  if (k_piggy > LCI_get_iovec_piggy_back_size(1)) die("LCI_MEDIUM_SIZE too small for the test");
  const bool target = LCI_RANK == 0;
  std::vector<uint8_t> mem(k_long + k_piggy);
  LCI_segment_t seg;
  OK(LCI_memory_register(LCI_UR_DEVICE, mem.data(), mem.size(), &seg));
  if (target) {
    fill(mem.data(), k_long, 11);
    fill(mem.data() + k_long, k_piggy, 12);
  }
  auto regions = exchange_regions(seg, mem.data(), mem.size());
  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  if (target) {
    phase("taking every packet of the pool");
    std::vector<LCI_mbuffer_t> held;
    LCI_mbuffer_t mb;
    while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &mb) == LCI_OK) held.push_back(mb);
    EXPECT(!held.empty(), "LCI_mbuffer_alloc gave nothing");
    LCI_short_t go{};
    RETRY(LCI_sends(LCI_UR_ENDPOINT, go, 1, 1));  // injected: needs no packet
    phase("waiting for the getv's notification and the putma");
    LCI_mbuffer_t put_buffer{nullptr, 0};
    for (const LCI_request_t& r : ur->take(2, "the getv and putma target completions")) {
      if (r.type == LCI_MEDIUM) put_buffer = r.data.mbuffer;
      if (r.type == LCI_IOVEC) free(r.data.iovec.lbuffers);
    }
    EXPECT(put_buffer.address != nullptr, "no putma completion");
    phase("a packet returns while the reply waits and a receive post is refused");
    OK(LCIT_refuse_next_recv_posts(1));
    OK(LCI_mbuffer_free(held.back()));
    held.pop_back();
    for (int i = 0; i < 100; ++i) LCI_progress(LCI_UR_DEVICE);
    phase("returning the packets");
    for (const LCI_mbuffer_t& b : held) OK(LCI_mbuffer_free(b));
    if (put_buffer.address) OK(LCI_mbuffer_free(put_buffer));
  } else {
    phase("waiting for rank 0 to hold its pool");
    OK(LCI_recvs(LCI_UR_ENDPOINT, 0, 1, lc.handle(), nullptr));
    lc.take1("rank 0's go");
    std::vector<uint8_t> local(k_long + k_piggy, k_sentinel);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, local.data(), k_long};
    LCI_iovec_t liov{{local.data() + k_long, k_piggy}, &lb, 1};
    LCI_lbuffer_t rb = remote_lbuffer(regions[0], 0, k_long);
    LCI_iovec_t riov{{reinterpret_cast<void*>(regions[0].addr + k_long), k_piggy}, &rb, 1};
    phase("getv with a piggy-back reply");
    RETRY(LCI_getv(LCI_UR_ENDPOINT, liov, lc.handle(), 0, 5, riov, LCI_DEFAULT_COMP_REMOTE,
                   nullptr));
    char payload[64];
    memset(payload, 7, sizeof(payload));
    LCI_mbuffer_t mb{payload, sizeof(payload)};
    RETRY(LCI_putma(LCI_UR_ENDPOINT, mb, 0, 6, LCI_DEFAULT_COMP_REMOTE));
    const LCI_request_t r = lc.take1("the getv (its reply waits in rank 0's backlog)");
    EXPECT(r.flag == LCI_OK, "getv completed with flag %d", r.flag);
    const size_t bad = mismatch(local.data(), k_long, 11);
    EXPECT(bad == SIZE_MAX, "byte %zu of the getv's long buffer differs", bad);
    const size_t pbad = mismatch(local.data() + k_long, k_piggy, 12);
    EXPECT(pbad == SIZE_MAX, "byte %zu of the getv's piggy-back reply differs", pbad);
  }
  LCI_barrier();
  release_regions(regions);
  OK(LCI_memory_deregister(&seg));
}

// ---- registration_failures ----------------------------------------------------

void expect_empty(comp& c, const char* what) {
  deadline d(0.3);
  while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
  EXPECT(c.pending() == 0, "%s: %zu unexpected completions", what, c.pending());
}

void check_bytes(const void* p, size_t n, uint32_t seed, const char* what) {
  const size_t bad = mismatch(p, n, seed);
  EXPECT(bad == SIZE_MAX, "%s: byte %zu of %zu differs", what, bad, n);
}

// A long completion: LCI_OK, `len` bytes of pattern `seed` at `data` (or,
// when data is null, in the completion's buffer).
void expect_long(const LCI_request_t& q, const void* data, size_t len, uint32_t seed,
                 const char* what) {
  EXPECT(q.flag == LCI_OK && q.data.lbuffer.length == len, "%s: {flag %d, tag %u, %zu bytes}",
         what, q.flag, q.tag, q.data.lbuffer.length);
  if (q.flag == LCI_OK && q.data.lbuffer.length == len)
    check_bytes(data ? data : q.data.lbuffer.address, len, seed, what);
}

void local_refusals() {
  auto* const untouched = reinterpret_cast<LCI_segment_t>(uintptr_t{0x5e9});
  std::vector<char> mem(1 << 16);
  phase("LCI_memory_register refused");
  LCI_segment_t seg = untouched;
  OK(LCIT_fail_next_registrations(1));
  EXPECT(LCI_memory_register(LCI_UR_DEVICE, mem.data(), mem.size(), &seg) == LCI_ERR_RETRY,
         "LCI_memory_register of a refused registration did not return LCI_ERR_RETRY");
  EXPECT(seg == untouched, "the refused LCI_memory_register wrote its segment");
  OK(LCI_memory_register(LCI_UR_DEVICE, mem.data(), mem.size(), &seg));
  OK(LCI_memory_deregister(&seg));

  phase("LCI_lbuffer_alloc and LCI_lbuffer_memalign refused");
  const LCI_lbuffer_t mark{untouched, &mem, 7};
  LCI_lbuffer_t b = mark;
  OK(LCIT_fail_next_registrations(1));
  EXPECT(LCI_lbuffer_alloc(LCI_UR_DEVICE, k_len, &b) == LCI_ERR_RETRY,
         "LCI_lbuffer_alloc with a refused registration did not return LCI_ERR_RETRY");
  EXPECT(same_lbuffer(b, mark), "the refused LCI_lbuffer_alloc wrote its buffer");
  OK(LCIT_fail_next_registrations(1));
  EXPECT(LCI_lbuffer_memalign(LCI_UR_DEVICE, k_len, 4096, &b) == LCI_ERR_RETRY,
         "LCI_lbuffer_memalign with a refused registration did not return LCI_ERR_RETRY");
  EXPECT(same_lbuffer(b, mark), "the refused LCI_lbuffer_memalign wrote its buffer");
  OK(LCI_lbuffer_alloc(LCI_UR_DEVICE, k_len, &b));
  OK(LCI_lbuffer_free(b));
}

// Origins whose LCI_SEGMENT_ALL buffers cannot be registered: LCI_ERR_RETRY,
// nothing sent; then the same call goes through and arrives intact.
void origin_refusals(comp& lc, comp& ur, const remote_region& peer_region) {
  const bool origin = LCI_RANK == 0;
  std::vector<uint8_t> a(k_len), b2(k_len);

  phase("sendl whose buffer cannot be registered");
  if (origin) {
    fill(a.data(), k_len, 31);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_sendl(LCI_UR_ENDPOINT, lb, 1, 31, lc.handle(), nullptr) == LCI_ERR_RETRY,
           "sendl with a refused registration did not return LCI_ERR_RETRY");
    expect_empty(lc, "the refused sendl");
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, lb, 1, 31, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendl").flag == LCI_OK, "sendl failed");
  } else {
    lbuf r(mem_kind::registered, k_len);
    OK(LCI_recvl(LCI_UR_ENDPOINT, r.view(), 0, 31, lc.handle(), nullptr));
    expect_long(lc.take1("the recvl"), r.data(), k_len, 31, "sendl");
    expect_empty(lc, "a second sendl");
  }
  LCI_barrier();

  phase("sendv whose buffers cannot be registered");
  if (origin) {
    fill(a.data(), k_len, 32);
    fill(b2.data(), k_len, 33);
    LCI_lbuffer_t lbs[2] = {{LCI_SEGMENT_ALL, a.data(), k_len}, {LCI_SEGMENT_ALL, b2.data(), k_len}};
    char piggy[16] = "piggy";
    LCI_iovec_t iov{{piggy, sizeof(piggy)}, lbs, 2};
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_sendv(LCI_UR_ENDPOINT, iov, 1, 32, lc.handle(), nullptr) == LCI_ERR_RETRY,
           "sendv with a refused registration did not return LCI_ERR_RETRY");
    expect_empty(lc, "the refused sendv");
    RETRY(LCI_sendv(LCI_UR_ENDPOINT, iov, 1, 32, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendv").flag == LCI_OK, "sendv failed");
  } else {
    LCI_iovec_t iov{{nullptr, 0}, nullptr, 2};
    OK(LCI_recvv(LCI_UR_ENDPOINT, iov, 0, 32, lc.handle(), nullptr));
    const LCI_request_t q = lc.take1("the dynamic recvv");
    EXPECT(q.flag == LCI_OK && q.data.iovec.count == 2, "recvv {%d, %d}", q.flag,
           q.data.iovec.count);
    if (q.flag == LCI_OK && q.data.iovec.count == 2) {
      check_bytes(q.data.iovec.lbuffers[0].address, k_len, 32, "sendv buffer 0");
      check_bytes(q.data.iovec.lbuffers[1].address, k_len, 33, "sendv buffer 1");
      for (int i = 0; i < 2; ++i) LCI_lbuffer_free(q.data.iovec.lbuffers[i]);
      free(q.data.iovec.lbuffers);
      free(q.data.iovec.piggy_back.address);
    }
  }
  LCI_barrier();

  phase("putla and putva whose buffers cannot be registered");
  if (origin) {
    fill(a.data(), k_len, 34);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_putla(LCI_UR_ENDPOINT, lb, lc.handle(), 1, 34, LCI_DEFAULT_COMP_REMOTE, nullptr) ==
               LCI_ERR_RETRY,
           "putla with a refused registration did not return LCI_ERR_RETRY");
    LCI_iovec_t iov{{nullptr, 0}, &lb, 1};
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_putva(LCI_UR_ENDPOINT, iov, lc.handle(), 1, 35, LCI_DEFAULT_COMP_REMOTE, nullptr) ==
               LCI_ERR_RETRY,
           "putva with a refused registration did not return LCI_ERR_RETRY");
    expect_empty(lc, "the refused putla and putva");
    RETRY(LCI_putla(LCI_UR_ENDPOINT, lb, lc.handle(), 1, 34, LCI_DEFAULT_COMP_REMOTE, nullptr));
    EXPECT(lc.take1("the putla").flag == LCI_OK, "putla failed");
  } else {
    const LCI_request_t t = ur.take1("the putla's target completion");
    expect_long(t, nullptr, k_len, 34, "putla");
    if (t.data.lbuffer.address) LCI_lbuffer_free(t.data.lbuffer);
    expect_empty(ur, "the refused putla and putva");
  }
  LCI_barrier();

  phase("putl and getl whose local buffers cannot be registered");
  if (origin) {
    fill(a.data(), k_len, 36);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    const LCI_lbuffer_t rb = remote_lbuffer(peer_region, 0, k_len);
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_putl(LCI_UR_ENDPOINT, lb, lc.handle(), 1, 36, rb, LCI_DEFAULT_COMP_REMOTE,
                    nullptr) == LCI_ERR_RETRY,
           "putl with a refused registration did not return LCI_ERR_RETRY");
    LCI_lbuffer_t gb{LCI_SEGMENT_ALL, b2.data(), k_len};
    OK(LCIT_fail_next_registrations(1));
    EXPECT(LCI_getl(LCI_UR_ENDPOINT, &gb, k_len, lc.handle(), 1, 37, rb, LCI_DEFAULT_COMP_REMOTE,
                    nullptr) == LCI_ERR_RETRY,
           "getl with a refused registration did not return LCI_ERR_RETRY");
    expect_empty(lc, "the refused putl and getl");
    RETRY(LCI_putl(LCI_UR_ENDPOINT, lb, lc.handle(), 1, 36, rb, LCI_DEFAULT_COMP_REMOTE, nullptr));
    EXPECT(lc.take1("the putl").flag == LCI_OK, "putl failed");
    RETRY(LCI_getl(LCI_UR_ENDPOINT, &gb, k_len, lc.handle(), 1, 37, rb, LCI_DEFAULT_COMP_REMOTE,
                   nullptr));
    EXPECT(lc.take1("the getl").flag == LCI_OK, "getl failed");
    check_bytes(b2.data(), k_len, 36, "getl of what putl wrote");
  } else {
    const std::vector<LCI_request_t> t = ur.take(2, "the putl and getl target completions");
    EXPECT(t[0].tag == 36 && t[1].tag == 37, "target completions with tags %u, %u", t[0].tag,
           t[1].tag);
    expect_empty(ur, "the refused putl and getl");
  }
  LCI_barrier();
}

// Targets that cannot register refuse: the origin's completion says
// LCI_ERR_RETRY, and the reissued message arrives intact.
void target_refusals(comp& lc, comp& ur) {
  const bool origin = LCI_RANK == 0;
  std::vector<uint8_t> a(k_len), b2(k_len);
  // Sends (or puts) once, then again if refused; the first must be refused.
  auto send_twice = [&](const char* what, auto&& call) {
    RETRY(call());
    const LCI_request_t r = lc.take1(what);
    EXPECT(r.flag == LCI_ERR_RETRY, "%s: the refused one completed with flag %d", what, r.flag);
    RETRY(call());
    const LCI_request_t r2 = lc.take1(what);
    EXPECT(r2.flag == LCI_OK, "%s: the reissued one completed with flag %d", what, r2.flag);
  };

  phase("recvl into LCI_SEGMENT_ALL memory that cannot be registered");
  if (origin) {
    LCI_barrier();
    fill(a.data(), k_len, 41);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    send_twice("sendl to a refusing recvl",
               [&] { return LCI_sendl(LCI_UR_ENDPOINT, lb, 1, 41, lc.handle(), nullptr); });
  } else {
    std::vector<uint8_t> r(k_len, k_sentinel);
    LCI_lbuffer_t rb{LCI_SEGMENT_ALL, r.data(), k_len};
    OK(LCI_recvl(LCI_UR_ENDPOINT, rb, 0, 41, lc.handle(), nullptr));
    OK(LCIT_fail_next_registrations(1));
    LCI_barrier();
    expect_long(lc.take1("the recvl that refused once"), r.data(), k_len, 41,
                "recvl after a refusal");
    expect_empty(lc, "the recvl");
  }
  LCI_barrier();

  phase("dynamic recvl whose buffer cannot be registered");
  if (origin) {
    LCI_barrier();
    fill(a.data(), k_len, 42);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    send_twice("sendl to a refusing dynamic recvl",
               [&] { return LCI_sendl(LCI_UR_ENDPOINT, lb, 1, 42, lc.handle(), nullptr); });
  } else {
    LCI_lbuffer_t rb{LCI_SEGMENT_ALL, nullptr, 0};
    OK(LCI_recvl(LCI_UR_ENDPOINT, rb, 0, 42, lc.handle(), nullptr));
    OK(LCIT_fail_next_registrations(1));
    LCI_barrier();
    const LCI_request_t q = lc.take1("the dynamic recvl that refused once");
    expect_long(q, nullptr, k_len, 42, "dynamic recvl after a refusal");
    if (q.data.lbuffer.address) LCI_lbuffer_free(q.data.lbuffer);
  }
  LCI_barrier();

  phase("recvv into LCI_SEGMENT_ALL memory that cannot be registered");
  if (origin) {
    LCI_barrier();
    fill(a.data(), k_len, 43);
    fill(b2.data(), k_len, 44);
    LCI_lbuffer_t lbs[2] = {{LCI_SEGMENT_ALL, a.data(), k_len}, {LCI_SEGMENT_ALL, b2.data(), k_len}};
    char piggy[8] = "abcdefg";
    LCI_iovec_t iov{{piggy, sizeof(piggy)}, lbs, 2};
    send_twice("sendv to a refusing recvv",
               [&] { return LCI_sendv(LCI_UR_ENDPOINT, iov, 1, 43, lc.handle(), nullptr); });
  } else {
    std::vector<uint8_t> r0(k_len, k_sentinel), r1(k_len, k_sentinel);
    char piggy[8] = {};
    LCI_lbuffer_t rbs[2] = {{LCI_SEGMENT_ALL, r0.data(), k_len}, {LCI_SEGMENT_ALL, r1.data(), k_len}};
    LCI_iovec_t iov{{piggy, sizeof(piggy)}, rbs, 2};
    OK(LCI_recvv(LCI_UR_ENDPOINT, iov, 0, 43, lc.handle(), nullptr));
    OK(LCIT_fail_next_registrations(1));
    LCI_barrier();
    const LCI_request_t q = lc.take1("the recvv that refused once");
    EXPECT(q.flag == LCI_OK && q.data.iovec.count == 2 && rbs[0].length == k_len &&
               rbs[1].length == k_len && q.data.iovec.piggy_back.length == sizeof(piggy),
           "recvv {%d, count %d, %zu, %zu}", q.flag, q.data.iovec.count, rbs[0].length,
           rbs[1].length);
    check_bytes(r0.data(), k_len, 43, "recvv buffer 0 after a refusal");
    check_bytes(r1.data(), k_len, 44, "recvv buffer 1 after a refusal");
    EXPECT(memcmp(piggy, "abcdefg", 8) == 0, "recvv piggy-back differs");
  }
  LCI_barrier();

  phase("putla and putva targets that cannot register");
  if (origin) {
    LCI_barrier();
    fill(a.data(), k_len, 45);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, a.data(), k_len};
    send_twice("putla to a refusing target", [&] {
      return LCI_putla(LCI_UR_ENDPOINT, lb, lc.handle(), 1, 45, LCI_DEFAULT_COMP_REMOTE, nullptr);
    });
    LCI_barrier();
    fill(b2.data(), k_len, 46);
    LCI_lbuffer_t vb{LCI_SEGMENT_ALL, b2.data(), k_len};
    LCI_iovec_t iov{{nullptr, 0}, &vb, 1};
    send_twice("putva to a refusing target", [&] {
      return LCI_putva(LCI_UR_ENDPOINT, iov, lc.handle(), 1, 46, LCI_DEFAULT_COMP_REMOTE, nullptr);
    });
  } else {
    OK(LCIT_fail_next_registrations(1));
    LCI_barrier();
    const LCI_request_t t = ur.take1("the putla target completion");
    expect_long(t, nullptr, k_len, 45, "putla after a refusal");
    if (t.data.lbuffer.address) LCI_lbuffer_free(t.data.lbuffer);
    OK(LCIT_fail_next_registrations(1));
    LCI_barrier();
    const LCI_request_t v = ur.take1("the putva target completion");
    EXPECT(v.flag == LCI_OK && v.tag == 46 && v.data.iovec.count == 1,
           "putva target {%d, tag %u, count %d}", v.flag, v.tag, v.data.iovec.count);
    if (v.flag == LCI_OK && v.data.iovec.count == 1) {
      check_bytes(v.data.iovec.lbuffers[0].address, k_len, 46, "putva after a refusal");
      LCI_lbuffer_free(v.data.iovec.lbuffers[0]);
      free(v.data.iovec.lbuffers);
      free(v.data.iovec.piggy_back.address);
    }
    expect_empty(ur, "the refused putla and putva");
  }
  LCI_barrier();
}

void case_registration_failures() {
  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  local_refusals();
  lbuf region(mem_kind::registered, k_len);
  auto regions = exchange_regions(region.segment(), region.data(), k_len);
  origin_refusals(lc, *ur, regions[1]);
  target_refusals(lc, *ur);
  release_regions(regions);
}

// ---- readonly_source and the piece cases ------------------------------------------

// `n` bytes of pattern `seed` in a mapping that is then made read-only.
struct readonly_map {
  void* p = MAP_FAILED;
  size_t n;
  readonly_map(size_t bytes, uint32_t seed) : n(bytes) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap(%zu)", n);
    fill(p, n, seed);
    if (mprotect(p, n, PROT_READ) != 0) die("mprotect(PROT_READ)");
  }
  ~readonly_map() { munmap(p, n); }
  LCI_lbuffer_t view() const { return LCI_lbuffer_t{LCI_SEGMENT_ALL, p, n}; }
};

// sendl, sendv, putla, putl (and getl with `with_get`) of `len` bytes from
// rank 0 to rank 1, every byte checked. `read_only`: the sources are
// PROT_READ mappings.
void transfers(size_t len, bool read_only, bool with_get) {
  const bool origin = LCI_RANK == 0;
  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  lbuf region(mem_kind::registered, len);
  auto regions = exchange_regions(region.segment(), region.data(), len);
  std::vector<uint8_t> heap(origin ? 2 * len : 0);
  auto source = [&](int k, uint32_t seed) {
    if (read_only) return std::unique_ptr<readonly_map>(new readonly_map(len, seed));
    fill(heap.data() + k * len, len, seed);
    return std::unique_ptr<readonly_map>();
  };
  auto view = [&](int k, const std::unique_ptr<readonly_map>& m) {
    return m ? m->view() : LCI_lbuffer_t{LCI_SEGMENT_ALL, heap.data() + k * len, len};
  };

  phase("sendl of %zu bytes", len);
  if (origin) {
    auto m = source(0, 51);
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, view(0, m), 1, 51, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendl").flag == LCI_OK, "sendl failed");
  } else {
    lbuf r(mem_kind::registered, len);
    OK(LCI_recvl(LCI_UR_ENDPOINT, r.view(), 0, 51, lc.handle(), nullptr));
    expect_long(lc.take1("the recvl"), r.data(), len, 51, "sendl");
  }
  LCI_barrier();

  phase("sendv of 2 x %zu bytes", len);
  if (origin) {
    auto m0 = source(0, 52);
    auto m1 = source(1, 53);
    LCI_lbuffer_t lbs[2] = {view(0, m0), view(1, m1)};
    LCI_iovec_t iov{{nullptr, 0}, lbs, 2};
    RETRY(LCI_sendv(LCI_UR_ENDPOINT, iov, 1, 52, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendv").flag == LCI_OK, "sendv failed");
  } else {
    lbuf r0(mem_kind::registered, len), r1(mem_kind::registered, len);
    LCI_lbuffer_t rbs[2] = {r0.view(), r1.view()};
    LCI_iovec_t iov{{nullptr, 0}, rbs, 2};
    OK(LCI_recvv(LCI_UR_ENDPOINT, iov, 0, 52, lc.handle(), nullptr));
    EXPECT(lc.take1("the recvv").flag == LCI_OK, "recvv failed");
    check_bytes(r0.data(), len, 52, "sendv buffer 0");
    check_bytes(r1.data(), len, 53, "sendv buffer 1");
  }
  LCI_barrier();

  phase("putla of %zu bytes", len);
  if (origin) {
    auto m = source(0, 54);
    RETRY(LCI_putla(LCI_UR_ENDPOINT, view(0, m), lc.handle(), 1, 54, LCI_DEFAULT_COMP_REMOTE,
                    nullptr));
    EXPECT(lc.take1("the putla").flag == LCI_OK, "putla failed");
  } else {
    const LCI_request_t t = ur->take1("the putla target completion");
    expect_long(t, nullptr, len, 54, "putla");
    if (t.data.lbuffer.address) LCI_lbuffer_free(t.data.lbuffer);
  }
  LCI_barrier();

  phase("putl of %zu bytes", len);
  if (origin) {
    auto m = source(0, 55);
    RETRY(LCI_putl(LCI_UR_ENDPOINT, view(0, m), lc.handle(), 1, 55,
                   remote_lbuffer(regions[1], 0, len), LCI_DEFAULT_COMP_REMOTE, nullptr));
    EXPECT(lc.take1("the putl").flag == LCI_OK, "putl failed");
  } else {
    EXPECT(ur->take1("the putl target completion").flag == LCI_OK, "putl target failed");
    check_bytes(region.data(), len, 55, "putl");
  }
  LCI_barrier();

  if (with_get) {
    phase("getl of %zu bytes", len);
    if (origin) {
      std::vector<uint8_t> into(len, k_sentinel);
      LCI_lbuffer_t gb{LCI_SEGMENT_ALL, into.data(), len};
      RETRY(LCI_getl(LCI_UR_ENDPOINT, &gb, len, lc.handle(), 1, 56,
                     remote_lbuffer(regions[1], 0, len), LCI_DEFAULT_COMP_REMOTE, nullptr));
      EXPECT(lc.take1("the getl").flag == LCI_OK, "getl failed");
      check_bytes(into.data(), len, 55, "getl");
    } else {
      EXPECT(ur->take1("the getl target completion").flag == LCI_OK, "getl target failed");
    }
    LCI_barrier();
  }
  release_regions(regions);
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 2 && strcmp(argv[1], "--case") == 0 ? argv[2] : "";
  // Before LCI_initialize: the default device takes the limit at creation.
  if (which == "piece_limit" && LCIT_limit_message_size(65537) != LCI_OK)
    die("LCIT_limit_message_size: the test hooks are off (LCI_TEST_HOOKS=1)");
  harness_init(90);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  if (which == "backlog_refused_recv")
    case_backlog_refused_recv();
  else if (which == "registration_failures")
    case_registration_failures();
  else if (which == "readonly_source")
    transfers(k_len + 3, true, false);
  else if (which == "piece_limit" || which == "pieces")
    transfers((size_t(1) << 20) + 5, false, true);
  else
    die("usage: resource_failures --case "
        "backlog_refused_recv|registration_failures|readonly_source|piece_limit|pieces");
  return harness_finish(("resource_failures " + which).c_str());
}

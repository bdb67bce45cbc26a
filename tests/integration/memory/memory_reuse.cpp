// Memory registration: the registration cache behind LCI_SEGMENT_ALL must
// stay correct when memory is freed and reused, and registrations travel
// between processes as strings.
//
// Part 1 (ring: rank r sends to r+1): LCI_sendl/LCI_recvl with LCI_SEGMENT_ALL
// on both sides from mmap'ed memory, then munmap + mmap at the same address
// (MAP_FIXED_NOREPLACE) with new bytes, then a larger mapping there, then
// malloc/free/malloc of a large block, then the same with explicit
// LCI_memory_register/deregister; LCI_getl/LCI_putl from/into a remapped
// LCI_SEGMENT_ALL buffer. The receiver must always see the new bytes.
// Part 2: LCI_segment_serialize on the owner (printable, <= 255 characters),
// the string sent as a medium message, LCI_segment_deserialize on the peer
// (input unchanged), LCI_putl/LCI_getl through it with completions on both
// sides, LCI_memory_deregister of the deserialized handle, and unparsable
// strings refused with LCI_ERR_FATAL.
#include <malloc.h>
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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
LCI_tag_t g_tag = 1;
size_t g_page = 4096;

void* map_at(void* hint, size_t len) {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_FIXED_NOREPLACE
  if (hint) flags |= MAP_FIXED_NOREPLACE;
#endif
  void* p = mmap(hint, len, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) die("mmap(%p, %zu) failed", hint, len);
  return p;
}
// A mapping of `len` bytes at the start of a reserved (PROT_NONE) range of
// `room` bytes, so that it can grow in place.
void* map_with_room(size_t len, size_t room) {
  void* r = mmap(nullptr, room, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) die("mmap(%zu) failed", room);
  munmap(r, len);
  return map_at(r, len);
}
// Unmaps [p, p+len) and maps `newlen` bytes at the same address again (a
// larger mapping first unmaps the reserved room it grows into).
void* remap_same(void* p, size_t len, size_t newlen, const char* what) {
  munmap(p, std::max(len, newlen));
  void* q = map_at(p, newlen);
  if (q != p)
    printf("rank %d: note: %s came back at %p, not %p (the same-address case is not exercised)\n",
           g_me, what, q, p);
  return q;
}

// One ring step: send `slen` bytes of `s` (segment sseg) to the right, receive
// the left's into `r` (segment rseg, capacity slen); the received bytes must
// be the left's pattern for this step.
void ring_transfer(const char* what, LCI_segment_t sseg, void* s, size_t slen, LCI_segment_t rseg,
                   void* r, int step) {
  phase("%s (step %d)", what, step);
  const LCI_tag_t tag = g_tag++;
  fill(s, slen, seed_of(static_cast<uint32_t>(g_me), static_cast<uint32_t>(step)));
  memset(r, 0, slen);
  comp rc(LCI_COMPLETION_QUEUE), sc(LCI_COMPLETION_QUEUE);
  LCI_lbuffer_t rb{rseg, r, slen}, sb{sseg, s, slen};
  OK(LCI_recvl(LCI_UR_ENDPOINT, rb, g_left, tag, rc.handle(), r));
  LCI_barrier();
  RETRY(LCI_sendl(LCI_UR_ENDPOINT, sb, g_right, tag, sc.handle(), s));
  LCI_request_t got = rc.take1("the receive");
  LCI_request_t sent = sc.take1("the send completion");
  EXPECT(got.flag == LCI_OK && got.rank == g_left && got.tag == tag && got.type == LCI_LONG &&
             same_lbuffer(got.data.lbuffer, rb) && got.user_context == r,
         "receive request {%d, %d, %u, %d, {%p, %p, %zu}}", got.flag, got.rank, got.tag, got.type,
         (void*)got.data.lbuffer.segment, got.data.lbuffer.address, got.data.lbuffer.length);
  EXPECT(sent.flag == LCI_OK && sent.rank == g_right && sent.tag == tag &&
             sent.type == LCI_LONG && same_lbuffer(sent.data.lbuffer, sb) &&
             sent.user_context == s,
         "send request {%d, %d, %u, %d}", sent.flag, sent.rank, sent.tag, sent.type);
  const size_t bad = mismatch(r, slen, seed_of(static_cast<uint32_t>(g_left), static_cast<uint32_t>(step)));
  EXPECT(bad == SIZE_MAX, "%s: the receiver sees old or wrong bytes (first at %zu of %zu)", what,
         bad, slen);
  LCI_barrier();
}

void part1_reuse() {
  const size_t len = (size_t(1) << 20) + 123;
  int step = 0;
  // mmap, munmap, mmap again at the same address, then larger.
  void* s = map_with_room(len, 4 * len);
  void* r = map_with_room(len, 4 * len);
  ring_transfer("mmap'ed buffers, SEGMENT_ALL", LCI_SEGMENT_ALL, s, len, LCI_SEGMENT_ALL, r, ++step);
  for (int round = 0; round < 3; ++round) {
    s = remap_same(s, len, len, "the send mapping");
    r = remap_same(r, len, len, "the receive mapping");
    ring_transfer("remapped at the same address, SEGMENT_ALL", LCI_SEGMENT_ALL, s, len,
                  LCI_SEGMENT_ALL, r, ++step);
  }
  s = remap_same(s, len, 2 * len, "the send mapping (larger)");
  r = remap_same(r, len, 2 * len, "the receive mapping (larger)");
  ring_transfer("remapped larger at the same address, SEGMENT_ALL", LCI_SEGMENT_ALL, s, 2 * len,
                LCI_SEGMENT_ALL, r, ++step);
  // Smaller again: the cached range of the larger one must not outlive it.
  s = remap_same(s, 2 * len, len / 2, "the send mapping (smaller)");
  r = remap_same(r, 2 * len, len / 2, "the receive mapping (smaller)");
  ring_transfer("remapped smaller at the same address, SEGMENT_ALL", LCI_SEGMENT_ALL, s, len / 2,
                LCI_SEGMENT_ALL, r, ++step);
  munmap(s, 4 * len);  // with what is left of the reserved room
  munmap(r, 4 * len);

  // malloc / free / malloc of a large block; a fixed mmap threshold makes
  // malloc map it and free unmap it, so the address tends to come back.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  const size_t big = size_t(8) << 20;
  for (int round = 0; round < 2; ++round) {
    void* ms = malloc(big);
    void* mr = malloc(big);
    if (!ms || !mr) die("malloc");
    ring_transfer("malloc'ed buffers, SEGMENT_ALL", LCI_SEGMENT_ALL, ms, big, LCI_SEGMENT_ALL, mr,
                  ++step);
    const uintptr_t old_s = reinterpret_cast<uintptr_t>(ms), old_r = reinterpret_cast<uintptr_t>(mr);
    free(ms);
    free(mr);
    void* ms2 = malloc(big);
    void* mr2 = malloc(big);
    if (!ms2 || !mr2) die("malloc");
    const uintptr_t new_s = reinterpret_cast<uintptr_t>(ms2), new_r = reinterpret_cast<uintptr_t>(mr2);
    if ((new_s != old_s && new_s != old_r) || (new_r != old_s && new_r != old_r))
      printf("rank %d: note: malloc after free gave other addresses\n", g_me);
    ring_transfer("malloc after free, SEGMENT_ALL", LCI_SEGMENT_ALL, ms2, big, LCI_SEGMENT_ALL,
                  mr2, ++step);
    free(ms2);
    free(mr2);
  }

  // Explicit registrations of a mapping that is replaced in between.
  s = map_at(nullptr, len);
  r = map_at(nullptr, len);
  for (int round = 0; round < 2; ++round) {
    LCI_segment_t ss, rs;
    OK(LCI_memory_register(LCI_UR_DEVICE, s, len, &ss));
    OK(LCI_memory_register(LCI_UR_DEVICE, r, len, &rs));
    ring_transfer("registered mmap'ed buffers", ss, s, len, rs, r, ++step);
    EXPECT(LCI_memory_deregister(&ss) == LCI_OK && ss == nullptr, "deregister");
    EXPECT(LCI_memory_deregister(&rs) == LCI_OK && rs == nullptr, "deregister");
    s = remap_same(s, len, len, "the send mapping");
    r = remap_same(r, len, len, "the receive mapping");
  }
  // Registered twice (overlapping), one registration released, the other used.
  {
    LCI_segment_t a, b, c;
    OK(LCI_memory_register(LCI_UR_DEVICE, s, len, &a));
    OK(LCI_memory_register(LCI_UR_DEVICE, s, len / 2, &b));
    OK(LCI_memory_register(LCI_UR_DEVICE, r, len, &c));
    EXPECT(LCI_memory_deregister(&b) == LCI_OK && b == nullptr, "deregister");
    ring_transfer("a range registered twice, one released", a, s, len, c, r, ++step);
    EXPECT(LCI_memory_deregister(&a) == LCI_OK, "deregister");
    EXPECT(LCI_memory_deregister(&c) == LCI_OK, "deregister");
  }
  munmap(s, len);
  munmap(r, len);

  // One-sided from and into remapped LCI_SEGMENT_ALL memory.
  phase("getl/putl with remapped local buffers");
  const size_t glen = 256 * 1024;
  lbuf region(mem_kind::lalloc, 2 * glen);
  auto regions = exchange_regions(region.segment(), region.data(), 2 * glen);
  const remote_region& right = regions[static_cast<size_t>(g_right)];
  void* l = map_at(nullptr, glen);
  comp lc(LCI_COMPLETION_QUEUE);
  for (int round = 0; round < 3; ++round) {
    const uint32_t owner_seed = seed_of(static_cast<uint32_t>(g_me), 77, static_cast<uint32_t>(round));
    fill(region.data(), glen, owner_seed);
    LCI_barrier();
    memset(l, 0, glen);
    LCI_lbuffer_t lb{LCI_SEGMENT_ALL, l, glen};
    const LCI_tag_t tag = g_tag++;
    RETRY(LCI_getl(LCI_UR_ENDPOINT, &lb, glen, lc.handle(), g_right, tag,
                   remote_lbuffer(right, 0, glen), LCI_DEFAULT_COMP_REMOTE, l));
    LCI_request_t o = lc.take1("getl completion");
    EXPECT(o.flag == LCI_OK, "getl flag %d", o.flag);
    size_t bad = mismatch(l, glen, seed_of(static_cast<uint32_t>(g_right), 77, static_cast<uint32_t>(round)));
    EXPECT(bad == SIZE_MAX, "getl into a remapped SEGMENT_ALL buffer: old or wrong bytes at %zu", bad);
    // putl from it, into the second half of the right's region.
    fill(l, glen, owner_seed + 1);
    RETRY(LCI_putl(LCI_UR_ENDPOINT, lb, lc.handle(), g_right, tag, remote_lbuffer(right, glen, glen),
                   LCI_DEFAULT_COMP_REMOTE, l));
    o = lc.take1("putl completion");
    EXPECT(o.flag == LCI_OK, "putl flag %d", o.flag);
    // Target completions: one for the get, one for the put, both in LCI_UR_CQ.
    auto ur = comp::borrow_queue(LCI_UR_CQ);
    auto t = ur->take(2, "target completions in LCI_UR_CQ");
    for (auto& r : t) EXPECT(r.flag == LCI_OK && r.rank == g_left, "target request %d from %d", r.flag, r.rank);
    LCI_barrier();
    bad = mismatch(region.data() + glen, glen,
                   seed_of(static_cast<uint32_t>(g_left), 77, static_cast<uint32_t>(round)) + 1);
    EXPECT(bad == SIZE_MAX, "putl from a remapped SEGMENT_ALL buffer: old or wrong bytes at %zu", bad);
    l = remap_same(l, glen, glen, "the local getl/putl mapping");
  }
  munmap(l, glen);
  LCI_barrier();
  release_regions(regions);
}

void check_target(const LCI_request_t& r, LCI_tag_t tag, LCI_segment_t seg, void* addr, size_t len,
                  const char* op) {
  EXPECT(r.flag == LCI_OK, "%s target flag %d", op, r.flag);
  EXPECT(r.rank == g_left, "%s target rank %d, expected %d", op, r.rank, g_left);
  EXPECT(r.tag == tag, "%s target tag %u, expected %u", op, r.tag, tag);
  EXPECT(r.type == LCI_LONG, "%s target type %d", op, r.type);
  EXPECT(r.data.lbuffer.segment == seg && r.data.lbuffer.address == addr &&
             r.data.lbuffer.length == len,
         "%s target data {%p, %p, %zu}, expected {%p, %p, %zu}", op,
         (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length,
         (void*)seg, addr, len);
  EXPECT(r.user_context == nullptr, "%s target user_context %p", op, r.user_context);
}

void part2_serialize(mem_kind kind) {
  phase("serialize/deserialize (%s)", mem_name(kind));
  const size_t len = 256 * 1024;
  lbuf region(kind, len);
  char str[256];
  memset(str, 0, sizeof(str));
  OK(LCI_segment_serialize(region.segment(), str));
  const size_t slen = strnlen(str, sizeof(str));
  EXPECT(slen < sizeof(str), "the serialized segment is not NUL-terminated within 256 bytes");
  bool printable = true;
  for (size_t i = 0; i < slen; ++i) printable &= isprint(static_cast<unsigned char>(str[i])) != 0;
  EXPECT(printable && slen > 0, "the serialized segment is empty or not printable: \"%.*s\"",
         static_cast<int>(slen), str);
  // The string, alone, as one medium message (<= 256 bytes), then the address.
  auto strings = allgather(str, sizeof(str));
  auto addrs = allgather_u64(reinterpret_cast<uintptr_t>(region.data()));
  char theirs[256], copy[256];
  memcpy(theirs, strings[static_cast<size_t>(g_right)].data(), sizeof(theirs));
  memcpy(copy, theirs, sizeof(copy));
  LCI_segment_t rseg = nullptr;
  OK(LCI_segment_deserialize(theirs, &rseg));
  EXPECT(memcmp(theirs, copy, sizeof(copy)) == 0, "LCI_segment_deserialize modified its input");
  const uintptr_t raddr = addrs[static_cast<size_t>(g_right)];

  // putl into the right's region at an offset, remote completion to LCI_UR_CQ.
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  comp lc(LCI_COMPLETION_QUEUE);
  const size_t off = 100, plen = 100000;
  LCI_barrier();
  lbuf src(mem_kind::seg_all, plen);
  fill(src.data(), plen, seed_of(static_cast<uint32_t>(g_me), 5));
  const LCI_tag_t ptag = g_tag++;
  LCI_lbuffer_t rb{rseg, reinterpret_cast<void*>(raddr + off), len - off};
  RETRY(LCI_putl(LCI_UR_ENDPOINT, src.view(plen), lc.handle(), g_right, ptag, rb,
                 LCI_DEFAULT_COMP_REMOTE, &src));
  LCI_request_t o = lc.take1("putl local completion");
  EXPECT(o.flag == LCI_OK && o.rank == g_right && o.tag == ptag && o.type == LCI_LONG &&
             same_lbuffer(o.data.lbuffer, src.view(plen)) && o.user_context == &src,
         "putl origin request {%d, %d, %u, %d}", o.flag, o.rank, o.tag, o.type);
  check_target(ur->take1("putl target completion"), ptag, region.segment(), region.data() + off,
               plen, "putl");
  size_t bad = mismatch(region.data() + off, plen, seed_of(static_cast<uint32_t>(g_left), 5));
  EXPECT(bad == SIZE_MAX, "putl data differs at %zu", bad);
  EXPECT(not_byte(region.data(), 0, off, k_sentinel) == SIZE_MAX &&
             not_byte(region.data(), off + plen, len, k_sentinel) == SIZE_MAX,
         "putl wrote outside [offset, offset+length)");

  // getl from the right's region, which its owner filled.
  const size_t goff = 128 * 1024 + 7, glen = 60000;
  fill(region.data() + goff, glen, seed_of(static_cast<uint32_t>(g_me), 6));
  LCI_barrier();
  lbuf dst(mem_kind::registered, glen);
  LCI_lbuffer_t lb = dst.view();
  const LCI_tag_t gtag = g_tag++;
  LCI_lbuffer_t grb{rseg, reinterpret_cast<void*>(raddr + goff), glen};
  RETRY(LCI_getl(LCI_UR_ENDPOINT, &lb, glen, lc.handle(), g_right, gtag, grb,
                 LCI_DEFAULT_COMP_REMOTE, &dst));
  o = lc.take1("getl local completion");
  EXPECT(o.flag == LCI_OK && o.rank == g_right && o.tag == gtag && o.type == LCI_LONG &&
             same_lbuffer(o.data.lbuffer, dst.view(glen)) && o.user_context == &dst,
         "getl origin request {%d, %d, %u, %d, {%p, %p, %zu}}", o.flag, o.rank, o.tag, o.type,
         (void*)o.data.lbuffer.segment, o.data.lbuffer.address, o.data.lbuffer.length);
  bad = mismatch(dst.data(), glen, seed_of(static_cast<uint32_t>(g_right), 6));
  EXPECT(bad == SIZE_MAX, "getl data differs at %zu", bad);
  check_target(ur->take1("getl target completion"), gtag, region.segment(), region.data() + goff,
               glen, "getl");
  LCI_barrier();
  EXPECT(LCI_memory_deregister(&rseg) == LCI_OK && rseg == nullptr,
         "deregistering a deserialized handle");
  EXPECT(ur->pending() == 0, "LCI_UR_CQ holds extra entries");
  LCI_barrier();
}

void part2_garbage() {
  phase("unparsable serialized segments");
  char empty[1] = "";
  char words[] = "this is not a segment";
  char xs[256];
  memset(xs, 'x', sizeof(xs) - 1);
  xs[255] = 0;
  char* inputs[] = {empty, words, xs};
  for (char* in : inputs) {
    LCI_segment_t seg = nullptr;
    std::string before(in);
    EXPECT(LCI_segment_deserialize(in, &seg) == LCI_ERR_FATAL,
           "LCI_segment_deserialize(\"%.20s...\") did not return LCI_ERR_FATAL", in);
    EXPECT(before == in, "LCI_segment_deserialize modified unparsable input");
  }
}

}  // namespace

int main() {
  harness_init(240);
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  part1_reuse();
  part2_serialize(mem_kind::registered);
  part2_serialize(mem_kind::lalloc);
  part2_garbage();
  return harness_finish("memory_reuse");
}

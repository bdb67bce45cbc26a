// One-sided long operations around a ring (rank r targets r+1; one rank
// targets itself): LCI_putla (the target gets an LCI long buffer), LCI_putl
// into and LCI_getl from the target's registered memory, addressed through
// LCI_segment_serialize/deserialize. Sizes 0, 1, page-1, page,
// LCI_MEDIUM_SIZE+1, 1 MiB (64 MiB with --big, queue endpoint only); local
// buffers from LCI_memory_register, LCI_lbuffer_alloc and LCI_SEGMENT_ALL;
// remote memory from LCI_memory_register and LCI_lbuffer_alloc at varying
// offsets. Origin completions on the command port; target completions to the
// default object (LCI_UR_CQ for LCI_UR_ENDPOINT, the property list's default
// otherwise) or to an explicit handle the target sent first; queue,
// synchronizer and handler endpoints. Every byte (and the bytes around the
// written range) and every request field of both sides is checked.
//
// usage: one_sided_long [--big]
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
size_t g_page = 4096;

enum class op { putla, putl, getl };
const char* op_name(op o) { return o == op::putla ? "putla" : o == op::putl ? "putl" : "getl"; }

// This rank's target memory (two kinds) and everyone's, deserialized.
struct target_region {
  std::unique_ptr<lbuf> mem;
  std::vector<remote_region> of;
};
target_region g_regions[2];

void one_round(endpoint_under_test& e, op o, size_t size, bool explicit_comp, int round) {
  const mem_kind local_kinds[] = {mem_kind::registered, mem_kind::lalloc, mem_kind::seg_all};
  const mem_kind lk = local_kinds[round % 3];
  target_region& tr = g_regions[round % 2];
  const size_t off = o == op::putla ? 0 : static_cast<size_t>(round * 24) % (g_page + 8);
  phase("%s, %s endpoint, %zu bytes, %s target completion, local %s, remote %s + %zu",
        op_name(o), e.name, size, explicit_comp ? "explicit" : "default", mem_name(lk),
        mem_name(tr.mem->kind()), off);
  const LCI_tag_t tag = static_cast<LCI_tag_t>(round % 60000);
  const uintptr_t remote = explicit_comp ? e.expl_of[static_cast<size_t>(g_right)]
                                         : static_cast<uintptr_t>(LCI_DEFAULT_COMP_REMOTE);
  const uint32_t seed = seed_of(static_cast<uint32_t>(g_me), static_cast<uint32_t>(round));
  const uint32_t lseed = seed_of(static_cast<uint32_t>(g_left), static_cast<uint32_t>(round));
  uint8_t* mine = tr.mem->data();
  const size_t cap = tr.mem->capacity();

  // The owner prepares its memory: sentinels, and data to be read for getl.
  if (o == op::getl) fill(mine + off, size, seed);
  LCI_barrier();

  // Origin.
  comp lc(e.type);
  lbuf local(lk, o == op::getl ? size + 64 : size);
  const remote_region& rr = tr.of[static_cast<size_t>(g_right)];
  LCI_lbuffer_t passed = local.view(size);
  if (o != op::getl) fill(local.data(), size, seed);
  if (o == op::putla) {
    RETRY(LCI_putla(e.ep, passed, lc.handle(), g_right, tag, remote, &local));
  } else if (o == op::putl) {
    RETRY(LCI_putl(e.ep, passed, lc.handle(), g_right, tag, remote_lbuffer(rr, off, rr.len - off),
                   remote, &local));
  } else {
    LCI_lbuffer_t lb = local.view();
    RETRY(LCI_getl(e.ep, &lb, size, lc.handle(), g_right, tag,
                   remote_lbuffer(rr, off, rr.len - off), remote, &local));
    // *local_buffer is read during the call only.
    lb.address = nullptr;
    lb.length = 0;
  }

  // Target.
  comp& tc = explicit_comp ? *e.expl : *e.dflt;
  const LCI_request_t r = tc.take1("the target completion");
  EXPECT(r.flag == LCI_OK, "target flag %d", r.flag);
  EXPECT(r.rank == g_left, "target rank %d, expected %d", r.rank, g_left);
  EXPECT(r.tag == tag, "target tag %u, expected %u", r.tag, tag);
  EXPECT(r.type == LCI_LONG, "target type %d", r.type);
  EXPECT(r.user_context == nullptr, "target user_context %p", r.user_context);
  const LCI_lbuffer_t& got = r.data.lbuffer;
  if (o == op::putla) {
    EXPECT(got.length == size, "putla target length %zu, sent %zu", got.length, size);
    EXPECT(size == 0 || got.address != nullptr, "putla delivered no buffer");
    if (got.address && got.length == size) {
      const size_t bad = mismatch(got.address, size, lseed);
      EXPECT(bad == SIZE_MAX, "putla data differs at %zu of %zu", bad, size);
    }
    EXPECT(LCI_lbuffer_free(got) == LCI_OK, "lbuffer_free of the putla buffer");
  } else {
    EXPECT(got.segment == tr.mem->segment() && got.address == mine + off && got.length == size,
           "target data {%p, %p, %zu}, expected {%p, %p, %zu}", (void*)got.segment, got.address,
           got.length, (void*)tr.mem->segment(), (void*)(mine + off), size);
    if (o == op::putl) {
      const size_t bad = mismatch(mine + off, size, lseed);
      EXPECT(bad == SIZE_MAX, "putl data differs at %zu of %zu", bad, size);
      EXPECT(not_byte(mine, 0, off, k_sentinel) == SIZE_MAX &&
                 not_byte(mine, off + size, std::min(cap, off + size + 4096), k_sentinel) == SIZE_MAX,
             "putl wrote outside [address, address+length)");
    }
  }

  // Origin completion.
  const LCI_request_t l = lc.take1("the origin completion");
  EXPECT(l.flag == LCI_OK, "origin flag %d", l.flag);
  EXPECT(l.rank == g_right, "origin rank %d, expected %d", l.rank, g_right);
  EXPECT(l.tag == tag, "origin tag %u, expected %u", l.tag, tag);
  EXPECT(l.type == LCI_LONG, "origin type %d", l.type);
  EXPECT(l.user_context == &local, "origin user_context %p", l.user_context);
  EXPECT(same_lbuffer(l.data.lbuffer, passed), "origin data {%p, %p, %zu}, expected {%p, %p, %zu}",
         (void*)l.data.lbuffer.segment, l.data.lbuffer.address, l.data.lbuffer.length,
         (void*)passed.segment, passed.address, passed.length);
  if (o == op::getl) {
    const size_t bad =
        mismatch(local.data(), size, seed_of(static_cast<uint32_t>(g_right), static_cast<uint32_t>(round)));
    EXPECT(bad == SIZE_MAX, "getl data differs at %zu of %zu", bad, size);
    EXPECT(not_byte(local.data(), size, size + 64, k_sentinel) == SIZE_MAX,
           "getl wrote past `length` in the local buffer");
  }
  EXPECT(lc.pending() == 0 && tc.pending() == 0, "extra completions");
  LCI_barrier();
  memset(mine + off, k_sentinel, std::min(size, cap - off));
}

// Everything LCI-owned lives inside run(), released before LCI_finalize.
void run(bool big) {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t max_size = big ? size_t(64) << 20 : size_t(1) << 20;
  const mem_kind region_kinds[] = {mem_kind::registered, mem_kind::lalloc};
  for (int i = 0; i < 2; ++i) {
    g_regions[i].mem.reset(new lbuf(region_kinds[i], max_size + 2 * g_page + 64));
    g_regions[i].of = exchange_regions(g_regions[i].mem->segment(), g_regions[i].mem->data(),
                                       g_regions[i].mem->capacity());
  }

  std::vector<endpoint_under_test> eps = endpoints_under_test();
  for (auto& e : eps) e.expl_of = allgather_u64(e.expl->remote());

  const size_t sizes[] = {0, 1, g_page - 1, g_page, m + 1, size_t(1) << 20};
  int round = 0;
  for (auto& e : eps)
    for (op o : {op::putla, op::putl, op::getl})
      for (bool expl : {false, true})
        for (size_t s : sizes) {
          one_round(e, o, s, expl, round++);
          if (g_failures.load() > 40) return;
        }
  if (big)
    for (op o : {op::putla, op::putl, op::getl}) one_round(eps[1], o, max_size, false, round++);
  for (size_t i = 1; i < eps.size(); ++i) LCI_endpoint_free(&eps[i].ep);
  for (auto& r : g_regions) release_regions(r.of);
  LCI_barrier();
  for (auto& r : g_regions) r.mem.reset();

}

}  // namespace

int main(int argc, char** argv) {
  bool big = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--big")) {
      big = true;
    } else {
      fprintf(stderr, "usage: one_sided_long [--big]\n");
      return 2;
    }
  }
  harness_init(240);
  run(big);
  return harness_finish("one_sided_long");
}

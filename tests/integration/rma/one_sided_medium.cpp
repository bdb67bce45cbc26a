// One-sided short and medium puts around a ring (rank r puts to r+1; one
// rank puts to itself): LCI_puts, LCI_putma, LCI_putmna, LCI_putmac (origin
// completion), LCI_putm and LCI_putmn (into target memory whose address the
// target published), sizes 0 ... LCI_MEDIUM_SIZE, from program memory and from
// LCI_mbuffer_alloc buffers. Target completions go to the target endpoint's
// default object (LCI_DEFAULT_COMP_REMOTE: LCI_UR_CQ for LCI_UR_ENDPOINT and
// for an endpoint from an unmodified property list, the property list's
// default object otherwise) or to an explicit object whose
// handle the target sent first, for queue, synchronizer and handler message
// ports. Every byte and every request field of both sides is checked; the
// target frees the LCI buffers it is given.
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

enum class op { puts, putma, putmna, putmac, putm, putmn };
const char* op_name(op o) {
  switch (o) {
    case op::puts: return "puts";
    case op::putma: return "putma";
    case op::putmna: return "putmna";
    case op::putmac: return "putmac";
    case op::putm: return "putm";
    default: return "putmn";
  }
}

// One endpoint under test with its completion objects. The k-th endpoints of
// all ranks are created in the same order with the same properties.
// Target memory for putm/putmn, published once.
std::vector<uint8_t> g_tbuf;
std::vector<uint64_t> g_tbuf_of;
constexpr size_t k_putmn_offset = 16;

LCI_mbuffer_t lci_mbuffer() {
  LCI_mbuffer_t b;
  RETRY(LCI_mbuffer_alloc(LCI_UR_DEVICE, &b));
  EXPECT(b.address != nullptr && b.length == static_cast<size_t>(LCI_MEDIUM_SIZE),
         "mbuffer_alloc gave {%p, %zu}", b.address, b.length);
  return b;
}

void one_round(endpoint_under_test& e, op o, size_t size, bool explicit_comp, bool lci_buf,
               int round) {
  phase("%s, %s endpoint, %zu bytes, %s target completion, %s memory", op_name(o), e.name, size,
        explicit_comp ? "explicit" : "default", lci_buf ? "LCI" : "program");
  const LCI_tag_t tag = static_cast<LCI_tag_t>(round % 60000);
  const uintptr_t remote = explicit_comp ? e.expl_of[static_cast<size_t>(g_right)]
                                         : static_cast<uintptr_t>(LCI_DEFAULT_COMP_REMOTE);
  const uint32_t seed = seed_of(static_cast<uint32_t>(g_me), static_cast<uint32_t>(round));
  const uint32_t lseed = seed_of(static_cast<uint32_t>(g_left), static_cast<uint32_t>(round));

  // Origin.
  std::vector<uint8_t> user(size);
  LCI_mbuffer_t buf{size ? user.data() : nullptr, size};
  if (lci_buf) {
    buf = lci_mbuffer();
    buf.length = size;
  }
  fill(buf.address, size, seed);
  const LCI_mbuffer_t passed = buf;
  std::unique_ptr<comp> local;
  const LCI_mbuffer_t rbuf_m{reinterpret_cast<void*>(g_tbuf_of[static_cast<size_t>(g_right)]),
                             g_tbuf.size()};
  const LCI_mbuffer_t rbuf_mn{
      reinterpret_cast<void*>(g_tbuf_of[static_cast<size_t>(g_right)] + k_putmn_offset),
      g_tbuf.size() - k_putmn_offset};
  switch (o) {
    case op::puts: {
      LCI_short_t v;
      fill(v.val, LCI_SHORT_SIZE, seed);
      RETRY(LCI_puts(e.ep, v, g_right, tag, remote));
      break;
    }
    case op::putma: RETRY(LCI_putma(e.ep, buf, g_right, tag, remote)); break;
    case op::putmna: RETRY(LCI_putmna(e.ep, buf, g_right, tag, remote)); break;
    case op::putmac:
      local.reset(new comp(e.type));
      RETRY(LCI_putmac(e.ep, buf, g_right, tag, remote, local->handle(), &user));
      break;
    case op::putm: RETRY(LCI_putm(e.ep, buf, g_right, tag, rbuf_m, remote)); break;
    case op::putmn: RETRY(LCI_putmn(e.ep, buf, g_right, tag, rbuf_mn, remote)); break;
  }

  // Target.
  comp& tc = explicit_comp ? *e.expl : *e.dflt;
  const LCI_request_t r = tc.take1("the target completion");
  EXPECT(r.flag == LCI_OK, "target flag %d", r.flag);
  EXPECT(r.rank == g_left, "target rank %d, expected %d", r.rank, g_left);
  EXPECT(r.tag == tag, "target tag %u, expected %u", r.tag, tag);
  EXPECT(r.user_context == nullptr, "target user_context %p", r.user_context);
  if (o == op::puts) {
    EXPECT(r.type == LCI_IMMEDIATE, "target type %d", r.type);
    EXPECT(mismatch(r.data.immediate.val, LCI_SHORT_SIZE, lseed) == SIZE_MAX,
           "short payload differs");
  } else {
    EXPECT(r.type == LCI_MEDIUM, "target type %d", r.type);
    const LCI_mbuffer_t& got = r.data.mbuffer;
    EXPECT(got.length == size, "target length %zu, sent %zu", got.length, size);
    if (o == op::putm || o == op::putmn) {
      uint8_t* where = g_tbuf.data() + (o == op::putmn ? k_putmn_offset : 0);
      EXPECT(got.address == where, "target address %p, expected %p", got.address, (void*)where);
      EXPECT(mismatch(where, size, lseed) == SIZE_MAX, "putm payload differs");
      EXPECT(not_byte(g_tbuf.data(), 0, static_cast<size_t>(where - g_tbuf.data()), k_sentinel) ==
                     SIZE_MAX &&
                 not_byte(where, size, g_tbuf.size() - static_cast<size_t>(where - g_tbuf.data()),
                          k_sentinel) == SIZE_MAX,
             "putm wrote outside [address, address+length)");
    } else {
      EXPECT(got.address != nullptr, "no LCI buffer delivered");
      if (got.address && got.length == size)
        EXPECT(mismatch(got.address, size, lseed) == SIZE_MAX, "payload differs");
      if (got.address) EXPECT(LCI_mbuffer_free(got) == LCI_OK, "mbuffer_free at the target");
    }
  }

  // Origin completion (putmac): the buffer as passed, then ours again.
  if (local) {
    const LCI_request_t l = local->take1("the putmac origin completion");
    EXPECT(l.flag == LCI_OK && l.rank == g_right && l.tag == tag && l.type == LCI_MEDIUM &&
               l.data.mbuffer.address == passed.address && l.data.mbuffer.length == passed.length &&
               l.user_context == &user,
           "putmac origin request {%d, %d, %u, %d, {%p, %zu}, %p}", l.flag, l.rank, l.tag, l.type,
           l.data.mbuffer.address, l.data.mbuffer.length, l.user_context);
    EXPECT(local->pending() == 0, "extra origin completions");
    if (lci_buf) EXPECT(LCI_mbuffer_free(buf) == LCI_OK, "mbuffer_free after putmac");
  }
  EXPECT(tc.pending() == 0, "extra target completions");
  LCI_barrier();
  std::fill(g_tbuf.begin(), g_tbuf.end(), k_sentinel);
  LCI_barrier();
}

// Everything LCI-owned lives inside run(), released before LCI_finalize.
void run() {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  g_tbuf.assign(m + 64, k_sentinel);
  registration tbuf_registered(g_tbuf.data(), g_tbuf.size());  // LCI_putm/putmn target
  g_tbuf_of = allgather_u64(reinterpret_cast<uintptr_t>(g_tbuf.data()));

  std::vector<endpoint_under_test> eps = endpoints_under_test();
  // An endpoint from an unmodified property list: its default is LCI_UR_CQ.
  eps.emplace_back("unmodified-plist", LCI_COMPLETION_QUEUE);
  {
    endpoint_under_test& e = eps.back();
    e.dflt = comp::borrow_queue(LCI_UR_CQ);
    e.expl.reset(new comp(LCI_COMPLETION_QUEUE));
    LCI_plist_t plist;
    OK(LCI_plist_create(&plist));
    OK(LCI_endpoint_init(&e.ep, LCI_UR_DEVICE, plist));
    LCI_plist_free(&plist);
  }
  for (auto& e : eps) e.expl_of = allgather_u64(e.expl->remote());

  const size_t sizes[] = {0, 1, g_page - 1, g_page, m - 1, m};
  int round = 0;
  for (auto& e : eps)
    for (op o : {op::puts, op::putma, op::putmna, op::putmac, op::putm, op::putmn})
      for (bool expl : {false, true})
        for (size_t si = 0; si < (o == op::puts ? 1 : sizeof(sizes) / sizeof(sizes[0])); ++si) {
          // putmna and putmn from LCI buffers, putma and putm from program memory,
          // each with the other kind every other size; putmac both.
          bool lci_buf = o == op::putmna || o == op::putmn;
          if (si % 2) lci_buf = !lci_buf;
          if (o == op::puts) lci_buf = false;
          one_round(e, o, sizes[si], expl, lci_buf, round++);
          if (g_failures.load() > 40) return;
        }
  for (size_t i = 1; i < eps.size(); ++i) LCI_endpoint_free(&eps[i].ep);

}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("one_sided_medium");
}

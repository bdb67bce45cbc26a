// I/O vectors around a ring (rank r targets r+1; one rank targets itself):
// LCI_sendv/LCI_recvv with the receiver's long buffers and with
// lbuffers == NULL (LCI allocates: a C-malloc'ed piggy-back copy and array,
// LCI long buffers as elements), LCI_putva (the target gets the same),
// LCI_putv into and LCI_getv from the target's registered memory (remote
// handles from LCI_segment_deserialize) and piggy-back memory. Counts 1, 2
// and min(LCI_IOVEC_SIZE, 8); element lengths 1 ... 1 MiB; piggy-back lengths
// 0, 1 and LCI_get_iovec_piggy_back_size(count); local buffers all registered
// or all LCI_SEGMENT_ALL; queue, synchronizer and handler endpoints; target
// completions to the default object or an explicit handle. Also checks
// LCI_get_iovec_piggy_back_size. Every byte and every request field of both
// sides is checked; piggy-back memory is overwritten right after each call.
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
size_t g_stride = 0;  // bytes per element in the target region

enum class op { sendv, sendv_alloc, putva, putv, getv };
const char* op_name(op o) {
  switch (o) {
    case op::sendv: return "sendv/recvv";
    case op::sendv_alloc: return "sendv/recvv(NULL lbuffers)";
    case op::putva: return "putva";
    case op::putv: return "putv";
    default: return "getv";
  }
}

std::unique_ptr<lbuf> g_region;         // putv/getv target long buffers
std::vector<remote_region> g_region_of;
std::vector<uint8_t> g_pb;              // putv/getv target piggy-back memory
std::vector<uint64_t> g_pb_of;

size_t element_size(int round, int i) {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t sizes[] = {1, g_page - 1, g_page, m + 1, size_t(1) << 20};
  return sizes[static_cast<size_t>(round + i) % 5];
}
uint32_t elem_seed(int rank, int round, int i) {
  return seed_of(static_cast<uint32_t>(rank), static_cast<uint32_t>(round),
                 static_cast<uint32_t>(i + 1));
}
uint32_t pb_seed(int rank, int round) {
  return seed_of(static_cast<uint32_t>(rank), static_cast<uint32_t>(round), 999);
}

// Local long buffers of one iovec, all registered or all LCI_SEGMENT_ALL.
struct local_iovec {
  std::vector<std::unique_ptr<lbuf>> bufs;
  std::vector<LCI_lbuffer_t> arr, passed;
  std::vector<uint8_t> pb;
  LCI_iovec_t iov{};
  local_iovec(int count, bool registered, const std::vector<size_t>& caps, size_t pbcap) {
    const mem_kind reg[] = {mem_kind::registered, mem_kind::lalloc, mem_kind::lmemalign};
    for (int i = 0; i < count; ++i) {
      bufs.emplace_back(new lbuf(registered ? reg[i % 3] : mem_kind::seg_all, caps[static_cast<size_t>(i)]));
      arr.push_back(bufs.back()->view());
    }
    pb.assign(pbcap + 16, k_sentinel);
    iov.piggy_back.address = pb.data();
    iov.piggy_back.length = pbcap;
    iov.lbuffers = arr.data();
    iov.count = count;
    passed = arr;
  }
};

// Checks that an iovec request carries exactly `iov` with the array as it was.
void check_as_passed(const LCI_iovec_t& got, const local_iovec& l, const char* side) {
  EXPECT(got.piggy_back.address == l.iov.piggy_back.address &&
             got.piggy_back.length == l.iov.piggy_back.length && got.lbuffers == l.iov.lbuffers &&
             got.count == l.iov.count,
         "%s iovec {{%p, %zu}, %p, %d}, passed {{%p, %zu}, %p, %d}", side,
         got.piggy_back.address, got.piggy_back.length, (void*)got.lbuffers, got.count,
         l.iov.piggy_back.address, l.iov.piggy_back.length, (void*)l.iov.lbuffers, l.iov.count);
  bool same = true;
  for (size_t i = 0; i < l.arr.size(); ++i) same &= same_lbuffer(l.arr[i], l.passed[i]);
  EXPECT(same, "%s: LCI changed the caller's lbuffers array", side);
}

void check_request_head(const LCI_request_t& r, int rank, LCI_tag_t tag, void* uc,
                        const char* side) {
  EXPECT(r.flag == LCI_OK, "%s flag %d", side, r.flag);
  EXPECT(r.rank == rank, "%s rank %d, expected %d", side, r.rank, rank);
  EXPECT(r.tag == tag, "%s tag %u, expected %u", side, r.tag, tag);
  EXPECT(r.type == LCI_IOVEC, "%s type %d", side, r.type);
  EXPECT(r.user_context == uc, "%s user_context %p, expected %p", side, r.user_context, uc);
}

// An iovec LCI built (putva target, recvv with NULL lbuffers): check and free.
void check_allocated(const LCI_iovec_t& v, int count, size_t pblen, int from, int round) {
  EXPECT(v.count == count, "count %d, sent %d", v.count, count);
  EXPECT(v.piggy_back.length == pblen, "piggy-back length %zu, sent %zu", v.piggy_back.length,
         pblen);
  if (pblen) EXPECT(v.piggy_back.address != nullptr, "no piggy-back copy");
  if (v.piggy_back.address && v.piggy_back.length == pblen)
    EXPECT(mismatch(v.piggy_back.address, pblen, pb_seed(from, round)) == SIZE_MAX,
           "piggy-back bytes differ");
  EXPECT(v.lbuffers != nullptr, "no lbuffers array");
  if (v.lbuffers && v.count == count) {
    for (int i = 0; i < count; ++i) {
      const LCI_lbuffer_t& b = v.lbuffers[i];
      const size_t size = element_size(round, i);
      EXPECT(b.length == size && b.address != nullptr, "element %d {%p, %zu}, sent %zu bytes", i,
             b.address, b.length, size);
      if (b.address && b.length == size)
        EXPECT(mismatch(b.address, size, elem_seed(from, round, i)) == SIZE_MAX,
               "element %d bytes differ", i);
      EXPECT(LCI_lbuffer_free(b) == LCI_OK, "lbuffer_free of element %d", i);
    }
  }
  free(v.piggy_back.address);
  free(v.lbuffers);
}

void one_round(endpoint_under_test& e, op o, int count, bool explicit_comp, bool late, int round) {
  const bool registered = (round + round / 8) % 2 == 0;
  const size_t pbmax = LCI_get_iovec_piggy_back_size(count);
  const size_t pbl_choices[] = {0, 1, pbmax};
  const size_t pblen = pbl_choices[(round / 2) % 3];
  phase("%s, %s endpoint, count %d, piggy-back %zu, %s local buffers%s%s", op_name(o), e.name,
        count, pblen, registered ? "registered" : "SEGMENT_ALL",
        o == op::sendv || o == op::sendv_alloc ? "" : explicit_comp ? ", explicit" : ", default",
        late ? ", receive after arrival" : "");
  const LCI_tag_t tag = static_cast<LCI_tag_t>(round % 60000);
  const uintptr_t remote = explicit_comp ? e.expl_of[static_cast<size_t>(g_right)]
                                         : static_cast<uintptr_t>(LCI_DEFAULT_COMP_REMOTE);
  std::vector<size_t> sizes;
  for (int i = 0; i < count; ++i) sizes.push_back(element_size(round, i));

  // getv: the owner prepares the memory to be read.
  if (o == op::getv) {
    for (int i = 0; i < count; ++i)
      fill(g_region->data() + static_cast<size_t>(i) * g_stride, sizes[static_cast<size_t>(i)],
           elem_seed(g_me, round, i));
    fill(g_pb.data(), pblen, pb_seed(g_me, round));
  }

  // The receive side of sendv.
  comp rc(e.type);
  std::unique_ptr<local_iovec> rv;
  auto post = [&] {
    if (o == op::sendv) {
      std::vector<size_t> caps;
      for (size_t s : sizes) caps.push_back(s + 32);
      rv.reset(new local_iovec(count, !registered, caps, pbmax));
      OK(LCI_recvv(e.ep, rv->iov, g_left, tag, rc.handle(), rv.get()));
    } else if (o == op::sendv_alloc) {
      LCI_iovec_t none{};
      OK(LCI_recvv(e.ep, none, g_left, tag, rc.handle(), &rc));
    }
  };
  if (!late) post();
  LCI_barrier();

  // Origin.
  comp lc(e.type);
  std::vector<size_t> local_caps = sizes;
  if (o == op::getv) local_caps[0] += 64;  // local may be longer than remote
  local_iovec lv(count, registered, local_caps, pblen);
  lv.iov.piggy_back.length = pblen;
  if (o != op::getv) {
    for (int i = 0; i < count; ++i)
      fill(lv.bufs[static_cast<size_t>(i)]->data(), sizes[static_cast<size_t>(i)], elem_seed(g_me, round, i));
    fill(lv.pb.data(), pblen, pb_seed(g_me, round));
    for (int i = 0; i < count; ++i) lv.arr[static_cast<size_t>(i)].length = sizes[static_cast<size_t>(i)];
    lv.passed = lv.arr;
  }
  std::vector<LCI_lbuffer_t> rarr;
  LCI_iovec_t riov{};
  if (o == op::putv || o == op::getv) {
    const remote_region& rr = g_region_of[static_cast<size_t>(g_right)];
    for (int i = 0; i < count; ++i)
      rarr.push_back(remote_lbuffer(rr, static_cast<size_t>(i) * g_stride,
                                    o == op::putv ? g_stride : sizes[static_cast<size_t>(i)]));
    riov.piggy_back.address = reinterpret_cast<void*>(g_pb_of[static_cast<size_t>(g_right)]);
    riov.piggy_back.length = o == op::putv ? g_pb.size() : pblen;
    riov.lbuffers = rarr.data();
    riov.count = count;
  }
  switch (o) {
    case op::sendv:
    case op::sendv_alloc:
      RETRY(LCI_sendv(e.ep, lv.iov, g_right, tag, lc.handle(), &lv));
      break;
    case op::putva: RETRY(LCI_putva(e.ep, lv.iov, lc.handle(), g_right, tag, remote, &lv)); break;
    case op::putv: RETRY(LCI_putv(e.ep, lv.iov, lc.handle(), g_right, tag, riov, remote, &lv)); break;
    case op::getv: RETRY(LCI_getv(e.ep, lv.iov, lc.handle(), g_right, tag, riov, remote, &lv)); break;
  }
  // Piggy-back memory is the caller's again at return (sends and puts).
  if (o != op::getv) memset(lv.pb.data(), 0x11, lv.pb.size());
  if (late) {
    deadline d(0.005);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    post();
  }

  // Target / receiver.
  if (o == op::sendv || o == op::sendv_alloc) {
    const LCI_request_t r = rc.take1("the recvv completion");
    check_request_head(r, g_left, tag, o == op::sendv ? static_cast<void*>(rv.get()) : &rc, "recvv");
    const LCI_iovec_t& v = r.data.iovec;
    if (o == op::sendv_alloc) {
      check_allocated(v, count, pblen, g_left, round);
    } else {
      EXPECT(v.piggy_back.address == rv->pb.data() && v.piggy_back.length == pblen,
             "recvv piggy-back {%p, %zu}, expected {%p, %zu}", v.piggy_back.address,
             v.piggy_back.length, (void*)rv->pb.data(), pblen);
      EXPECT(v.lbuffers == rv->arr.data() && v.count == count, "recvv array %p/%d, posted %p/%d",
             (void*)v.lbuffers, v.count, (void*)rv->arr.data(), count);
      EXPECT(mismatch(rv->pb.data(), pblen, pb_seed(g_left, round)) == SIZE_MAX,
             "recvv piggy-back bytes differ");
      EXPECT(not_byte(rv->pb.data(), pblen, rv->pb.size(), k_sentinel) == SIZE_MAX,
             "recvv wrote past the piggy-back length");
      for (int i = 0; i < count; ++i) {
        const size_t k = static_cast<size_t>(i);
        EXPECT(rv->arr[k].length == sizes[k], "recvv element %d length %zu, sent %zu", i,
               rv->arr[k].length, sizes[k]);
        EXPECT(rv->arr[k].segment == rv->passed[k].segment &&
                   rv->arr[k].address == rv->passed[k].address,
               "recvv element %d buffer changed", i);
        EXPECT(mismatch(rv->bufs[k]->data(), sizes[k], elem_seed(g_left, round, i)) == SIZE_MAX,
               "recvv element %d bytes differ", i);
        EXPECT(not_byte(rv->bufs[k]->data(), sizes[k], sizes[k] + 32, k_sentinel) == SIZE_MAX,
               "recvv wrote past element %d", i);
      }
    }
  } else {
    comp& tc = explicit_comp ? *e.expl : *e.dflt;
    const LCI_request_t r = tc.take1("the target completion");
    check_request_head(r, g_left, tag, nullptr, "target");
    const LCI_iovec_t& v = r.data.iovec;
    if (o == op::putva) {
      check_allocated(v, count, pblen, g_left, round);
    } else {
      EXPECT(v.count == count, "target count %d", v.count);
      EXPECT(v.piggy_back.address == g_pb.data(), "target piggy-back address %p, expected %p",
             v.piggy_back.address, (void*)g_pb.data());
      EXPECT(v.piggy_back.length == pblen, "target piggy-back length %zu, expected %zu",
             v.piggy_back.length, pblen);
      if (o == op::putv) {
        EXPECT(mismatch(g_pb.data(), pblen, pb_seed(g_left, round)) == SIZE_MAX,
               "putv piggy-back bytes differ");
        EXPECT(not_byte(g_pb.data(), pblen, g_pb.size(), k_sentinel) == SIZE_MAX,
               "putv wrote past the piggy-back length");
      }
      EXPECT(v.lbuffers != nullptr, "target array missing");
      if (v.lbuffers && v.count == count) {
        for (int i = 0; i < count; ++i) {
          const size_t k = static_cast<size_t>(i);
          uint8_t* where = g_region->data() + k * g_stride;
          const LCI_lbuffer_t& b = v.lbuffers[i];
          EXPECT(b.segment == g_region->segment() && b.address == where && b.length == sizes[k],
                 "target element %d {%p, %p, %zu}, expected {%p, %p, %zu}", i, (void*)b.segment,
                 b.address, b.length, (void*)g_region->segment(), (void*)where, sizes[k]);
          if (o == op::putv) {
            EXPECT(mismatch(where, sizes[k], elem_seed(g_left, round, i)) == SIZE_MAX,
                   "putv element %d bytes differ", i);
            EXPECT(not_byte(where, sizes[k], g_stride, k_sentinel) == SIZE_MAX,
                   "putv wrote past element %d", i);
          }
        }
      }
      free(v.lbuffers);
    }
  }

  // Origin completion.
  const LCI_request_t l = lc.take1("the origin completion");
  check_request_head(l, g_right, tag, &lv, "origin");
  check_as_passed(l.data.iovec, lv, "origin");
  if (o == op::getv) {
    for (int i = 0; i < count; ++i) {
      const size_t k = static_cast<size_t>(i);
      EXPECT(mismatch(lv.bufs[k]->data(), sizes[k], elem_seed(g_right, round, i)) == SIZE_MAX,
             "getv element %d bytes differ", i);
      EXPECT(not_byte(lv.bufs[k]->data(), sizes[k], local_caps[k], k_sentinel) == SIZE_MAX,
             "getv wrote past element %d", i);
    }
    EXPECT(mismatch(lv.pb.data(), pblen, pb_seed(g_right, round)) == SIZE_MAX,
           "getv piggy-back bytes differ");
    EXPECT(not_byte(lv.pb.data(), pblen, lv.pb.size(), k_sentinel) == SIZE_MAX,
           "getv wrote past the piggy-back length");
  }
  EXPECT(lc.pending() == 0 && rc.pending() == 0, "extra completions");
  LCI_barrier();
  for (int i = 0; i < count; ++i)
    memset(g_region->data() + static_cast<size_t>(i) * g_stride, k_sentinel, g_stride);
  std::fill(g_pb.begin(), g_pb.end(), k_sentinel);
}

// Everything LCI-owned lives inside run(), released before LCI_finalize.
void run() {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  phase("LCI_get_iovec_piggy_back_size");
  EXPECT(LCI_IOVEC_SIZE >= 1, "LCI_IOVEC_SIZE %d", LCI_IOVEC_SIZE);
  std::vector<uint64_t> pbs;
  for (int c = 1; c <= LCI_IOVEC_SIZE; ++c) {
    const size_t s = LCI_get_iovec_piggy_back_size(c);
    EXPECT(s >= 1, "LCI_get_iovec_piggy_back_size(%d) = %zu", c, s);
    EXPECT(s <= static_cast<size_t>(LCI_MEDIUM_SIZE), "LCI_get_iovec_piggy_back_size(%d) = %zu", c, s);
    if (!pbs.empty()) EXPECT(s <= pbs.back(), "LCI_get_iovec_piggy_back_size grows at %d", c);
    pbs.push_back(s);
  }
  uint64_t sum = LCI_IOVEC_SIZE;
  for (uint64_t s : pbs) sum = sum * 1000003u + s;
  for (uint64_t other : allgather_u64(sum))
    EXPECT(other == sum, "LCI_IOVEC_SIZE or piggy-back sizes differ between ranks");

  const int cmax = std::min(LCI_IOVEC_SIZE, 8);
  g_stride = (size_t(1) << 20) + g_page;
  g_region.reset(new lbuf(mem_kind::lalloc, static_cast<size_t>(cmax) * g_stride));
  g_region_of = exchange_regions(g_region->segment(), g_region->data(), g_region->capacity());
  g_pb.assign(LCI_get_iovec_piggy_back_size(1) + 64, k_sentinel);
  registration pb_registered(g_pb.data(), g_pb.size());  // putv/getv target piggy-back
  g_pb_of = allgather_u64(reinterpret_cast<uintptr_t>(g_pb.data()));

  std::vector<endpoint_under_test> eps = endpoints_under_test();
  for (auto& e : eps) e.expl_of = allgather_u64(e.expl->remote());

  std::vector<int> counts = {1, 2, cmax};
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  int round = 0;
  for (auto& e : eps)
    for (int count : counts) {
      for (bool late : {false, true}) one_round(e, op::sendv, count, false, late, round++);
      one_round(e, op::sendv_alloc, count, false, count == 2, round);
      ++round;
      for (op o : {op::putva, op::putv, op::getv})
        for (bool expl : {false, true}) one_round(e, o, count, expl, false, round++);
      if (g_failures.load() > 40) return;
    }
  for (size_t i = 1; i < eps.size(); ++i) LCI_endpoint_free(&eps[i].ep);
  release_regions(g_region_of);
  LCI_barrier();
  g_region.reset();

}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("iovec");
}

// The collectives need an endpoint that matches by rank and tag, in every
// build. On an LCI_MATCH_TAG endpoint each LCIX start call (barrier, bcastm,
// bcastl, allreducem, allreducel) must return LCI_ERR_FATAL, leave *coll as
// it was and send nothing (it prints one error line naming the call, which
// the ctest registration looks for). Then the same calls on a
// LCI_MATCH_RANKTAG endpoint still run, with the same tag, and deliver the
// right data: nothing of the refused calls may have reached a peer.
#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_tag = 11;

void sum_u64(void* dest, const void* src, size_t length) {
  for (size_t i = 0; i + 8 <= length; i += 8) {
    uint64_t a, b;
    memcpy(&a, static_cast<char*>(dest) + i, 8);
    memcpy(&b, static_cast<const char*>(src) + i, 8);
    a += b;
    memcpy(static_cast<char*>(dest) + i, &a, 8);
  }
}

LCI_endpoint_t make_endpoint(LCI_match_t match, LCI_comp_t cq) {
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, match));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE));
  OK(LCI_plist_set_default_comp(plist, cq));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));
  return ep;
}

// A handle value no start call produces: a refused call must not touch it.
LCIX_collective_t untouched() { return reinterpret_cast<LCIX_collective_t>(uintptr_t{0x5a5a}); }

void expect_refused(const char* call, LCI_error_t rc, LCIX_collective_t h) {
  EXPECT(rc == LCI_ERR_FATAL, "%s on an LCI_MATCH_TAG endpoint returned %d, not LCI_ERR_FATAL",
         call, static_cast<int>(rc));
  EXPECT(h == untouched(), "%s on an LCI_MATCH_TAG endpoint wrote *coll", call);
}

void check_refusals(LCI_endpoint_t ep, LCI_comp_t cq) {
  phase("LCI_MATCH_TAG endpoint");
  uint64_t value = 1;
  LCI_mbuffer_t m{&value, sizeof(value)};
  LCI_lbuffer_t l{LCI_SEGMENT_ALL, &value, sizeof(value)};
  LCIX_collective_t h = untouched();
  expect_refused("LCIX_barrier", LCIX_barrier(ep, k_tag, cq, nullptr, &h), h);
  h = untouched();
  expect_refused("LCIX_bcastm", LCIX_bcastm(ep, m, 0, k_tag, cq, nullptr, &h), h);
  h = untouched();
  expect_refused("LCIX_bcastl", LCIX_bcastl(ep, l, 0, k_tag, cq, nullptr, &h), h);
  h = untouched();
  expect_refused("LCIX_allreducem", LCIX_allreducem(ep, m, sum_u64, k_tag, cq, nullptr, &h), h);
  h = untouched();
  expect_refused("LCIX_allreducel", LCIX_allreducel(ep, l, sum_u64, k_tag, cq, nullptr, &h), h);
  LCI_request_t r;
  EXPECT(LCI_queue_pop(cq, &r) == LCI_ERR_RETRY, "a refused collective signalled its queue");
}

void drive(LCIX_collective_t h, const char* what) {
  deadline d;
  while (h) {
    LCIX_coll_progress(&h);
    if (h) progress(d, what);
  }
}

LCI_request_t take(LCI_comp_t cq, const char* what) {
  LCI_request_t r;
  deadline d;
  while (LCI_queue_pop(cq, &r) != LCI_OK) progress(d, what);
  EXPECT(r.flag == LCI_OK, "%s completed with flag %d", what, static_cast<int>(r.flag));
  return r;
}

// Each operation once on a rank+tag endpoint, with the tag the refused
// calls used; every rank checks the data.
void check_ranktag(LCI_endpoint_t ep, LCI_comp_t cq) {
  const int n = LCI_NUM_PROCESSES;
  const int root = n - 1;
  LCIX_collective_t h;

  phase("barrier on LCI_MATCH_RANKTAG");
  OK(LCIX_barrier(ep, k_tag, cq, nullptr, &h));
  drive(h, "barrier");
  take(cq, "barrier");

  phase("bcastm on LCI_MATCH_RANKTAG");
  uint64_t b = LCI_RANK == root ? 0xb0a7c0ffeeull : 0;
  OK(LCIX_bcastm(ep, LCI_mbuffer_t{&b, sizeof(b)}, root, k_tag, cq, nullptr, &h));
  drive(h, "bcastm");
  take(cq, "bcastm");
  EXPECT(b == 0xb0a7c0ffeeull, "bcastm delivered %#llx", static_cast<unsigned long long>(b));

  phase("bcastl on LCI_MATCH_RANKTAG");
  std::vector<uint64_t> big(32768, LCI_RANK == root ? 7 : 0);
  OK(LCIX_bcastl(ep, LCI_lbuffer_t{LCI_SEGMENT_ALL, big.data(), big.size() * 8}, root, k_tag, cq,
                 nullptr, &h));
  drive(h, "bcastl");
  take(cq, "bcastl");
  EXPECT(std::count(big.begin(), big.end(), 7u) == static_cast<long>(big.size()),
         "bcastl delivered wrong data");

  phase("allreducem on LCI_MATCH_RANKTAG");
  uint64_t v = static_cast<uint64_t>(LCI_RANK) + 1;
  {
    deadline d;
    while (LCIX_allreducem(ep, LCI_mbuffer_t{&v, sizeof(v)}, sum_u64, k_tag, cq, nullptr, &h) ==
           LCI_ERR_RETRY)
      progress(d, "allreducem start");
  }
  drive(h, "allreducem");
  take(cq, "allreducem");
  const uint64_t want = static_cast<uint64_t>(n) * (n + 1) / 2;
  EXPECT(v == want, "allreducem gave %llu, want %llu", static_cast<unsigned long long>(v),
         static_cast<unsigned long long>(want));

  phase("allreducel on LCI_MATCH_RANKTAG");
  std::vector<uint64_t> vl(32768, static_cast<uint64_t>(LCI_RANK) + 1);
  OK(LCIX_allreducel(ep, LCI_lbuffer_t{LCI_SEGMENT_ALL, vl.data(), vl.size() * 8}, sum_u64, k_tag,
                     cq, nullptr, &h));
  drive(h, "allreducel");
  take(cq, "allreducel");
  EXPECT(std::count(vl.begin(), vl.end(), want) == static_cast<long>(vl.size()),
         "allreducel gave wrong data");
}

}  // namespace

int main() {
  harness_init(120);
  LCI_comp_t cq;
  OK(LCI_queue_create(LCI_UR_DEVICE, &cq));
  LCI_endpoint_t tag_ep = make_endpoint(LCI_MATCH_TAG, cq);
  LCI_endpoint_t ranktag_ep = make_endpoint(LCI_MATCH_RANKTAG, cq);
  check_refusals(tag_ep, cq);
  // Every rank is done refusing before any rank starts a real collective.
  allgather_u64(0);
  check_ranktag(ranktag_ep, cq);
  allgather_u64(0);
  OK(LCI_endpoint_free(&tag_ep));
  OK(LCI_endpoint_free(&ranktag_ep));
  OK(LCI_queue_free(&cq));
  return harness_finish("coll_match_type");
}

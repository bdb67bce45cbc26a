// Both interfaces in one process: LCI_initialize and g_runtime_init in the
// order LCI2_INIT_ORDER names (c_first or cxx_first), traffic on each,
// then LCI_finalize and g_runtime_fina in the order LCI2_FINA_ORDER names;
// the interface still up after the first one ended keeps working.
#include <cstring>

#include "lci.h"
#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

bool c_first(const char* var) {
  const char* v = std::getenv(var);
  return v && std::strcmp(v, "c_first") == 0;
}

// A medium message each way around the ring through the C API.
void c_traffic(LCI_tag_t tag) {
  std::vector<char> sbuf(500), rbuf(500);
  fill(sbuf.data(), sbuf.size(), seed_of(static_cast<uint32_t>(LCI_RANK), tag, 1));
  // LCI_UR_ENDPOINT's message port signals a queue: LCI_UR_CQ.
  LCI_mbuffer_t r{rbuf.data(), rbuf.size()};
  REQUIRE(LCI_recvm(LCI_UR_ENDPOINT, r, (LCI_RANK + LCI_NUM_PROCESSES - 1) % LCI_NUM_PROCESSES,
                    tag, LCI_UR_CQ, nullptr) == LCI_OK);
  LCI_mbuffer_t m{sbuf.data(), sbuf.size()};
  lci_test::deadline d(k_wait_s);
  while (LCI_sendm(LCI_UR_ENDPOINT, m, (LCI_RANK + 1) % LCI_NUM_PROCESSES, tag) == LCI_ERR_RETRY) {
    LCI_progress(LCI_UR_DEVICE);
    if (d.passed()) fatal("LCI_sendm refused for too long");
  }
  LCI_request_t req;
  while (LCI_queue_pop(LCI_UR_CQ, &req) != LCI_OK) {
    LCI_progress(LCI_UR_DEVICE);
    if (d.passed()) fatal("timed out waiting for an LCI_recvm");
  }
  CHECK(req.rank == (LCI_RANK + LCI_NUM_PROCESSES - 1) % LCI_NUM_PROCESSES);
  CHECK(req.tag == tag);
  CHECK(req.data.mbuffer.length == rbuf.size());
  CHECK(mismatch(rbuf.data(), rbuf.size(),
                 seed_of(static_cast<uint32_t>(req.rank), tag, 1)) == SIZE_MAX);
}

// One eager and one rendezvous message each way through lci.hpp.
void cxx_traffic(lci::tag_t tag) {
  for (size_t size : {size_t(300), size_t(200000)}) {
    std::vector<char> sbuf(size), rbuf(size);
    fill(sbuf.data(), size, seed_of(static_cast<uint32_t>(lci::get_rank_me()), static_cast<uint32_t>(tag), 2));
    lci::comp_t cq = lci::alloc_cq();
    const lci::status_t rs = lci::post_recv(prev(), rbuf.data(), size, tag, cq);
    lci::status_t ss;
    while ((ss = lci::post_send(next(), sbuf.data(), size, tag, cq)).is_retry()) lci::progress();
    const size_t n = (rs.is_posted() ? 1 : 0) + (ss.is_posted() ? 1 : 0);
    CHECK(pop_n(cq, n, "lci.hpp traffic").size() == n);
    CHECK(mismatch(rbuf.data(), size, seed_of(static_cast<uint32_t>(prev()), static_cast<uint32_t>(tag), 2)) ==
          SIZE_MAX);
    lci::free_comp(&cq);
  }
}

}  // namespace

TEST_CASE("both interfaces carry traffic side by side") {
  CHECK(lci::get_rank_me() == LCI_RANK);
  CHECK(lci::get_rank_n() == LCI_NUM_PROCESSES);
  for (int round = 0; round < 3; ++round) {
    c_traffic(static_cast<LCI_tag_t>(10 + round));
    cxx_traffic(static_cast<lci::tag_t>(20 + round));
  }
  barrier();
  LCI_barrier();
}

// The second test case: the ends, in the order LCI2_FINA_ORDER names.
TEST_CASE("the interface left after the first one ended keeps working") {
  barrier();
  control_fina();
  if (c_first("LCI2_FINA_ORDER")) {
    CHECK(LCI_finalize() == LCI_OK);
    control_init();
    cxx_traffic(30);
    barrier();
    control_fina();
    lci::g_runtime_fina();
    CHECK(lci::get_g_runtime().is_empty());
  } else {
    lci::g_runtime_fina();
    CHECK(lci::get_g_runtime().is_empty());
    c_traffic(31);
    CHECK(LCI_barrier() == LCI_OK);
    CHECK(LCI_finalize() == LCI_OK);
  }
}

int main(int argc, char** argv) {
  if (c_first("LCI2_INIT_ORDER")) {
    LCI_initialize();
    lci::g_runtime_init();
  } else {
    lci::g_runtime_init();
    LCI_initialize();
  }
  control_init();
  return run_doctest(argc, argv);
}

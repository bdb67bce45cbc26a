// The process and its runtimes through lci.hpp, in the order a program
// meets them: nothing before global_initialize; ranks and the default
// attributes after it (changed ones used by the runtime's pool and device);
// g_runtime_init and its attributes; the refusals (std::runtime_error) of
// empty handles, bad ranks, tags and arguments; a runtime without a default
// device, whose devices the program allocates and frees; the nesting of
// global_initialize/global_finalize with the runtimes.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

// One message each way around the ring on `device`, checked.
void ring_traffic(lci::device_t device, lci::tag_t tag, size_t size) {
  INFO("size ", size);
  std::vector<char> sbuf(size), rbuf(size);
  fill(sbuf.data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
  lci::comp_t cq = lci::alloc_cq();
  const lci::status_t rs = lci::post_recv_x(prev(), rbuf.data(), size, tag, cq).device(device)();
  lci::status_t ss;
  lci_test::deadline d(k_wait_s);
  while ((ss = lci::post_send_x(next(), sbuf.data(), size, tag, cq).device(device)()).is_retry()) {
    lci::progress_x().device(device)();
    if (d.passed()) fatal("ring_traffic: send refused");
  }
  const size_t n = (rs.is_posted() ? 1 : 0) + (ss.is_posted() ? 1 : 0);
  CHECK(pop_n(cq, n, "ring traffic", device).size() == n);
  CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
  lci::free_comp(&cq);
}

}  // namespace

TEST_CASE("before global_initialize nothing runs") {
  CHECK(lci::get_g_runtime().is_empty());
  CHECK_THROWS_AS(lci::get_rank_me(), std::runtime_error);
  CHECK_THROWS_AS(lci::get_rank_n(), std::runtime_error);
  CHECK_THROWS_AS(lci::get_g_default_attr(), std::runtime_error);
  CHECK_THROWS_AS(lci::set_g_default_attr(lci::global_attr_t()), std::runtime_error);
  CHECK_THROWS_AS(lci::progress(), std::runtime_error);
  CHECK_THROWS_AS(lci::get_default_device(), std::runtime_error);
  CHECK_THROWS_AS(lci::g_runtime_fina(), std::runtime_error);
}

TEST_CASE("global_initialize, the default attributes, g_runtime_init, g_runtime_fina") {
  lci::global_initialize();
  const int me = lci::get_rank_me(), n = lci::get_rank_n();
  CHECK(n >= 2);
  CHECK(me >= 0);
  CHECK(me < n);
  CHECK(lci::get_g_runtime().is_empty());

  lci::global_attr_t attr = lci::get_g_default_attr();
  CHECK(attr.npackets == static_cast<size_t>(LCI_PACKET_NUM_DEFAULT));
  CHECK(attr.sync_threshold == 1);
  CHECK_FALSE(attr.zero_copy_am);
  CHECK(attr.alloc_default_device);
  attr.npackets = 512;
  attr.net_max_recvs = 48;
  lci::set_g_default_attr(attr);
  CHECK(lci::get_g_default_attr().npackets == 512);
  CHECK(lci::get_g_default_attr().net_max_recvs == 48);

  lci::runtime_t rt = lci::g_runtime_init();
  CHECK_FALSE(rt.is_empty());
  CHECK(lci::get_g_runtime() == rt);
  CHECK(rt.get_attr_max_tag() == 0xFFFFFFFFu);
  CHECK(lci::get_g_runtime().get_attr_max_tag() == 0xFFFFFFFFu);
  CHECK(rt.get_attr_alloc_default_device());
  CHECK(lci::get_default_packet_pool().get_attr_npackets() == 512);
  lci::device_t dev = lci::get_default_device();
  REQUIRE_FALSE(dev.is_empty());
  CHECK(dev.get_attr_net_max_recvs() == 48);
  CHECK_FALSE(lci::get_default_endpoint().is_empty());
  CHECK(lci::get_allocator() == &lci::g_allocator_default);
  // The pool holds 512 packets: the program can take at most that many.
  std::vector<void*> held;
  for (void* p; held.size() <= 600 && (p = lci::get_upacket()) != nullptr;) held.push_back(p);
  CHECK(held.size() > 0);
  CHECK(held.size() <= 512);
  for (void* p : held) lci::put_upacket(p);
  CHECK_THROWS_AS(lci::g_runtime_init(), std::runtime_error);  // one global runtime

  control_init();
  // Every rank agrees on the number of ranks and has its own rank.
  const auto ranks = allgather(&me, sizeof(me));
  const auto sizes = allgather(&n, sizeof(n));
  for (int r = 0; r < n; ++r) {
    int got_rank, got_n;
    std::memcpy(&got_rank, ranks[static_cast<size_t>(r)].data(), sizeof(int));
    std::memcpy(&got_n, sizes[static_cast<size_t>(r)].data(), sizeof(int));
    CHECK(got_rank == r);
    CHECK(got_n == n);
  }
  ring_traffic(lci::device_t(), 5, 100);
  ring_traffic(lci::device_t(), 6, 100000);
  barrier();
  control_fina();
  lci::g_runtime_fina();
  CHECK(lci::get_g_runtime().is_empty());
  CHECK_THROWS_AS(lci::progress(), std::runtime_error);
  // global_initialize's reference keeps the process set up.
  CHECK(lci::get_rank_me() == me);
  CHECK(lci::get_g_default_attr().npackets == 512);
  attr.npackets = static_cast<size_t>(LCI_PACKET_NUM_DEFAULT);
  attr.net_max_recvs = lci::get_g_default_attr().net_max_recvs;
  lci::set_g_default_attr(attr);
}

TEST_CASE("refusals: empty handles, bad ranks, tags and arguments throw std::runtime_error") {
  lci::g_runtime_init();
  control_init();
  const int n = lci::get_rank_n();
  char buf[16] = {};
  lci::comp_t cq = lci::alloc_cq();
  CHECK_THROWS_AS(lci::post_send(n, buf, 8, 0, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_send(-1, buf, 8, 0, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_send(lci::ANY_SOURCE, buf, 8, 0, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_recv(n + 3, buf, 8, 0, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_send(next(), buf, 8, lci::tag_t{1} << 32, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_send(next(), buf, 8, lci::ANY_TAG, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_recv(prev(), buf, 8, (lci::tag_t{1} << 32) + 70000, cq),
                  std::runtime_error);
  CHECK_THROWS_AS(lci::post_am(n, buf, 8, cq, 1), std::runtime_error);
  CHECK_THROWS_AS(lci::post_am(next(), buf, 8, cq, 0), std::runtime_error);  // no rcomp 0
  CHECK_THROWS_AS(lci::post_send(next(), nullptr, 8, 0, cq), std::runtime_error);
  CHECK_THROWS_AS(lci::post_put(next(), buf, 8, cq, 0, lci::RMR_NULL), std::runtime_error);
  CHECK_THROWS_AS(lci::post_get(next(), buf, 8, cq, 0, lci::RMR_NULL), std::runtime_error);
  CHECK_THROWS_AS(lci::get_rmr(lci::mr_t()), std::runtime_error);
  lci::mr_t empty_mr;
  CHECK_THROWS_AS(lci::deregister_memory(&empty_mr), std::runtime_error);
  lci::device_t empty_dev;
  CHECK_THROWS_AS(lci::free_device(&empty_dev), std::runtime_error);
  CHECK_THROWS_AS(lci::register_rcomp(lci::comp_t()), std::runtime_error);
  CHECK_THROWS_AS(lci::put_upacket(buf), std::runtime_error);  // not a packet
  CHECK_THROWS_AS(lci::sync_test(cq, nullptr), std::runtime_error);
  // Refused calls left nothing behind: the ring still works, the cq is empty.
  CHECK(cq_stays_empty(cq));
  lci::free_comp(&cq);
  ring_traffic(lci::device_t(), 7, 64);
  barrier();
  control_fina();
  lci::g_runtime_fina();
}

TEST_CASE("a runtime without a default device; devices allocated and freed by the program") {
  lci::runtime_t rt = lci::g_runtime_init_x().alloc_default_device(false)();
  CHECK_FALSE(rt.get_attr_alloc_default_device());
  CHECK(lci::get_default_device().is_empty());
  char buf[8] = {};
  // Operations that need the default device say so.
  CHECK_THROWS_AS(lci::post_send(next(), buf, 8, 0, lci::COMP_NULL), std::runtime_error);
  CHECK_THROWS_AS(lci::progress(), std::runtime_error);

  int ctx = 0;
  lci::device_t dev = lci::alloc_device_x().name("first").user_context(&ctx)();
  REQUIRE_FALSE(dev.is_empty());
  CHECK(std::string(dev.get_attr_name()) == "first");
  CHECK(dev.get_attr_user_context() == &ctx);
  CHECK(lci::get_default_device().is_empty());  // still none
  lci::device_t dev2 = lci::alloc_device_x().net_max_recvs(16)();
  CHECK(dev2.get_attr_net_max_recvs() == 16);
  CHECK(dev.get_attr_uid() != dev2.get_attr_uid());
  control_init(dev);
  ring_traffic(dev, 8, 200);
  ring_traffic(dev2, 8, 200);
  ring_traffic(dev2, 9, 300000);
  ring_traffic(dev, 9, 300000);
  barrier();
  lci::free_device(&dev2);
  CHECK(dev2.is_empty());
  ring_traffic(dev, 10, 1000);
  barrier();
  control_fina();
  lci::free_device(&dev);
  CHECK(dev.is_empty());
  lci::g_runtime_fina();
  CHECK(lci::get_g_runtime().is_empty());
}

TEST_CASE("global_finalize ends the process set-up once every reference is gone") {
  // The first test case's global_initialize is still held: one more level.
  lci::global_initialize();
  lci::global_finalize();
  CHECK_NOTHROW(lci::get_rank_me());
  lci::global_finalize();
  CHECK_THROWS_AS(lci::get_rank_me(), std::runtime_error);
  CHECK_THROWS_AS(lci::get_g_default_attr(), std::runtime_error);
  CHECK_THROWS_AS(lci::global_finalize(), std::runtime_error);
}

int main(int argc, char** argv) { return run_doctest(argc, argv); }

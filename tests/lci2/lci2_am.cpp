// lci.hpp's active messages around the ring: handler and cq targets (the
// status at the target: rank = source, tag, size, user_context nullptr, a
// buffer the receiver owns and frees with free() under the default
// allocator), zero-copy cqs (the buffer is a packet, given back with
// put_upacket), a program's allocator (set_allocator), rendezvous-size
// messages, and upackets (get_upacket) as send buffers, whose ownership
// passes to LCI.
#include <cstdlib>
#include <cstring>
#include <set>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

size_t max_bcopy() { return lci::get_max_bcopy_size(); }

std::vector<size_t> am_sizes() {
  const size_t m = max_bcopy();
  return {0, 1, 100, m - 1, m, m + 1, 64 * 1024, 4 * 1024 * 1024};
}

uint32_t am_seed(int src, lci::tag_t tag, size_t size) {
  return seed_of(static_cast<uint32_t>(src), static_cast<uint32_t>(tag), static_cast<uint32_t>(size));
}

// Sends one active message of `size` bytes with `tag` to next(), checks the
// local status and waits for the local completion when posted.
void send_am(size_t size, lci::tag_t tag, lci::rcomp_t rcomp, lci::comp_t local_cq) {
  INFO("size ", size, ", tag ", tag);
  std::vector<char> buf(size + 1);
  fill(buf.data(), size, am_seed(lci::get_rank_me(), tag, size));
  int ctx = 0;
  lci::status_t s;
  lci_test::deadline d(k_wait_s);
  while ((s = lci::post_am_x(next(), buf.data(), size, local_cq, rcomp).tag(tag).user_context(&ctx)())
             .is_retry()) {
    lci::progress();
    if (d.passed()) fatal("post_am refused for too long");
  }
  // Eager, or without a completion object (COMP_NULL: complete in the
  // call): done, and the local cq is not signalled.
  if (size <= max_bcopy() || local_cq == lci::COMP_NULL) {
    CHECK(s.get_error().errorcode == lci::errorcode_t::done);
    CHECK(s.get_rank() == next());
    CHECK(s.get_size() == size);
    CHECK(s.get_buffer() == buf.data());
    CHECK(s.get_user_context() == &ctx);
  } else {
    CHECK(s.get_error().errorcode == lci::errorcode_t::posted);
    std::vector<lci::status_t> got = pop_n(local_cq, 1, "an active message's local completion");
    REQUIRE(got.size() == 1);
    CHECK(got[0].is_done());
    CHECK(got[0].get_rank() == next());
    CHECK(got[0].get_size() == size);
    CHECK(got[0].get_buffer() == buf.data());
    CHECK(got[0].get_user_context() == &ctx);
  }
}

// Checks an arrival at the target: from prev(), `tag`, `size` bytes of the
// pattern, user_context nullptr.
void check_arrival(const lci::status_t& s, lci::tag_t tag, size_t size) {
  INFO("size ", size, ", tag ", tag);
  CHECK(s.is_done());
  CHECK(s.get_rank() == prev());
  CHECK(s.get_tag() == tag);
  CHECK(s.get_size() == size);
  CHECK(s.get_user_context() == nullptr);
  CHECK(s.get_buffer() != nullptr);
  if (s.get_buffer())
    CHECK(mismatch(s.get_buffer(), size, am_seed(prev(), tag, size)) == SIZE_MAX);
}

// Counts what LCI allocates through it, and checks that it frees only
// what it allocated.
struct counting_allocator : lci::allocator_base_t {
  std::mutex m;
  std::set<void*> live;
  long allocations = 0;
  void* allocate(size_t size) override {
    void* p = std::malloc(size ? size : 1);
    std::lock_guard<std::mutex> g(m);
    live.insert(p);
    ++allocations;
    return p;
  }
  void deallocate(void* p) override {
    {
      std::lock_guard<std::mutex> g(m);
      CHECK(live.erase(p) == 1);
    }
    std::free(p);
  }
  bool owns(void* p) {
    std::lock_guard<std::mutex> g(m);
    return live.count(p) == 1;
  }
};

}  // namespace

TEST_CASE("active messages into a handler: every size; the receiver owns the buffer") {
  lci::comp_t handler = lci::alloc_handler(&handler_record);
  const lci::rcomp_t rcomp = lci::register_rcomp(handler);
  CHECK(rcomp != 0);
  barrier();  // every rank's handle exists before a message names it
  lci::comp_t local = lci::alloc_cq();
  const std::vector<size_t> sizes = am_sizes();
  lci::tag_t tag = 10;
  for (size_t size : sizes) send_am(size, tag++, rcomp, local);
  progress_until([&] { return handler_count() >= sizes.size(); }, "handler arrivals");
  std::vector<lci::status_t> got = handler_take();
  CHECK(got.size() == sizes.size());
  for (const lci::status_t& s : got) {
    REQUIRE(s.get_tag() >= 10);
    REQUIRE(s.get_tag() < 10 + sizes.size());
    check_arrival(s, s.get_tag(), sizes[s.get_tag() - 10]);
    std::free(s.get_buffer());  // the default allocator: malloc/free
  }
  CHECK(cq_stays_empty(local));
  barrier();
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&handler);
}

TEST_CASE("active messages into a cq: every size") {
  lci::comp_t cq = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(cq);
  barrier();
  lci::comp_t local = lci::alloc_cq();
  const std::vector<size_t> sizes = am_sizes();
  lci::tag_t tag = 30;
  for (size_t size : sizes) send_am(size, tag++, rcomp, local);
  std::vector<lci::status_t> got = pop_n(cq, sizes.size(), "cq arrivals");
  CHECK(got.size() == sizes.size());
  for (const lci::status_t& s : got) {
    REQUIRE(s.get_tag() >= 30);
    REQUIRE(s.get_tag() < 30 + sizes.size());
    check_arrival(s, s.get_tag(), sizes[s.get_tag() - 30]);
    std::free(s.get_buffer());
  }
  barrier();
  CHECK(cq_stays_empty(cq));
  CHECK(cq_stays_empty(local));
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&cq);
}

TEST_CASE("a zero-copy cq hands over packets, given back with put_upacket") {
  lci::comp_t cq = lci::alloc_cq_x().zero_copy_am(true)();
  CHECK(cq.get_attr_zero_copy_am());
  const lci::rcomp_t rcomp = lci::register_rcomp(cq);
  barrier();
  const std::vector<size_t> sizes = {0, 1, 100, max_bcopy() - 1, max_bcopy()};
  lci::tag_t tag = 50;
  // More messages than... a few rounds, so that packets not given back
  // would show as a shrinking pool below.
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < sizes.size(); ++i) send_am(sizes[i], tag + i, rcomp, lci::COMP_NULL);
    std::vector<lci::status_t> got = pop_n(cq, sizes.size(), "zero-copy arrivals");
    CHECK(got.size() == sizes.size());
    for (const lci::status_t& s : got) {
      REQUIRE(s.get_tag() >= tag);
      REQUIRE(s.get_tag() < tag + sizes.size());
      check_arrival(s, s.get_tag(), sizes[s.get_tag() - tag]);
      CHECK_NOTHROW(lci::put_upacket(s.get_buffer()));  // throws unless it is a packet
    }
    barrier();
  }
  CHECK(cq_stays_empty(cq));
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&cq);
}

TEST_CASE("set_allocator: arrivals are allocated by the program's allocator") {
  static counting_allocator alloc;  // outlives a failed check's early return
  lci::set_allocator(&alloc);
  CHECK(lci::get_allocator() == &alloc);
  lci::comp_t cq = lci::alloc_cq();
  lci::comp_t handler = lci::alloc_handler(&handler_record);
  const lci::rcomp_t rq = lci::register_rcomp(cq);
  const lci::rcomp_t rh = lci::register_rcomp(handler);
  CHECK(rh == rq + 1);  // handed out in order
  barrier();
  const std::vector<size_t> sizes = {0, 10, max_bcopy(), max_bcopy() + 1, 200000};
  lci::tag_t tag = 70;
  for (size_t size : sizes) send_am(size, tag++, rq, lci::COMP_NULL);
  for (size_t size : sizes) send_am(size, tag++, rh, lci::COMP_NULL);
  std::vector<lci::status_t> got = pop_n(cq, sizes.size(), "arrivals in the cq");
  progress_until([&] { return handler_count() >= sizes.size(); }, "arrivals in the handler");
  for (const lci::status_t& s : handler_take()) got.push_back(s);
  CHECK(got.size() == 2 * sizes.size());
  for (const lci::status_t& s : got) {
    const size_t i = static_cast<size_t>(s.get_tag() - 70) % sizes.size();
    check_arrival(s, s.get_tag(), sizes[i]);
    CHECK(alloc.owns(s.get_buffer()));
    alloc.deallocate(s.get_buffer());
  }
  CHECK(alloc.allocations == static_cast<long>(2 * sizes.size()));
  CHECK(alloc.live.empty());
  barrier();
  lci::set_allocator(nullptr);
  CHECK(lci::get_allocator() == &lci::g_allocator_default);
  lci::deregister_rcomp(rh);
  lci::deregister_rcomp(rq);
  lci::free_comp(&handler);
  lci::free_comp(&cq);
}

TEST_CASE("a upacket as the send buffer: LCI takes it over and returns it to the pool") {
  lci::comp_t cq = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(cq);
  barrier();
  lci::comp_t local = lci::alloc_cq();
  const int k_msgs = 200;
  for (int i = 0; i < k_msgs; ++i) {
    void* p = nullptr;
    progress_until([&] { return (p = lci::get_upacket()) != nullptr; }, "a upacket");
    const size_t size = i % 2 ? max_bcopy() : static_cast<size_t>(i);
    fill(p, size, am_seed(lci::get_rank_me(), 90, size));
    lci::status_t s;
    lci_test::deadline d(k_wait_s);
    // Every other one with allow_done(false): the local cq then reports it.
    while ((s = lci::post_am_x(next(), p, size, local, rcomp).tag(90).allow_done(i % 4 >= 2)())
               .is_retry()) {
      lci::progress();
      if (d.passed()) fatal("post_am of a upacket refused");
    }
    CHECK(!s.is_retry());
    if (s.is_posted()) {
      std::vector<lci::status_t> l = pop_n(local, 1, "a upacket's local completion");
      CHECK(l.size() == 1);
    }
  }
  std::vector<lci::status_t> got = pop_n(cq, k_msgs, "upacket arrivals");
  CHECK(got.size() == static_cast<size_t>(k_msgs));
  for (const lci::status_t& s : got) {
    check_arrival(s, 90, s.get_size());
    std::free(s.get_buffer());
  }
  // And a upacket as a two-sided send's buffer.
  void* p = nullptr;
  progress_until([&] { return (p = lci::get_upacket()) != nullptr; }, "a upacket");
  fill(p, 500, am_seed(lci::get_rank_me(), 91, 500));
  std::vector<char> in(500);
  const lci::status_t rs = lci::post_recv(prev(), in.data(), in.size(), 91, local);
  lci::status_t ss;
  while ((ss = lci::post_send(next(), p, 500, 91, local)).is_retry()) lci::progress();
  const size_t n = (rs.is_posted() ? 1 : 0) + (ss.is_posted() ? 1 : 0);
  CHECK(pop_n(local, n, "a upacket's send").size() == n);
  CHECK(mismatch(in.data(), 500, am_seed(prev(), 91, 500)) == SIZE_MAX);
  barrier();
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&cq);
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

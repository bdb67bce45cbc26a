// lci.hpp without a runtime and without other processes: the value types
// (error codes, statuses, handles, option_t, remote regions), the refusals
// of empty handles, and every kind of completion object signalled by the
// program itself (comp_signal), including one of its own.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "lci.hpp"

namespace {

std::mutex g_m;
std::vector<lci::status_t> g_handled;
void on_status(lci::status_t s) {
  std::lock_guard<std::mutex> g(g_m);
  g_handled.push_back(s);
}

struct mine : lci::comp_impl_t {
  std::vector<lci::status_t> got;
  void signal(lci::status_t s) override { got.push_back(s); }
};

lci::status_t make_status(int rank, lci::tag_t tag, void* buffer, size_t size, void* ctx) {
  lci::status_t s(lci::errorcode_t::done);
  s.rank = rank;
  s.tag = tag;
  s.buffer = buffer;
  s.size = size;
  s.user_context = ctx;
  return s;
}

}  // namespace

TEST_CASE("error codes: categories by range, names, the default") {
  using E = lci::errorcode_t;
  CHECK(static_cast<int>(E::done_min) == 0);
  CHECK(static_cast<int>(E::fatal) == 16);
  CHECK(lci::error_t(E::done).is_done());
  CHECK(lci::error_t(E::done_backlog).is_done());
  CHECK(lci::error_t(E::posted).is_posted());
  CHECK(lci::error_t(E::posted_backlog).is_posted());
  for (E e : {E::retry, E::retry_init, E::retry_lock, E::retry_nopacket, E::retry_nomem,
              E::retry_backlog}) {
    CHECK(lci::error_t(e).is_retry());
    CHECK_FALSE(lci::error_t(e).is_done());
    CHECK_FALSE(lci::error_t(e).is_posted());
  }
  CHECK_FALSE(lci::error_t(E::fatal).is_retry());
  CHECK_FALSE(lci::error_t(E::fatal).is_done());
  CHECK(lci::error_t().errorcode == E::retry_init);
  lci::error_t e(E::done);
  e.reset_retry();
  CHECK(e.errorcode == E::retry);
  CHECK(std::string(lci::get_errorcode_str(E::posted_backlog)) == "posted_backlog");
  CHECK(std::string(lci::error_t(E::retry_nopacket).get_str()) == "retry_nopacket");
}

TEST_CASE("status_t: defaults, constructors, getters") {
  lci::status_t s;
  CHECK(s.is_retry());
  CHECK(s.get_rank() == -1);
  CHECK(s.get_buffer() == nullptr);
  CHECK(s.get_size() == 0);
  CHECK(s.get_user_context() == nullptr);
  int x = 0;
  lci::status_t c(static_cast<void*>(&x));
  CHECK(c.is_done());
  CHECK(c.get_user_context() == &x);
  lci::status_t p = lci::errorcode_t::posted;
  CHECK(p.is_posted());
  p.set_retry();
  CHECK(p.is_retry());
  p.set_done();
  CHECK(p.is_done());
  CHECK(std::is_trivially_copyable<lci::rmr_t>::value);
}

TEST_CASE("handles are one pointer, convertible from raw pointers") {
  CHECK(sizeof(lci::comp_t) == sizeof(void*));
  CHECK(sizeof(lci::device_t) == sizeof(void*));
  CHECK(sizeof(lci::mr_t) == sizeof(void*));
  lci::comp_t c = nullptr;
  CHECK(c.is_empty());
  CHECK(c == nullptr);
  CHECK(lci::COMP_NULL.is_empty());
  CHECK(lci::COMP_NULL_RETRY.is_empty());
  CHECK(lci::MR_HOST.is_empty());
  CHECK(lci::MR_DEVICE.is_empty());
  CHECK(lci::MR_UNKNOWN.is_empty());
  CHECK(lci::RMR_NULL.is_empty());
  lci::option_t<int> o;
  CHECK_FALSE(o.is_set());
  CHECK(o.get_value_or(5) == 5);
  o = 3;
  int out = 0;
  CHECK(o.get_set_value(&out));
  CHECK(out == 3);
}

TEST_CASE("empty handles and missing state are refused with std::runtime_error") {
  CHECK_THROWS_AS(lci::comp_t().get_impl(), std::runtime_error);
  CHECK_THROWS_AS(lci::device_t().get_attr(), std::runtime_error);
  CHECK_THROWS_AS(lci::runtime_t().get_attr_max_tag(), std::runtime_error);
  CHECK_THROWS_AS(lci::cq_pop(lci::comp_t()), std::runtime_error);
  lci::comp_t empty;
  CHECK_THROWS_AS(lci::free_comp(&empty), std::runtime_error);
  CHECK_THROWS_AS(lci::comp_signal(lci::COMP_NULL, lci::status_t()), std::runtime_error);
  CHECK_THROWS_AS(lci::alloc_handler(nullptr), std::runtime_error);
  CHECK_THROWS_AS(lci::alloc_sync_x().threshold(0)(), std::runtime_error);
  lci::comp_t cq = lci::alloc_cq();
  lci::status_t s;
  CHECK_THROWS_AS(lci::sync_test(cq, &s), std::runtime_error);  // not a sync
  CHECK_THROWS_AS(lci::counter_get(cq), std::runtime_error);    // not a counter
  lci::free_comp(&cq);
  CHECK(cq.is_empty());
  // No process set-up, no runtime: nothing that needs them runs.
  CHECK(lci::get_g_runtime().is_empty());
  CHECK_THROWS_AS(lci::get_rank_me(), std::runtime_error);
  CHECK_THROWS_AS(lci::get_g_default_attr(), std::runtime_error);
  CHECK_THROWS_AS(lci::progress(), std::runtime_error);
  char b[8];
  CHECK_THROWS_AS(lci::post_send(0, b, 8, 0, lci::COMP_NULL), std::runtime_error);
  CHECK_THROWS_AS(lci::g_runtime_fina(), std::runtime_error);
  CHECK_THROWS_AS(lci::global_finalize(), std::runtime_error);
}

TEST_CASE("a cq returns the statuses signalled into it, in order") {
  lci::comp_t cq = lci::alloc_cq_x().default_length(8).name("q")();
  CHECK(cq.get_attr_comp_type() == lci::attr_comp_type_t::cq);
  CHECK(cq.get_attr_cq_default_length() == 8);
  CHECK(std::string(cq.get_attr_name()) == "q");
  CHECK(lci::cq_pop(cq).is_retry());
  int ctx[3];
  char buf[4];
  for (int i = 0; i < 3; ++i) lci::comp_signal(cq, make_status(i, 10u + i, buf, 4, &ctx[i]));
  for (int i = 0; i < 3; ++i) {
    lci::status_t s = lci::cq_pop(cq);
    CHECK(s.is_done());
    CHECK(s.get_rank() == i);
    CHECK(s.get_tag() == 10u + i);
    CHECK(s.get_buffer() == buf);
    CHECK(s.get_size() == 4);
    CHECK(s.get_user_context() == &ctx[i]);
  }
  CHECK(lci::cq_pop(cq).is_retry());
  lci::free_comp(&cq);
}

TEST_CASE("a sync is ready after its threshold, leaves p_out alone before, and is reusable") {
  lci::comp_t sync = lci::alloc_sync_x().threshold(2)();
  CHECK(sync.get_attr_sync_threshold() == 2);
  lci::status_t out[2];
  for (int round = 0; round < 3; ++round) {
    out[0] = lci::status_t();
    CHECK_FALSE(lci::sync_test(sync, out));
    lci::comp_signal(sync, make_status(1, 5, nullptr, 0, nullptr));
    CHECK_FALSE(lci::sync_test(sync, out));
    CHECK(out[0].is_retry());  // untouched
    lci::comp_signal(sync, make_status(2, 6, nullptr, 0, nullptr));
    CHECK(lci::sync_test(sync, out));
    CHECK(out[0].is_done());
    CHECK(out[1].is_done());
    CHECK(out[0].get_rank() + out[1].get_rank() == 3);
  }
  lci::free_comp(&sync);
}

TEST_CASE("a counter counts, a handler runs in the signalling thread") {
  lci::comp_t counter = lci::alloc_counter();
  CHECK(lci::counter_get(counter) == 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) lci::comp_signal(counter, lci::status_t(lci::errorcode_t::done));
    });
  for (auto& t : ts) t.join();
  CHECK(lci::counter_get(counter) == 4000);
  lci::counter_set(counter, 7);
  CHECK(lci::counter_get(counter) == 7);
  lci::free_comp(&counter);

  lci::comp_t h = lci::alloc_handler(&on_status);
  CHECK(h.get_attr_comp_type() == lci::attr_comp_type_t::handler);
  int ctx = 0;
  lci::comp_signal(h, make_status(3, 9, nullptr, 0, &ctx));
  REQUIRE(g_handled.size() == 1);
  CHECK(g_handled[0].get_rank() == 3);
  CHECK(g_handled[0].get_tag() == 9);
  CHECK(g_handled[0].get_user_context() == &ctx);
  lci::free_comp(&h);
}

TEST_CASE("a program's own completion object: signal() is called, attributes are custom") {
  mine m;
  lci::comp_t c(static_cast<void*>(static_cast<lci::comp_impl_t*>(&m)));
  CHECK(c.get_attr_comp_type() == lci::attr_comp_type_t::custom);
  CHECK_FALSE(c.get_attr_zero_copy_am());
  lci::comp_signal(c, make_status(4, 2, nullptr, 0, nullptr));
  REQUIRE(m.got.size() == 1);
  CHECK(m.got[0].get_rank() == 4);
  CHECK(m.got[0].get_tag() == 2);
}

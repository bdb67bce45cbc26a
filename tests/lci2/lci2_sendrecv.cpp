// lci.hpp's two-sided messages between the ranks of a ring (each rank sends
// to the next and receives from the previous): every size around the
// eager/rendezvous boundary, every kind of completion object, what each
// return state promises (done: the completion object is not signalled;
// posted: it is, once), allow_done(false), COMP_NULL and COMP_NULL_RETRY,
// the matching policies with ANY_SOURCE/ANY_TAG, and many messages with
// many tags in flight, received in another order than sent.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

enum class kind { cq, sync, handler, counter, custom };
const kind k_kinds[] = {kind::cq, kind::sync, kind::handler, kind::counter, kind::custom};

const char* kind_name(kind k) {
  switch (k) {
    case kind::cq: return "cq";
    case kind::sync: return "sync";
    case kind::handler: return "handler";
    case kind::counter: return "counter";
    case kind::custom: return "custom";
  }
  return "?";
}

lci::comp_t as_comp(recorder* r) {
  return lci::comp_t(static_cast<void*>(static_cast<lci::comp_impl_t*>(r)));
}

lci::tag_t g_next_tag = 100;
lci::tag_t fresh_tag() { return g_next_tag++; }

size_t max_bcopy() { return lci::get_max_bcopy_size(); }

std::vector<size_t> sizes() {
  const size_t m = max_bcopy();
  return {0, 1, 8, m - 1, m, m + 1, 64 * 1024, 4 * 1024 * 1024};
}

// The completion objects of one kind for one exchange: the send's and the
// receive's (one object for both where statuses tell them apart).
struct comps {
  kind k;
  lci::comp_t send, recv;
  std::unique_ptr<recorder> rec;
  explicit comps(kind k_) : k(k_) {
    switch (k) {
      case kind::cq: send = recv = lci::alloc_cq(); break;
      case kind::sync:
        send = lci::alloc_sync();
        recv = lci::alloc_sync();
        break;
      case kind::handler: send = recv = lci::alloc_handler(&handler_record); break;
      case kind::counter: send = recv = lci::alloc_counter(); break;
      case kind::custom:
        rec.reset(new recorder);
        send = recv = as_comp(rec.get());
        break;
    }
  }
  ~comps() {
    if (k == kind::custom) return;  // the program's own: LCI never frees it
    if (send != recv) lci::free_comp(&recv);
    lci::free_comp(&send);
  }
  // The statuses of `n` completions, `send_posted`/`recv_posted` saying which
  // (a counter keeps none: empty then, after counting to n).
  std::vector<lci::status_t> wait(bool send_posted, bool recv_posted) {
    const size_t n = (send_posted ? 1 : 0) + (recv_posted ? 1 : 0);
    std::vector<lci::status_t> out;
    switch (k) {
      case kind::cq: out = pop_n(send, n, "cq completions"); break;
      case kind::sync: {
        lci::status_t s;
        if (send_posted) {
          lci::sync_wait(send, &s);
          out.push_back(s);
        }
        if (recv_posted) {
          progress_until([&] { return lci::sync_test(recv, &s); }, "the receive's sync");
          out.push_back(s);
        }
        break;
      }
      case kind::handler:
        progress_until([&] { return handler_count() >= n; }, "handler completions");
        out = handler_take();
        break;
      case kind::counter:
        progress_until([&] { return lci::counter_get(send) >= static_cast<int64_t>(n); },
                       "the counter");
        break;
      case kind::custom:
        progress_until([&] { return rec->count() >= n; }, "the custom comp's signals");
        out = rec->take();
        break;
    }
    return out;
  }
  // Nothing more arrives: what a done operation must not signal.
  void check_quiet(size_t n) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    while (std::chrono::steady_clock::now() < until) lci::progress();
    lci::status_t s;
    switch (k) {
      case kind::cq: CHECK(lci::cq_pop(send).is_retry()); break;
      case kind::sync:
        CHECK_FALSE(lci::sync_test(send, &s));
        CHECK_FALSE(lci::sync_test(recv, &s));
        break;
      case kind::handler: CHECK(handler_count() == 0); break;
      case kind::counter: CHECK(lci::counter_get(send) == static_cast<int64_t>(n)); break;
      case kind::custom: CHECK(rec->count() == 0); break;
    }
  }
};

// One exchange of `size` bytes around the ring with completion objects of
// kind k; the receive buffer has `extra` bytes more than the message.
void exchange(size_t size, kind k, size_t extra) {
  INFO("size ", size, ", kind ", kind_name(k), ", extra ", extra);
  const int me = lci::get_rank_me();
  const lci::tag_t tag = fresh_tag();
  std::vector<char> sbuf(size + 1), rbuf(size + extra + 1);
  fill(sbuf.data(), size, seed_of(me, static_cast<uint32_t>(tag)));
  std::memset(rbuf.data(), lci_test::k_sentinel, rbuf.size());
  int sctx_mark = 0, rctx_mark = 0;
  void* sctx = &sctx_mark;
  void* rctx = &rctx_mark;
  comps c(k);

  const lci::status_t rs =
      lci::post_recv_x(prev(), rbuf.data(), size + extra, tag, c.recv).user_context(rctx)();
  const lci::status_t ss = until_accepted(
      lci::post_send_x(next(), sbuf.data(), size, tag, c.send).user_context(sctx), "exchange");
  const bool eager = size <= max_bcopy();
  if (eager) {
    CHECK(ss.get_error().errorcode == lci::errorcode_t::done);
    CHECK(ss.get_rank() == next());
    CHECK(ss.get_tag() == tag);
    CHECK(ss.get_size() == size);
    CHECK(ss.get_buffer() == sbuf.data());
    CHECK(ss.get_user_context() == sctx);
  } else {
    CHECK(ss.get_error().errorcode == lci::errorcode_t::posted);
  }
  CHECK((rs.is_posted() || rs.is_done()));
  if (rs.is_done()) {
    CHECK(rs.get_rank() == prev());
    CHECK(rs.get_size() == size);
    CHECK(rs.get_buffer() == rbuf.data());
    CHECK(rs.get_user_context() == rctx);
  }

  const std::vector<lci::status_t> got = c.wait(ss.is_posted(), rs.is_posted());
  if (k != kind::counter)
    CHECK(got.size() == static_cast<size_t>(ss.is_posted()) + static_cast<size_t>(rs.is_posted()));
  for (const lci::status_t& s : got) {
    CHECK(s.is_done());
    CHECK(s.get_tag() == tag);
    CHECK(s.get_size() == size);
    if (s.get_user_context() == sctx) {
      CHECK(ss.is_posted());
      CHECK(s.get_rank() == next());
      CHECK(s.get_buffer() == sbuf.data());
    } else {
      CHECK(s.get_user_context() == rctx);
      CHECK(rs.is_posted());
      CHECK(s.get_rank() == prev());
      CHECK(s.get_buffer() == rbuf.data());
    }
  }
  CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
  CHECK(lci_test::not_byte(rbuf.data(), size, rbuf.size(), lci_test::k_sentinel) == SIZE_MAX);
  c.check_quiet(static_cast<size_t>(ss.is_posted()) + static_cast<size_t>(rs.is_posted()));
}

}  // namespace

TEST_CASE("the eager size and the tag space") {
  CHECK(max_bcopy() >= 1024);
  CHECK(max_bcopy() == static_cast<size_t>(LCI_MEDIUM_SIZE));
  CHECK(lci::get_g_runtime().get_attr_max_tag() == 0xFFFFFFFFu);
}

TEST_CASE("every size with every kind of completion object") {
  for (kind k : k_kinds)
    for (size_t size : sizes()) exchange(size, k, 0);
  barrier();
}

TEST_CASE("a receive buffer larger than the message reports the bytes that arrived") {
  for (size_t size : sizes()) exchange(size, kind::cq, 4096);
  for (size_t size : sizes()) exchange(size, kind::sync, 3);
  barrier();
}

TEST_CASE("a program's own completion object is never deleted by LCI") {
  const int before = recorder::destroyed.load();
  {
    recorder* r = new recorder;
    lci::comp_t c = as_comp(r);
    CHECK(c.get_attr_comp_type() == lci::attr_comp_type_t::custom);
    CHECK_FALSE(c.get_attr_zero_copy_am());
    std::vector<char> big(100000, 7), in(100000);
    const lci::tag_t tag = fresh_tag();
    lci::status_t rs = lci::post_recv(prev(), in.data(), in.size(), tag, c);
    lci::status_t ss = until_accepted(lci::post_send_x(next(), big.data(), big.size(), tag, c),
                                           "custom");
    CHECK(ss.is_posted());
    const size_t n = 1 + (rs.is_posted() ? 1 : 0);
    progress_until([&] { return r->count() >= n; }, "the custom comp");
    barrier();
    CHECK(recorder::destroyed.load() == before);
    delete r;
  }
  CHECK(recorder::destroyed.load() == before + 1);
}

TEST_CASE("a receive that finds its message already there is done, with the data") {
  // The message is sent before the receive is posted; the receiver
  // progresses until the message is surely there. Rounds repeat in the
  // unlikely case that it was not (then the receive is posted).
  bool seen_done = false;
  for (int round = 0; round < 5 && !seen_done; ++round) {
    const lci::tag_t tag = fresh_tag();
    const size_t size = 100 + static_cast<size_t>(round);
    std::vector<char> sbuf(size), rbuf(size + 10, static_cast<char>(lci_test::k_sentinel));
    fill(sbuf.data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
    lci::comp_t cq = lci::alloc_cq();
    const lci::status_t ss =
        until_accepted(lci::post_send_x(next(), sbuf.data(), size, tag, cq), "early");
    CHECK(ss.is_done());
    barrier();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (std::chrono::steady_clock::now() < until) lci::progress();
    int ctx = 0;
    lci::status_t rs = lci::post_recv_x(prev(), rbuf.data(), rbuf.size(), tag, cq)
                           .user_context(&ctx)();
    if (rs.is_done()) {
      seen_done = true;
      CHECK(rs.get_error().errorcode == lci::errorcode_t::done);
      CHECK(rs.get_rank() == prev());
      CHECK(rs.get_tag() == tag);
      CHECK(rs.get_size() == size);
      CHECK(rs.get_buffer() == rbuf.data());
      CHECK(rs.get_user_context() == &ctx);
      CHECK(cq_stays_empty(cq));  // done: the cq is not signalled
    } else {
      CHECK(rs.is_posted());
      CHECK(pop_n(cq, 1, "a late early message").size() == 1);
    }
    CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
    lci::free_comp(&cq);
    barrier();
  }
  CHECK(seen_done);
}

TEST_CASE("allow_done(false): every completion goes through the completion object") {
  lci::comp_t cq = lci::alloc_cq();
  for (size_t size : {size_t(0), size_t(16), max_bcopy(), max_bcopy() + 1}) {
    INFO("size ", size);
    const lci::tag_t tag = fresh_tag();
    std::vector<char> sbuf(size + 1), rbuf(size + 1);
    fill(sbuf.data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
    int sctx = 0, rctx = 0;
    // The message arrives first, so that a receive could be done at once.
    const lci::status_t ss = until_accepted(
        lci::post_send_x(next(), sbuf.data(), size, tag, cq).user_context(&sctx).allow_done(false),
        "allow_done");
    CHECK(ss.is_posted());
    barrier();
    const lci::status_t rs = lci::post_recv_x(prev(), rbuf.data(), size, tag, cq)
                                 .user_context(&rctx)
                                 .allow_done(false)();
    CHECK(rs.is_posted());
    std::vector<lci::status_t> got = pop_n(cq, 2, "allow_done(false) completions");
    REQUIRE(got.size() == 2);
    int sends = 0, recvs = 0;
    for (const lci::status_t& s : got) {
      CHECK(s.get_size() == size);
      CHECK(s.get_tag() == tag);
      if (s.get_user_context() == &sctx) {
        ++sends;
        CHECK(s.get_rank() == next());
      } else if (s.get_user_context() == &rctx) {
        ++recvs;
        CHECK(s.get_rank() == prev());
      }
    }
    CHECK(sends == 1);
    CHECK(recvs == 1);
    CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
    barrier();
  }
  CHECK(cq_stays_empty(cq));
  lci::free_comp(&cq);
}

TEST_CASE("COMP_NULL completes in the call; COMP_NULL_RETRY never posts") {
  const bool even = lci::get_rank_me() % 2 == 0;
  for (size_t size : {size_t(0), size_t(100), max_bcopy(), max_bcopy() + 1, size_t(1) << 20}) {
    INFO("size ", size);
    const lci::tag_t tag = fresh_tag();
    std::vector<char> sbuf(size + 1), rbuf(size + 1);
    fill(sbuf.data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
    // A rendezvous send with COMP_NULL waits for its receive: the even ranks
    // send first, the odd ones receive first (a chain, not a cycle).
    auto send = [&] {
      const lci::status_t s = lci::post_send(next(), sbuf.data(), size, tag, lci::COMP_NULL);
      CHECK(s.is_done());
      CHECK(s.get_rank() == next());
      CHECK(s.get_size() == size);
    };
    auto recv = [&] {
      const lci::status_t s = lci::post_recv(prev(), rbuf.data(), size, tag, lci::COMP_NULL);
      CHECK(s.is_done());
      CHECK(s.get_rank() == prev());
      CHECK(s.get_tag() == tag);
      CHECK(s.get_size() == size);
      CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
    };
    if (even || lci::get_rank_n() == 1) {
      send();
      recv();
    } else {
      recv();
      send();
    }
  }
  barrier();
  // COMP_NULL_RETRY: done or retry, never posted.
  lci::comp_t cq = lci::alloc_cq();
  for (int i = 0; i < 50; ++i) {
    const lci::tag_t tag = fresh_tag();
    char sbuf[64], rbuf[64];
    fill(sbuf, sizeof(sbuf), seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
    const lci::status_t rs = lci::post_recv(prev(), rbuf, sizeof(rbuf), tag, cq);
    lci::status_t ss;
    lci_test::deadline d(k_wait_s);
    while ((ss = lci::post_send(next(), sbuf, sizeof(sbuf), tag, lci::COMP_NULL_RETRY))
               .is_retry()) {
      lci::progress();
      if (d.passed()) fatal("COMP_NULL_RETRY send refused for too long");
    }
    CHECK(ss.is_done());
    if (rs.is_posted()) CHECK(pop_n(cq, 1, "a COMP_NULL_RETRY message").size() == 1);
    CHECK(mismatch(rbuf, sizeof(rbuf), seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
  }
  CHECK(cq_stays_empty(cq));
  lci::free_comp(&cq);
  barrier();
}

TEST_CASE("matching policies with ANY_SOURCE and ANY_TAG") {
  struct policy_case {
    lci::matching_policy_t policy;
    bool any_source, any_tag;
    const char* name;
  };
  const policy_case cases[] = {
      {lci::matching_policy_t::rank_tag, false, false, "rank_tag"},
      {lci::matching_policy_t::rank_only, false, true, "rank_only, ANY_TAG"},
      {lci::matching_policy_t::tag_only, true, false, "tag_only, ANY_SOURCE"},
      {lci::matching_policy_t::none, true, true, "none, ANY_SOURCE and ANY_TAG"},
  };
  lci::comp_t cq = lci::alloc_cq();
  for (const policy_case& pc : cases) {
    for (size_t size : {size_t(24), max_bcopy() + 100}) {
      INFO("policy ", pc.name, ", size ", size);
      const lci::tag_t tag = fresh_tag();
      std::vector<char> sbuf(size), rbuf(size);
      fill(sbuf.data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag)));
      const lci::status_t rs =
          lci::post_recv_x(pc.any_source ? lci::ANY_SOURCE : prev(), rbuf.data(), size,
                           pc.any_tag ? lci::ANY_TAG : tag, cq)
              .matching_policy(pc.policy)();
      const lci::status_t ss = until_accepted(
          lci::post_send_x(next(), sbuf.data(), size, tag, cq).matching_policy(pc.policy),
          pc.name);
      const size_t n = (ss.is_posted() ? 1 : 0) + (rs.is_posted() ? 1 : 0);
      std::vector<lci::status_t> got = pop_n(cq, n, pc.name);
      CHECK(got.size() == n);
      std::vector<lci::status_t> all = got;
      if (rs.is_done()) all.push_back(rs);
      int recvs = 0;
      for (const lci::status_t& s : all) {
        if (s.get_buffer() != rbuf.data()) continue;
        ++recvs;
        CHECK(s.get_rank() == prev());  // the actual source, also for ANY_SOURCE
        CHECK(s.get_tag() == tag);      // the actual tag, also for ANY_TAG
        CHECK(s.get_size() == size);
      }
      CHECK(recvs == 1);
      CHECK(mismatch(rbuf.data(), size, seed_of(prev(), static_cast<uint32_t>(tag))) == SIZE_MAX);
      barrier();
    }
  }
  lci::free_comp(&cq);
}

// Two receives of the same rank and tag, one on the runtime's default
// matching engine and one on an engine of the program's own: each message
// goes to the receive of the engine it was sent with, whichever receive
// was posted first and whichever message came first, eager and rendezvous,
// posted before the message or found waiting.
TEST_CASE("a matching engine of the program's own matches only its own messages") {
  lci::matching_engine_t engine = lci::alloc_matching_engine();
  lci::comp_t cq = lci::alloc_cq();
  for (size_t size : {size_t(40), max_bcopy() + 100}) {
    for (bool recv_first : {true, false}) {
      INFO("size ", size, recv_first ? ", receives posted first" : ", messages waiting");
      const lci::tag_t tag = fresh_tag();
      // Buffer 0: the default engine's; 1: the program's engine's.
      std::vector<char> sbuf[2], rbuf[2];
      for (int e = 0; e < 2; ++e) {
        sbuf[e].resize(size);
        fill(sbuf[e].data(), size, seed_of(lci::get_rank_me(), static_cast<uint32_t>(tag), e));
        rbuf[e].assign(size, 0);
      }
      auto ctx = [](int e) { return reinterpret_cast<void*>(static_cast<uintptr_t>(e + 1)); };
      auto post_recv = [&](int e) {
        auto op = lci::post_recv_x(prev(), rbuf[e].data(), size, tag, cq).user_context(ctx(e));
        return e ? op.matching_engine(engine)() : op();
      };
      auto post_send = [&](int e) {
        auto op = lci::post_send_x(next(), sbuf[e].data(), size, tag, cq).user_context(ctx(e));
        return until_accepted(e ? op.matching_engine(engine) : op, "send");
      };
      std::vector<lci::status_t> all;
      size_t posted = 0;
      auto take = [&](const lci::status_t& st) {
        CHECK(!st.is_retry());
        if (st.is_posted()) ++posted;
        if (st.is_done()) all.push_back(st);
      };
      if (recv_first) {
        // The default engine's receive first; the own engine's message first.
        take(post_recv(0));
        take(post_recv(1));
        barrier();
        take(post_send(1));
        take(post_send(0));
      } else {
        // The default engine's message first; the own engine's receive first.
        take(post_send(0));
        take(post_send(1));
        barrier();
        take(post_recv(1));
        take(post_recv(0));
      }
      for (const lci::status_t& st : pop_n(cq, posted, "engine")) all.push_back(st);
      int recvs[2] = {0, 0};
      for (const lci::status_t& st : all) {
        const int e = st.get_buffer() == rbuf[0].data() ? 0 : st.get_buffer() == rbuf[1].data() ? 1 : -1;
        if (e < 0) continue;  // a send's
        ++recvs[e];
        CHECK(st.get_user_context() == ctx(e));
        CHECK(st.get_rank() == prev());
        CHECK(st.get_tag() == tag);
        CHECK(st.get_size() == size);
      }
      CHECK(recvs[0] == 1);
      CHECK(recvs[1] == 1);
      for (int e = 0; e < 2; ++e)
        CHECK(mismatch(rbuf[e].data(), size, seed_of(prev(), static_cast<uint32_t>(tag), e)) ==
              SIZE_MAX);
      barrier();
    }
  }
  lci::free_comp(&cq);
  lci::free_matching_engine(&engine);
}

TEST_CASE("many messages with many tags in flight, received out of order") {
  const int k_msgs = 300;
  const lci::tag_t base = fresh_tag();
  g_next_tag += k_msgs;
  auto size_of = [](int i) -> size_t {
    return i % 10 == 9 ? 20000 + static_cast<size_t>(i) : static_cast<size_t>(i * 37) % 3000;
  };
  std::vector<std::vector<char>> sbufs(k_msgs), rbufs(k_msgs);
  lci::comp_t scq = lci::alloc_cq(), rcq = lci::alloc_cq();
  int posted_sends = 0;
  for (int i = 0; i < k_msgs; ++i) {
    sbufs[i].resize(size_of(i));
    fill(sbufs[i].data(), sbufs[i].size(), seed_of(lci::get_rank_me(), 7, static_cast<uint32_t>(i)));
    rbufs[i].assign(size_of(i) + 8, static_cast<char>(lci_test::k_sentinel));
    const lci::status_t s = until_accepted(
        lci::post_send_x(next(), sbufs[i].data(), sbufs[i].size(), base + static_cast<lci::tag_t>(i), scq)
            .user_context(reinterpret_cast<void*>(static_cast<uintptr_t>(i + 1))),
        "many");
    CHECK(!s.is_retry());
    if (s.is_posted()) ++posted_sends;
  }
  // Receives in a shuffled order, the same on every rank.
  std::vector<int> order(k_msgs);
  for (int i = 0; i < k_msgs; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(12345));
  int posted_recvs = 0;
  std::vector<int> done_recvs;
  for (int i : order) {
    const lci::status_t s =
        lci::post_recv_x(prev(), rbufs[i].data(), rbufs[i].size(), base + static_cast<lci::tag_t>(i), rcq)
            .user_context(reinterpret_cast<void*>(static_cast<uintptr_t>(i + 1)))();
    if (s.is_posted())
      ++posted_recvs;
    else
      done_recvs.push_back(i);
  }
  std::vector<lci::status_t> rgot = pop_n(rcq, static_cast<size_t>(posted_recvs), "many receives");
  std::vector<lci::status_t> sgot = pop_n(scq, static_cast<size_t>(posted_sends), "many sends");
  CHECK(rgot.size() == static_cast<size_t>(posted_recvs));
  CHECK(sgot.size() == static_cast<size_t>(posted_sends));
  std::vector<int> seen(k_msgs, 0);
  for (int i : done_recvs) ++seen[i];
  for (const lci::status_t& s : rgot) {
    const int i = static_cast<int>(reinterpret_cast<uintptr_t>(s.get_user_context())) - 1;
    REQUIRE(i >= 0);
    REQUIRE(i < k_msgs);
    ++seen[i];
    CHECK(s.get_tag() == base + static_cast<lci::tag_t>(i));
    CHECK(s.get_size() == size_of(i));
    CHECK(s.get_rank() == prev());
    CHECK(s.get_buffer() == rbufs[i].data());
  }
  long bad = 0;
  for (int i = 0; i < k_msgs; ++i) {
    if (seen[i] != 1) ++bad;
    if (mismatch(rbufs[i].data(), size_of(i), seed_of(prev(), 7, static_cast<uint32_t>(i))) != SIZE_MAX)
      ++bad;
    if (lci_test::not_byte(rbufs[i].data(), size_of(i), rbufs[i].size(), lci_test::k_sentinel) != SIZE_MAX)
      ++bad;
  }
  CHECK(bad == 0);
  lci::free_comp(&scq);
  lci::free_comp(&rcq);
  barrier();
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

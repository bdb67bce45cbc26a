// lci.hpp's backlog: with a packet pool of 64 (set_g_default_attr before
// g_runtime_init), thousands of active messages posted with
// allow_retry(false) and no progress in between. Each post returns done,
// done_backlog, posted or posted_backlog, never retry; the backlog is
// used; every message arrives exactly once, the eager ones in the order
// posted, with their bytes (a done_backlog message's buffer is reused at
// once: LCI kept a copy); upackets given to LCI come back to the pool.
#include <cstdlib>
#include <cstring>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

constexpr size_t k_npackets = 64;

size_t size_of(uint32_t seq) {
  if (seq % 25 == 24) return lci::get_max_bcopy_size() + 500;  // rendezvous
  return sizeof(uint32_t) + seq % 300;
}

// Packets the program can take from the pool now (all given back).
size_t free_upackets() {
  std::vector<void*> held;
  for (void* p; held.size() < 4 * k_npackets && (p = lci::get_upacket()) != nullptr;)
    held.push_back(p);
  for (void* p : held) lci::put_upacket(p);
  return held.size();
}

}  // namespace

TEST_CASE("the pool is the one set before g_runtime_init") {
  CHECK(lci::get_default_packet_pool().get_attr_npackets() == k_npackets);
  CHECK(free_upackets() <= k_npackets);
}

TEST_CASE("allow_retry(false) under a full pool: the backlog, exactly once, in order") {
  lci::comp_t handler = lci::alloc_handler(&handler_record);
  const lci::rcomp_t rcomp = lci::register_rcomp(handler);
  barrier();
  const size_t upackets_before = free_upackets();
  lci::comp_t local = lci::alloc_cq();
  const uint32_t k_msgs = 3000;
  const int me = lci::get_rank_me();
  std::vector<char> eager(lci::get_max_bcopy_size());
  std::vector<std::vector<char>> rdv;  // kept until their local completion
  long codes[static_cast<int>(lci::errorcode_t::fatal) + 1] = {};
  long expected_local = 0;
  for (uint32_t seq = 0; seq < k_msgs; ++seq) {
    const size_t size = size_of(seq);
    char* buf;
    if (size > eager.size()) {
      rdv.emplace_back(size);
      buf = rdv.back().data();
    } else {
      buf = eager.data();  // reused at once: a backlogged copy must be LCI's
    }
    fill(buf, size, seed_of(static_cast<uint32_t>(me), seq));
    std::memcpy(buf, &seq, sizeof(seq));
    lci::status_t s;
    if (seq % 500 == 250) {
      // Without a completion object: complete in the call, behind the backlog.
      s = lci::post_am_x(next(), buf, size, lci::COMP_NULL, rcomp).tag(seq % 1000)();
      CHECK(s.is_done());
    } else if (seq % 500 == 499) {
      // With retry allowed, behind a backlog: retry_backlog until it drained.
      lci_test::deadline d(k_wait_s);
      while ((s = lci::post_am_x(next(), buf, size, local, rcomp).tag(seq % 1000)()).is_retry()) {
        ++codes[static_cast<int>(s.get_error().errorcode)];
        lci::progress();
        if (d.passed()) fatal("post_am refused for too long");
      }
    } else {
      s = lci::post_am_x(next(), buf, size, local, rcomp).tag(seq % 1000).allow_retry(false)();
      CHECK_FALSE(s.is_retry());
    }
    ++codes[static_cast<int>(s.get_error().errorcode)];
    if (s.is_posted()) ++expected_local;
  }
  const long backlogged = codes[static_cast<int>(lci::errorcode_t::done_backlog)] +
                          codes[static_cast<int>(lci::errorcode_t::posted_backlog)];
  MESSAGE("done ", codes[static_cast<int>(lci::errorcode_t::done)], ", done_backlog ",
          codes[static_cast<int>(lci::errorcode_t::done_backlog)], ", posted ",
          codes[static_cast<int>(lci::errorcode_t::posted)], ", posted_backlog ",
          codes[static_cast<int>(lci::errorcode_t::posted_backlog)], ", retry_backlog ",
          codes[static_cast<int>(lci::errorcode_t::retry_backlog)]);
  CHECK(backlogged > 0);
  CHECK(codes[static_cast<int>(lci::errorcode_t::fatal)] == 0);

  progress_until([&] { return handler_count() >= k_msgs; }, "every active message");
  std::vector<lci::status_t> got = handler_take();
  CHECK(got.size() == k_msgs);
  std::vector<int> seen(k_msgs, 0);
  long bad_data = 0, bad_fields = 0, out_of_order = 0;
  long last_eager = -1;
  for (const lci::status_t& s : got) {
    uint32_t seq = UINT32_MAX;
    if (s.get_size() >= sizeof(seq)) std::memcpy(&seq, s.get_buffer(), sizeof(seq));
    if (seq >= k_msgs) {
      ++bad_fields;
      std::free(s.get_buffer());
      continue;
    }
    ++seen[seq];
    if (s.get_size() != size_of(seq) || s.get_rank() != prev() || s.get_tag() != seq % 1000 ||
        s.get_user_context() != nullptr)
      ++bad_fields;
    if (mismatch(static_cast<char*>(s.get_buffer()) + sizeof(seq), size_of(seq) - sizeof(seq),
                 seed_of(static_cast<uint32_t>(prev()), seq)) != SIZE_MAX) {
      // The pattern's first four bytes carry seq: compare from byte 4 on.
      std::vector<char> want(size_of(seq));
      fill(want.data(), want.size(), seed_of(static_cast<uint32_t>(prev()), seq));
      if (std::memcmp(want.data() + sizeof(seq), static_cast<char*>(s.get_buffer()) + sizeof(seq),
                      want.size() - sizeof(seq)) != 0)
        ++bad_data;
    }
    // Eager messages arrive in the order posted (a rendezvous one completes
    // when its data is in, which may be after later eager ones).
    if (size_of(seq) <= lci::get_max_bcopy_size()) {
      if (static_cast<long>(seq) < last_eager) ++out_of_order;
      last_eager = seq;
    }
    std::free(s.get_buffer());
  }
  long missing_or_twice = 0;
  for (uint32_t i = 0; i < k_msgs; ++i)
    if (seen[i] != 1) ++missing_or_twice;
  CHECK(missing_or_twice == 0);
  CHECK(bad_fields == 0);
  CHECK(bad_data == 0);
  CHECK(out_of_order == 0);
  CHECK(pop_n(local, static_cast<size_t>(expected_local), "local completions").size() ==
        static_cast<size_t>(expected_local));
  lci::wait_drained();
  CHECK(lci::test_drained().is_done());
  barrier();
  // None lost (more may be free now than while the ring was busy before).
  CHECK(free_upackets() >= upackets_before);
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&handler);
}

TEST_CASE("upackets sent as active messages under pressure all come back") {
  lci::comp_t cq = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(cq);
  barrier();
  const size_t before = free_upackets();
  const int k_msgs = static_cast<int>(8 * k_npackets);
  int received = 0;
  for (int i = 0; i < k_msgs; ++i) {
    void* p = nullptr;
    progress_until([&] {
      for (lci::status_t s; !(s = lci::cq_pop(cq)).is_retry(); ++received) std::free(s.get_buffer());
      return (p = lci::get_upacket()) != nullptr;
    }, "a upacket");
    fill(p, 64, seed_of(static_cast<uint32_t>(lci::get_rank_me()), 5, static_cast<uint32_t>(i)));
    const lci::status_t s =
        lci::post_am_x(next(), p, 64, lci::COMP_NULL_RETRY, rcomp).allow_retry(false)();
    CHECK(s.is_done());
  }
  progress_until([&] {
    for (lci::status_t s; !(s = lci::cq_pop(cq)).is_retry(); ++received) std::free(s.get_buffer());
    return received >= k_msgs;
  }, "upacket arrivals");
  CHECK(received == k_msgs);
  lci::wait_drained();
  barrier();
  CHECK(free_upackets() >= before);
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&cq);
}

int main(int argc, char** argv) {
  lci::global_initialize();
  lci::global_attr_t attr = lci::get_g_default_attr();
  attr.npackets = k_npackets;
  lci::set_g_default_attr(attr);
  const int rc = run_in_global_runtime(argc, argv);
  lci::global_finalize();
  return rc;
}

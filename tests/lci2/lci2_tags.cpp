// lci.hpp's tags up to get_attr_max_tag() = 2^32-1 around the ring: tags
// at and beyond the 16 bits of the message header (65535, 65536,
// 0x12345678, 0xFFFFFFFF) in sends and receives at every size, eager and
// rendezvous, with the receive posted first or the message there first;
// the sender's completion and the receiver's report the whole tag, also to
// an ANY_TAG receive; tags that differ only in their upper 16 bits match
// their own receives; active messages and puts with a remote completion
// carry the whole tag; a tag beyond 2^32-1 is refused.
#include <cstring>
#include <string>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

const lci::tag_t k_tags[] = {65535, 65536, 0x12345678, 0xFFFFFFFF};
constexpr lci::tag_t k_beyond = lci::tag_t{1} << 32;

size_t max_bcopy() { return lci::get_max_bcopy_size(); }

// Sizes on both sides of the eager limit.
std::vector<size_t> sizes() {
  const size_t m = max_bcopy();
  return {0, 8, m - 1, m, m + 1, 64 * 1024};
}

uint32_t seed(int rank, lci::tag_t tag, size_t size) {
  return seed_of(static_cast<uint32_t>(rank), static_cast<uint32_t>(tag),
                 static_cast<uint32_t>(tag >> 16), static_cast<uint32_t>(size));
}

// The statuses of an exchange: those returned done and those popped from
// `cq` for the posted ones.
std::vector<lci::status_t> statuses(lci::comp_t cq, const lci::status_t& ss,
                                    const lci::status_t& rs, const char* what) {
  const size_t n = (ss.is_posted() ? 1 : 0) + (rs.is_posted() ? 1 : 0);
  std::vector<lci::status_t> all = pop_n(cq, n, what);
  CHECK(all.size() == n);
  if (ss.is_done()) all.push_back(ss);
  if (rs.is_done()) all.push_back(rs);
  return all;
}

// One exchange of `size` bytes with `tag` around the ring. The receive is
// posted with `recv_tag` (ANY_TAG or tag) under `policy`; with
// `recv_first` false the message is sent (and the ranks meet) before the
// receive is posted, so that it waits in the matching table. With
// `allow_done` false every completion goes through the cq.
void exchange(lci::tag_t tag, size_t size, bool recv_first, bool allow_done,
              lci::matching_policy_t policy = lci::matching_policy_t::rank_tag,
              bool any_tag = false) {
  INFO("tag ", tag, ", size ", size, ", recv_first ", recv_first, ", allow_done ", allow_done,
       ", policy ", static_cast<int>(policy), ", any_tag ", any_tag);
  const int me = lci::get_rank_me();
  std::vector<char> sbuf(size + 1), rbuf(size + 1, static_cast<char>(lci_test::k_sentinel));
  fill(sbuf.data(), size, seed(me, tag, size));
  int sctx = 0, rctx = 0;
  lci::comp_t cq = lci::alloc_cq();
  auto recv = [&] {
    return lci::post_recv_x(prev(), rbuf.data(), size, any_tag ? lci::ANY_TAG : tag, cq)
        .matching_policy(policy)
        .allow_done(allow_done)
        .user_context(&rctx)();
  };
  auto send = [&] {
    return until_accepted(lci::post_send_x(next(), sbuf.data(), size, tag, cq)
                              .matching_policy(policy)
                              .allow_done(allow_done)
                              .user_context(&sctx),
                          "post_send");
  };
  lci::status_t rs, ss;
  if (recv_first) {
    rs = recv();
    ss = send();
  } else {
    ss = send();
    barrier();
    rs = recv();
  }
  CHECK_FALSE(ss.is_retry());
  CHECK_FALSE(rs.is_retry());
  if (!allow_done) {
    CHECK(ss.is_posted());
    CHECK(rs.is_posted());
  }
  int sends = 0, recvs = 0;
  for (const lci::status_t& s : statuses(cq, ss, rs, "an exchange")) {
    CHECK(s.is_done());
    CHECK(s.get_tag() == tag);  // the whole tag, also for ANY_TAG
    CHECK(s.get_size() == size);
    if (s.get_user_context() == &sctx) {
      ++sends;
      CHECK(s.get_rank() == next());
      CHECK(s.get_buffer() == sbuf.data());
    } else {
      ++recvs;
      CHECK(s.get_user_context() == &rctx);
      CHECK(s.get_rank() == prev());
      CHECK(s.get_buffer() == rbuf.data());
    }
  }
  CHECK(sends == 1);
  CHECK(recvs == 1);
  CHECK(mismatch(rbuf.data(), size, seed(prev(), tag, size)) == SIZE_MAX);
  CHECK(lci_test::not_byte(rbuf.data(), size, rbuf.size(), lci_test::k_sentinel) == SIZE_MAX);
  CHECK(cq_stays_empty(cq));
  lci::free_comp(&cq);
  barrier();
}

// `what` threw std::runtime_error naming the max_tag.
template <class F>
void check_refused(F what) {
  std::string message;
  try {
    what();
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  INFO("message: ", message);
  CHECK(message.find("4294967295") != std::string::npos);
}

}  // namespace

TEST_CASE("max_tag is 2^32-1; a tag beyond it is refused") {
  CHECK(lci::get_g_runtime().get_attr_max_tag() == 0xFFFFFFFFu);
  CHECK(lci::get_g_runtime().get_attr_max_imm_tag() == 0xFFFFu);
  char buf[16] = {};
  lci::comp_t cq = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(cq);
  check_refused([&] { lci::post_send(next(), buf, 8, k_beyond, cq); });
  check_refused([&] { lci::post_recv(prev(), buf, 8, k_beyond, cq); });
  check_refused([&] { lci::post_send_x(next(), buf, 8, k_beyond, cq).allow_done(false)(); });
  check_refused([&] { lci::post_recv_x(prev(), buf, 8, k_beyond, cq).allow_done(false)(); });
  check_refused([&] { lci::post_am_x(next(), buf, 8, cq, rcomp).tag(k_beyond)(); });
  std::vector<char> big(max_bcopy() + 1);
  check_refused([&] { lci::post_send(next(), big.data(), big.size(), k_beyond + 0x10005, cq); });
  check_refused([&] {
    lci::post_put_x(next(), buf, 8, cq, 0, lci::RMR_NULL).remote_comp(rcomp).tag(k_beyond)();
  });
  CHECK(cq_stays_empty(cq));
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&cq);
  barrier();
}

TEST_CASE("wide tags: send and receive at every size, the receive first or the message") {
  for (lci::tag_t tag : k_tags)
    for (size_t size : sizes())
      for (bool recv_first : {true, false}) exchange(tag, size, recv_first, true);
}

TEST_CASE("wide tags: every completion through the cq reports the whole tag (sender's too)") {
  for (lci::tag_t tag : k_tags)
    for (size_t size : {size_t(8), max_bcopy(), max_bcopy() + 1, size_t(64 * 1024)})
      exchange(tag, size, true, false);
}

// (A send matches the receives of its own matching policy: an ANY_TAG
// receive, the sends of a policy without the tag.)
TEST_CASE("wide tags: receives that ignore the tag report the whole tag") {
  for (lci::tag_t tag : {lci::tag_t{0x12345678}, lci::tag_t{0xFFFFFFFF}})
    for (size_t size : {size_t(24), max_bcopy(), max_bcopy() + 100})
      for (bool recv_first : {true, false}) {
        exchange(tag, size, recv_first, true, lci::matching_policy_t::rank_only, true);
        exchange(tag, size, recv_first, true, lci::matching_policy_t::none, true);
        exchange(tag, size, recv_first, false, lci::matching_policy_t::tag_only, false);
      }
}

TEST_CASE("tags that differ only in their upper 16 bits match their own receives") {
  const lci::tag_t tags[] = {0x10005, 0x20005, 5};
  for (size_t size : {size_t(24), max_bcopy(), max_bcopy() + 1, size_t(64 * 1024)})
    for (bool recv_first : {true, false}) {
      INFO("size ", size, ", recv_first ", recv_first);
      std::vector<std::vector<char>> rbufs(3), sbufs(3);
      for (int i = 0; i < 3; ++i) {
        rbufs[i].assign(size, static_cast<char>(lci_test::k_sentinel));
        sbufs[i].resize(size);
        fill(sbufs[i].data(), size, seed(lci::get_rank_me(), tags[i], size));
      }
      lci::comp_t cq = lci::alloc_cq();
      size_t posted = 0;
      auto post_recvs = [&] {
        for (int i = 0; i < 3; ++i) {
          const lci::status_t s =
              lci::post_recv_x(prev(), rbufs[i].data(), size, tags[i], cq).allow_done(false)();
          CHECK(s.is_posted());
          ++posted;
        }
      };
      if (recv_first) {
        post_recvs();
        barrier();
      }
      // Sent in another order than received: 0x20005, then 5, then 0x10005.
      for (int i : {1, 2, 0}) {
        const lci::status_t s = until_accepted(
            lci::post_send_x(next(), sbufs[i].data(), size, tags[i], cq).allow_done(false),
            "post_send");
        CHECK(s.is_posted());
        ++posted;
      }
      if (!recv_first) {
        barrier();
        post_recvs();
      }
      for (const lci::status_t& s : pop_n(cq, posted, "the three exchanges")) {
        CHECK(s.is_done());
        CHECK(s.get_size() == size);
        for (int i = 0; i < 3; ++i) {
          if (s.get_buffer() == rbufs[i].data()) CHECK(s.get_tag() == tags[i]);
          if (s.get_buffer() == sbufs[i].data()) CHECK(s.get_tag() == tags[i]);
        }
      }
      for (int i = 0; i < 3; ++i) {
        INFO("tag ", tags[i]);
        CHECK(mismatch(rbufs[i].data(), size, seed(prev(), tags[i], size)) == SIZE_MAX);
      }
      CHECK(cq_stays_empty(cq));
      lci::free_comp(&cq);
      barrier();
    }
}

TEST_CASE("wide tags: active messages at every size; the local completion too") {
  lci::comp_t target = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(target);
  lci::comp_t local = lci::alloc_cq();
  barrier();
  for (lci::tag_t tag : k_tags)
    for (size_t size : sizes())
      for (bool allow_done : {true, false}) {
        INFO("tag ", tag, ", size ", size, ", allow_done ", allow_done);
        std::vector<char> buf(size + 1);
        fill(buf.data(), size, seed(lci::get_rank_me(), tag, size));
        int ctx = 0;
        const lci::status_t s = until_accepted(
            lci::post_am_x(next(), buf.data(), size, local, rcomp)
                .tag(tag)
                .allow_done(allow_done)
                .user_context(&ctx),
            "post_am");
        lci::status_t mine = s;
        if (s.is_posted()) {
          std::vector<lci::status_t> got = pop_n(local, 1, "an active message's local completion");
          REQUIRE(got.size() == 1);
          mine = got[0];
        }
        CHECK(mine.is_done());
        CHECK(mine.get_tag() == tag);
        CHECK(mine.get_rank() == next());
        CHECK(mine.get_size() == size);
        CHECK(mine.get_user_context() == &ctx);
        std::vector<lci::status_t> arrived = pop_n(target, 1, "an active message");
        REQUIRE(arrived.size() == 1);
        const lci::status_t& a = arrived[0];
        CHECK(a.is_done());
        CHECK(a.get_rank() == prev());
        CHECK(a.get_tag() == tag);
        CHECK(a.get_size() == size);
        if (size) {
          REQUIRE(a.get_buffer() != nullptr);
          CHECK(mismatch(a.get_buffer(), size, seed(prev(), tag, size)) == SIZE_MAX);
        }
        std::free(a.get_buffer());
        barrier();
      }
  CHECK(cq_stays_empty(target));
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&target);
}

TEST_CASE("wide tags: a put with a remote completion reports the whole tag at the target") {
  const size_t m = max_bcopy();
  const std::vector<size_t> put_sizes = {8, m, m + 1, 64 * 1024};
  std::vector<char> mem(put_sizes.size() * (64 * 1024 + 64),
                        static_cast<char>(lci_test::k_sentinel));
  lci::mr_t mr = lci::register_memory(mem.data(), mem.size());
  const lci::rmr_t mine = lci::get_rmr(mr);
  std::vector<lci::rmr_t> rmrs;
  for (const auto& blob : allgather(&mine, sizeof(mine))) {
    lci::rmr_t r;
    std::memcpy(&r, blob.data(), sizeof(r));
    rmrs.push_back(r);
  }
  lci::comp_t target = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(target);
  lci::comp_t local = lci::alloc_cq();
  barrier();
  for (lci::tag_t tag : k_tags) {
    size_t offset = 0;
    for (size_t size : put_sizes) {
      INFO("tag ", tag, ", size ", size);
      std::vector<char> src(size);
      fill(src.data(), size, seed(lci::get_rank_me(), tag, size));
      const lci::status_t s = until_accepted(
          lci::post_put_x(next(), src.data(), size, local, offset, rmrs[next()])
              .remote_comp(rcomp)
              .tag(tag),
          "post_put");
      if (s.is_posted()) {
        std::vector<lci::status_t> got = pop_n(local, 1, "a put's local completion");
        REQUIRE(got.size() == 1);
        CHECK(got[0].get_tag() == tag);
      }
      std::vector<lci::status_t> arrived = pop_n(target, 1, "a put's notification");
      REQUIRE(arrived.size() == 1);
      CHECK(arrived[0].is_done());
      CHECK(arrived[0].get_rank() == prev());
      CHECK(arrived[0].get_tag() == tag);
      CHECK(mismatch(mem.data() + offset, size, seed(prev(), tag, size)) == SIZE_MAX);
      offset += size + 64;
      barrier();
    }
  }
  CHECK(cq_stays_empty(target));
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&target);
  lci::deregister_memory(&mr);
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

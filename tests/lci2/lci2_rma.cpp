// lci.hpp's one-sided operations around the ring: a window registered with
// register_memory, its rmr_t copied byte for byte to the other ranks,
// post_put with a remote completion (the target's status: rank = source,
// tag, user_context nullptr; the bytes in its window), post_get (with and
// without a remote completion), a registered local buffer (.mr), and
// deregister_memory.
#include <cstring>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

constexpr size_t k_window = 2 * 1024 * 1024;
constexpr size_t k_get_region = 1024 * 1024;  // [1 MiB, 2 MiB): what gets read

struct window {
  std::vector<char> mem;
  lci::mr_t mr;
  std::vector<lci::rmr_t> rmrs;  // by rank
};

window make_window() {
  window w;
  w.mem.assign(k_window, static_cast<char>(lci_test::k_sentinel));
  fill(w.mem.data() + k_get_region, k_window - k_get_region,
       seed_of(static_cast<uint32_t>(lci::get_rank_me()), 77));
  w.mr = lci::register_memory(w.mem.data(), w.mem.size());
  REQUIRE_FALSE(w.mr.is_empty());
  const lci::rmr_t mine = lci::get_rmr(w.mr);
  CHECK_FALSE(mine.is_empty());
  CHECK(mine.base == reinterpret_cast<uintptr_t>(w.mem.data()));
  for (const auto& blob : allgather(&mine, sizeof(mine))) {
    lci::rmr_t r;
    std::memcpy(&r, blob.data(), sizeof(r));
    w.rmrs.push_back(r);
  }
  return w;
}

void free_window(window& w) {
  lci::deregister_memory(&w.mr);
  CHECK(w.mr.is_empty());
}

// Waits for a local completion when `s` is posted; checks it.
void local_completion(const lci::status_t& s, lci::comp_t cq, size_t size, void* ctx) {
  CHECK((s.is_done() || s.is_posted()));
  if (!s.is_posted()) return;
  std::vector<lci::status_t> got = pop_n(cq, 1, "a one-sided local completion");
  REQUIRE(got.size() == 1);
  CHECK(got[0].is_done());
  CHECK(got[0].get_rank() == next());
  CHECK(got[0].get_size() == size);
  CHECK(got[0].get_user_context() == ctx);
}

}  // namespace

TEST_CASE("post_put with a remote completion; the data at the target") {
  window w = make_window();
  lci::comp_t target = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(target);
  barrier();
  lci::comp_t local = lci::alloc_cq();
  const size_t m = lci::get_max_bcopy_size();
  const std::vector<size_t> sizes = {8, m, m + 1, 64 * 1024, 512 * 1024};
  size_t offset = 0;
  std::vector<size_t> offsets;
  for (size_t i = 0; i < sizes.size(); ++i) {
    offsets.push_back(offset);
    std::vector<char> src(sizes[i]);
    fill(src.data(), src.size(), seed_of(static_cast<uint32_t>(lci::get_rank_me()), 1, static_cast<uint32_t>(i)));
    int ctx = 0;
    lci::status_t s;
    lci_test::deadline d(k_wait_s);
    while ((s = lci::post_put_x(next(), src.data(), src.size(), local, offset, w.rmrs[next()])
                    .remote_comp(rcomp)
                    .tag(300 + i)
                    .user_context(&ctx)())
               .is_retry()) {
      lci::progress();
      if (d.passed()) fatal("post_put refused for too long");
    }
    local_completion(s, local, src.size(), &ctx);
    offset += sizes[i] + 64;
  }
  std::vector<lci::status_t> got = pop_n(target, sizes.size(), "put notifications");
  CHECK(got.size() == sizes.size());
  for (const lci::status_t& s : got) {
    CHECK(s.is_done());
    CHECK(s.get_rank() == prev());
    CHECK(s.get_user_context() == nullptr);
    REQUIRE(s.get_tag() >= 300);
    REQUIRE(s.get_tag() < 300 + sizes.size());
  }
  // Every notification came: every put's bytes are in the window.
  for (size_t i = 0; i < sizes.size(); ++i) {
    INFO("put ", i, " of ", sizes[i], " bytes");
    CHECK(mismatch(w.mem.data() + offsets[i], sizes[i],
                   seed_of(static_cast<uint32_t>(prev()), 1, static_cast<uint32_t>(i))) == SIZE_MAX);
    CHECK(lci_test::not_byte(w.mem.data(), offsets[i] + sizes[i], offsets[i] + sizes[i] + 64,
                             lci_test::k_sentinel) == SIZE_MAX);
  }
  CHECK(cq_stays_empty(target));
  barrier();
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&local);
  lci::free_comp(&target);
  free_window(w);
}

TEST_CASE("post_get, with and without a remote completion; a registered local buffer") {
  window w = make_window();
  lci::comp_t target = lci::alloc_cq();
  const lci::rcomp_t rcomp = lci::register_rcomp(target);
  barrier();
  const uint32_t remote_seed = seed_of(static_cast<uint32_t>(next()), 77);
  std::vector<char> want(k_window - k_get_region);
  fill(want.data(), want.size(), remote_seed);
  struct get_case {
    size_t offset, size;
    bool notify, registered;
  };
  const get_case cases[] = {{0, 8, false, false},
                            {100, lci::get_max_bcopy_size(), true, false},
                            {4096, 300000, false, true},
                            {1000, 500000, true, true}};
  int notified = 0;
  lci::tag_t tag = 400;
  for (const get_case& gc : cases) {
    INFO("get of ", gc.size, " bytes at ", gc.offset, gc.notify ? ", notified" : "",
         gc.registered ? ", into registered memory" : "");
    std::vector<char> dst(gc.size, static_cast<char>(lci_test::k_sentinel));
    lci::mr_t mr;
    if (gc.registered) mr = lci::register_memory(dst.data(), dst.size());
    lci::comp_t sync = lci::alloc_sync();
    int ctx = 0;
    lci::post_get_x op(next(), dst.data(), dst.size(), sync, k_get_region + gc.offset,
                       w.rmrs[next()]);
    op.user_context(&ctx).mr(mr).tag(tag);
    if (gc.notify) op.remote_comp(rcomp);
    lci::status_t s;
    lci_test::deadline d(k_wait_s);
    while ((s = op()).is_retry()) {
      lci::progress();
      if (d.passed()) fatal("post_get refused for too long");
    }
    CHECK((s.is_done() || s.is_posted()));
    if (s.is_posted()) {
      lci::status_t out;
      lci::sync_wait(sync, &out);
      CHECK(out.get_rank() == next());
      CHECK(out.get_size() == gc.size);
      CHECK(out.get_user_context() == &ctx);
    }
    CHECK(std::memcmp(dst.data(), want.data() + gc.offset, gc.size) == 0);
    if (gc.notify) ++notified;
    if (gc.registered) lci::deregister_memory(&mr);
    lci::free_comp(&sync);
    ++tag;
  }
  std::vector<lci::status_t> got = pop_n(target, static_cast<size_t>(notified), "get notifications");
  CHECK(got.size() == static_cast<size_t>(notified));
  for (const lci::status_t& s : got) {
    CHECK(s.get_rank() == prev());
    CHECK(s.get_user_context() == nullptr);
  }
  barrier();
  lci::deregister_rcomp(rcomp);
  lci::free_comp(&target);
  free_window(w);
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

// lci.hpp's network layer (net_*): a send to the rank itself (LCI 2's
// loopback test), raw sends and receives around the ring with their bytes
// and statuses (opcode, rank, length, user_context, imm_data), a receive
// posted after its message arrived, many messages in order, put, get and
// putImm (and their inject forms) with the bytes at the target, fetch-add
// and add, many threads posting and polling at once, and the refusals.
// Every case consumes all the completions it caused before its closing
// barrier, so that no message of one case meets a receive of the next.
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

// Polls the default device until n statuses came (fatal after k_wait_s).
std::vector<lci::net_status_t> poll_n(size_t n, const char* what) {
  std::vector<lci::net_status_t> out;
  lci_test::deadline d(k_wait_s);
  while (out.size() < n) {
    lci::net_status_t st[8];
    const size_t want = n - out.size() < 8 ? n - out.size() : 8;
    const size_t got = lci::net_poll_cq(want, st);
    out.insert(out.end(), st, st + got);
    if (got == 0 && d.passed()) fatal(std::string("timed out waiting for ") + what);
  }
  return out;
}

// Polls a while and says whether no status came.
bool cq_stays_quiet() {
  for (int i = 0; i < 2000; ++i)
    if (lci::net_poll_cq(1, nullptr) != 0) return false;
  return true;
}

template <class Op>
lci::error_t post_retrying(Op op, const char* what) {
  lci_test::deadline d(k_wait_s);
  lci::error_t e;
  while ((e = op()).is_retry()) {
    lci::net_poll_cq(0, nullptr);
    if (d.passed()) fatal(std::string(what) + " refused for too long");
  }
  return e;
}

void* ctx_of(uintptr_t v) { return reinterpret_cast<void*>(v); }

struct window {
  std::vector<char> mem;
  lci::mr_t mr;
  std::vector<lci::rmr_t> rmrs;  // by rank
};

window make_window(size_t bytes) {
  window w;
  w.mem.assign(bytes, static_cast<char>(lci_test::k_sentinel));
  w.mr = lci::register_memory(w.mem.data(), w.mem.size());
  const lci::rmr_t mine = lci::get_rmr(w.mr);
  for (const auto& blob : allgather(&mine, sizeof(mine))) {
    lci::rmr_t r;
    std::memcpy(&r, blob.data(), sizeof(r));
    w.rmrs.push_back(r);
  }
  return w;
}

}  // namespace

TEST_CASE("net_poll_cq of an idle device takes nothing; opcode names") {
  lci::net_status_t st[4];
  CHECK(lci::net_poll_cq(4, st) == 0);
  CHECK(lci::net_poll_cq_x(4, nullptr).device(lci::get_default_device())() == 0);
  CHECK(std::string(lci::get_net_opcode_str(lci::net_opcode_t::REMOTE_WRITE)) == "REMOTE_WRITE");
  CHECK(lci::get_g_runtime().p_impl != nullptr);
  CHECK(lci::get_default_net_context().get_attr_atomic_scope() == lci::net_atomic_scope_t::GLOBAL);
  barrier();
}

TEST_CASE("loopback: a send to the rank itself completes a send and a receive") {
  const int me = lci::get_rank_me();
  std::vector<char> out(1024), in(1024, 0);
  fill(out.data(), out.size(), seed_of(static_cast<uint32_t>(me), 1));
  lci::mr_t mr = lci::register_memory(in.data(), in.size());
  CHECK(lci::net_post_recv_x(in.data(), in.size(), mr).user_context(ctx_of(1))().is_posted());
  const lci::error_t e = post_retrying(
      [&] {
        return lci::net_post_send_x(me, out.data(), out.size(), lci::MR_HOST)
            .imm_data(77)
            .user_context(ctx_of(2))();
      },
      "net_post_send");
  CHECK(e.is_posted());
  std::vector<lci::net_status_t> got = poll_n(2, "the loopback's completions");
  std::map<lci::net_opcode_t, lci::net_status_t> by_op;
  for (const auto& s : got) by_op[s.opcode] = s;
  REQUIRE(by_op.count(lci::net_opcode_t::SEND) == 1);
  REQUIRE(by_op.count(lci::net_opcode_t::RECV) == 1);
  CHECK(by_op[lci::net_opcode_t::SEND].user_context == ctx_of(2));
  CHECK(by_op[lci::net_opcode_t::SEND].rank == me);
  CHECK(by_op[lci::net_opcode_t::RECV].user_context == ctx_of(1));
  CHECK(by_op[lci::net_opcode_t::RECV].rank == me);
  CHECK(by_op[lci::net_opcode_t::RECV].length == out.size());
  CHECK(by_op[lci::net_opcode_t::RECV].imm_data == 77u);
  CHECK(std::memcmp(in.data(), out.data(), out.size()) == 0);
  lci::deregister_memory(&mr);
  barrier();
}

TEST_CASE("raw sends and receives around the ring: bytes and statuses") {
  const int me = lci::get_rank_me();
  const size_t m = lci::get_max_bcopy_size();
  const std::vector<size_t> sizes = {0, 1, 8, 100, 4096, m};
  std::vector<std::vector<char>> in(sizes.size()), out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    in[i].assign(sizes[i] + 16, static_cast<char>(lci_test::k_sentinel));
    CHECK(lci::net_post_recv_x(in[i].data(), in[i].size(), lci::MR_HOST)
              .user_context(ctx_of(100 + i))()
              .is_posted());
  }
  barrier();  // every rank's receives are posted
  for (size_t i = 0; i < sizes.size(); ++i) {
    out[i].resize(sizes[i]);
    fill(out[i].data(), out[i].size(), seed_of(static_cast<uint32_t>(me), 2, static_cast<uint32_t>(i)));
    const bool inject = i % 2 == 0;
    const lci::error_t e = post_retrying(
        [&] {
          return inject ? lci::net_post_sends_x(next(), out[i].data(), out[i].size())
                              .imm_data(static_cast<lci::net_imm_data_t>(0xa0000000u + i))()
                        : lci::net_post_send_x(next(), out[i].data(), out[i].size(), lci::MR_HOST)
                              .imm_data(static_cast<lci::net_imm_data_t>(0xa0000000u + i))
                              .user_context(ctx_of(200 + i))();
        },
        "a raw send");
    CHECK(inject ? e.is_done() : e.is_posted());
  }
  // One RECV per message, one SEND per posted (non-inject) send.
  const size_t sends = sizes.size() / 2;
  std::vector<lci::net_status_t> got = poll_n(sizes.size() + sends, "the ring's completions");
  size_t recv_index = 0, send_count = 0;
  for (const auto& s : got) {
    if (s.opcode == lci::net_opcode_t::SEND) {
      ++send_count;
      CHECK(s.rank == next());
      const uintptr_t c = reinterpret_cast<uintptr_t>(s.user_context);
      REQUIRE(c >= 200);
      REQUIRE(c < 200 + sizes.size());
      CHECK(s.length == sizes[c - 200]);
      continue;
    }
    REQUIRE(s.opcode == lci::net_opcode_t::RECV);
    // Receives are taken in the order they were posted, messages in the
    // order they were sent.
    const size_t i = recv_index++;
    CHECK(s.user_context == ctx_of(100 + i));
    CHECK(s.rank == prev());
    CHECK(s.length == sizes[i]);
    CHECK(s.imm_data == 0xa0000000u + i);
    CHECK(mismatch(in[i].data(), sizes[i], seed_of(static_cast<uint32_t>(prev()), 2, static_cast<uint32_t>(i))) ==
          SIZE_MAX);
    CHECK(lci_test::not_byte(in[i].data(), sizes[i], sizes[i] + 16, lci_test::k_sentinel) == SIZE_MAX);
  }
  CHECK(recv_index == sizes.size());
  CHECK(send_count == sends);
  CHECK(cq_stays_quiet());
  barrier();
}

TEST_CASE("a message that arrived before its receive waits for it") {
  const int me = lci::get_rank_me();
  std::vector<char> out(300), in(300, 0);
  fill(out.data(), out.size(), seed_of(static_cast<uint32_t>(me), 3));
  CHECK(post_retrying([&] { return lci::net_post_sends_x(next(), out.data(), out.size()).imm_data(5)(); },
                      "net_post_sends")
            .is_done());
  // The barrier's messages from prev() follow its send on the same
  // connection: the send has arrived here, and nothing completed without a
  // receive.
  barrier();
  CHECK(cq_stays_quiet());
  CHECK(lci::net_post_recv_x(in.data(), in.size(), lci::MR_HOST).user_context(ctx_of(9))().is_posted());
  std::vector<lci::net_status_t> got = poll_n(1, "the early message");
  CHECK(got[0].opcode == lci::net_opcode_t::RECV);
  CHECK(got[0].rank == prev());
  CHECK(got[0].length == out.size());
  CHECK(got[0].imm_data == 5u);
  CHECK(got[0].user_context == ctx_of(9));
  CHECK(mismatch(in.data(), in.size(), seed_of(static_cast<uint32_t>(prev()), 3)) == SIZE_MAX);
  barrier();
}

TEST_CASE("many messages arrive in the order they were sent") {
  constexpr int k_n = 500;
  std::vector<uint32_t> in(k_n, 0);
  // Half the receives before the sends, half after.
  for (int i = 0; i < k_n / 2; ++i)
    CHECK(lci::net_post_recv_x(&in[i], sizeof(uint32_t), lci::MR_HOST).user_context(ctx_of(i))().is_posted());
  barrier();
  for (int i = 0; i < k_n; ++i) {
    const uint32_t v = 7000u + static_cast<uint32_t>(i);
    post_retrying([&] { return lci::net_post_sends_x(next(), const_cast<uint32_t*>(&v), sizeof(v)).imm_data(v)(); },
                  "net_post_sends");
  }
  for (int i = k_n / 2; i < k_n; ++i)
    CHECK(lci::net_post_recv_x(&in[i], sizeof(uint32_t), lci::MR_HOST).user_context(ctx_of(i))().is_posted());
  std::vector<lci::net_status_t> got = poll_n(k_n, "500 messages");
  long out_of_order = 0;
  for (int i = 0; i < k_n; ++i) {
    if (got[i].opcode != lci::net_opcode_t::RECV || got[i].user_context != ctx_of(i) ||
        got[i].imm_data != 7000u + static_cast<uint32_t>(i) || in[i] != 7000u + static_cast<uint32_t>(i))
      ++out_of_order;
  }
  CHECK(out_of_order == 0);
  barrier();
}

TEST_CASE("put, get and putImm, and their inject forms: the bytes and the statuses") {
  const int me = lci::get_rank_me();
  const size_t m = lci::get_max_bcopy_size();
  constexpr size_t k_window = 1024 * 1024;
  window w = make_window(k_window);
  const lci::rmr_t peer = w.rmrs[next()];
  // At the target: [0, 64K) puts, [64K, 128K) putImms, [512K, 1M) read by gets.
  fill(w.mem.data() + 512 * 1024, 512 * 1024, seed_of(static_cast<uint32_t>(me), 40));
  barrier();
  std::vector<char> p1(200000), p2(m), p3(5000), p4(64);
  fill(p1.data(), p1.size(), seed_of(static_cast<uint32_t>(me), 41));
  fill(p2.data(), p2.size(), seed_of(static_cast<uint32_t>(me), 42));
  fill(p3.data(), p3.size(), seed_of(static_cast<uint32_t>(me), 43));
  fill(p4.data(), p4.size(), seed_of(static_cast<uint32_t>(me), 44));
  std::vector<char> g1(300000, 0);
  lci::mr_t g1_mr = lci::register_memory(g1.data(), g1.size());
  // put (posted, WRITE), puts (done), putImm (WRITE here, REMOTE_WRITE
  // there), putImms (done here, REMOTE_WRITE there), get (READ).
  CHECK(post_retrying([&] { return lci::net_post_put_x(next(), p1.data(), p1.size(), lci::MR_HOST, 0, peer).user_context(ctx_of(1))(); },
                      "net_post_put")
            .is_posted());
  CHECK(post_retrying([&] { return lci::net_post_puts(next(), p4.data(), p4.size(), 250000, peer); },
                      "net_post_puts")
            .is_done());
  CHECK(post_retrying([&] {
          return lci::net_post_putImm_x(next(), p2.data(), p2.size(), lci::MR_HOST, 300000, peer)
              .imm_data(0xbeef0001u)
              .user_context(ctx_of(2))();
        },
                      "net_post_putImm")
            .is_posted());
  CHECK(post_retrying([&] { return lci::net_post_putImms_x(next(), p3.data(), p3.size(), 400000, peer).imm_data(0xbeef0002u)(); },
                      "net_post_putImms")
            .is_done());
  CHECK(post_retrying([&] { return lci::net_post_get_x(next(), g1.data(), g1.size(), g1_mr, 512 * 1024, peer).user_context(ctx_of(3))(); },
                      "net_post_get")
            .is_posted());
  // Here: WRITE (put), WRITE (putImm), READ; from prev(): two REMOTE_WRITEs.
  std::vector<lci::net_status_t> got = poll_n(5, "the one-sided completions");
  int writes = 0, reads = 0, remote = 0;
  for (const auto& s : got) {
    INFO("opcode ", lci::get_net_opcode_str(s.opcode));
    switch (s.opcode) {
      case lci::net_opcode_t::WRITE:
        ++writes;
        CHECK(s.rank == next());
        CHECK((s.user_context == ctx_of(1) || s.user_context == ctx_of(2)));
        CHECK(s.length == (s.user_context == ctx_of(1) ? p1.size() : p2.size()));
        break;
      case lci::net_opcode_t::READ:
        ++reads;
        CHECK(s.rank == next());
        CHECK(s.user_context == ctx_of(3));
        CHECK(s.length == g1.size());
        break;
      case lci::net_opcode_t::REMOTE_WRITE:
        ++remote;
        CHECK(s.rank == prev());
        CHECK(s.user_context == nullptr);
        if (s.imm_data == 0xbeef0001u) {
          CHECK(s.length == m);
          CHECK(mismatch(w.mem.data() + 300000, m, seed_of(static_cast<uint32_t>(prev()), 42)) == SIZE_MAX);
        } else {
          CHECK(s.imm_data == 0xbeef0002u);
          CHECK(s.length == p3.size());
          CHECK(mismatch(w.mem.data() + 400000, p3.size(), seed_of(static_cast<uint32_t>(prev()), 43)) ==
                SIZE_MAX);
        }
        break;
      default:
        FAIL("unexpected opcode");
    }
  }
  CHECK(writes == 2);
  CHECK(reads == 1);
  CHECK(remote == 2);
  CHECK(mismatch(g1.data(), g1.size(), seed_of(static_cast<uint32_t>(next()), 40)) == SIZE_MAX);
  barrier();  // every rank's puts are complete
  CHECK(mismatch(w.mem.data(), p1.size(), seed_of(static_cast<uint32_t>(prev()), 41)) == SIZE_MAX);
  CHECK(mismatch(w.mem.data() + 250000, p4.size(), seed_of(static_cast<uint32_t>(prev()), 44)) == SIZE_MAX);
  CHECK(lci_test::not_byte(w.mem.data(), p1.size(), 250000, lci_test::k_sentinel) == SIZE_MAX);
  // A put beyond the registration completes with ERROR.
  CHECK(post_retrying([&] { return lci::net_post_put_x(next(), p3.data(), p3.size(), lci::MR_HOST, k_window - 10, peer).user_context(ctx_of(4))(); },
                      "net_post_put")
            .is_posted());
  got = poll_n(1, "a put beyond the registration");
  CHECK(got[0].opcode == lci::net_opcode_t::ERROR);
  CHECK(got[0].user_context == ctx_of(4));
  CHECK(cq_stays_quiet());
  barrier();
  lci::deregister_memory(&g1_mr);
  lci::deregister_memory(&w.mr);
}

TEST_CASE("fetch_add and add are executed at the target, atomically") {
  const int me = lci::get_rank_me();
  window w = make_window(64);
  uint64_t* counter = reinterpret_cast<uint64_t*>(w.mem.data() + 8);
  __atomic_store_n(counter, 1000u, __ATOMIC_SEQ_CST);
  barrier();
  const lci::rmr_t peer = w.rmrs[next()];
  constexpr int k_n = 50;
  std::vector<uint64_t> results(k_n, 0);
  for (int i = 0; i < k_n; ++i) {
    const lci::error_t e = post_retrying(
        [&] {
          return i % 2 == 0 ? lci::net_post_fetch_add_x(next(), &results[i], lci::MR_HOST, 1, 8, peer)
                                  .user_context(ctx_of(10 + i))()
                            : lci::net_post_add_x(next(), 1, 8, peer)
                                  .required_atomic_scope(lci::net_atomic_scope_t::HCA)
                                  .user_context(ctx_of(10 + i))();
        },
        "a fetch-add");
    CHECK(e.is_posted());
  }
  std::vector<lci::net_status_t> got = poll_n(k_n, "the fetch-adds");
  std::vector<int> seen(k_n, 0);
  for (const auto& s : got) {
    CHECK(s.opcode == lci::net_opcode_t::FETCH_ADD);
    CHECK(s.rank == next());
    const uintptr_t c = reinterpret_cast<uintptr_t>(s.user_context) - 10;
    REQUIRE(c < static_cast<uintptr_t>(k_n));
    ++seen[c];
  }
  for (int i = 0; i < k_n; ++i) CHECK(seen[i] == 1);
  // The previous values of this rank's fetch-adds: distinct, in [1000, 1000 + k_n).
  std::vector<int> value_seen(k_n, 0);
  for (int i = 0; i < k_n; i += 2) {
    REQUIRE(results[i] >= 1000u);
    REQUIRE(results[i] < 1000u + k_n);
    ++value_seen[results[i] - 1000u];
  }
  for (int v : value_seen) CHECK(v <= 1);
  barrier();  // every rank's adds are done
  CHECK(__atomic_load_n(counter, __ATOMIC_SEQ_CST) == 1000u + k_n);
  (void)me;
  // Refused with errorcode_t::fatal, as in LCI 2.
  uint64_t r = 0;
  CHECK(lci::net_post_fetch_add(next(), &r, lci::MR_HOST, 1, 8, lci::RMR_NULL).errorcode ==
        lci::errorcode_t::fatal);
  CHECK(lci::net_post_add(next(), 1, 9, peer).errorcode == lci::errorcode_t::fatal);
  CHECK(lci::net_post_add(next(), 1, 64, peer).errorcode == lci::errorcode_t::fatal);
  CHECK(lci::net_post_fetch_add(next(), reinterpret_cast<uint64_t*>(w.mem.data() + 1), lci::MR_HOST, 1, 8, peer)
            .errorcode == lci::errorcode_t::fatal);
  CHECK(cq_stays_quiet());
  barrier();
  lci::deregister_memory(&w.mr);
}

TEST_CASE("many threads post and poll at once") {
  constexpr int k_threads = 4;
  constexpr int k_msgs = 200;  // per thread
  // The payload of message (t, i): its imm_data t * 10000 + i, its size
  // and bytes derived from it. Any receive may take any message.
  auto size_of = [](uint32_t imm) { return static_cast<size_t>(imm % 1500); };
  struct recv_buf {
    std::vector<char> bytes;
  };
  std::vector<recv_buf> bufs(k_threads * k_msgs);
  for (auto& b : bufs) b.bytes.assign(1500, 0);
  std::atomic<long> failures{0}, recvs{0}, sends{0};
  std::atomic<int> posted_recvs{0};
  const int me = lci::get_rank_me();
  auto worker = [&](int t) {
    for (int i = 0; i < k_msgs; ++i) {
      recv_buf& b = bufs[static_cast<size_t>(t * k_msgs + i)];
      if (!lci::net_post_recv_x(b.bytes.data(), b.bytes.size(), lci::MR_HOST).user_context(&b)().is_posted())
        failures.fetch_add(1);
      posted_recvs.fetch_add(1);
    }
    lci_test::deadline d(k_wait_s);
    std::vector<char> out(1500);
    auto drain = [&] {
      lci::net_status_t st[4];
      const size_t n = lci::net_poll_cq(4, st);
      for (size_t j = 0; j < n; ++j) {
        if (st[j].opcode == lci::net_opcode_t::SEND) {
          sends.fetch_add(1);
          continue;
        }
        if (st[j].opcode != lci::net_opcode_t::RECV || st[j].rank != prev()) {
          failures.fetch_add(1);
          continue;
        }
        auto* rb = static_cast<recv_buf*>(st[j].user_context);
        const uint32_t imm = st[j].imm_data;
        if (st[j].length != size_of(imm) ||
            mismatch(rb->bytes.data(), st[j].length, seed_of(static_cast<uint32_t>(prev()), imm)) != SIZE_MAX)
          failures.fetch_add(1);
        recvs.fetch_add(1);
      }
    };
    for (int i = 0; i < k_msgs; ++i) {
      const uint32_t imm = static_cast<uint32_t>(t * 10000 + i);
      fill(out.data(), size_of(imm), seed_of(static_cast<uint32_t>(me), imm));
      lci::error_t e;
      while ((e = (i % 2 ? lci::net_post_send_x(next(), out.data(), size_of(imm), lci::MR_HOST)
                               .imm_data(imm)()
                         : lci::net_post_sends_x(next(), out.data(), size_of(imm)).imm_data(imm)()))
                 .is_retry()) {
        drain();
        if (d.passed()) fatal("a thread's send was refused for too long");
      }
      if (!(i % 2 ? e.is_posted() : e.is_done())) failures.fetch_add(1);
      drain();
    }
    const long want_recvs = k_threads * k_msgs, want_sends = k_threads * k_msgs / 2;
    while (recvs.load() < want_recvs || sends.load() < want_sends) {
      drain();
      if (d.passed()) fatal("timed out waiting for the threads' completions");
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(recvs.load() == k_threads * k_msgs);
  CHECK(sends.load() == k_threads * k_msgs / 2);
  CHECK(cq_stays_quiet());
  barrier();
}

TEST_CASE("refusals: arguments the network layer does not take") {
  const int me = lci::get_rank_me();
  const size_t m = lci::get_max_bcopy_size();
  std::vector<char> big(m + 1), small(16);
  auto throws_naming = [](auto op, const char* call, const char* arg) {
    try {
      op();
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find(call) != std::string::npos);
      CHECK(what.find(arg) != std::string::npos);
      return;
    }
    FAIL("no exception from ", call);
  };
  throws_naming([&] { lci::net_post_send(me, big.data(), big.size(), lci::MR_HOST); },
                "net_post_send", "size");
  throws_naming([&] { lci::net_post_sends(me, big.data(), big.size()); }, "net_post_sends", "size");
  throws_naming([&] { lci::net_post_puts(me, big.data(), big.size(), 0, lci::RMR_NULL); },
                "net_post_puts", "size");
  throws_naming([&] { lci::net_post_send(lci::get_rank_n(), small.data(), small.size(), lci::MR_HOST); },
                "net_post_send", "rank");
  throws_naming([&] { lci::net_post_put(me, small.data(), small.size(), lci::MR_HOST, 0, lci::RMR_NULL); },
                "net_post_put", "rmr");
  throws_naming([&] { lci::net_post_get(me, small.data(), small.size(), lci::MR_HOST, 0, lci::RMR_NULL); },
                "net_post_get", "rmr");
  throws_naming([&] { lci::net_post_recv(nullptr, 8, lci::MR_HOST); }, "net_post_recv", "buffer");
  // A message longer than its receive buffer: ERROR, nothing copied.
  std::vector<char> in(8, static_cast<char>(lci_test::k_sentinel));
  CHECK(lci::net_post_recv_x(in.data(), in.size(), lci::MR_HOST).user_context(ctx_of(5))().is_posted());
  CHECK(post_retrying([&] { return lci::net_post_sends(me, small.data(), small.size()); }, "net_post_sends").is_done());
  std::vector<lci::net_status_t> got = poll_n(1, "the truncated message");
  CHECK(got[0].opcode == lci::net_opcode_t::ERROR);
  CHECK(got[0].user_context == ctx_of(5));
  CHECK(got[0].length == small.size());
  CHECK(lci_test::not_byte(in.data(), 0, in.size(), lci_test::k_sentinel) == SIZE_MAX);
  barrier();
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

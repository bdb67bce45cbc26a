// The tables behind RDMA as authenticated messages (lci/backend/ofi/
// soft_rma.hpp): registrations checked by key and range, a deregistration
// that waits for a copy in progress; operation ids that name one operation
// of one peer and kind, byte counting that finishes it once, and refusals
// of messages that fit no operation (wrong rank, kind, generation, range,
// more bytes than asked for); concurrent counting; the marks by which
// poll() finds peers with work left, under racing markers and pollers.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lci/backend/ofi/soft_rma.hpp"

using lci::ofi::reg_table;
using lci::ofi::resume_marks;
using lci::ofi::rma_ops;
using lci::ofi::rma_work;
using lci::ofi::work_ring;

namespace {
uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }
}  // namespace

TEST_CASE("soft rma: a registration admits ranges inside it, by its key only") {
  reg_table t;
  std::vector<char> a(4096), b(100);
  const uint64_t ka = t.insert(addr(a.data()), a.size());
  const uint64_t kb = t.insert(addr(b.data()), b.size());
  CHECK(ka != 0);
  CHECK(kb != 0);
  CHECK(ka != kb);
  CHECK(t.size() == 2);
  int calls = 0;
  auto hit = [&](char*) { ++calls; };
  CHECK(t.with_range(ka, addr(a.data()), a.size(), hit));
  CHECK(t.with_range(ka, addr(a.data()) + 4000, 96, hit));
  CHECK(t.with_range(ka, addr(a.data()) + 4096, 0, hit));
  CHECK(calls == 3);
  CHECK_FALSE(t.with_range(ka, addr(a.data()) + 4000, 97, hit));       // past the end
  CHECK_FALSE(t.with_range(ka, addr(a.data()) - 1, 1, hit));           // before the start
  CHECK_FALSE(t.with_range(ka, addr(a.data()) + 8, UINT64_MAX, hit));  // wraps
  CHECK_FALSE(t.with_range(kb, addr(a.data()), 1, hit));               // another's key
  CHECK_FALSE(t.with_range(ka ^ 1, addr(a.data()), 1, hit));           // a guessed key
  CHECK_FALSE(t.with_range(0, addr(a.data()), 1, hit));
  CHECK(calls == 3);
  t.erase(ka);
  CHECK_FALSE(t.with_range(ka, addr(a.data()), 1, hit));  // deregistered
  CHECK(t.with_range(kb, addr(b.data()), 100, hit));
  CHECK(t.size() == 1);
}

TEST_CASE("soft rma: a deregistration waits for a copy in progress") {
  reg_table t;
  std::vector<char> a(64);
  const uint64_t k = t.insert(addr(a.data()), a.size());
  std::atomic<int> stage{0};
  std::thread copier([&] {
    t.with_range(k, addr(a.data()), a.size(), [&](char* p) {
      stage.store(1);
      // The eraser is waiting now (it started after stage 1); the copy
      // finishes before the erase can return.
      for (int i = 0; i < 1000000 && stage.load() == 1; ++i) std::this_thread::yield();
      p[0] = 'c';
      stage.store(3);
    });
  });
  while (stage.load() == 0) std::this_thread::yield();
  std::thread eraser([&] {
    stage.store(2);
    t.erase(k);
    CHECK(stage.load() == 3);  // the copy was over before the entry went
  });
  copier.join();
  eraser.join();
  CHECK(a[0] == 'c');
}

TEST_CASE("soft rma: an operation finishes once, when all its bytes are counted") {
  rma_ops ops;
  char buf[100];
  const uint64_t w = ops.take(rma_ops::kind::write, 1, buf, 100, buf);
  const uint64_t r = ops.take(rma_ops::kind::read, 2, buf, 100, buf + 1);
  CHECK(w != 0);
  CHECK(r != 0);
  CHECK(ops.in_flight() == 2);
  ops.note_sent(w, 1, 100);
  CHECK_FALSE(ops.count(w, 2, rma_ops::kind::write, 10, false));  // another rank
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::read, 10, false));   // another kind
  CHECK_FALSE(ops.count(w ^ (uint64_t{1} << 32), 1, rma_ops::kind::write, 10, false));  // generation
  CHECK_FALSE(ops.count(w + 5000, 1, rma_ops::kind::write, 10, false));  // no such slot
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 101, false));        // more than asked
  CHECK(ops.count(w, 1, rma_ops::kind::write, 60, false));
  CHECK(ops.pop_finished() == -1);
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 41, false));  // past the length
  CHECK(ops.count(w, 1, rma_ops::kind::write, 40, false));
  const int done = ops.pop_finished();
  REQUIRE(done >= 0);
  CHECK(ops.ctx_of(done) == buf);
  CHECK_FALSE(ops.failed(done));
  CHECK(ops.pop_finished() == -1);
  ops.release(done);
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1, false));  // finished: refused
  // Reads: the target range is checked against the operation.
  char* at = ops.read_begin(r, 2, 0, 100);
  CHECK(at == buf);
  if (at) CHECK_FALSE(ops.read_end(r, 100 + 1));  // more than the piece could carry
  CHECK(ops.read_begin(r, 2, 90, 11) == nullptr);
  CHECK(ops.read_begin(r, 2, UINT64_MAX, 2) == nullptr);
  CHECK(ops.read_begin(r, 1, 0, 1) == nullptr);
  CHECK(ops.read_begin(r, 2, 0, 0) == nullptr);
  at = ops.read_begin(r, 2, 90, 10);
  CHECK(at == buf + 90);
  if (at) CHECK(ops.read_end(r, 10));
  CHECK(ops.count(r, 2, rma_ops::kind::read, 20, false));
  CHECK(ops.count(r, 2, rma_ops::kind::read, 70, true));  // the rest refused
  const int failed = ops.pop_finished();
  REQUIRE(failed >= 0);
  CHECK(ops.ctx_of(failed) == buf + 1);
  CHECK(ops.failed(failed));
  ops.release(failed);
  CHECK(ops.in_flight() == 0);
  // A reused slot has a new generation: the old id names nothing.
  const uint64_t again = ops.take(rma_ops::kind::write, 1, buf, 5, nullptr);
  ops.note_sent(again, 1, 5);
  CHECK(again != w);
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 5, false));
  CHECK(ops.count(again, 1, rma_ops::kind::write, 5, false));
  // An operation of no bytes finishes at once, once.
  const int a = ops.pop_finished();
  REQUIRE(a >= 0);
  ops.release(a);
  const uint64_t empty = ops.take(rma_ops::kind::read, 1, buf, 0, nullptr);
  ops.finish_empty(empty);
  const int e = ops.pop_finished();
  CHECK(e >= 0);
  CHECK(ops.pop_finished() == -1);
  CHECK_FALSE(ops.count(empty, 1, rma_ops::kind::read, 0, false));
}

TEST_CASE("soft rma: forged acknowledgements never finish a put early or twice") {
  // What a target answers is checked against what was sent: an
  // acknowledgement (or refusal) of bytes not sent yet, one whose count
  // wraps around, an empty one, or one for a put that finished is refused.
  rma_ops ops;
  std::vector<char> buf(1000);
  const uint64_t w = ops.take(rma_ops::kind::write, 1, buf.data(), 1000, nullptr);
  REQUIRE(w != 0);
  // Nothing sent yet: the whole put acknowledged before its first piece left.
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1000, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1, false));
  ops.note_sent(w, 1, 100);  // the first piece
  // A whole put acknowledged after its first piece: refused.
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1000, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 101, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 101, true));  // a refusal the same
  CHECK(ops.count(w, 1, rma_ops::kind::write, 100, false));
  // Duplicates of it: beyond what was sent.
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 100, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1, false));
  // Counts that wrap done + length around 2^64, to below the length.
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, UINT64_MAX, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, UINT64_MAX - 49, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, UINT64_MAX - 49, true));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 0, false));
  CHECK(ops.pop_finished() == -1);
  ops.note_sent(w, 1, 900);  // the rest
  CHECK(ops.count(w, 1, rma_ops::kind::write, 400, false));
  CHECK(ops.pop_finished() == -1);
  CHECK(ops.count(w, 1, rma_ops::kind::write, 500, false));
  // Finished: every further answer is refused, whatever its count.
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 0, false));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 1, true));
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, UINT64_MAX - 999, false));
  const int done = ops.pop_finished();
  REQUIRE(done >= 0);
  CHECK_FALSE(ops.failed(done));  // the refused refusals marked nothing
  CHECK(ops.pop_finished() == -1);  // exactly once
  ops.release(done);
  CHECK(ops.in_flight() == 0);
  CHECK(ops.pop_finished() == -1);
}

TEST_CASE("soft rma: a refusal of a get whose count wraps is refused") {
  rma_ops ops;
  std::vector<char> buf(1000);
  const uint64_t r = ops.take(rma_ops::kind::read, 2, buf.data(), 1000, nullptr);
  REQUIRE(r != 0);
  char* at = ops.read_begin(r, 2, 0, 300);
  REQUIRE(at == buf.data());
  CHECK(ops.read_end(r, 300));
  // read_fail says how many bytes are still missing: 700, not more.
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, UINT64_MAX, true));
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, UINT64_MAX - 99, true));
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, 701, true));
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, 0, true));
  CHECK(ops.pop_finished() == -1);
  CHECK(ops.count(r, 2, rma_ops::kind::read, 700, true));
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, 0, true));  // finished
  CHECK_FALSE(ops.count(r, 2, rma_ops::kind::read, UINT64_MAX - 999, true));
  const int done = ops.pop_finished();
  REQUIRE(done >= 0);
  CHECK(ops.failed(done));
  CHECK(ops.pop_finished() == -1);
  ops.release(done);
}

TEST_CASE("soft rma: a piece being copied into a get holds it; a sweep that ends it waits") {
  // A failure sweep (fail_rank) ends a get while a piece of it is being
  // copied into its buffer: the get is handed out only after the copy, and
  // a piece that arrives after the end is dropped.
  rma_ops ops;
  std::vector<char> buf(200, 0);
  const uint64_t r = ops.take(rma_ops::kind::read, 2, buf.data(), 200, buf.data());
  REQUIRE(r != 0);
  char* at = ops.read_begin(r, 2, 0, 100);
  REQUIRE(at == buf.data());
  CHECK(ops.fail_rank(2) == 1);
  CHECK(ops.pop_finished() == -1);  // the copy is under way
  memset(at, 'x', 100);
  CHECK_FALSE(ops.read_end(r, 100));  // ended meanwhile: not counted
  const int done = ops.pop_finished();
  REQUIRE(done >= 0);
  CHECK(ops.ctx_of(done) == buf.data());
  CHECK(ops.failed(done));
  // Late: dropped, before and after the slot is freed.
  CHECK(ops.read_begin(r, 2, 100, 100) == nullptr);
  ops.release(done);
  CHECK(ops.read_begin(r, 2, 100, 100) == nullptr);
  CHECK(ops.fail_rank(2) == 0);
  CHECK(buf[150] == 0);
}

TEST_CASE("soft rma: a failure sweep racing copies hands each get out once, after its copies") {
  // Threads copy pieces into gets while another sweeps their rank: every
  // get is handed out exactly once, and no copy into it is still under way
  // then (a copier marks its piece busy for the copy). Bounded in rounds.
  constexpr int gets = 32, copiers = 2, rounds = 200;
  for (int round = 0; round < rounds; ++round) {
    rma_ops ops;
    std::vector<std::vector<char>> bufs(gets, std::vector<char>(64));
    std::vector<uint64_t> ids;
    std::atomic<int> busy[gets] = {};
    for (int g = 0; g < gets; ++g)
      ids.push_back(ops.take(rma_ops::kind::read, 5, bufs[g].data(), 64, &bufs[g]));
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int c = 0; c < copiers; ++c)
      ts.emplace_back([&, c] {
        while (!go.load()) std::this_thread::yield();
        for (int piece = 0; piece < 4; ++piece)
          for (int g = 0; g < gets; ++g) {
            char* at = ops.read_begin(ids[g], 5, static_cast<uint64_t>(c * 32 + piece * 8), 8);
            if (!at) continue;
            busy[g].fetch_add(1);
            memset(at, 'a' + c, 8);
            busy[g].fetch_sub(1);
            ops.read_end(ids[g], 8);
          }
      });
    go.store(true);
    ops.fail_rank(5);
    int handed = 0;
    std::vector<int> seen(gets, 0);
    for (int spins = 0; handed < gets && spins < 10000000; ++spins) {
      const int s = ops.pop_finished();
      if (s < 0) continue;
      const auto* b = static_cast<std::vector<char>*>(ops.ctx_of(s));
      const int g = static_cast<int>(b - bufs.data());
      CHECK(busy[g].load() == 0);
      ++seen[g];
      ++handed;
      ops.release(s);
    }
    for (auto& t : ts) t.join();
    while (ops.pop_finished() >= 0) ++handed;
    CHECK(handed == gets);
    for (int g = 0; g < gets; ++g) CHECK(seen[g] == 1);
  }
}

TEST_CASE("soft rma: every slot can be taken, then none") {
  rma_ops ops;
  char b;
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; i < rma_ops::slots; ++i) {
    ids.push_back(ops.take(rma_ops::kind::write, 0, &b, 1, nullptr));
    CHECK(ids.back() != 0);
  }
  CHECK(ops.take(rma_ops::kind::write, 0, &b, 1, nullptr) == 0);
  for (uint64_t id : ids) {
    ops.note_sent(id, 0, 1);
    CHECK(ops.count(id, 0, rma_ops::kind::write, 1, false));
  }
  int n = 0;
  for (int s; (s = ops.pop_finished()) >= 0; ++n) ops.release(s);
  CHECK(n == static_cast<int>(rma_ops::slots));
  CHECK(ops.in_flight() == 0);
}

TEST_CASE("soft rma: concurrent counting finishes each operation exactly once") {
  rma_ops ops;
  constexpr int nops = 64, threads = 4, pieces = 250;
  char b;
  std::vector<uint64_t> ids;
  for (int i = 0; i < nops; ++i)
    ids.push_back(ops.take(rma_ops::kind::read, 3, &b, threads * pieces, nullptr));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (int p = 0; p < pieces; ++p)
        for (uint64_t id : ids) CHECK(ops.count(id, 3, rma_ops::kind::read, 1, false));
    });
  for (auto& t : ts) t.join();
  int n = 0;
  for (int s; (s = ops.pop_finished()) >= 0; ++n) ops.release(s);
  CHECK(n == nops);
}

TEST_CASE("soft rma: the work ring keeps order across growth and wrap-around") {
  work_ring q;
  uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round * 3 + 1; ++i) {
      rma_work w;
      w.h.op = next_in++;
      q.push_back(w);
      CHECK(q.back().h.op == next_in - 1);
    }
    for (int i = 0; i < round * 2 + 1 && !q.empty(); ++i) {
      CHECK(q.front().h.op == next_out++);
      q.pop_front();
    }
  }
  while (!q.empty()) {
    CHECK(q.front().h.op == next_out++);
    q.pop_front();
  }
  CHECK(next_in == next_out);
}

TEST_CASE("soft rma: work left for a peer is always found, whatever threads mark and claim") {
  // Markers queue work for a peer (a count here) and mark it, as soft_pump
  // does when it leaves work; pollers claim marks and take the peer's work,
  // as soft_resume does. A mark taken twice, or lost, shows as a count
  // below zero or as work no poll finds.
  constexpr int peers = 3, markers = 2, pollers = 2, rounds = 100000;
  resume_marks marks;
  std::atomic<bool> flag[peers] = {};
  std::atomic<uint64_t> queued[peers] = {};
  std::atomic<uint64_t> taken{0};
  std::atomic<int> lowest{0};
  std::atomic<int> markers_left{markers};
  auto poll_once = [&] {
    if (!marks.any()) return;
    for (int p = 0; p < peers; ++p) {
      if (!marks.claim(flag[p])) continue;
      const int c = marks.count();
      int low = lowest.load();
      while (c < low && !lowest.compare_exchange_weak(low, c)) {
      }
      taken += queued[p].exchange(0);
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < markers; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < rounds; ++i) {
        const int p = (i + t) % peers;
        queued[p]++;
        marks.mark(flag[p]);
      }
      markers_left--;
    });
  for (int t = 0; t < pollers; ++t)
    ts.emplace_back([&] {
      while (markers_left.load() > 0) poll_once();
    });
  for (auto& t : ts) t.join();
  // What is left is found by polls alone, as on an otherwise idle device.
  for (int i = 0; i < 4 && marks.any(); ++i) poll_once();
  CHECK(lowest.load() >= 0);
  CHECK(marks.count() == 0);
  CHECK(taken.load() == uint64_t{markers} * rounds);
  for (int p = 0; p < peers; ++p) CHECK_FALSE(flag[p].load());
}

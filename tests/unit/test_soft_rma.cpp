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
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 0, false));  // finished: refused
  // Reads: the target range is checked against the operation.
  CHECK(ops.read_target(r, 2, 0, 100) == buf);
  CHECK(ops.read_target(r, 2, 90, 10) == buf + 90);
  CHECK(ops.read_target(r, 2, 90, 11) == nullptr);
  CHECK(ops.read_target(r, 2, UINT64_MAX, 2) == nullptr);
  CHECK(ops.read_target(r, 1, 0, 1) == nullptr);
  CHECK(ops.count(r, 2, rma_ops::kind::read, 30, false));
  CHECK(ops.count(r, 2, rma_ops::kind::read, 70, true));  // the rest refused
  const int failed = ops.pop_finished();
  REQUIRE(failed >= 0);
  CHECK(ops.ctx_of(failed) == buf + 1);
  CHECK(ops.failed(failed));
  ops.release(failed);
  CHECK(ops.in_flight() == 0);
  // A reused slot has a new generation: the old id names nothing.
  const uint64_t again = ops.take(rma_ops::kind::write, 1, buf, 5, nullptr);
  CHECK(again != w);
  CHECK_FALSE(ops.count(w, 1, rma_ops::kind::write, 5, false));
  CHECK(ops.count(again, 1, rma_ops::kind::write, 5, false));
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
  for (uint64_t id : ids) CHECK(ops.count(id, 0, rma_ops::kind::write, 1, false));
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

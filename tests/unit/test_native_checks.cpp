// The native transport's checks that need no peer (lci/backend/native/native.hpp):
// check_cell on each field, the operation table's ids, the registration
// table that cross-memory copies consult, and the common ancestor a rank
// names as its ptracer under Yama.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "lci/backend/native/native.hpp"

using namespace lci::native;

namespace {

cell_fields message_from(int32_t src, uint32_t length) {
  cell_fields f{};
  f.kind = static_cast<uint8_t>(cell_kind::message);
  f.src = src;
  f.length = length;
  return f;
}

}  // namespace

TEST_CASE("check_cell: kind, source, length and flags") {
  const uint8_t local[4] = {1, 0, 1, 1};  // rank 1 is on another host
  CHECK(check_cell(message_from(0, 100), local, 4, 1000) == nullptr);
  CHECK(check_cell(message_from(3, 1000), local, 4, 1000) == nullptr);
  CHECK(check_cell(message_from(0, 1001), local, 4, 1000) != nullptr);
  CHECK(check_cell(message_from(1, 8), local, 4, 1000) != nullptr);   // not of this host
  CHECK(check_cell(message_from(4, 8), local, 4, 1000) != nullptr);   // no such rank
  CHECK(check_cell(message_from(-1, 8), local, 4, 1000) != nullptr);
  cell_fields f = message_from(0, 8);
  f.kind = last_cell_kind + 1;
  CHECK(check_cell(f, local, 4, 1000) != nullptr);
  f = message_from(0, 8);
  f.flags = 0x80;
  CHECK(check_cell(f, local, 4, 1000) != nullptr);
  f.kind = static_cast<uint8_t>(cell_kind::write_notice);
  f.flags = 0;
  CHECK(check_cell(f, local, 4, 1000) != nullptr);  // a notice carries no payload
  f.length = 0;
  CHECK(check_cell(f, local, 4, 1000) == nullptr);
  f.kind = static_cast<uint8_t>(cell_kind::read_reply);
  f.flags = flag_error;
  f.length = 10;
  CHECK(check_cell(f, local, 4, 1000) != nullptr);  // a refusal carries no data
  f.kind = static_cast<uint8_t>(cell_kind::read_request);
  f.flags = flag_has_imm;
  CHECK(check_cell(f, local, 4, 1000) != nullptr);
}

TEST_CASE("op_table: an id is accepted once, from its rank, for its kind") {
  auto t = std::make_unique<op_table>();
  int buf = 0, ctx = 0;
  const uint64_t id = t->take({op_table::op_kind::read, 2, &buf, 64, &ctx});
  REQUIRE(id != 0);
  CHECK(t->in_flight() == 1);
  op_table::entry e;
  CHECK_FALSE(t->finish(id, 1, op_table::op_kind::read, e));         // another rank
  CHECK_FALSE(t->finish(id, 2, op_table::op_kind::write, e));        // another kind
  CHECK_FALSE(t->finish(id ^ (uint64_t{1} << 40), 2, op_table::op_kind::read, e));  // generation
  CHECK_FALSE(t->finish(id | 0xffffffffull, 2, op_table::op_kind::read, e));  // no such slot
  REQUIRE(t->finish(id, 2, op_table::op_kind::read, e));
  CHECK(e.buffer == &buf);
  CHECK(e.ctx == &ctx);
  CHECK(e.length == 64);
  CHECK_FALSE(t->finish(id, 2, op_table::op_kind::read, e));  // once only
  const uint64_t again = t->take({op_table::op_kind::read, 2, &buf, 64, &ctx});
  CHECK(again != id);  // the slot's generation moved on
  CHECK(t->finish(again, 2, op_table::op_kind::read, e));
  CHECK(t->in_flight() == 0);
}

TEST_CASE("op_table: a full table refuses, and a slot freed is taken again") {
  auto t = std::make_unique<op_table>();
  std::vector<uint64_t> ids;
  for (uint32_t i = 0; i < op_table::slots; ++i) {
    const uint64_t id = t->take({op_table::op_kind::write, 0, nullptr, 1, nullptr});
    REQUIRE(id != 0);
    ids.push_back(id);
  }
  CHECK(t->take({op_table::op_kind::write, 0, nullptr, 1, nullptr}) == 0);
  op_table::entry e;
  REQUIRE(t->finish(ids[17], 0, op_table::op_kind::write, e));
  CHECK(t->take({op_table::op_kind::write, 0, nullptr, 1, nullptr}) != 0);
}

TEST_CASE("op_table: many threads take and one finishes, each id exactly once") {
  auto t = std::make_unique<op_table>();
  constexpr int threads = 4, per_thread = 20000;
  std::atomic<uint64_t> slots[256];
  for (auto& s : slots) s.store(0);
  std::atomic<int> done{0}, finished{0}, failed{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < threads; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < per_thread; ++i) {
        uint64_t id;
        while ((id = t->take({op_table::op_kind::read, p, nullptr, 8, nullptr})) == 0)
          std::this_thread::yield();
        // Hand the id to the finisher through a mailbox slot.
        std::atomic<uint64_t>& box = slots[(p * per_thread + i) % 256];
        uint64_t empty = 0;
        while (!box.compare_exchange_weak(empty, id)) {
          empty = 0;
          std::this_thread::yield();
        }
      }
      done.fetch_add(1);
    });
  while (finished.load() < threads * per_thread) {
    for (auto& box : slots) {
      const uint64_t id = box.exchange(0);
      if (!id) continue;
      op_table::entry e;
      bool ok = false;
      for (int r = 0; r < threads && !ok; ++r) ok = t->finish(id, r, op_table::op_kind::read, e);
      if (!ok) failed.fetch_add(1);
      finished.fetch_add(1);
    }
  }
  for (auto& th : producers) th.join();
  CHECK(failed.load() == 0);
  CHECK(t->in_flight() == 0);
}

TEST_CASE("op_table: a reply refused for its rank or kind never stops the operation's own finish") {
  // The origin frees a slot whose request it could not post (a full ring)
  // from any thread, while the poller refuses a reply that names the same
  // id for another rank or kind (a forged or stale reply). The refusal
  // looks at the slot; the free must still succeed every time, or the slot
  // stays taken for good. Bounded in rounds and time.
  auto t = std::make_unique<op_table>();
  constexpr int rounds = 3000;
  std::atomic<uint64_t> current{0}, seen{0};
  std::atomic<bool> stop{false};
  std::atomic<long> refused_ok{0};
  std::thread poller([&] {
    op_table::entry e;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t id = current.load(std::memory_order_relaxed);
      if (!id) continue;
      // Another rank, another kind: both refused.
      if (!t->finish(id, 7, op_table::op_kind::write, e) &&
          !t->finish(id, 3, op_table::op_kind::read, e))
        refused_ok.fetch_add(1, std::memory_order_relaxed);
      seen.store(id, std::memory_order_relaxed);
    }
  });
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  long frees_refused = 0;
  int r = 0;
  for (; r < rounds && std::chrono::steady_clock::now() < end; ++r) {
    const uint64_t id = t->take({op_table::op_kind::write, 3, nullptr, 8, nullptr});
    REQUIRE(id != 0);
    current.store(id, std::memory_order_relaxed);
    // The free comes while the poller is refusing replies for this id.
    for (int spin = 0; spin < 100000 && seen.load(std::memory_order_relaxed) != id; ++spin) {
    }
    op_table::entry e;
    if (!t->finish(id, 3, op_table::op_kind::write, e)) ++frees_refused;
    current.store(0, std::memory_order_relaxed);
    if (t->in_flight() != 0) break;  // a slot leaked: no point going on
  }
  stop.store(true);
  poller.join();
  INFO(r << " rounds, " << refused_ok.load() << " refused replies");
  CHECK(frees_refused == 0);
  CHECK(t->in_flight() == 0);
}

TEST_CASE("registration table: key and range, erase, full buckets") {
  std::vector<reg_bucket> table(reg_buckets);
  memset(static_cast<void*>(table.data()), 0, table.size() * sizeof(reg_bucket));
  REQUIRE(reg_table_insert(table.data(), 0xabc, 1000, 100));
  CHECK(reg_table_allows(table.data(), 0xabc, 1000, 100));
  CHECK(reg_table_allows(table.data(), 0xabc, 1050, 50));
  CHECK(reg_table_allows(table.data(), 0xabc, 1100, 0));
  CHECK_FALSE(reg_table_allows(table.data(), 0xabc, 1050, 51));
  CHECK_FALSE(reg_table_allows(table.data(), 0xabc, 999, 10));
  CHECK_FALSE(reg_table_allows(table.data(), 0xabd, 1000, 10));
  CHECK_FALSE(reg_table_allows(table.data(), 0xabc, ~uint64_t{0} - 5, 10));  // no wrap
  reg_table_erase(table.data(), 0xabc);
  CHECK_FALSE(reg_table_allows(table.data(), 0xabc, 1000, 100));
  // Twenty keys of one bucket: those that do not fit lie in the next
  // buckets and are found; a key the table does not hold is refused,
  // also once keys of its bucket were erased.
  std::vector<uint64_t> same;
  for (uint64_t k = 1; same.size() < 22; ++k)
    if (reg_bucket_of(k) == reg_bucket_of(0x777)) same.push_back(k);
  for (size_t i = 0; i < 20; ++i) CHECK(reg_table_insert(table.data(), same[i], i * 100, 10));
  for (size_t i = 0; i < 20; ++i) CHECK(reg_table_allows(table.data(), same[i], i * 100, 10));
  CHECK_FALSE(reg_table_allows(table.data(), same[20], 0, 10));
  CHECK_FALSE(reg_table_allows(table.data(), same[0], 0, 11));  // known keys keep their range
  for (size_t i = 0; i < 20; i += 2) reg_table_erase(table.data(), same[i]);
  for (size_t i = 0; i < 20; ++i)
    CHECK(reg_table_allows(table.data(), same[i], i * 100, 10) == (i % 2 == 1));
  CHECK_FALSE(reg_table_allows(table.data(), same[21], 0, 10));
  // A key recorded again replaces its entry.
  CHECK(reg_table_insert(table.data(), same[1], 5000, 10));
  CHECK(reg_table_allows(table.data(), same[1], 5000, 10));
  CHECK_FALSE(reg_table_allows(table.data(), same[1], 100, 10));
}

TEST_CASE("registration table: 5000 random keys, stale and unknown keys refused") {
  std::vector<reg_bucket> table(reg_buckets);
  memset(static_cast<void*>(table.data()), 0, table.size() * sizeof(reg_bucket));
  std::mt19937_64 rng(7);
  std::vector<uint64_t> keys(5000);
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = rng();
    REQUIRE(reg_table_insert(table.data(), keys[i], i * 64, 64));
  }
  for (size_t i = 0; i < keys.size(); ++i)
    CHECK(reg_table_allows(table.data(), keys[i], i * 64, 64));
  for (size_t i = 1; i < keys.size(); i += 2) reg_table_erase(table.data(), keys[i]);
  size_t wrong = 0;
  for (size_t i = 0; i < keys.size(); ++i)
    wrong += reg_table_allows(table.data(), keys[i], i * 64, 64) != (i % 2 == 0);
  for (int i = 0; i < 100000; ++i) wrong += reg_table_allows(table.data(), rng(), 0, 1);
  CHECK(wrong == 0);
  // Filled up: the keys that find no room are refused, not allowed.
  size_t refused = 0;
  std::vector<uint64_t> more;
  for (size_t i = 0; i < reg_buckets * 8; ++i) {
    const uint64_t k = rng();
    if (reg_table_insert(table.data(), k, 0, 8))
      more.push_back(k);
    else
      ++refused;
  }
  CHECK(refused > 0);
  for (uint64_t k : more) CHECK(reg_table_allows(table.data(), k, 0, 8));
  for (int i = 0; i < 100000; ++i) wrong += reg_table_allows(table.data(), rng(), 0, 1);
  CHECK(wrong == 0);
}

TEST_CASE("common_ancestor: the nearest process all descend from") {
  pid_t kids[2];
  for (pid_t& k : kids) {
    k = fork();
    REQUIRE(k >= 0);
    if (k == 0) {
      pause();  // ended by the parent
      _exit(0);
    }
  }
  CHECK(common_ancestor({kids[0], kids[1]}) == getpid());
  CHECK(common_ancestor({kids[0], static_cast<int>(getpid())}) == getppid());
  CHECK(common_ancestor({}) == 0);
  for (pid_t k : kids) {
    kill(k, SIGKILL);
    waitpid(k, nullptr, 0);
  }
}

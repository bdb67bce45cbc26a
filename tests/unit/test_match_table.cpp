// Unit tests of lci::match_table, the per-device matching table.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "lci.h"
#include "lci/match/match_table.hpp"

namespace {

using lci::match_kind;
using lci::match_node;
using steady = std::chrono::steady_clock;

// A node embedded in a "descriptor", as the device embeds it in a receive
// descriptor or a packet. The node is the first member: the descriptor is
// recovered with a cast.
struct item {
  match_node node;
  int id;
  int owner;
};

item* item_of(match_node* n) { return reinterpret_cast<item*>(n); }

match_node* prepare(item& it, uint64_t key, match_kind kind, uint16_t tag_hi = 0) {
  it.node.key = key;
  it.node.kind = kind;
  it.node.tag_hi = tag_hi;
  it.node.next = reinterpret_cast<match_node*>(0x1);  // the table must set it
  return &it.node;
}

}  // namespace

TEST_CASE("make_match_key: fields are distinct") {
  std::set<uint64_t> keys;
  for (int rank : {LCI_RANK_ANY, 0, 1, 2, 65535, 65536, 1 << 30})
    for (uint32_t ep : {0u, 1u, 7u, 4095u})
      for (uint32_t tag : {0u, 1u, 255u, 256u, 65535u}) keys.insert(lci::make_match_key(rank, ep, tag));
  CHECK(keys.size() == 7 * 4 * 5);
  CHECK(lci::make_match_key(LCI_RANK_ANY, 0, 0) != lci::make_match_key(0, 0, 0));
  CHECK(lci::make_match_key(3, 2, 1) == lci::make_match_key(3, 2, 1));
}

TEST_CASE("match_table: bucket count rounds up to a power of two") {
  CHECK(lci::match_table(0).bucket_count() == 1);
  CHECK(lci::match_table(1).bucket_count() == 1);
  CHECK(lci::match_table(3).bucket_count() == 4);
  CHECK(lci::match_table(1024).bucket_count() == 1024);
}

TEST_CASE("match_table: a receive and its message meet once, in either order") {
  lci::match_table table(64);
  const uint64_t key = lci::make_match_key(1, 0, 42);
  item recv{}, send{}, send2{}, recv2{};

  SUBCASE("receive first") {
    CHECK(table.insert_or_match(prepare(recv, key, match_kind::recv)) == nullptr);
    CHECK(table.size() == 1);
    CHECK(table.insert_or_match(prepare(send, key, match_kind::send)) == &recv.node);
    CHECK(table.size() == 0);
    // The receive is gone: a second message waits.
    CHECK(table.insert_or_match(prepare(send2, key, match_kind::send)) == nullptr);
    CHECK(table.size() == 1);
    CHECK(table.insert_or_match(prepare(recv2, key, match_kind::recv)) == &send2.node);
  }
  SUBCASE("message first") {
    CHECK(table.insert_or_match(prepare(send, key, match_kind::send)) == nullptr);
    CHECK(table.insert_or_match(prepare(recv, key, match_kind::recv)) == &send.node);
    CHECK(table.insert_or_match(prepare(recv2, key, match_kind::recv)) == nullptr);
    CHECK(table.insert_or_match(prepare(send2, key, match_kind::send)) == &recv2.node);
  }
  CHECK(table.size() == 0);
}

TEST_CASE("match_table: different keys do not meet") {
  lci::match_table table(16);
  item a{}, b{}, c{}, d{};
  CHECK(table.insert_or_match(prepare(a, lci::make_match_key(0, 0, 1), match_kind::recv)) == nullptr);
  CHECK(table.insert_or_match(prepare(b, lci::make_match_key(0, 0, 2), match_kind::send)) == nullptr);
  CHECK(table.insert_or_match(prepare(c, lci::make_match_key(1, 0, 1), match_kind::send)) == nullptr);
  CHECK(table.insert_or_match(prepare(d, lci::make_match_key(0, 1, 1), match_kind::send)) == nullptr);
  CHECK(table.size() == 4);
  item e{};
  CHECK(table.insert_or_match(prepare(e, lci::make_match_key(0, 0, 1), match_kind::send)) == &a.node);
  CHECK(table.size() == 3);
}

TEST_CASE("match_table: LCI_RANK_ANY keys (tag-only matching)") {
  lci::match_table table(16);
  const uint64_t any = lci::make_match_key(LCI_RANK_ANY, 2, 9);
  item recv{}, from_rank{}, tag_only{};
  CHECK(table.insert_or_match(prepare(recv, any, match_kind::recv)) == nullptr);
  // A message keyed with its real rank is a different key...
  CHECK(table.insert_or_match(prepare(from_rank, lci::make_match_key(0, 2, 9), match_kind::send)) ==
        nullptr);
  // ...one keyed with RANK_ANY (what a tag-only endpoint computes) meets it.
  CHECK(table.insert_or_match(prepare(tag_only, any, match_kind::send)) == &recv.node);
  CHECK(table.size() == 1);
}

TEST_CASE("match_table: keys equal but for tag_hi (wide tags) do not meet") {
  // One bucket and many: entries differing only in their tag's upper half
  // share a chain or not, and meet only their own.
  for (size_t buckets : {size_t{1}, size_t{1024}}) {
    CAPTURE(buckets);
    lci::match_table table(buckets);
    const uint64_t key = lci::make_match_key(0, 3, 5);
    item r1{}, r2{}, r0{}, s2{}, s0{}, s1{};
    CHECK(table.insert_or_match(prepare(r1, key, match_kind::recv, 1)) == nullptr);
    CHECK(table.insert_or_match(prepare(r2, key, match_kind::recv, 2)) == nullptr);
    CHECK(table.insert_or_match(prepare(r0, key, match_kind::recv, 0)) == nullptr);
    CHECK(table.insert_or_match(prepare(s2, key, match_kind::send, 2)) == &r2.node);
    CHECK(table.insert_or_match(prepare(s0, key, match_kind::send, 0)) == &r0.node);
    CHECK(table.insert_or_match(prepare(s1, key, match_kind::send, 1)) == &r1.node);
    CHECK(table.size() == 0);
    // take_if meets tag_hi 0 only.
    item m1{}, m0{};
    CHECK(table.insert_or_match(prepare(m1, key, match_kind::send, 1)) == nullptr);
    CHECK(table.take_if(key, match_kind::recv, [](const match_node*) { return true; }) == nullptr);
    CHECK(table.insert_or_match(prepare(m0, key, match_kind::send, 0)) == nullptr);
    CHECK(table.take_if(key, match_kind::recv, [](const match_node*) { return true; }) == &m0.node);
    CHECK(table.size() == 1);
  }
}

TEST_CASE("match_table: FIFO among equal keys, chains shared by many keys") {
  // One bucket: every key shares one chain, so unlinking at the head, in the
  // middle and at the tail, and appending after each, are all exercised.
  lci::match_table table(1);
  const int nkeys = 5, per_key = 6;
  std::vector<item> recvs(nkeys * per_key);
  for (int i = 0; i < per_key; ++i)
    for (int k = 0; k < nkeys; ++k) {
      item& it = recvs[i * nkeys + k];
      it.id = i;
      CHECK(table.insert_or_match(prepare(it, lci::make_match_key(k, 0, 7), match_kind::recv)) ==
            nullptr);
    }
  CHECK(table.size() == static_cast<size_t>(nkeys * per_key));
  std::vector<item> sends(nkeys * per_key);
  int s = 0;
  // Match key 4 (tail side) first, then 0 (head), then 2 (middle), ...
  for (int k : {4, 0, 2, 1, 3})
    for (int i = 0; i < per_key; ++i) {
      match_node* m =
          table.insert_or_match(prepare(sends[s++], lci::make_match_key(k, 0, 7), match_kind::send));
      REQUIRE(m != nullptr);
      CHECK(m->key == lci::make_match_key(k, 0, 7));
      CHECK(m->kind == match_kind::recv);
      CHECK(item_of(m)->id == i);  // oldest first
      // Interleave appends of a fresh key to check the tail stays right.
      item extra{};
      CHECK(table.insert_or_match(prepare(extra, lci::make_match_key(100, 0, 7), match_kind::send)) ==
            nullptr);
      item drain{};
      CHECK(table.insert_or_match(prepare(drain, lci::make_match_key(100, 0, 7), match_kind::recv)) ==
            &extra.node);
    }
  CHECK(table.size() == 0);
  item last{}, last2{};
  CHECK(table.insert_or_match(prepare(last, 77, match_kind::send)) == nullptr);
  CHECK(table.insert_or_match(prepare(last2, 77, match_kind::recv)) == &last.node);
}

namespace {

// T threads insert receives and messages with keys drawn from a small set
// (heavy same-key traffic) into a table with few or many buckets. Every
// returned match must be of the same key and the opposite kind, and every
// node may be matched at most once; at the end, the leftovers must be
// exactly the unmatched nodes, all of one kind per key, and each must be
// matched exactly once by a final probe.
void run_match_stress(size_t nbuckets, int nthreads, int per_thread) {
  lci::match_table table(nbuckets);
  const int total = nthreads * per_thread;
  std::vector<item> items(total);
  std::unique_ptr<std::atomic<int>[]> partner(new std::atomic<int>[total]);
  std::vector<char> inserted(total, 0);
  for (int i = 0; i < total; ++i) {
    items[i].id = i;
    partner[i].store(-1, std::memory_order_relaxed);
  }
  std::vector<uint64_t> keyset;
  for (int rank : {LCI_RANK_ANY, 0, 1, 2})
    for (uint32_t tag : {0u, 1u, 65535u}) keyset.push_back(lci::make_match_key(rank, 1, tag));
  std::atomic<int> failures{0};
  std::atomic<int> matches{0};
  const auto deadline = steady::now() + std::chrono::seconds(2);

  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(12345 + t);
      for (int j = 0; j < per_thread; ++j) {
        if ((j & 255) == 0 && steady::now() > deadline) break;
        const int id = t * per_thread + j;
        item& it = items[id];
        it.owner = t;
        const uint64_t key = keyset[rng() % keyset.size()];
        const match_kind kind = (rng() & 1) ? match_kind::send : match_kind::recv;
        inserted[id] = 1;
        match_node* m = table.insert_or_match(prepare(it, key, kind));
        if (m == nullptr) continue;
        item* other = item_of(m);
        if (m == &it.node || m->key != key || m->kind == kind || m->next != nullptr)
          failures.fetch_add(1);
        int expected = -1;
        if (!partner[other->id].compare_exchange_strong(expected, id)) failures.fetch_add(1);
        expected = -1;
        if (!partner[id].compare_exchange_strong(expected, other->id)) failures.fetch_add(1);
        matches.fetch_add(1, std::memory_order_relaxed);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);

  // Leftovers: per key, all of one kind; the table holds exactly them.
  int bad = 0;
  std::map<uint64_t, std::vector<int>> left;  // key -> ids, in id order
  size_t n_inserted = 0, n_left = 0;
  for (int i = 0; i < total; ++i) {
    if (!inserted[i]) continue;
    ++n_inserted;
    const int p = partner[i].load();
    if (p >= 0) {
      bad += partner[p].load() != i || items[p].node.key != items[i].node.key ||
             items[p].node.kind == items[i].node.kind;
    } else {
      left[items[i].node.key].push_back(i);
      ++n_left;
    }
  }
  CHECK(bad == 0);
  CHECK(n_inserted == 2 * static_cast<size_t>(matches.load()) + n_left);
  CHECK(table.size() == n_left);
  std::vector<item> probes(n_left);
  size_t pi = 0;
  for (auto& [key, ids] : left) {
    const match_kind kind = items[ids[0]].node.kind;
    std::set<int> expect(ids.begin(), ids.end());
    for (int id : ids) bad += items[id].node.kind != kind;
    const match_kind opposite = kind == match_kind::recv ? match_kind::send : match_kind::recv;
    // Per thread, a key's leftovers leave in insertion (id) order.
    std::vector<int> last_of_owner(nthreads, -1);
    for (size_t i = 0; i < ids.size(); ++i) {
      match_node* m = table.insert_or_match(prepare(probes[pi++], key, opposite));
      REQUIRE(m != nullptr);
      const item* got = item_of(m);
      bad += expect.erase(got->id) != 1 || got->id <= last_of_owner[got->owner];
      last_of_owner[got->owner] = got->id;
    }
  }
  CHECK(bad == 0);
  CHECK(table.size() == 0);
  MESSAGE(nbuckets, " buckets: ", n_inserted, " inserts, ", matches.load(), " matches");
}

}  // namespace

TEST_CASE("match_table: stress, concurrent receives and messages of random keys") {
  SUBCASE("one bucket") { run_match_stress(1, 4, 100000); }
  SUBCASE("4 buckets") { run_match_stress(4, 4, 100000); }
  SUBCASE("1024 buckets") { run_match_stress(1024, 4, 100000); }
}

TEST_CASE("match_table: for_each visits every entry; the key's parts read back") {
  lci::match_table t(16);
  std::vector<item> items(40);
  for (int i = 0; i < 40; ++i) {
    items[i].id = i;
    const int rank = i % 2 ? LCI_RANK_ANY : i;
    REQUIRE(t.insert_or_match(prepare(items[i], lci::make_match_key(rank, i % 7, 1000 + i),
                                      i % 3 ? match_kind::recv : match_kind::send)) == nullptr);
  }
  std::set<int> seen;
  CHECK(t.for_each([&](const match_node* n) {
          const auto* it = reinterpret_cast<const item*>(n);
          seen.insert(it->id);
          CHECK(lci::match_key_rank(n->key) == (it->id % 2 ? LCI_RANK_ANY : it->id));
          CHECK(lci::match_key_endpoint(n->key) == static_cast<uint32_t>(it->id % 7));
          CHECK(lci::match_key_tag(n->key) == static_cast<uint32_t>(1000 + it->id));
        }) == 0);
  CHECK(seen.size() == 40);
}

TEST_CASE("match_table: for_each while other threads insert and match") {
  // A diagnostic reader (the state dump) beside the data path: it never
  // blocks them for long, and sees only whole entries.
  lci::match_table t(4);
  std::atomic<bool> stop{false};
  std::atomic<long> bad{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w)
    workers.emplace_back([&, w] {
      std::vector<item> mine(64);
      for (int round = 0; round < 2000; ++round)
        for (int i = 0; i < 64; ++i) {
          const uint64_t key = lci::make_match_key(w, 0, static_cast<uint32_t>(i));
          // Post a receive and meet it with a message: the table ends empty.
          mine[i].id = i;
          if (t.insert_or_match(prepare(mine[i], key, match_kind::recv)) != nullptr) ++bad;
          item msg{};
          if (t.insert_or_match(prepare(msg, key, match_kind::send)) != &mine[i].node) ++bad;
        }
    });
  std::thread reader([&] {
    while (!stop.load()) {
      t.for_each([&](const match_node* n) {
        if (n->kind != match_kind::recv || lci::match_key_rank(n->key) > 1) ++bad;
      });
    }
  });
  for (auto& w : workers) w.join();
  stop = true;
  reader.join();
  CHECK(bad.load() == 0);
  CHECK(t.size() == 0);
}

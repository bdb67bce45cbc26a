// bench_match_table: cost of lci::match_table (lci/match/match_table.hpp), the
// device's table where posted receives and arrived messages meet, on its own.
// The table has the device's default size (65536 buckets); keys cycle over
// 1024 tags of one rank and endpoint. One operation = a receive and its
// message meeting: two insert_or_match() calls, the first of which appends
// and the second matches. Figures in ns per operation, per thread:
//   posted_first    the receive is inserted, then its message (expected);
//   arrived_first   the message, then the receive (unexpected);
//   backlog_64      as posted_first, with 64 other receives pending in the
//                   table (keys of another endpoint), so some chains are
//                   longer than one entry;
// with T threads (thread i uses rank i: disjoint keys, shared buckets):
//   posted_first_Tt, arrived_first_Tt.
//
// Run: bench_match_table [--iters N] [--threads T] [--csv] [--no-pin]
#include <cstdint>
#include <string>
#include <vector>

#include "lci/match/match_table.hpp"
#include "micro.hpp"

namespace {

constexpr size_t buckets = 65536;
constexpr uint32_t tags = 1024;

// `ops` meetings of a receive and a message with keys of `rank`; `recv_first`
// picks the order of the two inserts.
void meet(lci::match_table& table, int rank, long ops, bool recv_first) {
  lci::match_node recv{}, send{};
  recv.kind = lci::match_kind::recv;
  send.kind = lci::match_kind::send;
  lci::match_node* first = recv_first ? &recv : &send;
  lci::match_node* second = recv_first ? &send : &recv;
  for (long i = 0; i < ops; ++i) {
    const uint64_t key = lci::make_match_key(rank, 0, static_cast<uint32_t>(i) & (tags - 1));
    recv.key = send.key = key;
    if (table.insert_or_match(first) != nullptr || table.insert_or_match(second) != first)
      bench::die("bench_match_table", "a receive and its message did not meet");
  }
}

}  // namespace

int main(int argc, char** argv) {
  micro::program p(argc, argv, "bench_match_table",
                   "Times lci::match_table insert_or_match() (the device's matching table): a\n"
                   "receive and its message meeting, posted or arrived first, with and without\n"
                   "other entries pending, on 1 and T threads. Prints ns per meeting (two\n"
                   "inserts; median of 5 rounds after a warm-up).",
                   "match",
                   "lci::match_table, " + std::to_string(buckets) + " buckets, " +
                       std::to_string(tags) + " tags",
                   "meeting (2 inserts)");
  lci::match_table table(buckets);
  const long n = p.cfg.iters;
  for (int t : p.thread_counts()) {
    p.measure("posted_first", 0, t, n, 1,
              [&](int th, long ops) { meet(table, th, ops, true); });
    p.measure("arrived_first", 0, t, n, 1,
              [&](int th, long ops) { meet(table, th, ops, false); });
  }
  {
    // 64 receives of endpoint 1 stay pending; they never match.
    std::vector<lci::match_node> pending(64);
    for (size_t i = 0; i < pending.size(); ++i) {
      pending[i].key = lci::make_match_key(0, 1, static_cast<uint32_t>(i * 16));
      pending[i].kind = lci::match_kind::recv;
      table.insert_or_match(&pending[i]);
    }
    p.measure("backlog_64", 0, 1, n, 1, [&](int, long ops) { meet(table, 0, ops, true); });
    // Take them out again: a send of each key matches its receive.
    for (lci::match_node& r : pending) {
      lci::match_node send{r.key, nullptr, lci::match_kind::send, 0};
      if (table.insert_or_match(&send) != &r)
        bench::die("bench_match_table", "a pending receive was lost");
    }
  }
  if (table.size() != 0)
    bench::die("bench_match_table", std::to_string(table.size()) + " entries left behind");
  return 0;
}

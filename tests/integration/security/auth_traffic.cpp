// Authenticated traffic as real programs make it: many progress threads,
// slow consumers. Two ranks; rank 0 streams short one-sided messages
// (LCI_puts, 32 bytes: an index and 24 bytes of its pattern) to an endpoint
// whose messages go to a handler, which checks each one and marks its index. Rank 1 runs
// --threads progress threads, each calling LCI_progress in --pattern:
//   busy     back to back;
//   every10ms  one call, then 10 ms asleep (a rank that computes between
//            progress calls);
//   bursts   300 ms of calls, then 1.2 s of computing without any;
// its main thread makes no LCI call while the stream lasts. Rank 0 stops
// after --messages or --seconds, whichever comes first, and sends an end
// message with its count. Rank 1 then checks that every message arrived
// exactly once with its bytes, and that no rank was declared failed
// (LCIX_peer_failed, with LCI_PEER_FAILURE=continue); both ranks pass only
// if neither ended the job (many threads over tcp must not fail
// authentication; a slow receiver must not be taken for a lost connection).
//
// usage: auth_traffic [--threads T] [--pattern busy|every10ms|bursts]
//                     [--messages N] [--seconds S]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_data_tag = 11, k_end_tag = 12;
constexpr size_t k_index_bytes = sizeof(uint64_t);

enum class pattern { busy, every10ms, bursts };

struct options {
  int threads = 2;
  pattern pat = pattern::busy;
  uint64_t messages = 300000;
  double seconds = 20;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--threads") {
      o.threads = atoi(v.c_str());
    } else if (k == "--messages") {
      o.messages = strtoull(v.c_str(), nullptr, 10);
    } else if (k == "--seconds") {
      o.seconds = atof(v.c_str());
    } else if (k == "--pattern") {
      if (v == "busy") o.pat = pattern::busy;
      else if (v == "every10ms") o.pat = pattern::every10ms;
      else if (v == "bursts") o.pat = pattern::bursts;
      else die("unknown --pattern %s", v.c_str());
    } else {
      die("unknown option %s", k.c_str());
    }
  }
  if (o.threads < 1 || o.threads > 16 || o.messages < 1 || o.messages > 4000000 || o.seconds <= 0)
    die("bad options");
  return o;
}

// The payload of message i.
LCI_short_t message(uint64_t i) {
  LCI_short_t s;
  memcpy(s.val, &i, k_index_bytes);
  for (size_t j = k_index_bytes; j < LCI_SHORT_SIZE; ++j)
    s.val[j] = static_cast<char>(pat(seed_of(static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32)), j));
  return s;
}

// Rank 1's record, written by the handler (on any progress thread).
struct record {
  std::unique_ptr<std::atomic<uint8_t>[]> seen;  // arrivals of each index
  uint64_t capacity = 0;
  std::atomic<uint64_t> arrived{0}, duplicates{0}, wrong_bytes{0}, out_of_range{0}, other{0};
  std::atomic<uint64_t> end_count{0};
  std::atomic<bool> ended{false};
};
record g_rec;

void on_message(LCI_request_t r) {
  if (r.flag != LCI_OK || r.rank != 0 || r.type != LCI_IMMEDIATE) {
    g_rec.other.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t i;
  memcpy(&i, r.data.immediate.val, k_index_bytes);
  if (r.tag == k_end_tag) {
    g_rec.end_count.store(i, std::memory_order_relaxed);
    g_rec.ended.store(true, std::memory_order_release);
    return;
  }
  if (r.tag != k_data_tag) {
    g_rec.other.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (i >= g_rec.capacity) {
    g_rec.out_of_range.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const LCI_short_t want = message(i);
  if (memcmp(want.val, r.data.immediate.val, LCI_SHORT_SIZE) != 0)
    g_rec.wrong_bytes.fetch_add(1, std::memory_order_relaxed);
  if (g_rec.seen[i].fetch_add(1, std::memory_order_relaxed) != 0)
    g_rec.duplicates.fetch_add(1, std::memory_order_relaxed);
  g_rec.arrived.fetch_add(1, std::memory_order_relaxed);
}

void sender(const options& o, LCI_endpoint_t ep) {
  const auto start = steady::now();
  const auto stop_at =
      start + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.seconds));
  deadline d(o.seconds + k_wait_s);
  uint64_t sent = 0;
  while (sent < o.messages && steady::now() < stop_at) {
    const LCI_short_t s = message(sent);
    LCI_error_t rc;
    while ((rc = LCI_puts(ep, s, 1, k_data_tag, LCI_DEFAULT_COMP_REMOTE)) == LCI_ERR_RETRY)
      progress(d, "room to send a message");
    ok(rc, "LCI_puts");
    ++sent;
    if (sent % 64 == 0) LCI_progress(LCI_UR_DEVICE);
  }
  const double took = std::chrono::duration<double>(steady::now() - start).count();
  printf("rank 0: sent %llu messages in %.2f s\n", static_cast<unsigned long long>(sent), took);
  fflush(stdout);
  LCI_short_t end;
  memset(end.val, 0, sizeof end.val);
  memcpy(end.val, &sent, sizeof sent);
  RETRY(LCI_puts(ep, end, 1, k_end_tag, LCI_DEFAULT_COMP_REMOTE));
  EXPECT(!LCIX_peer_failed(1), "rank 1 was declared failed");
}

void progress_thread(const options& o, const std::atomic<bool>& stop) {
  const auto ms = [](int n) { return std::chrono::milliseconds(n); };
  while (!stop.load(std::memory_order_acquire)) {
    switch (o.pat) {
      case pattern::busy:
        if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) std::this_thread::yield();
        break;
      case pattern::every10ms:
        LCI_progress(LCI_UR_DEVICE);
        std::this_thread::sleep_for(ms(10));
        break;
      case pattern::bursts: {
        const auto burst_end = steady::now() + ms(300);
        while (steady::now() < burst_end && !stop.load(std::memory_order_acquire))
          if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) std::this_thread::yield();
        for (int i = 0; i < 12 && !stop.load(std::memory_order_acquire); ++i)
          std::this_thread::sleep_for(ms(100));  // computing
        break;
      }
    }
  }
}

void receiver(const options& o) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) threads.emplace_back(progress_thread, std::cref(o), std::cref(stop));
  // The main thread only watches (no LCI call): the stream, the end message
  // and every message it announced, within the sender's time and a wait.
  const deadline d(o.seconds + k_wait_s);
  const auto start = steady::now();
  while (!(g_rec.ended.load(std::memory_order_acquire) &&
           g_rec.arrived.load(std::memory_order_relaxed) >=
               g_rec.end_count.load(std::memory_order_relaxed)) &&
         !d.passed())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  EXPECT(g_rec.ended.load(), "the end message did not arrive");
  const uint64_t n = g_rec.end_count.load();
  EXPECT(n >= 1 && n <= o.messages, "the sender announced %llu messages", static_cast<unsigned long long>(n));
  uint64_t missing = 0, first_missing = UINT64_MAX;
  for (uint64_t i = 0; i < n && i < g_rec.capacity; ++i)
    if (g_rec.seen[i].load(std::memory_order_relaxed) == 0) {
      if (missing++ == 0) first_missing = i;
    }
  EXPECT(missing == 0, "%llu of %llu messages missing (the first: %llu)",
         static_cast<unsigned long long>(missing), static_cast<unsigned long long>(n),
         static_cast<unsigned long long>(first_missing));
  EXPECT(g_rec.arrived.load() == n, "%llu messages arrived, %llu were sent",
         static_cast<unsigned long long>(g_rec.arrived.load()), static_cast<unsigned long long>(n));
  EXPECT(g_rec.duplicates.load() == 0, "%llu messages arrived twice",
         static_cast<unsigned long long>(g_rec.duplicates.load()));
  EXPECT(g_rec.wrong_bytes.load() == 0, "%llu messages with wrong bytes",
         static_cast<unsigned long long>(g_rec.wrong_bytes.load()));
  EXPECT(g_rec.out_of_range.load() == 0 && g_rec.other.load() == 0,
         "%llu messages with an unknown index, %llu other completions",
         static_cast<unsigned long long>(g_rec.out_of_range.load()),
         static_cast<unsigned long long>(g_rec.other.load()));
  EXPECT(!LCIX_peer_failed(0), "rank 0 was declared failed");
  printf("rank 1: %llu messages arrived in %.2f s, with %d progress thread(s)\n",
         static_cast<unsigned long long>(g_rec.arrived.load()),
         std::chrono::duration<double>(steady::now() - start).count(), o.threads);
  fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  harness_init(o.seconds + 2 * k_wait_s);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  if (LCI_RANK == 1) {
    g_rec.capacity = o.messages;
    g_rec.seen.reset(new std::atomic<uint8_t>[o.messages]());
  }
  // On every rank (endpoints are numbered in creation order): messages to
  // this endpoint go to the handler.
  LCI_comp_t handler;
  OK(LCI_handler_create(LCI_UR_DEVICE, on_message, &handler));
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER));
  OK(LCI_plist_set_default_comp(plist, handler));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  LCI_plist_free(&plist);
  allgather_u64(0);  // every endpoint exists
  if (LCI_RANK == 0)
    sender(o, ep);
  else
    receiver(o);
  allgather_u64(0);
  OK(LCI_endpoint_free(&ep));
  return harness_finish("auth_traffic");
}

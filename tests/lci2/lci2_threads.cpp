// lci.hpp from many threads: four threads post sends and receives around
// the ring (each its own tags and cq, which it pops without progressing)
// while two other threads do nothing but progress. Every message arrives
// once, with its bytes and its status fields. Checks inside the threads
// only count failures; the main thread reports them.
#include <atomic>
#include <cstring>
#include <thread>

#include "lci2_common.hpp"

using namespace lci2_test;

namespace {

constexpr int k_workers = 4;
constexpr int k_progress_threads = 2;
constexpr int k_msgs = 250;

size_t size_of(int i) {
  return i % 10 == 9 ? lci::get_max_bcopy_size() + 1000 + static_cast<size_t>(i)
                     : static_cast<size_t>(i * 31) % 2000;
}

std::atomic<long> g_failures{0};
std::atomic<bool> g_stop{false};

void worker(int w) {
  const int me = lci::get_rank_me();
  lci::comp_t cq = lci::alloc_cq();
  std::vector<std::vector<char>> sbufs(k_msgs), rbufs(k_msgs);
  const lci::tag_t base = static_cast<lci::tag_t>(w) * 1000;
  size_t expected = 0;
  std::vector<int> done_recv(k_msgs, 0);
  for (int i = 0; i < k_msgs; ++i) {
    rbufs[i].assign(size_of(i), 0);
    const lci::status_t s =
        lci::post_recv_x(prev(), rbufs[i].data(), rbufs[i].size(), base + i, cq)
            .user_context(reinterpret_cast<void*>(static_cast<uintptr_t>(2 * i + 1)))();
    if (s.is_posted())
      ++expected;
    else if (s.is_done())
      done_recv[i] = 1;
    else
      g_failures.fetch_add(1);
  }
  for (int i = 0; i < k_msgs; ++i) {
    sbufs[i].resize(size_of(i));
    fill(sbufs[i].data(), sbufs[i].size(), seed_of(static_cast<uint32_t>(me), w, i));
    lci::status_t s;
    lci_test::deadline d(k_wait_s);
    while ((s = lci::post_send_x(next(), sbufs[i].data(), sbufs[i].size(), base + i, cq)
                    .user_context(reinterpret_cast<void*>(static_cast<uintptr_t>(2 * i + 2)))())
               .is_retry()) {
      std::this_thread::yield();
      if (d.passed()) fatal("a worker's send was refused for too long");
    }
    if (s.is_posted()) ++expected;
  }
  size_t got = 0;
  std::vector<int> recvd = done_recv;
  lci_test::deadline d(k_wait_s);
  while (got < expected) {
    const lci::status_t s = lci::cq_pop(cq);
    if (s.is_retry()) {
      std::this_thread::yield();
      if (d.passed()) fatal("a worker waited too long for its completions");
      continue;
    }
    ++got;
    const uintptr_t v = reinterpret_cast<uintptr_t>(s.get_user_context());
    const int i = static_cast<int>((v - 1) / 2);
    if (v == 0 || i >= k_msgs || s.get_tag() != base + static_cast<lci::tag_t>(i) ||
        s.get_size() != size_of(i)) {
      g_failures.fetch_add(1);
      continue;
    }
    if (v % 2 == 1) {  // a receive
      ++recvd[i];
      if (s.get_rank() != prev() || s.get_buffer() != rbufs[i].data()) g_failures.fetch_add(1);
    } else if (s.get_rank() != next() || s.get_buffer() != sbufs[i].data()) {
      g_failures.fetch_add(1);
    }
  }
  for (int i = 0; i < k_msgs; ++i) {
    if (recvd[i] != 1) g_failures.fetch_add(1);
    if (mismatch(rbufs[i].data(), rbufs[i].size(), seed_of(static_cast<uint32_t>(prev()), w, i)) !=
        SIZE_MAX)
      g_failures.fetch_add(1);
  }
  if (!lci::cq_pop(cq).is_retry()) g_failures.fetch_add(1);
  lci::free_comp(&cq);
}

}  // namespace

TEST_CASE("four posting threads, two progress threads") {
  barrier();
  g_stop = false;
  std::vector<std::thread> progress_threads, workers;
  for (int t = 0; t < k_progress_threads; ++t)
    progress_threads.emplace_back([] {
      while (!g_stop.load(std::memory_order_acquire))
        if (lci::progress().is_retry()) std::this_thread::yield();
    });
  for (int w = 0; w < k_workers; ++w) workers.emplace_back(worker, w);
  for (auto& t : workers) t.join();
  // The peers may still need this rank's progress to finish theirs.
  barrier();
  g_stop.store(true, std::memory_order_release);
  for (auto& t : progress_threads) t.join();
  CHECK(g_failures.load() == 0);
}

int main(int argc, char** argv) { return run_in_global_runtime(argc, argv); }

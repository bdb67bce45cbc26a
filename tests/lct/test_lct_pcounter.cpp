// Performance counters: sums from many threads, timers, trends, dump.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lct.h"

namespace {

std::string dump_text(LCT_pcounter_ctx_t ctx) {
  char* data = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&data, &size);
  LCT_pcounter_dump(ctx, f);
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  return text;
}

}  // namespace

TEST_CASE("counters from many threads sum exactly") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("pc");
  LCT_pcounter_handle_t sends = LCT_pcounter_register(ctx, "sends", LCT_PCOUNTER_COUNTER);
  LCT_pcounter_handle_t bytes = LCT_pcounter_register(ctx, "bytes", LCT_PCOUNTER_COUNTER);
  LCT_pcounter_handle_t again = LCT_pcounter_register(ctx, "sends", LCT_PCOUNTER_COUNTER);
  CHECK(again.idx == sends.idx);
  CHECK(bytes.idx != sends.idx);
  constexpr int nthreads = 8, iters = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < iters; ++i) {
        LCT_pcounter_add(ctx, sends, 1);
        LCT_pcounter_add(ctx, bytes, t + 1);
      }
    });
  for (auto& th : threads) th.join();
  const std::string text = dump_text(ctx);
  CHECK(text.find("pc.sends counter total=160000\n") != std::string::npos);
  // sum over t of (t+1)*iters = 36 * 20000
  CHECK(text.find("pc.bytes counter total=720000\n") != std::string::npos);
  LCT_pcounter_ctx_free(&ctx);
  CHECK(ctx == nullptr);
}

TEST_CASE("timers accumulate durations and counts") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("tm");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "work", LCT_PCOUNTER_TIMER);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        LCT_pcounter_startt(ctx, h, 1000);
        LCT_pcounter_endt(ctx, h, 1250);
      }
    });
  for (auto& th : threads) th.join();
  std::string text = dump_text(ctx);
  CHECK(text.find("tm.work timer total_ns=10000 count=40 avg_ns=250.0\n") != std::string::npos);

  LCT_pcounter_handle_t real = LCT_pcounter_register(ctx, "sleep", LCT_PCOUNTER_TIMER);
  LCT_pcounter_start(ctx, real);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  LCT_pcounter_end(ctx, real);
  text = dump_text(ctx);
  long long total = 0, count = 0;
  const char* line = std::strstr(text.c_str(), "tm.sleep timer");
  REQUIRE(line != nullptr);
  REQUIRE(std::sscanf(line, "tm.sleep timer total_ns=%lld count=%lld", &total, &count) == 2);
  CHECK(count == 1);
  CHECK(total >= 5000000);
  LCT_pcounter_ctx_free(&ctx);
}

TEST_CASE("trends record samples of the total") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("tr");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "queue_depth", LCT_PCOUNTER_TREND);
  LCT_pcounter_add(ctx, h, 5);
  LCT_pcounter_record(ctx);
  std::thread([&] { LCT_pcounter_add(ctx, h, 7); }).join();
  LCT_pcounter_record(ctx);
  LCT_pcounter_add(ctx, h, -2);
  LCT_pcounter_record(ctx);
  const std::string text = dump_text(ctx);
  CHECK(text.find("tr.queue_depth trend total=10 samples=3 (") != std::string::npos);
  CHECK(text.find(",5) (") != std::string::npos);
  CHECK(text.find(",12) (") != std::string::npos);
  CHECK(text.find(",10)\n") != std::string::npos);
  LCT_pcounter_ctx_free(&ctx);
}

TEST_CASE("dump while threads add") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("live");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "n", LCT_PCOUNTER_COUNTER);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100000 && !stop.load(std::memory_order_relaxed); ++i)
        LCT_pcounter_add(ctx, h, 1);
    });
  for (int i = 0; i < 20; ++i) (void)dump_text(ctx);
  for (auto& th : threads) th.join();
  CHECK(dump_text(ctx) == "live.n counter total=400000\n");
  LCT_pcounter_ctx_free(&ctx);
}

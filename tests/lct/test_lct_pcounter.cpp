// Performance counters as in 1.7.9: per-type handles, sums from many
// threads, timers fed by start/end and by add (HPX's use), trends recorded,
// the CSV dump, NONE handles, bad handles warned about, auto dump at free.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
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

// The line "pcounter,<type>,<rank>,<ctx>,<time>,<name>,..." without its time field.
std::string find_entry(const std::string& text, const std::string& type, const std::string& ctx,
                       const std::string& name) {
  const std::string head = "pcounter," + type + "," + std::to_string(LCT_get_rank()) + "," + ctx + ",";
  size_t pos = 0;
  while ((pos = text.find(head, pos)) != std::string::npos) {
    const size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol - pos);
    const size_t time_end = line.find(',', head.size());
    std::string rest = line.substr(time_end + 1);
    if (rest.compare(0, name.size() + 1, name + ",") == 0) return head + "T," + rest;
    pos = eol;
  }
  return "<missing>";
}

}  // namespace

TEST_CASE("counters from many threads: total, count, average, min, max") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("pc");
  LCT_pcounter_handle_t sends = LCT_pcounter_register(ctx, "sends", LCT_PCOUNTER_COUNTER);
  LCT_pcounter_handle_t bytes = LCT_pcounter_register(ctx, "bytes", LCT_PCOUNTER_COUNTER);
  CHECK(sends.type == LCT_PCOUNTER_COUNTER);
  CHECK(sends.idx == 0);
  CHECK(bytes.idx == 1);
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
  CHECK(text.rfind("pcounter-summary: rank ", 0) == 0);
  CHECK(text.find(", name pc, total records 0, total record time 0 ns, total init time ") !=
        std::string::npos);
  CHECK(find_entry(text, "counter", "pc", "sends") ==
        "pcounter,counter," + std::to_string(LCT_get_rank()) + ",pc,T,sends,160000,160000,1,1,1");
  // sum over t of (t+1)*iters = 36 * 20000
  CHECK(find_entry(text, "counter", "pc", "bytes") ==
        "pcounter,counter," + std::to_string(LCT_get_rank()) + ",pc,T,bytes,720000,160000,4,1,8");
  LCT_pcounter_ctx_free(&ctx);
  CHECK(ctx == nullptr);
}

TEST_CASE("each type has its own indices; a name registered twice is two entries") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("ix");
  LCT_pcounter_handle_t c = LCT_pcounter_register(ctx, "x", LCT_PCOUNTER_COUNTER);
  LCT_pcounter_handle_t tr = LCT_pcounter_register(ctx, "x", LCT_PCOUNTER_TREND);
  LCT_pcounter_handle_t tm = LCT_pcounter_register(ctx, "x", LCT_PCOUNTER_TIMER);
  LCT_pcounter_handle_t c2 = LCT_pcounter_register(ctx, "x", LCT_PCOUNTER_COUNTER);
  CHECK(c.idx == 0);
  CHECK(tr.idx == 0);
  CHECK(tm.idx == 0);
  CHECK(c2.idx == 1);
  LCT_pcounter_add(ctx, c, 3);
  LCT_pcounter_add(ctx, c2, 4);
  const std::string text = dump_text(ctx);
  CHECK(text.find(",x,3,1,3,3,3\n") != std::string::npos);
  CHECK(text.find(",x,4,1,4,4,4\n") != std::string::npos);
  // An unused timer prints empty fields.
  CHECK(find_entry(text, "timer", "ix", "x") ==
        "pcounter,timer," + std::to_string(LCT_get_rank()) + ",ix,T,x,,0,,");
  LCT_pcounter_ctx_free(&ctx);
}

TEST_CASE("timers: start/end and startt/endt accumulate durations") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("tm");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "work", LCT_PCOUNTER_TIMER);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        LCT_pcounter_startt(ctx, h, 1000);
        LCT_pcounter_endt(ctx, h, 1250 + t);
      }
    });
  for (auto& th : threads) th.join();
  std::string text = dump_text(ctx);
  // 10 * (250 + 251 + 252 + 253) = 10060
  CHECK(find_entry(text, "timer", "tm", "work") ==
        "pcounter,timer," + std::to_string(LCT_get_rank()) + ",tm,T,work,10060,40,251,250,253");

  LCT_pcounter_handle_t real = LCT_pcounter_register(ctx, "sleep", LCT_PCOUNTER_TIMER);
  LCT_pcounter_start(ctx, real);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  LCT_pcounter_end(ctx, real);
  text = dump_text(ctx);
  const std::string line = find_entry(text, "timer", "tm", "sleep");
  long long total = 0, count = 0;
  REQUIRE(std::sscanf(line.c_str() + line.find(",sleep,"), ",sleep,%lld,%lld", &total, &count) == 2);
  CHECK(count == 1);
  CHECK(total >= 5000000);  // nanoseconds
  LCT_pcounter_ctx_free(&ctx);
}

TEST_CASE("nested starts of one timer: 1.7.9's arithmetic, min and max shown as -1") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("nest");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "t", LCT_PCOUNTER_TIMER);
  LCT_pcounter_startt(ctx, h, 10);
  LCT_pcounter_startt(ctx, h, 20);
  LCT_pcounter_endt(ctx, h, 100);  // adds 100 - (10 + 20)
  LCT_pcounter_endt(ctx, h, 200);  // adds 200 - 0
  CHECK(find_entry(dump_text(ctx), "timer", "nest", "t") ==
        "pcounter,timer," + std::to_string(LCT_get_rank()) + ",nest,T,t,270,2,135,-1,-1");
  LCT_pcounter_ctx_free(&ctx);
}

// HPX's parcelport (HPX_WITH_PARCELPORT_LCI_PCOUNTER=ON) registers 4 trends
// and 7 timers, then feeds the timers with LCT_pcounter_add(ctx, timer,
// LCT_now() - start) and the trends with add(handle, 1).
TEST_CASE("HPX: LCT_pcounter_add on a timer handle adds one duration") {
  LCT_init();
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("hpx-lci");
  const char* trends[] = {"send_conn_start", "send_conn_end", "recv_conn_start", "recv_conn_end"};
  const char* timers[] = {"send_conn_timer", "recv_conn_timer", "async_write_timer", "send_timer",
                          "handle_parcels", "poll_comp", "useful_bg_work"};
  std::vector<LCT_pcounter_handle_t> th, tm;
  for (const char* n : trends) th.push_back(LCT_pcounter_register(ctx, n, LCT_PCOUNTER_TREND));
  for (const char* n : timers) tm.push_back(LCT_pcounter_register(ctx, n, LCT_PCOUNTER_TIMER));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const int64_t start = static_cast<int64_t>(LCT_now());
        LCT_pcounter_add(ctx, th[0], 1);
        for (auto& h : tm) LCT_pcounter_add(ctx, h, static_cast<int64_t>(LCT_now()) - start);
        LCT_pcounter_add(ctx, th[1], 1);
      }
    });
  for (auto& t : threads) t.join();
  LCT_pcounter_add(ctx, tm[5], 7);
  LCT_pcounter_record(ctx);
  const std::string text = dump_text(ctx);
  for (const char* n : timers) {
    const std::string line = find_entry(text, "timer", "hpx-lci", n);
    INFO(line);
    long long total = -1, count = -1;
    const std::string key = std::string(",") + n + ",";
    REQUIRE(line.find(key) != std::string::npos);
    REQUIRE(std::sscanf(line.c_str() + line.find(key) + key.size(), "%lld,%lld", &total,
                        &count) == 2);
    CHECK(count == (std::strcmp(n, "poll_comp") == 0 ? 4001 : 4000));
    CHECK(total >= 0);
  }
  CHECK(find_entry(text, "trend", "hpx-lci", "send_conn_start") ==
        "pcounter,trend," + std::to_string(LCT_get_rank()) + ",hpx-lci,T,send_conn_start,4000,4000,1,1,1");
  CHECK(find_entry(text, "trend", "hpx-lci", "recv_conn_end") ==
        "pcounter,trend," + std::to_string(LCT_get_rank()) + ",hpx-lci,T,recv_conn_end,,0,,");
  LCT_pcounter_ctx_free(&ctx);
  LCT_fina();
}

TEST_CASE("trends are printed per record, then the records are cleared") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("tr");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "queue_depth", LCT_PCOUNTER_TREND);
  LCT_pcounter_add(ctx, h, 5);
  LCT_pcounter_record(ctx);
  std::thread([&] { LCT_pcounter_add(ctx, h, 7); }).join();
  LCT_pcounter_record(ctx);
  LCT_pcounter_add(ctx, h, -2);
  LCT_pcounter_record(ctx);
  std::string text = dump_text(ctx);
  CHECK(text.find("total records 3,") != std::string::npos);
  CHECK(text.find(",queue_depth,5,1,5,5,5\n") != std::string::npos);
  CHECK(text.find(",queue_depth,12,2,6,5,7\n") != std::string::npos);
  CHECK(text.find(",queue_depth,10,3,3,-2,7\n") != std::string::npos);
  text = dump_text(ctx);
  CHECK(text.find("total records 0,") != std::string::npos);
  CHECK(text.find("queue_depth") == std::string::npos);
  LCT_pcounter_ctx_free(&ctx);
}

TEST_CASE("NONE handles do nothing; bad handles warn once and are ignored") {
  child_result r = run_in_child([] {
    LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("bad");
    LCT_pcounter_handle_t none = LCT_pcounter_register(ctx, "off", LCT_PCOUNTER_NONE);
    if (none.type != LCT_PCOUNTER_NONE) _exit(3);
    LCT_pcounter_add(ctx, none, 1);
    LCT_pcounter_start(ctx, none);
    LCT_pcounter_end(ctx, none);
    LCT_pcounter_handle_t c = LCT_pcounter_register(ctx, "c", LCT_PCOUNTER_COUNTER);
    LCT_pcounter_handle_t unregistered = {LCT_PCOUNTER_COUNTER, 9};
    LCT_pcounter_add(ctx, unregistered, 1);
    LCT_pcounter_add(ctx, unregistered, 1);
    // A type no enumerator names, stored as a C caller could (in C++ the
    // cast itself would be undefined).
    LCT_pcounter_handle_t bad_type = {LCT_PCOUNTER_COUNTER, 0};
    const int nine = 9;
    std::memcpy(&bad_type.type, &nine, sizeof nine);
    LCT_pcounter_add(ctx, bad_type, 1);
    LCT_pcounter_add(ctx, c, 2);
    LCT_pcounter_dump(ctx, stdout);
    LCT_pcounter_ctx_free(&ctx);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("index not registered (handle type 1, index 9); ignored (warned once)"));
  size_t warnings = 0;
  for (size_t p = 0; (p = r.output.find("warned once", p)) != std::string::npos; ++p) ++warnings;
  CHECK(warnings == 1);
  CHECK(r.has(",bad,"));
  CHECK(r.has(",c,2,1,2,2,2\n"));
  CHECK_FALSE(r.has(",off,"));
}

TEST_CASE("start on a counter handle aborts, as 1.7.9's exception does") {
  child_result r = run_in_child([] {
    LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("ab");
    LCT_pcounter_handle_t c = LCT_pcounter_register(ctx, "c", LCT_PCOUNTER_COUNTER);
    LCT_pcounter_start(ctx, c);
  });
  CHECK(r.killed_by(SIGABRT));
  CHECK(r.has("is not a timer"));
}

TEST_CASE("LCT_PCOUNTER_AUTO_DUMP dumps at ctx_free, with the trends recorded") {
  child_result r = run_in_child([] {
    setenv("LCT_PCOUNTER_AUTO_DUMP", "stdout", 1);
    LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("auto");
    LCT_pcounter_handle_t tr = LCT_pcounter_register(ctx, "conn", LCT_PCOUNTER_TREND);
    LCT_pcounter_handle_t tm = LCT_pcounter_register(ctx, "send", LCT_PCOUNTER_TIMER);
    LCT_pcounter_add(ctx, tr, 1);
    LCT_pcounter_add(ctx, tm, 40);
    LCT_pcounter_ctx_free(&ctx);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("pcounter-summary: rank "));
  // The recorder thread asks for a record at once (the first trend add
  // makes it), and ctx_free records once more.
  CHECK(r.has(", name auto, total records "));
  CHECK(r.has(",auto,"));
  CHECK(r.has(",conn,1,1,1,1,1\n"));
  CHECK(r.has(",send,40,1,40,40,40\n"));
}

TEST_CASE("LCT_PCOUNTER_RECORD_INTERVAL records trends while adding") {
  child_result r = run_in_child([] {
    setenv("LCT_PCOUNTER_AUTO_DUMP", "stdout", 1);
    setenv("LCT_PCOUNTER_RECORD_INTERVAL", "1000", 1);
    LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("iv");
    LCT_pcounter_handle_t tr = LCT_pcounter_register(ctx, "n", LCT_PCOUNTER_TREND);
    for (int i = 0; i < 20; ++i) {
      LCT_pcounter_add(ctx, tr, 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    LCT_pcounter_ctx_free(&ctx);
  });
  CHECK(r.exited_with(0));
  size_t records = 0;
  for (size_t p = 0; (p = r.output.find("pcounter,trend,", p)) != std::string::npos; ++p)
    ++records;
  CHECK(records >= 5);
}

TEST_CASE("dump while threads add") {
  LCT_pcounter_ctx_t ctx = LCT_pcounter_ctx_alloc("live");
  LCT_pcounter_handle_t h = LCT_pcounter_register(ctx, "n", LCT_PCOUNTER_COUNTER);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) LCT_pcounter_add(ctx, h, 1);
    });
  for (int i = 0; i < 20; ++i) (void)dump_text(ctx);
  for (auto& th : threads) th.join();
  CHECK(find_entry(dump_text(ctx), "counter", "live", "n") ==
        "pcounter,counter," + std::to_string(LCT_get_rank()) + ",live,T,n,400000,400000,1,1,1");
  LCT_pcounter_ctx_free(&ctx);
}

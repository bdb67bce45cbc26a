// Performance counters with 1.7.9's semantics and output.
//
// Handles: each type (COUNTER, TREND, TIMER) has its own index space, and
// every registration makes a new entry, even under a name already used (as
// in 1.7.9). A NONE handle is accepted everywhere and does nothing.
// An entry keeps total, count, min and max of the values added to it. A
// TIMER entry also takes add(): the value is one duration (HPX measures its
// intervals itself and adds them). start/end follow 1.7.9: start adds the
// time to a per-thread start sum, end adds (time - that sum) and clears it,
// so nested starts give meaningless values; they are flagged and dump shows
// min and max as -1 for that timer.
//
// Layout: a context owns the names of each type and one block per thread
// (indexed by LCT_get_thread_id, in lazily allocated chunks), allocated on
// the thread's first update and published with a release store. A block
// belongs to its thread: only that thread writes it, with relaxed
// load+store (no read-modify-write, no lock); record and dump read every
// block with relaxed loads under the context's mutex, so a concurrent dump
// sees each field at some recent point. Blocks are cache-line aligned.
// Registration, record and dump take the mutex (cold paths).
//
// A handle that 1.7.9 would crash or throw on (an index never registered,
// an unknown type) makes one warning line per context and is ignored.
//
// Environment (read by LCT_pcounter_ctx_alloc, as 1.7.9):
//   LCT_PCOUNTER_AUTO_DUMP=stderr|stdout|<file>  dump at ctx_free ('%' in
//     the file name becomes the rank; the file is appended to);
//   LCT_PCOUNTER_RECORD_INTERVAL=<us>  record the trends every interval (at
//     the next trend add); 1 s by default when auto-dumping;
//   LCT_PCOUNTER_DUMP_ON_THE_FLY  dump after each such record;
//   LCT_PCOUNTER_MODE=on-the-fly  all three, to lct_pcounter.<rank>.out.
#include <atomic>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

constexpr int max_per_type = 512;
constexpr int chunk_size = 1024;  // thread blocks per chunk
constexpr int max_chunks = 64;    // 65536 threads

// Written by its owning thread only (relaxed load + store); read by dump.
struct entry {
  std::atomic<int64_t> total{0};
  std::atomic<int64_t> count{0};
  std::atomic<int64_t> min{INT64_MAX};
  std::atomic<int64_t> max{INT64_MIN};

  void add(int64_t v) {
    constexpr auto r = std::memory_order_relaxed;
    total.store(total.load(r) + v, r);
    count.store(count.load(r) + 1, r);
    if (v < min.load(r)) min.store(v, r);
    if (v > max.load(r)) max.store(v, r);
  }
};

// A snapshot of entries, summed over threads.
struct sum_entry {
  int64_t total = 0;
  int64_t count = 0;
  int64_t min = INT64_MAX;
  int64_t max = INT64_MIN;

  void merge(int64_t t, int64_t c, int64_t mn, int64_t mx) {
    total += t;
    count += c;
    if (mn < min) min = mn;
    if (mx > max) max = mx;
  }
  void merge(const entry& e) {
    constexpr auto r = std::memory_order_relaxed;
    merge(e.total.load(r), e.count.load(r), e.min.load(r), e.max.load(r));
  }
};

struct alignas(64) thread_block {
  entry counters[max_per_type];
  entry trends[max_per_type];
  entry timers[max_per_type];
  LCT_time_t start_time[max_per_type] = {};      // owner only
  int64_t start_count[max_per_type] = {};        // owner only
  std::atomic<bool> nested_start[max_per_type] = {};  // set by owner, read by dump
};

struct record {
  LCT_time_t time;
  std::vector<sum_entry> trends;
};

LCT_time_t g_start_time = -1;  // first context's creation; dump times are relative to it
std::mutex g_start_mutex;

struct pcounter_ctx {
  std::string name;
  std::mutex mutex;  // names, records, totals below, the auto-dump file
  std::vector<std::string> names[3];   // COUNTER, TREND, TIMER
  std::atomic<int> registered[3] = {};  // published sizes of names[]
  std::atomic<std::atomic<thread_block*>*> chunks[max_chunks] = {};
  std::vector<record> records;
  LCT_time_t total_record_time = 0;
  std::atomic<LCT_time_t> total_init_time{0};
  std::atomic<bool> warned{false};

  FILE* dump_file = nullptr;
  bool dump_on_the_fly = false;
  std::atomic<bool> do_record{false};
  std::thread recorder;
  std::mutex recorder_mutex;
  std::condition_variable recorder_cv;
  bool stop_recorder = false;
};

// A handle's type as the integer the caller stored: a C caller may store
// any int there, and loading an out-of-range value as the enum is undefined
// in C++, so it is read as an int (the enum's size, checked below).
static_assert(sizeof(LCT_pcounter_type_t) == sizeof(int), "LCT_pcounter_type_t is an int");
int raw_type(const LCT_pcounter_type_t& type) {
  int t;
  std::memcpy(&t, &type, sizeof t);
  return t;
}
int type_of(const LCT_pcounter_handle_t& h) { return raw_type(h.type); }

int slot_of(int t) {
  switch (t) {
    case LCT_PCOUNTER_COUNTER: return 0;
    case LCT_PCOUNTER_TREND: return 1;
    case LCT_PCOUNTER_TIMER: return 2;
    default: return -1;
  }
}

void warn_once(pcounter_ctx& ctx, const char* who, const char* what, LCT_pcounter_handle_t h) {
  if (ctx.warned.exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr,
               "LCT %s: context '%s': %s (handle type %d, index %d); ignored (warned once)\n",
               who, ctx.name.c_str(), what, type_of(h), h.idx);
}

// The slot of a valid handle, -1 (after a warning) for one to ignore.
// NONE handles are filtered out before.
int check(pcounter_ctx& ctx, LCT_pcounter_handle_t h, const char* who) {
  const int s = slot_of(type_of(h));
  if (s < 0) {
    warn_once(ctx, who, "unknown counter type", h);
    return -1;
  }
  if (h.idx < 0 || h.idx >= ctx.registered[s].load(std::memory_order_acquire)) {
    warn_once(ctx, who, "index not registered", h);
    return -1;
  }
  return s;
}

thread_block* block_at(pcounter_ctx& ctx, int tid) {
  auto* chunk = ctx.chunks[tid / chunk_size].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : chunk[tid % chunk_size].load(std::memory_order_acquire);
}

[[gnu::noinline]] thread_block* new_block(pcounter_ctx& ctx, int tid) {
  const LCT_time_t t0 = LCT_now();
  auto& chunk_slot = ctx.chunks[tid / chunk_size];
  auto* chunk = chunk_slot.load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto* fresh = new std::atomic<thread_block*>[chunk_size];
    for (int i = 0; i < chunk_size; ++i) fresh[i].store(nullptr, std::memory_order_relaxed);
    if (chunk_slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel))
      chunk = fresh;
    else
      delete[] fresh;
  }
  // Only this thread ever installs block tid.
  auto* b = new thread_block;
  chunk[tid % chunk_size].store(b, std::memory_order_release);
  ctx.total_init_time.fetch_add(LCT_now() - t0, std::memory_order_relaxed);
  return b;
}

// The calling thread's block; NULL (after a warning) past 65536 threads.
inline thread_block* my_block(pcounter_ctx& ctx) {
  const int tid = LCT_get_thread_id();
  if (LCT_unlikely(tid >= chunk_size * max_chunks)) {
    if (!ctx.warned.exchange(true, std::memory_order_relaxed))
      std::fprintf(stderr, "LCT pcounter: context '%s': thread %d is past the limit of %d "
                           "threads; its updates are ignored (warned once)\n",
                   ctx.name.c_str(), tid, chunk_size * max_chunks);
    return nullptr;
  }
  thread_block* b = block_at(ctx, tid);
  return LCT_likely(b != nullptr) ? b : new_block(ctx, tid);
}

template <class F>
void for_each_block(pcounter_ctx& ctx, F f) {
  for (auto& c : ctx.chunks) {
    auto* chunk = c.load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (int i = 0; i < chunk_size; ++i)
      if (thread_block* b = chunk[i].load(std::memory_order_acquire)) f(*b);
  }
}

// Called with ctx.mutex held.
void record_locked(pcounter_ctx& ctx) {
  const LCT_time_t start = LCT_now();
  std::vector<sum_entry> sums(ctx.names[1].size());
  for_each_block(ctx, [&](thread_block& b) {
    for (size_t i = 0; i < sums.size(); ++i) sums[i].merge(b.trends[i]);
  });
  ctx.records.push_back({start, std::move(sums)});
  ctx.total_record_time += LCT_now() - start;
}

void print_entry(FILE* out, const pcounter_ctx& ctx, const char* type, LCT_time_t when,
                 const std::string& name, const sum_entry& e) {
  const int64_t us = static_cast<int64_t>(LCT_time_to_us(when - g_start_time));
  if (e.count > 0)
    std::fprintf(out, "pcounter,%s,%d,%s,%" PRId64 ",%s,%" PRId64 ",%" PRId64 ",%" PRId64
                      ",%" PRId64 ",%" PRId64 "\n",
                 type, LCT_get_rank(), ctx.name.c_str(), us, name.c_str(), e.total, e.count,
                 e.total / e.count, e.min, e.max);
  else
    std::fprintf(out, "pcounter,%s,%d,%s,%" PRId64 ",%s,,0,,\n", type, LCT_get_rank(),
                 ctx.name.c_str(), us, name.c_str());
}

// Called with ctx.mutex held.
void dump_locked(pcounter_ctx& ctx, FILE* out) {
  std::fprintf(out,
               "pcounter-summary: rank %d, name %s, total records %zu, total record time %" PRId64
               " ns, total init time %" PRId64 " ns\n",
               LCT_get_rank(), ctx.name.c_str(), ctx.records.size(),
               static_cast<int64_t>(LCT_time_to_ns(ctx.total_record_time)),
               static_cast<int64_t>(
                   LCT_time_to_ns(ctx.total_init_time.load(std::memory_order_relaxed))));
  for (const record& r : ctx.records)
    for (size_t i = 0; i < r.trends.size(); ++i)
      print_entry(out, ctx, "trend", r.time, ctx.names[1][i], r.trends[i]);
  ctx.records.clear();
  std::vector<sum_entry> counters(ctx.names[0].size()), timers(ctx.names[2].size());
  for_each_block(ctx, [&](thread_block& b) {
    for (size_t i = 0; i < counters.size(); ++i) counters[i].merge(b.counters[i]);
    for (size_t i = 0; i < timers.size(); ++i) {
      const entry& e = b.timers[i];
      constexpr auto r = std::memory_order_relaxed;
      const bool nested = b.nested_start[i].load(r);
      timers[i].merge(e.total.load(r), e.count.load(r), nested ? -1 : e.min.load(r),
                      nested ? -1 : e.max.load(r));
    }
  });
  const LCT_time_t now = LCT_now();
  for (size_t i = 0; i < counters.size(); ++i)
    print_entry(out, ctx, "counter", now, ctx.names[0][i], counters[i]);
  for (size_t i = 0; i < timers.size(); ++i)
    print_entry(out, ctx, "timer", now, ctx.names[2][i], timers[i]);
  std::fflush(out);
}

void recorder_loop(pcounter_ctx* ctx, uint64_t interval_us) {
  std::unique_lock<std::mutex> lock(ctx->recorder_mutex);
  while (!ctx->stop_recorder) {
    ctx->do_record.store(true, std::memory_order_relaxed);
    ctx->recorder_cv.wait_for(lock, std::chrono::microseconds(interval_us),
                              [ctx] { return ctx->stop_recorder; });
  }
}

// The trend add that finds the recorder's flag records (and dumps).
[[gnu::noinline]] void record_on_the_fly(pcounter_ctx& ctx) {
  bool expected = true;
  if (!ctx.do_record.compare_exchange_strong(expected, false)) return;
  std::lock_guard<std::mutex> guard(ctx.mutex);
  record_locked(ctx);
  if (ctx.dump_on_the_fly && ctx.dump_file != nullptr) dump_locked(ctx, ctx.dump_file);
}

void setup_from_env(pcounter_ctx& ctx) {
  std::string dump_name;
  uint64_t interval = 0;
  const char* mode = std::getenv("LCT_PCOUNTER_MODE");
  if (mode != nullptr && std::strcmp(mode, "on-the-fly") == 0) {
    dump_name = "lct_pcounter.%.out";
    ctx.dump_on_the_fly = true;
    interval = 1000000;
  }
  if (const char* p = std::getenv("LCT_PCOUNTER_AUTO_DUMP")) dump_name = p;
  if (!dump_name.empty()) {
    if (dump_name == "stderr") {
      ctx.dump_file = stderr;
    } else if (dump_name == "stdout") {
      ctx.dump_file = stdout;
    } else {
      const size_t pct = dump_name.find('%');
      if (pct != std::string::npos) dump_name.replace(pct, 1, std::to_string(LCT_get_rank()));
      ctx.dump_file = std::fopen(dump_name.c_str(), "a");
      if (ctx.dump_file == nullptr)
        std::fprintf(stderr, "Cannot open the logfile %s!\n", dump_name.c_str());
    }
  }
  if (ctx.dump_file != nullptr && interval == 0) interval = 1000000;
  if (const char* p = std::getenv("LCT_PCOUNTER_RECORD_INTERVAL")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p || *end != '\0')
      std::fprintf(stderr, "LCT pcounter: LCT_PCOUNTER_RECORD_INTERVAL=%s is not a number of "
                           "microseconds; ignored\n", p);
    else
      interval = v;
  }
  if (std::getenv("LCT_PCOUNTER_DUMP_ON_THE_FLY") != nullptr) ctx.dump_on_the_fly = true;
  if (interval > 0) ctx.recorder = std::thread(recorder_loop, &ctx, interval);
}

}  // namespace

LCT_pcounter_ctx_t LCT_pcounter_ctx_alloc(const char* ctx_name) noexcept try {
  auto* ctx = new pcounter_ctx;
  ctx->name = ctx_name != nullptr ? ctx_name : "";
  for (auto& n : ctx->names) n.reserve(max_per_type);
  {
    std::lock_guard<std::mutex> guard(g_start_mutex);
    if (g_start_time == -1) g_start_time = LCT_now();
  }
  setup_from_env(*ctx);
  return ctx;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_ctx_free(LCT_pcounter_ctx_t* pcounter_ctx_p) noexcept try {
  if (pcounter_ctx_p == nullptr || *pcounter_ctx_p == nullptr) return;
  auto* ctx = static_cast<pcounter_ctx*>(*pcounter_ctx_p);
  if (ctx->recorder.joinable()) {
    {
      std::lock_guard<std::mutex> guard(ctx->recorder_mutex);
      ctx->stop_recorder = true;
    }
    ctx->recorder_cv.notify_all();
    ctx->recorder.join();
  }
  {
    std::lock_guard<std::mutex> guard(ctx->mutex);
    record_locked(*ctx);
    if (ctx->dump_file != nullptr) {
      dump_locked(*ctx, ctx->dump_file);
      if (ctx->dump_file != stdout && ctx->dump_file != stderr) std::fclose(ctx->dump_file);
    }
  }
  for (auto& c : ctx->chunks) {
    auto* chunk = c.load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (int i = 0; i < chunk_size; ++i) delete chunk[i].load(std::memory_order_acquire);
    delete[] chunk;
  }
  delete ctx;
  *pcounter_ctx_p = nullptr;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

LCT_pcounter_handle_t LCT_pcounter_register(LCT_pcounter_ctx_t c, const char* name,
                                            LCT_pcounter_type_t type) noexcept try {
  if (c == nullptr || name == nullptr)
    lct::detail::fatal("LCT_pcounter_register", "NULL context or name");
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  const int s = slot_of(raw_type(type));
  if (raw_type(type) == LCT_PCOUNTER_NONE) return {type, 0};
  if (s < 0) {
    std::fprintf(stderr, "LCT LCT_pcounter_register: counter '%s' has unknown type %d; its "
                         "handle does nothing\n", name, raw_type(type));
    return {LCT_PCOUNTER_NONE, 0};
  }
  std::lock_guard<std::mutex> guard(ctx.mutex);
  std::vector<std::string>& names = ctx.names[s];
  if (names.size() >= static_cast<size_t>(max_per_type)) {
    std::fprintf(stderr, "LCT LCT_pcounter_register: context '%s' has %d counters of type %d "
                         "already; '%s' does nothing\n",
                 ctx.name.c_str(), max_per_type, raw_type(type), name);
    return {LCT_PCOUNTER_NONE, 0};
  }
  names.emplace_back(name);
  const int idx = static_cast<int>(names.size()) - 1;
  ctx.registered[s].store(idx + 1, std::memory_order_release);
  return {type, idx};
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_add(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h, int64_t val) noexcept try {
  if (type_of(h) == LCT_PCOUNTER_NONE) return;
  if (c == nullptr) lct::detail::fatal("LCT_pcounter_add", "NULL pcounter context");
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  const int s = check(ctx, h, "LCT_pcounter_add");
  if (s < 0) return;
  thread_block* b = my_block(ctx);
  if (b == nullptr) return;
  switch (s) {
    case 0: b->counters[h.idx].add(val); break;
    case 1:
      b->trends[h.idx].add(val);
      if (LCT_unlikely(ctx.do_record.load(std::memory_order_relaxed))) record_on_the_fly(ctx);
      break;
    default: b->timers[h.idx].add(val); break;
  }
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_startt(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h,
                         LCT_time_t time) noexcept try {
  if (type_of(h) == LCT_PCOUNTER_NONE) return;
  if (c == nullptr) lct::detail::fatal("LCT_pcounter_start", "NULL pcounter context");
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  if (type_of(h) == LCT_PCOUNTER_COUNTER || type_of(h) == LCT_PCOUNTER_TREND)
    lct::detail::fatal("LCT_pcounter_start", "handle (type %d, index %d) is not a timer",
                       type_of(h), h.idx);
  if (check(ctx, h, "LCT_pcounter_start") < 0) return;
  thread_block* b = my_block(ctx);
  if (b == nullptr) return;
  if (b->start_count[h.idx] != 0) b->nested_start[h.idx].store(true, std::memory_order_relaxed);
  b->start_time[h.idx] += time;
  ++b->start_count[h.idx];
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_endt(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h,
                       LCT_time_t time) noexcept try {
  if (type_of(h) == LCT_PCOUNTER_NONE) return;
  if (c == nullptr) lct::detail::fatal("LCT_pcounter_end", "NULL pcounter context");
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  if (type_of(h) == LCT_PCOUNTER_COUNTER || type_of(h) == LCT_PCOUNTER_TREND)
    lct::detail::fatal("LCT_pcounter_end", "handle (type %d, index %d) is not a timer",
                       type_of(h), h.idx);
  if (check(ctx, h, "LCT_pcounter_end") < 0) return;
  thread_block* b = my_block(ctx);
  if (b == nullptr) return;
  b->timers[h.idx].add(time - b->start_time[h.idx]);
  b->start_time[h.idx] = 0;
  --b->start_count[h.idx];
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_start(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h) noexcept try {
  LCT_pcounter_startt(c, h, LCT_now());
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_end(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h) noexcept try {
  LCT_pcounter_endt(c, h, LCT_now());
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_record(LCT_pcounter_ctx_t c) noexcept try {
  if (c == nullptr) return;
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  std::lock_guard<std::mutex> guard(ctx.mutex);
  record_locked(ctx);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_dump(LCT_pcounter_ctx_t c, FILE* out) noexcept try {
  if (c == nullptr || out == nullptr) return;
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  std::lock_guard<std::mutex> guard(ctx.mutex);
  dump_locked(ctx, out);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

// Performance counters: per-thread slots, summed when dumped.
//
// Layout: a context owns a table of registered counters (name, type) and
// one block per thread (indexed by LCT_get_thread_id), allocated on the
// thread's first update and published with a CAS. A block belongs to its
// thread: only that thread writes it, with relaxed load+store (no
// read-modify-write, no lock); dump and record read every block with
// relaxed loads, so a concurrent dump sees each value at some recent point.
// Blocks are cache-line aligned so neighbouring threads never share a line.
// Registration, record and dump take the context's mutex (cold paths).
// Handles are checked against the registration table: a handle of another
// type or an unregistered index aborts with a message.
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

constexpr int max_counters = 256;
constexpr int max_threads = 1024;

struct alignas(64) thread_block {
  std::atomic<int64_t> value[max_counters];     // COUNTER and TREND sums, TIMER total ns
  std::atomic<int64_t> count[max_counters];     // TIMER: completed intervals
  int64_t started[max_counters];                // TIMER: start time (owner only)
  thread_block() {
    for (int i = 0; i < max_counters; ++i) {
      value[i].store(0, std::memory_order_relaxed);
      count[i].store(0, std::memory_order_relaxed);
      started[i] = 0;
    }
  }
};

struct counter_info {
  std::string name;
  LCT_pcounter_type_t type;
  std::vector<std::pair<LCT_time_t, int64_t>> samples;  // TREND only
};

struct pcounter_ctx {
  std::string name;
  LCT_time_t created = LCT_now();
  std::mutex mutex;                          // counters (append, samples)
  std::vector<counter_info> counters;        // index = handle.idx
  std::atomic<int> ncounters{0};             // published size of counters
  std::atomic<thread_block*> blocks[max_threads] = {};
};

inline void add_relaxed(std::atomic<int64_t>& a, int64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

thread_block& my_block(pcounter_ctx& ctx) {
  const int tid = LCT_get_thread_id();
  if (tid >= max_threads)
    lct::detail::fatal("pcounter", "thread %d is past the limit of %d threads", tid, max_threads);
  thread_block* b = ctx.blocks[tid].load(std::memory_order_acquire);
  if (b != nullptr) return *b;
  // Only this thread ever installs block tid.
  b = new thread_block;
  ctx.blocks[tid].store(b, std::memory_order_release);
  return *b;
}

pcounter_ctx& checked(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h, LCT_pcounter_type_t want,
                      const char* who) {
  if (c == nullptr) lct::detail::fatal(who, "NULL pcounter context");
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  if (h.type != want || h.idx < 0 || h.idx >= ctx.ncounters.load(std::memory_order_acquire))
    lct::detail::fatal(who, "handle (type %d, index %d) is not a registered counter of type %d",
                       static_cast<int>(h.type), h.idx, static_cast<int>(want));
  return ctx;
}

int64_t sum(pcounter_ctx& ctx, int idx, bool counts) {
  int64_t total = 0;
  for (auto& slot : ctx.blocks) {
    thread_block* b = slot.load(std::memory_order_acquire);
    if (b == nullptr) continue;
    total += (counts ? b->count[idx] : b->value[idx]).load(std::memory_order_relaxed);
  }
  return total;
}

const char* type_name(LCT_pcounter_type_t t) {
  switch (t) {
    case LCT_PCOUNTER_COUNTER: return "counter";
    case LCT_PCOUNTER_TREND: return "trend";
    case LCT_PCOUNTER_TIMER: return "timer";
    default: return "none";
  }
}

}  // namespace

LCT_pcounter_ctx_t LCT_pcounter_ctx_alloc(const char* ctx_name) noexcept try {
  auto* ctx = new pcounter_ctx;
  ctx->name = ctx_name != nullptr ? ctx_name : "pcounter";
  ctx->counters.reserve(max_counters);  // never reallocates: readers index it
  return ctx;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_ctx_free(LCT_pcounter_ctx_t* pcounter_ctx_p) noexcept try {
  if (pcounter_ctx_p == nullptr || *pcounter_ctx_p == nullptr) return;
  auto* ctx = static_cast<pcounter_ctx*>(*pcounter_ctx_p);
  for (auto& slot : ctx->blocks) delete slot.load(std::memory_order_acquire);
  delete ctx;
  *pcounter_ctx_p = nullptr;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

LCT_pcounter_handle_t LCT_pcounter_register(LCT_pcounter_ctx_t c, const char* name,
                                            LCT_pcounter_type_t type) noexcept try {
  if (c == nullptr || name == nullptr)
    lct::detail::fatal("LCT_pcounter_register", "NULL context or name");
  if (type != LCT_PCOUNTER_COUNTER && type != LCT_PCOUNTER_TREND && type != LCT_PCOUNTER_TIMER)
    lct::detail::fatal("LCT_pcounter_register", "counter '%s' has invalid type %d", name,
                       static_cast<int>(type));
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  std::lock_guard<std::mutex> guard(ctx.mutex);
  for (size_t i = 0; i < ctx.counters.size(); ++i) {
    if (ctx.counters[i].name != name) continue;
    if (ctx.counters[i].type != type)
      lct::detail::fatal("LCT_pcounter_register", "counter '%s' is already registered as a %s",
                         name, type_name(ctx.counters[i].type));
    return {type, static_cast<int>(i)};
  }
  if (ctx.counters.size() >= static_cast<size_t>(max_counters))
    lct::detail::fatal("LCT_pcounter_register", "more than %d counters in context '%s'",
                       max_counters, ctx.name.c_str());
  ctx.counters.push_back({name, type, {}});
  const int idx = static_cast<int>(ctx.counters.size()) - 1;
  ctx.ncounters.store(idx + 1, std::memory_order_release);
  return {type, idx};
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_add(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h, int64_t val) noexcept try {
  const LCT_pcounter_type_t want = h.type == LCT_PCOUNTER_TREND ? LCT_PCOUNTER_TREND
                                                                : LCT_PCOUNTER_COUNTER;
  pcounter_ctx& ctx = checked(c, h, want, "LCT_pcounter_add");
  add_relaxed(my_block(ctx).value[h.idx], val);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_startt(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h,
                         LCT_time_t time) noexcept try {
  pcounter_ctx& ctx = checked(c, h, LCT_PCOUNTER_TIMER, "LCT_pcounter_start");
  my_block(ctx).started[h.idx] = time;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_endt(LCT_pcounter_ctx_t c, LCT_pcounter_handle_t h,
                       LCT_time_t time) noexcept try {
  pcounter_ctx& ctx = checked(c, h, LCT_PCOUNTER_TIMER, "LCT_pcounter_end");
  thread_block& b = my_block(ctx);
  add_relaxed(b.value[h.idx], time - b.started[h.idx]);
  add_relaxed(b.count[h.idx], 1);
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
  const LCT_time_t t = LCT_now() - ctx.created;
  std::lock_guard<std::mutex> guard(ctx.mutex);
  for (size_t i = 0; i < ctx.counters.size(); ++i)
    if (ctx.counters[i].type == LCT_PCOUNTER_TREND)
      ctx.counters[i].samples.emplace_back(t, sum(ctx, static_cast<int>(i), false));
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pcounter_dump(LCT_pcounter_ctx_t c, FILE* out) noexcept try {
  if (c == nullptr || out == nullptr) return;
  auto& ctx = *static_cast<pcounter_ctx*>(c);
  std::lock_guard<std::mutex> guard(ctx.mutex);
  for (size_t i = 0; i < ctx.counters.size(); ++i) {
    const counter_info& info = ctx.counters[i];
    const int idx = static_cast<int>(i);
    const int64_t total = sum(ctx, idx, false);
    switch (info.type) {
      case LCT_PCOUNTER_TIMER: {
        const int64_t n = sum(ctx, idx, true);
        std::fprintf(out, "%s.%s timer total_ns=%" PRId64 " count=%" PRId64 " avg_ns=%.1f\n",
                     ctx.name.c_str(), info.name.c_str(), total, n,
                     n > 0 ? static_cast<double>(total) / static_cast<double>(n) : 0.0);
        break;
      }
      case LCT_PCOUNTER_TREND: {
        std::string series;
        for (const auto& s : info.samples)
          series += lct::detail::format(" (%.6f,%" PRId64 ")", LCT_time_to_s(s.first), s.second);
        std::fprintf(out, "%s.%s trend total=%" PRId64 " samples=%zu%s\n", ctx.name.c_str(),
                     info.name.c_str(), total, info.samples.size(), series.c_str());
        break;
      }
      default:
        std::fprintf(out, "%s.%s counter total=%" PRId64 "\n", ctx.name.c_str(),
                     info.name.c_str(), total);
    }
  }
  std::fflush(out);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

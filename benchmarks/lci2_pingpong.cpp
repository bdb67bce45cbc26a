// lci2_pingpong: lci_pingpong's medium ping-pong and message rate through
// the LCI 2 C++ interface (lci.hpp) instead of the LCI 1.7 C API, so that
// the two interfaces over one core compare message for message:
//   medium   lci::post_recv_x / lci::post_send_x ping-pong with the caller's
//            buffers, sizes in powers of two up to get_max_bcopy_size()
//            (the eager protocol; rows "medium" as in lci_pingpong);
//   msgrate  rank 0 streams windows of W 8-byte post_send_x, rank 1 answers
//            each window with one 8-byte ack; messages/s over all windows.
//
// Receives complete through the --comp object: a sync (threshold 1 for the
// ping-pong and the ack, threshold W for a window; sync_test) or one cq
// (cq_pop). Sends pass the same object and are reported done (eager,
// allow_done) as LCI_sendm is complete at return; a send that would be
// posted (allow_done(false), none here) is waited for like a receive.
// Every wait loops lci::progress_x()() + test/pop; a send answered retry is
// posted again after progress. A receive answered done (its message had
// already arrived) is not waited for. Receives are posted before their
// message can arrive, as in lci_pingpong.
//
// With --progress-thread a thread of each rank calls lci::progress_x()()
// in a loop (as HPX's progress_type=pthread does) and the waits only test
// or pop: the measurement then includes how soon an idle progress thread
// runs again when a message arrives (on a machine with fewer cores than
// busy threads, whether the library's idle progress gives its core up).
//
// Run with exactly two ranks: lcrun -n 2 lci2_pingpong [--csv] [--comp KIND].
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "lci.hpp"

namespace {

// --settle (bench::settle_channel): the replies rank 1 has sent.
bench::settle_channel g_settle;
uint64_t g_replies = 0;

// --progress-thread: that thread progresses, the waits do not.
bool g_progress_thread = false;
std::atomic<bool> g_stop_progress{false};

inline void progress() {
  if (!g_progress_thread) lci::progress_x()();
}

constexpr lci::tag_t tag_medium = 2;
constexpr lci::tag_t tag_ack = 3;
constexpr lci::tag_t tag_barrier = 4;
constexpr lci::tag_t tag_window_base = 16;  // rate test: see message_rate()

[[noreturn]] void fail(const char* what, const lci::status_t& s) {
  std::fflush(stdout);
  std::fprintf(stderr, "lci2_pingpong: %s: %s\n", what,
               lci::get_errorcode_str(s.error.errorcode));
  std::exit(1);
}

enum class comp_kind { sync, queue };

// The completion objects of one kind and how to wait on them: one() for
// single receives (ping-pong, ack), window(p) for a window of W receives
// (two windows posted, told apart by their parity p). A wait returns once
// `n` completions arrived and leaves the last status in last().
class completions {
 public:
  completions(comp_kind kind, int window)
      : kind_(kind), window_(window), statuses_(static_cast<size_t>(window)) {
    if (kind_ == comp_kind::sync) {
      one_ = lci::alloc_sync_x().threshold(1)();
      for (lci::comp_t& c : windows_) c = lci::alloc_sync_x().threshold(window)();
    } else {
      one_ = lci::alloc_cq();
      windows_[0] = windows_[1] = one_;
    }
  }
  ~completions() {
    lci::free_comp(&one_);
    if (kind_ == comp_kind::sync)
      for (lci::comp_t& c : windows_) lci::free_comp(&c);
  }
  completions(const completions&) = delete;
  completions& operator=(const completions&) = delete;

  lci::comp_t one() const { return one_; }
  lci::comp_t window(long parity) const { return windows_[parity & 1]; }

  void wait_one(double timeout_s) { wait(one_, 1, timeout_s); }
  void wait_window(long parity, int n, double timeout_s) {
    wait(windows_[parity & 1], n, timeout_s);
  }
  // A completion reported by the posting call itself (done).
  void take(const lci::status_t& s) { last_ = s; }

  const lci::status_t& last() const { return last_; }

 private:
  void wait(lci::comp_t comp, int n, double timeout_s) {
    if (n == 0) return;
    if (kind_ == comp_kind::sync) {
      bench::spin_until(
          [&] {
            progress();
            return lci::sync_test(comp, statuses_.data());
          },
          timeout_s, "a sync");
      last_ = statuses_[static_cast<size_t>(n - 1)];
      return;
    }
    int got = 0;
    bench::spin_until(
        [&] {
          progress();
          while (got < n) {
            lci::status_t s = lci::cq_pop(comp);
            if (!s.is_done()) break;
            last_ = s;
            ++got;
          }
          return got == n;
        },
        timeout_s, "a cq");
  }

  comp_kind kind_;
  int window_;
  lci::comp_t one_;
  lci::comp_t windows_[2];
  std::vector<lci::status_t> statuses_;
  lci::status_t last_;
};

// The two ranks meet: each sends the other one 1-byte message and waits
// for the other's (lci::barrier is not implemented by this library yet).
// Its own sync (allocated in main), so the measurements' last statuses stay
// as they were.
lci::comp_t g_barrier_sync;

void barrier(int peer, double timeout_s) {
  const lci::comp_t sync = g_barrier_sync;
  char in = 0, out = 0;
  lci::status_t r = lci::post_recv_x(peer, &in, 1, tag_barrier, sync)();
  lci::status_t s;
  bench::spin_until(
      [&] {
        s = lci::post_send_x(peer, &out, 1, tag_barrier, lci::COMP_NULL_RETRY)();
        if (!s.is_retry()) return true;
        progress();
        return false;
      },
      timeout_s, "the barrier's send");
  if (!s.is_done()) fail("barrier post_send_x", s);
  if (r.is_posted())
    bench::spin_until(
        [&] {
          progress();
          return lci::sync_test(sync, nullptr);
        },
        timeout_s, "the barrier");
  else if (!r.is_done())
    fail("barrier post_recv_x", r);
}

struct context {
  completions* comps;
  int rank;
  int peer;
  const bench::options* opt;
};

struct result {
  double value;
  long timed;
};

// Posts a receive; true if it will signal its completion object (posted),
// false if it completed in the call (done, its status in comps->last()).
// Inlined, as lci_pingpong's LCI_recvm call is: the count is the library's.
[[gnu::always_inline]] inline bool post_recv(context& c, void* buf, size_t size, lci::tag_t tag,
                                            lci::comp_t comp) {
  const lci::status_t s = lci::post_recv_x(c.peer, buf, size, tag, comp)();
  if (s.is_posted()) return true;
  if (!s.is_done()) fail("post_recv_x", s);
  c.comps->take(s);
  return false;
}

// A send that was not done at once (as lci_pingpong's post_retry): posted
// again after progress while refused; one reported posted is waited for.
__attribute__((noinline)) void send_not_done(context& c, void* buf, size_t size, lci::tag_t tag,
                                             lci::status_t s) {
  if (s.is_retry()) {
    progress();
    bench::spin_until(
        [&] {
          s = lci::post_send_x(c.peer, buf, size, tag, c.comps->one())();
          if (!s.is_retry()) return true;
          progress();
          return false;
        },
        c.opt->timeout_s, "post_send_x");
    if (s.is_done()) return;
  }
  if (s.is_posted()) {
    lci::status_t keep = c.comps->last();
    c.comps->wait_one(c.opt->timeout_s);
    c.comps->take(keep);
  } else if (!s.is_done()) {
    fail("post_send_x", s);
  }
}

// Sends; an eager send is done at once (the usual case, kept inline).
inline void send(context& c, void* buf, size_t size, lci::tag_t tag) {
  const lci::status_t s = lci::post_send_x(c.peer, buf, size, tag, c.comps->one())();
  if (__builtin_expect(!s.is_done(), 0)) send_not_done(c, buf, size, tag, s);
}

void verify(const lci::status_t& s, int peer, lci::tag_t tag, size_t size, const char* test) {
  if (!s.is_done() || s.rank != peer || s.tag != tag || s.size != size) {
    std::fprintf(stderr,
                 "lci2_pingpong: %s: last receive has rank %d tag %u size %zu, expected rank %d "
                 "tag %u size %zu\n",
                 test, s.rank, static_cast<unsigned>(s.tag), s.size, peer,
                 static_cast<unsigned>(tag), size);
    std::exit(1);
  }
}

// noinline: compare instructions collects inside this function only (the
// same name as lci_pingpong's, so one --toggle-collect pattern fits both).
// The loop is lci_pingpong's pingpong_loop: rank 0 marks the last ping in
// its first byte; rank 1 posts its next receive before it answers.
__attribute__((noinline)) result medium_pingpong(context& c, size_t size, char* send_buf,
                                                 char* recv_buf) {
  const bench::options& opt = *c.opt;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 64);
  bool posted = false;
  if (c.rank == 1) posted = post_recv(c, recv_buf, size, tag_medium, c.comps->one());
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(i);
      send_buf[0] = last ? 1 : 0;
      posted = post_recv(c, recv_buf, size, tag_medium, c.comps->one());
      send(c, send_buf, size, tag_medium);
      bench::uncounted_settle(g_settle, ++g_replies, opt.timeout_s);
      if (posted) c.comps->wait_one(opt.timeout_s);
      if (last) break;
    } else {
      if (posted) c.comps->wait_one(opt.timeout_s);
      const bool last = recv_buf[0] != 0;
      if (!last) posted = post_recv(c, recv_buf, size, tag_medium, c.comps->one());
      send(c, send_buf, size, tag_medium);
      g_settle.replied(++g_replies);
      if (last) break;
    }
  }
  loop.finish(i);
  verify(c.comps->last(), c.peer, tag_medium, size, "medium");
  send_buf[0] = 0;
  recv_buf[0] = 0;
  barrier(c.peer, opt.timeout_s);
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// lci_pingpong's message_rate: windows of W 8-byte messages from rank 0,
// one 8-byte ack per window from rank 1, rank 1 keeping two windows
// posted; value: millions of messages per second.
result message_rate(context& c, long windows, char* send_buf, char* recv_bufs) {
  const bench::options& opt = *c.opt;
  const int w = opt.window;
  bench::timed_loop loop(std::max<long>(1, opt.warmup / w), windows, opt.max_time_s, 4);
  auto slot_tag = [w](long k, int j) {
    return tag_window_base + static_cast<lci::tag_t>((k & 1) * w + j);
  };
  auto send_window = [&](long k) {
    for (int j = 0; j < w; ++j) send(c, send_buf, 8, slot_tag(k, j));
  };
  // Receives of a window that completed in the call do not signal its
  // sync; a window's wait counts only the others.
  int pending[2] = {0, 0};
  auto post_window = [&](long k) {
    pending[k & 1] = 0;
    for (int j = 0; j < w; ++j) {
      char* dst = recv_bufs + 8 * static_cast<size_t>((k & 1) * w + j);
      const lci::status_t s =
          lci::post_recv_x(c.peer, dst, 8, slot_tag(k, j), c.comps->window(k)).allow_done(false)();
      if (!s.is_posted()) fail("post_recv_x", s);
      ++pending[k & 1];
    }
  };
  auto window_marked = [&](long k) { return recv_bufs[8 * static_cast<size_t>((k & 1) * w)] != 0; };
  send_buf[0] = 0;
  if (c.rank == 1) {
    post_window(0);
    post_window(1);
  }
  barrier(c.peer, opt.timeout_s);
  long k = 0;
  for (; k < loop.total(); ++k) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(k);
      send_buf[0] = last ? 1 : 0;
      const bool posted = post_recv(c, recv_bufs, 8, tag_ack, c.comps->one());
      send_window(k);
      if (posted) c.comps->wait_one(opt.timeout_s);
      if (last) break;
    } else {
      c.comps->wait_window(k, pending[k & 1], opt.timeout_s);
      const bool last = window_marked(k);
      send(c, send_buf, 8, tag_ack);
      if (last) break;
      post_window(k + 2);
    }
  }
  loop.finish(k);
  if (c.rank == 0) verify(c.comps->last(), c.peer, tag_ack, 8, "msgrate");
  // Untimed: window k + 1, which rank 1 has already posted.
  send_buf[0] = 0;
  if (c.rank == 0)
    send_window(k + 1);
  else
    c.comps->wait_window(k + 1, pending[(k + 1) & 1], opt.timeout_s);
  barrier(c.peer, opt.timeout_s);
  return {w / loop.per_iteration(opt.median) / 1e6, loop.timed()};
}

struct settings {
  comp_kind kind = comp_kind::sync;
  long rate_windows = 2000;
  bool only_medium = false;
  bool medium = true, msgrate = true;
};

bool parse_protos(const char* v, settings* s) {
  const std::string list = v ? v : "";
  bool medium = false, msgrate = false;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(pos, comma - pos);
    if (name == "medium")
      medium = true;
    else if (name == "msgrate")
      msgrate = true;
    else if (name == "all")
      medium = msgrate = true;
    else
      return false;
    pos = comma + 1;
  }
  s->medium = medium;
  s->msgrate = msgrate;
  return true;
}

void parse_command_line(int argc, char** argv, bench::options& opt, settings& s) {
  std::vector<bench::extra_option> extra = {
      {"--only-medium", nullptr, "run only the medium ping-pong (e.g. under compare instructions)",
       [&](const char*) { return s.only_medium = true; }},
      {"--comp", "KIND", "completion of the receives: sync (default), queue (a cq)",
       [&](const char* v) {
         const std::string k = v ? v : "";
         if (k == "sync")
           s.kind = comp_kind::sync;
         else if (k == "queue")
           s.kind = comp_kind::queue;
         else
           return false;
         return true;
       }},
      {"--progress-thread", nullptr,
       "a thread of each rank progresses in a loop; the waits only test or pop",
       [&](const char*) { return g_progress_thread = true; }},
      {"--windows", "N", "timed windows in the message-rate test (default 2000)",
       [&](const char* v) { return (s.rate_windows = std::atol(v)) > 0; }},
      {"--proto", "LIST", "comma list of measurements: medium, msgrate (default both), or all",
       [&](const char* v) { return parse_protos(v, &s); }},
  };
  bench::parse_options(argc, argv,
                       "LCI 2 (lci.hpp) one-way ping-pong latency (post_send_x/post_recv_x)\n"
                       "and 8-byte message rate between two ranks.",
                       opt, extra);
}

void print_config(bench::printer& out, const bench::options& opt, const settings& s, int cpu,
                  size_t medium) {
  out.config("impl", std::string("lci2 (LCI ") + std::to_string(LCI_CXX_API_VERSION_MAJOR) + "." +
                         std::to_string(LCI_CXX_API_VERSION_MINOR) + " C++ API), completion: " +
                         (s.kind == comp_kind::sync ? "sync" : "cq"));
  out.config("sizes", "medium up to " + std::to_string(medium) + " B (get_max_bcopy_size)");
  out.config("iterations", std::to_string(opt.iters) + " timed + " + std::to_string(opt.warmup) +
                               " warm-up per size, at most " + bench::fixed(opt.max_time_s, 2) +
                               " s timed (+ half that of warm-up)");
  out.config("statistic", opt.median ? "median over batches (64 round trips, 4 windows)"
                                     : "mean over all timed iterations");
  out.config("message rate", std::to_string(s.rate_windows) + " windows of " +
                                 std::to_string(opt.window) + " x 8 B, 1 ack per window");
  out.config("progress", g_progress_thread ? "a thread of each rank in a loop; waits only test"
                                           : "in the waits (progress_x, then test)");
  out.config("pinning", opt.pin ? "rank 0 on cpu " + std::to_string(cpu) : "off");
  out.config("units", "latency: one-way us (round trip / 2); rate: million messages/s");
}

}  // namespace

int main(int argc, char** argv) {
  bench::options opt;
  settings s;
  parse_command_line(argc, argv, opt, s);
  if (opt.settle) g_settle.open();

  lci::g_runtime_init();
  if (lci::get_rank_n() != 2) {
    std::fprintf(stderr,
                 "lci2_pingpong: needs exactly 2 ranks (run: lcrun -n 2 lci2_pingpong), got %d\n",
                 lci::get_rank_n());
    lci::g_runtime_fina();
    return 1;
  }
  const int rank = lci::get_rank_me();
  const int cpu = opt.pin ? bench::pin_to_cpu(rank) : -1;
  const size_t medium = lci::get_max_bcopy_size();
  if (opt.max_size == 0 || opt.max_size > medium) opt.max_size = medium;
  if (opt.min_size > opt.max_size) opt.min_size = opt.max_size;
  if (tag_window_base + 2 * static_cast<lci::tag_t>(opt.window) >
      lci::get_g_runtime().get_attr_max_tag()) {
    std::fprintf(stderr, "lci2_pingpong: --window %d needs tags above max_tag\n", opt.window);
    return 1;
  }

  g_barrier_sync = lci::alloc_sync_x().threshold(1)();
  std::thread progress_thread;
  if (g_progress_thread)
    progress_thread = std::thread([] {
      while (!g_stop_progress.load(std::memory_order_relaxed)) lci::progress_x()();
    });
  {
    completions comps(s.kind, opt.window);
    const size_t buf_bytes =
        (std::max(opt.max_size, 16 * static_cast<size_t>(opt.window)) + 4095) / 4096 * 4096;
    char* send_buf = static_cast<char*>(std::aligned_alloc(4096, buf_bytes));
    char* recv_buf = static_cast<char*>(std::aligned_alloc(4096, buf_bytes));
    if (!send_buf || !recv_buf) {
      std::fprintf(stderr, "lci2_pingpong: out of memory\n");
      std::exit(1);
    }
    std::memset(send_buf, 0x5a, buf_bytes);
    std::memset(recv_buf, 0, buf_bytes);

    context c{&comps, rank, 1 - rank, &opt};
    bench::printer out("lci2", opt.csv);
    if (rank == 0) print_config(out, opt, s, cpu, medium);
    barrier(c.peer, opt.timeout_s);

    auto report = [&](const char* test, size_t size, result r, long planned, const char* unit) {
      if (rank != 0) return;
      if (r.timed < planned) out.capped(test, size, r.timed, planned);
      out.row(test, size, r.value, unit);
    };
    if (s.medium)
      for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
        report("medium", size, medium_pingpong(c, size, send_buf, recv_buf), opt.iters, "us");
    if (!s.only_medium && s.msgrate)
      report("msgrate", 8, message_rate(c, s.rate_windows, send_buf, recv_buf), s.rate_windows,
             "Mmsg/s");

    std::free(send_buf);
    std::free(recv_buf);
  }
  if (progress_thread.joinable()) {
    g_stop_progress.store(true, std::memory_order_relaxed);
    progress_thread.join();
  }
  lci::free_comp(&g_barrier_sync);
  lci::g_runtime_fina();
  return 0;
}

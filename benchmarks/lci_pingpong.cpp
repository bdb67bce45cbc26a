// lci_pingpong: one-way latency and message rate through the LCI 1.7 API,
// the same measurements as ofi_pingpong (the raw-libfabric reference):
//   short    LCI_sends / LCI_recvs ping-pong (LCI_SHORT_SIZE = 32 bytes);
//   medium   LCI_sendm / LCI_recvm ping-pong with the caller's buffers, sizes
//            in powers of two up to LCI_MEDIUM_SIZE, plus LCI_MEDIUM_SIZE;
//   msgrate  rank 0 streams windows of W 8-byte LCI_sendm, rank 1 answers
//            each window with one 8-byte ack; messages/s over all windows.
// and, selected with --proto (default: short,medium,msgrate as above), the
// medium one-sided latency putm (LCI_putma, rows putm_latency). The long
// and one-sided protocols on registered buffers (sendl, putl, getl) are
// lci_bw's.
//
// One endpoint on LCI_UR_DEVICE (rank+tag matching) whose ports complete
// through the kind chosen by --comp:
//   sync     a reused synchronizer of threshold 1 (ping-pong, acks) and one
//            of threshold W (a window of receives);
//   queue    one completion queue, popped;
//   handler  a handler that counts completions.
// Waiting never relies on LCI_sync_wait/LCI_queue_wait (they do not
// progress): every wait loops LCI_progress + test/pop. A send refused with
// LCI_ERR_RETRY is retried after LCI_progress.
//
// Receives are posted before their message can arrive, like the raw
// program's pre-posted buffers: rank 1 posts the next receive before it
// answers; in the rate test each slot of a window has its own tag and rank 1
// keeps the next window posted while it works on the current one.
//
// Run with exactly two ranks: lcrun -n 2 lci_pingpong [--csv] [--comp KIND] [--proto LIST].
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "lci_common.hpp"
#include "lci.h"

namespace {

// --settle (bench::settle_channel): the replies rank 1 has sent.
bench::settle_channel g_settle;
uint64_t g_replies = 0;

constexpr LCI_tag_t tag_short = 1;
constexpr LCI_tag_t tag_medium = 2;
constexpr LCI_tag_t tag_ack = 3;
constexpr LCI_tag_t tag_window_base = 16;  // rate test: see message_rate()

using lci_bench::check;
using lci_bench::fail;
using lci_bench::post_retry;

enum class comp_kind { sync, queue, handler };

const char* comp_name(comp_kind k) {
  switch (k) {
    case comp_kind::sync: return "sync";
    case comp_kind::queue: return "queue";
    case comp_kind::handler: return "handler";
  }
  return "?";
}

// Filled by the handler (it runs inside LCI_progress on this thread, or in
// a posting call that completes at once).
uint64_t g_handled = 0;
LCI_request_t g_handled_last;

void count_completion(LCI_request_t request) {
  g_handled_last = request;
  ++g_handled;
}

// The completion objects of one kind and how to wait on them. Receives are
// posted singly (ping-pong, ack: one()) or as a window of W (window(p)):
// the rate test keeps two windows posted, told apart by their parity p.
//   sync     one synchronizer of threshold 1 and one of threshold W per
//            parity, each reused;
//   queue    one queue for everything; a wait pops the count it expects;
//   handler  one handler for everything; a wait counts its calls.
// wait_*() returns once the whole group has completed and leaves the
// group's last request in last(). Receives complete in the order the
// protocol forces (nothing of window k+1 arrives before the ack of window k
// left), so counting is exact.
class completions {
 public:
  completions(comp_kind kind, int window)
      : kind_(kind), window_(window), requests_(static_cast<size_t>(window)) {
    switch (kind_) {
      case comp_kind::sync:
        check(LCI_sync_create(LCI_UR_DEVICE, 1, &one_), "LCI_sync_create");
        for (LCI_comp_t& s : windows_)
          check(LCI_sync_create(LCI_UR_DEVICE, window, &s), "LCI_sync_create");
        break;
      case comp_kind::queue:
        check(LCI_queue_create(LCI_UR_DEVICE, &one_), "LCI_queue_create");
        windows_[0] = windows_[1] = one_;
        break;
      case comp_kind::handler:
        check(LCI_handler_create(LCI_UR_DEVICE, count_completion, &one_), "LCI_handler_create");
        windows_[0] = windows_[1] = one_;
        break;
    }
  }
  ~completions() {
    if (kind_ == comp_kind::sync) {
      LCI_sync_free(&one_);
      for (LCI_comp_t& s : windows_) LCI_sync_free(&s);
    } else if (kind_ == comp_kind::queue) {
      LCI_queue_free(&one_);
    }
    // A handler object has no free call in LCI 1.7.
  }
  completions(const completions&) = delete;
  completions& operator=(const completions&) = delete;

  LCI_comp_type_t type() const {
    switch (kind_) {
      case comp_kind::sync: return LCI_COMPLETION_SYNC;
      case comp_kind::queue: return LCI_COMPLETION_QUEUE;
      case comp_kind::handler: return LCI_COMPLETION_HANDLER;
    }
    return LCI_COMPLETION_NONE;
  }

  LCI_comp_t one() const { return one_; }
  LCI_comp_t window(long parity) const { return windows_[parity & 1]; }

  void wait_one(double timeout_s) { wait(one_, 1, timeout_s); }
  void wait_window(long parity, double timeout_s) {
    wait(windows_[parity & 1], window_, timeout_s);
  }

  const LCI_request_t& last() const { return last_; }

 private:
  void wait(LCI_comp_t comp, int n, double timeout_s) {
    switch (kind_) {
      case comp_kind::sync:
        bench::spin_until(
            [&] {
              LCI_progress(LCI_UR_DEVICE);
              return LCI_sync_test(comp, requests_.data()) == LCI_OK;
            },
            timeout_s, "a synchronizer");
        last_ = requests_[static_cast<size_t>(n - 1)];
        break;
      case comp_kind::queue: {
        int got = 0;
        bench::spin_until(
            [&] {
              LCI_progress(LCI_UR_DEVICE);
              while (got < n && LCI_queue_pop(comp, &last_) == LCI_OK) ++got;
              return got == n;
            },
            timeout_s, "a completion queue");
        break;
      }
      case comp_kind::handler: {
        const uint64_t target = handled_ + static_cast<uint64_t>(n);
        bench::spin_until(
            [&] {
              LCI_progress(LCI_UR_DEVICE);
              return g_handled >= target;
            },
            timeout_s, "a handler call");
        handled_ = target;
        last_ = g_handled_last;
        break;
      }
    }
  }

  comp_kind kind_;
  int window_;
  LCI_comp_t one_ = nullptr;
  LCI_comp_t windows_[2] = {nullptr, nullptr};
  std::vector<LCI_request_t> requests_;
  LCI_request_t last_{};
  uint64_t handled_ = 0;
};

// Checks that the last receive of a test carried what was sent; a
// benchmark that measures the wrong thing is worse than none.
void verify(const LCI_request_t& r, int peer, LCI_tag_t tag, LCI_data_type_t type, size_t length,
            const char* test) {
  bool ok = r.flag == LCI_OK && r.rank == peer && r.tag == tag && r.type == type;
  if (ok && type == LCI_MEDIUM) ok = r.data.mbuffer.length == length;
  if (!ok) {
    std::fprintf(stderr,
                 "lci_pingpong: %s: last receive has rank %d tag %u type %d length %zu, expected "
                 "rank %d tag %u type %d length %zu\n",
                 test, r.rank, r.tag, static_cast<int>(r.type),
                 type == LCI_MEDIUM ? r.data.mbuffer.length : size_t{0}, peer, tag,
                 static_cast<int>(type), length);
    std::exit(1);
  }
}

struct context {
  LCI_endpoint_t ep;
  completions* comps;
  int rank;
  int peer;
  const bench::options* opt;
};

// A measurement's figure (rank 0) and how many timed iterations it took.
struct result {
  double value;
  long timed;
};

// The ping-pong loop shared by short and medium messages. Rank 0 marks the
// last ping (mark(true)); rank 1 learns it from the received message
// (is_marked()) and stops after answering it. Rank 1 posts its next receive
// before it answers, so every ping finds its receive posted.
template <typename PostRecv, typename Send, typename Mark, typename IsMarked>
result pingpong_loop(context& c, PostRecv&& post_recv, Send&& send, Mark&& mark,
                     IsMarked&& is_marked) {
  const bench::options& opt = *c.opt;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 64);
  if (c.rank == 1) post_recv();
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(i);
      mark(last);
      post_recv();
      send();
      bench::uncounted_settle(g_settle, ++g_replies, opt.timeout_s);
      c.comps->wait_one(opt.timeout_s);
      if (last) break;
    } else {
      c.comps->wait_one(opt.timeout_s);
      const bool last = is_marked();
      if (!last) post_recv();
      send();
      g_settle.replied(++g_replies);
      if (last) break;
    }
  }
  loop.finish(i);
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

result short_pingpong(context& c) {
  const double timeout_s = c.opt->timeout_s;
  LCI_short_t msg;
  std::memset(&msg, 0, sizeof(msg));
  result r = pingpong_loop(
      c, [&] { check(LCI_recvs(c.ep, c.peer, tag_short, c.comps->one(), nullptr), "LCI_recvs"); },
      [&] {
        post_retry([&] { return LCI_sends(c.ep, msg, c.peer, tag_short); }, "LCI_sends", timeout_s);
      },
      [&](bool last) { msg.val[0] = last ? 1 : 0; },
      [&] { return c.comps->last().data.immediate.val[0] != 0; });
  verify(c.comps->last(), c.peer, tag_short, LCI_IMMEDIATE, LCI_SHORT_SIZE, "short");
  LCI_barrier();
  return r;
}

// noinline: compare instructions collects inside this function only.
__attribute__((noinline)) result medium_pingpong(context& c, size_t size, char* send_buf,
                                                 char* recv_buf) {
  const double timeout_s = c.opt->timeout_s;
  LCI_mbuffer_t src{send_buf, size};
  LCI_mbuffer_t dst{recv_buf, size};
  result r = pingpong_loop(
      c,
      [&] {
        check(LCI_recvm(c.ep, dst, c.peer, tag_medium, c.comps->one(), nullptr), "LCI_recvm");
      },
      [&] {
        post_retry([&] { return LCI_sendm(c.ep, src, c.peer, tag_medium); }, "LCI_sendm",
                   timeout_s);
      },
      [&](bool last) { send_buf[0] = last ? 1 : 0; }, [&] { return recv_buf[0] != 0; });
  verify(c.comps->last(), c.peer, tag_medium, LCI_MEDIUM, size, "medium");
  send_buf[0] = 0;
  recv_buf[0] = 0;
  LCI_barrier();
  return r;
}

// Windows of W 8-byte messages from rank 0, one 8-byte ack per window from
// rank 1; value: millions of messages per second.
//
// Every message finds its receive posted, and posting stays off the
// critical path: rank 1 keeps two windows posted (slot j of window k has
// tag tag_window_base + (k % 2) * W + j and buffer (k % 2) * W + j); when
// window k has arrived it acks first, then posts window k + 2 while rank 0
// sends window k + 1. Rank 0 posts the ack's receive before it sends a
// window. The first byte of every message of the last timed window is 1;
// rank 0 then sends one untimed window to use up the receives rank 1 posted
// ahead.
result message_rate(context& c, long windows, char* send_buf, char* recv_bufs) {
  const bench::options& opt = *c.opt;
  const int w = opt.window;
  bench::timed_loop loop(std::max<long>(1, opt.warmup / w), windows, opt.max_time_s, 4);
  LCI_mbuffer_t src{send_buf, 8};
  LCI_mbuffer_t ack_dst{recv_bufs, 8};
  auto slot_tag = [w](long k, int j) {
    return tag_window_base + static_cast<LCI_tag_t>((k & 1) * w + j);
  };
  auto send = [&](LCI_tag_t tag) {
    post_retry([&] { return LCI_sendm(c.ep, src, c.peer, tag); }, "LCI_sendm", opt.timeout_s);
  };
  auto send_window = [&](long k) {
    for (int j = 0; j < w; ++j) send(slot_tag(k, j));
  };
  auto post_window = [&](long k) {
    for (int j = 0; j < w; ++j) {
      LCI_mbuffer_t dst{recv_bufs + 8 * static_cast<size_t>((k & 1) * w + j), 8};
      check(LCI_recvm(c.ep, dst, c.peer, slot_tag(k, j), c.comps->window(k), nullptr), "LCI_recvm");
    }
  };
  auto window_marked = [&](long k) { return recv_bufs[8 * static_cast<size_t>((k & 1) * w)] != 0; };
  send_buf[0] = 0;
  if (c.rank == 1) {
    post_window(0);
    post_window(1);
  }
  long k = 0;
  for (; k < loop.total(); ++k) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(k);
      send_buf[0] = last ? 1 : 0;
      check(LCI_recvm(c.ep, ack_dst, c.peer, tag_ack, c.comps->one(), nullptr), "LCI_recvm");
      send_window(k);
      c.comps->wait_one(opt.timeout_s);
      if (last) break;
    } else {
      c.comps->wait_window(k, opt.timeout_s);
      const bool last = window_marked(k);
      send(tag_ack);
      if (last) break;
      post_window(k + 2);
    }
  }
  loop.finish(k);
  if (c.rank == 0)
    verify(c.comps->last(), c.peer, tag_ack, LCI_MEDIUM, 8, "msgrate");
  else
    verify(c.comps->last(), c.peer, c.comps->last().tag, LCI_MEDIUM, 8, "msgrate");
  // Untimed: window k + 1, which rank 1 has already posted.
  send_buf[0] = 0;
  if (c.rank == 0)
    send_window(k + 1);
  else
    c.comps->wait_window(k + 1, opt.timeout_s);
  LCI_barrier();
  return {w / loop.per_iteration(opt.median) / 1e6, loop.timed()};
}


// ---- medium one-sided: putm (--proto putm) ------------------------------------
//
// LCI_putma ping-pong: each side's completion is the target-side one of the
// peer's put, delivered to the endpoint's default completion object (the
// --comp object); the target frees the delivered medium buffer. The last
// ping is marked by its tag. The long and one-sided protocols on registered
// buffers (sendl, putl, getl) are measured by lci_bw.
constexpr LCI_tag_t tag_os = 6;       // putm ping
constexpr LCI_tag_t tag_os_last = 7;  // the last one

// Aborts unless `buf` holds `first` at 0 and 0x5a at size - 1 (a put's
// data check); then clears both for the next size.
void check_bytes(char* buf, size_t size, char first, const char* test) {
  if (size == 0) return;
  const char f = buf[0], l = buf[size - 1];
  if (f != first || l != 0x5a) {
    std::fprintf(stderr,
                 "lci_pingpong: %s %zu: received bytes first 0x%02x last 0x%02x, expected 0x%02x "
                 "and 0x5a\n",
                 test, size, static_cast<unsigned char>(f), static_cast<unsigned char>(l),
                 static_cast<unsigned char>(first));
    std::exit(1);
  }
  buf[0] = 0;
  buf[size - 1] = 0;
}

// Ping-pong whose pings are one-sided: send(tag) issues one, each side
// waits for the target-side completion of the peer's; the tag marks the
// last ping. arrived(last) runs after each wait.
template <typename Send, typename Arrived>
result onesided_loop(context& c, Send&& send, Arrived&& arrived) {
  const bench::options& opt = *c.opt;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 64);
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(i);
      send(last ? tag_os_last : tag_os);
      c.comps->wait_one(opt.timeout_s);
      arrived(last);
      if (last) break;
    } else {
      c.comps->wait_one(opt.timeout_s);
      const bool last = c.comps->last().tag == tag_os_last;
      arrived(last);
      send(last ? tag_os_last : tag_os);
      if (last) break;
    }
  }
  loop.finish(i);
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// LCI_putma ping-pong to the peer's default completion object.
result putm_pingpong(context& c, size_t size, char* send_buf) {
  const double timeout_s = c.opt->timeout_s;
  std::memset(send_buf, 0x5a, size);
  LCI_mbuffer_t src{send_buf, size};
  result r = onesided_loop(
      c,
      [&](LCI_tag_t tag) {
        post_retry([&] { return LCI_putma(c.ep, src, c.peer, tag, LCI_DEFAULT_COMP_REMOTE); },
                   "LCI_putma", timeout_s);
      },
      [&](bool last) {
        const LCI_request_t& q = c.comps->last();
        if (last) {
          verify(q, c.peer, tag_os_last, LCI_MEDIUM, size, "putm");
          check_bytes(static_cast<char*>(q.data.mbuffer.address), size, 0x5a, "putm");
        }
        if (q.type == LCI_MEDIUM && q.data.mbuffer.address)
          check(LCI_mbuffer_free(q.data.mbuffer), "LCI_mbuffer_free");
      });
  LCI_barrier();
  return r;
}


// Which measurements run (--proto); the default is short, medium, msgrate.
struct protos {
  bool short_ = true, medium = true, msgrate = true, putm = false;
};

bool parse_protos(const char* v, protos* out) {
  protos p;
  p.short_ = p.medium = p.msgrate = false;
  const std::string list = v ? v : "";
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(pos, comma - pos);
    if (name == "short")
      p.short_ = true;
    else if (name == "medium")
      p.medium = true;
    else if (name == "msgrate")
      p.msgrate = true;
    else if (name == "putm")
      p.putm = true;
    else if (name == "all")
      p.short_ = p.medium = p.msgrate = p.putm = true;
    else
      return false;
    pos = comma + 1;
  }
  *out = p;
  return true;
}

bool parse_comp(const char* v, comp_kind* out) {
  const std::string s = v ? v : "";
  if (s == "sync")
    *out = comp_kind::sync;
  else if (s == "queue")
    *out = comp_kind::queue;
  else if (s == "handler")
    *out = comp_kind::handler;
  else
    return false;
  return true;
}

// The command line beyond the common options.
struct settings {
  comp_kind kind = comp_kind::sync;
  long rate_windows = 2000;
  bool only_medium = false;
  protos proto;
};

void parse_command_line(int argc, char** argv, bench::options& opt, settings& s) {
  std::vector<bench::extra_option> extra = {
      {"--only-medium", nullptr, "run only the medium ping-pong (e.g. under compare instructions)",
       [&](const char*) { return s.only_medium = true; }},
      {"--comp", "KIND", "completion of the message port: sync (default), queue, handler",
       [&](const char* v) { return parse_comp(v, &s.kind); }},
      {"--windows", "N", "timed windows in the message-rate test (default 2000)",
       [&](const char* v) { return (s.rate_windows = std::atol(v)) > 0; }},
      {"--medium-size", "BYTES", "accepted for symmetry with ofi_pingpong; ignored",
       [&](const char*) { return true; }},
      {"--rma-caps", nullptr, "accepted for symmetry with ofi_pingpong; ignored",
       [&](const char*) { return true; }},
      {"--proto", "LIST",
       "comma list of measurements: short, medium, msgrate (the default set), putm\n"
       "                         (LCI_putma ping-pong over the medium sizes), or all. Long\n"
       "                         and one-sided latency on registered buffers: lci_bw",
       [&](const char* v) { return parse_protos(v, &s.proto); }},
  };
  bench::parse_options(argc, argv,
                       "LCI one-way ping-pong latency (LCI_sends/recvs, LCI_sendm/recvm) and\n"
                       "8-byte LCI_sendm message rate between two ranks.",
                       opt, extra);
}

// One endpoint on LCI_UR_DEVICE whose ports complete through `comps`; with
// putm, target-side completions (default remote completion) go to the same
// object as receives.
LCI_endpoint_t open_endpoint(const completions& comps, bool default_comp) {
  LCI_plist_t plist;
  check(LCI_plist_create(&plist), "LCI_plist_create");
  check(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG), "LCI_plist_set_match_type");
  check(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, comps.type()), "LCI_plist_set_comp_type");
  check(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, comps.type()), "LCI_plist_set_comp_type");
  if (default_comp)
    check(LCI_plist_set_default_comp(plist, comps.one()), "LCI_plist_set_default_comp");
  LCI_endpoint_t ep;
  check(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist), "LCI_endpoint_init");
  LCI_plist_free(&plist);
  return ep;
}

void print_config(bench::printer& out, const bench::options& opt, const settings& s, int cpu) {
  out.config("impl", std::string("lci (LCI ") + std::to_string(LCI_VERSION_MAJOR) + "." +
                         std::to_string(LCI_VERSION_MINOR) +
                         " API), completion: " + comp_name(s.kind));
  out.config("sizes", "short " + std::to_string(LCI_SHORT_SIZE) + " B; medium up to " +
                          std::to_string(LCI_MEDIUM_SIZE) + " B");
  out.config("iterations", std::to_string(opt.iters) + " timed + " + std::to_string(opt.warmup) +
                               " warm-up per size, at most " + bench::fixed(opt.max_time_s, 2) +
                               " s timed (+ half that of warm-up)");
  out.config("statistic", opt.median ? "median over batches (64 round trips, 4 windows)"
                                     : "mean over all timed iterations");
  out.config("message rate", std::to_string(s.rate_windows) + " windows of " +
                                 std::to_string(opt.window) + " x 8 B, 1 ack per window");
  out.config("pinning", opt.pin ? "rank 0 on cpu " + std::to_string(cpu) : "off");
  out.config("units", "latency: one-way us (round trip / 2); rate: million messages/s");
  if (s.proto.putm)
    out.config("one-sided", "putm: ping-pong, target-side completion to the default "
                            "completion object; one-way us (round trip / 2)");
}

}  // namespace

int main(int argc, char** argv) {
  lci_bench::set_program("lci_pingpong");
  bench::options opt;
  settings s;
  parse_command_line(argc, argv, opt, s);
  if (opt.settle) g_settle.open();

  check(LCI_initialize(), "LCI_initialize");
  if (LCI_NUM_PROCESSES != 2) {
    std::fprintf(stderr,
                 "lci_pingpong: needs exactly 2 ranks (run: lcrun -n 2 lci_pingpong), got %d\n",
                 LCI_NUM_PROCESSES);
    LCI_finalize();
    return 1;
  }
  const int rank = LCI_RANK;
  const int cpu = opt.pin ? bench::pin_to_cpu(rank) : -1;
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  if (opt.max_size == 0 || opt.max_size > medium) opt.max_size = medium;
  if (opt.min_size > opt.max_size) opt.min_size = opt.max_size;
  if (tag_window_base + 2 * static_cast<LCI_tag_t>(opt.window) >
      static_cast<LCI_tag_t>(LCI_MAX_TAG)) {
    std::fprintf(stderr, "lci_pingpong: --window %d needs tags above LCI_MAX_TAG %d\n", opt.window,
                 LCI_MAX_TAG);
    return 1;
  }

  {
    completions comps(s.kind, opt.window);
    LCI_endpoint_t ep = open_endpoint(comps, s.proto.putm);
    const size_t buf_bytes =
        (std::max(opt.max_size, 16 * static_cast<size_t>(opt.window)) + 4095) / 4096 * 4096;
    char* send_buf = static_cast<char*>(std::aligned_alloc(4096, buf_bytes));
    char* recv_buf = static_cast<char*>(std::aligned_alloc(4096, buf_bytes));
    if (!send_buf || !recv_buf) {
      std::fprintf(stderr, "lci_pingpong: out of memory\n");
      std::exit(1);
    }
    std::memset(send_buf, 0x5a, buf_bytes);
    std::memset(recv_buf, 0, buf_bytes);

    context c{ep, &comps, rank, 1 - rank, &opt};
    bench::printer out("lci", opt.csv);
    if (rank == 0) print_config(out, opt, s, cpu);
    LCI_barrier();

    auto report = [&](const char* test, size_t size, result r, long planned, const char* unit) {
      if (rank != 0) return;
      if (r.timed < planned) out.capped(test, size, r.timed, planned);
      out.row(test, size, r.value, unit);
    };
    if (!s.only_medium && s.proto.short_)
      report("short", LCI_SHORT_SIZE, short_pingpong(c), opt.iters, "us");
    if (s.proto.medium)
      for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
        report("medium", size, medium_pingpong(c, size, send_buf, recv_buf), opt.iters, "us");
    if (!s.only_medium && s.proto.msgrate)
      report("msgrate", 8, message_rate(c, s.rate_windows, send_buf, recv_buf), s.rate_windows,
             "Mmsg/s");
    if (!s.only_medium && s.proto.putm)
      for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
        report("putm_latency", size, putm_pingpong(c, size, send_buf), opt.iters, "us");

    LCI_endpoint_free(&ep);
    std::free(send_buf);
    std::free(recv_buf);
  }
  check(LCI_finalize(), "LCI_finalize");
  return 0;
}

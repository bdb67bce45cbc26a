// lci_pingpong: one-way latency and message rate through the LCI 1.7 API,
// the same measurements as ofi_pingpong (the raw-libfabric reference):
//   short    LCI_sends / LCI_recvs ping-pong (LCI_SHORT_SIZE = 32 bytes);
//   medium   LCI_sendm / LCI_recvm ping-pong with the caller's buffers, sizes
//            in powers of two up to LCI_MEDIUM_SIZE, plus LCI_MEDIUM_SIZE;
//   msgrate  rank 0 streams windows of W 8-byte LCI_sendm, rank 1 answers
//            each window with one 8-byte ack; messages/s over all windows.
// and, selected with --proto (default: short,medium,msgrate as above), the
// long and one-sided latencies long (LCI_sendl/recvl), putm (LCI_putma),
// putl (LCI_putl) and getl (LCI_getl), rows long_latency, putm_latency,
// putl_latency, getl_latency; see "long and one-sided protocols" below.
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
#include "lci.h"

namespace {

constexpr LCI_tag_t tag_short = 1;
constexpr LCI_tag_t tag_medium = 2;
constexpr LCI_tag_t tag_ack = 3;
constexpr LCI_tag_t tag_window_base = 16;  // rate test: see message_rate()

[[noreturn]] void fail(const char* what, LCI_error_t rc) {
  std::fflush(stdout);
  std::fprintf(stderr, "lci_pingpong: %s failed (LCI error %d)\n", what, static_cast<int>(rc));
  std::exit(1);
}

void check(LCI_error_t rc, const char* what) {
  if (rc != LCI_OK) fail(what, rc);
}

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

// Calls post() until it is accepted, progressing between refusals.
template <typename Post>
void post_retry(Post&& post, const char* what, double timeout_s) {
  bench::spin_until(
      [&] {
        LCI_error_t rc = post();
        if (rc == LCI_OK) return true;
        if (rc != LCI_ERR_RETRY) fail(what, rc);
        LCI_progress(LCI_UR_DEVICE);
        return false;
      },
      timeout_s, what);
}

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
      c.comps->wait_one(opt.timeout_s);
      if (last) break;
    } else {
      c.comps->wait_one(opt.timeout_s);
      const bool last = is_marked();
      if (!last) post_recv();
      send();
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

// noinline: callgrind_rtt collects inside this function only.
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


// ---- long and one-sided protocols (--proto long,putm,putl,getl) -------------
//
//   long  LCI_sendl / LCI_recvl ping-pong between registered buffers (the
//         pingpong_loop of short and medium; byte 0 marks the last ping);
//   putm  LCI_putma ping-pong: each side's completion is the target-side one
//         of the peer's put, delivered to the endpoint's default completion
//         object (the --comp object); the target frees the delivered medium
//         buffer;
//   putl  LCI_putl ping-pong into the peer's registered receive region, the
//         target learning of the data through its default completion object
//         (default remote completion); rank 1 puts back once it has it;
//   getl  rank 0 LCI_getl from rank 1's registered send region and waits for
//         the origin completion; the figure is the completion time of one
//         get (not halved). Target completions go to a sink object of rank 1
//         (explicit remote completion handle): a synchronizer of threshold
//         64 / a queue / a handler; rank 1 acks each batch of 64 gets
//         (untimed), see getl_sink.
// The one-sided ping-pongs mark the last ping by its tag. Origin-side
// completions of sendl/putl are not requested (NULL): the peer's answer
// implies the buffer was used.
constexpr LCI_tag_t tag_long = 4;
constexpr LCI_tag_t tag_setup = 5;
constexpr LCI_tag_t tag_os = 6;       // putm / putl / getl ping
constexpr LCI_tag_t tag_os_last = 7;  // the last one
constexpr long getl_batch = 64;

// The long-buffer memory of this rank (registered) and the peer's, as
// exchanged at setup.
struct long_regions {
  char* send = nullptr;  // filled with 0x5a: source of sendl/putl, getl's remote
  char* recv = nullptr;  // target of recvl/putl, getl's local
  size_t bytes = 0;
  LCI_segment_t send_seg = nullptr, recv_seg = nullptr;
  LCI_segment_t peer_send_seg = nullptr, peer_recv_seg = nullptr;  // deserialized
  uintptr_t peer_send = 0, peer_recv = 0, peer_sink = 0;
};

// getl's target-side sink (handler flavour): counts, notes the last ping.
uint64_t g_getl_count = 0;
bool g_getl_seen_last = false;
void getl_sink_handler(LCI_request_t request) {
  ++g_getl_count;
  if (request.tag == tag_os_last) g_getl_seen_last = true;
}

// Registers both regions and swaps {segment, address} pairs and the sink
// handle with the peer through one medium message each way.
void setup_long_regions(context& c, long_regions& g, size_t bytes, uintptr_t sink) {
  g.bytes = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
  g.send = static_cast<char*>(std::aligned_alloc(4096, g.bytes));
  g.recv = static_cast<char*>(std::aligned_alloc(4096, g.bytes));
  if (!g.send || !g.recv) {
    std::fprintf(stderr, "lci_pingpong: out of memory for %zu-byte long buffers\n", g.bytes);
    std::exit(1);
  }
  std::memset(g.send, 0x5a, g.bytes);
  std::memset(g.recv, 0, g.bytes);
  check(LCI_memory_register(LCI_UR_DEVICE, g.send, g.bytes, &g.send_seg), "LCI_memory_register");
  check(LCI_memory_register(LCI_UR_DEVICE, g.recv, g.bytes, &g.recv_seg), "LCI_memory_register");
  struct blob {
    char send_str[256];
    char recv_str[256];
    uint64_t send, recv, sink;
  };
  blob mine, theirs;
  std::memset(&mine, 0, sizeof(mine));
  std::memset(&theirs, 0, sizeof(theirs));
  check(LCI_segment_serialize(g.send_seg, mine.send_str), "LCI_segment_serialize");
  check(LCI_segment_serialize(g.recv_seg, mine.recv_str), "LCI_segment_serialize");
  mine.send = reinterpret_cast<uintptr_t>(g.send);
  mine.recv = reinterpret_cast<uintptr_t>(g.recv);
  mine.sink = sink;
  LCI_mbuffer_t dst{&theirs, sizeof(theirs)};
  LCI_mbuffer_t src{&mine, sizeof(mine)};
  check(LCI_recvm(c.ep, dst, c.peer, tag_setup, c.comps->one(), nullptr), "LCI_recvm");
  post_retry([&] { return LCI_sendm(c.ep, src, c.peer, tag_setup); }, "LCI_sendm",
             c.opt->timeout_s);
  c.comps->wait_one(c.opt->timeout_s);
  verify(c.comps->last(), c.peer, tag_setup, LCI_MEDIUM, sizeof(theirs), "setup");
  check(LCI_segment_deserialize(theirs.send_str, &g.peer_send_seg), "LCI_segment_deserialize");
  check(LCI_segment_deserialize(theirs.recv_str, &g.peer_recv_seg), "LCI_segment_deserialize");
  g.peer_send = static_cast<uintptr_t>(theirs.send);
  g.peer_recv = static_cast<uintptr_t>(theirs.recv);
  g.peer_sink = static_cast<uintptr_t>(theirs.sink);
  LCI_barrier();
}

void release_long_regions(long_regions& g) {
  LCI_barrier();  // the peer no longer addresses our memory
  LCI_memory_deregister(&g.peer_send_seg);
  LCI_memory_deregister(&g.peer_recv_seg);
  LCI_memory_deregister(&g.send_seg);
  LCI_memory_deregister(&g.recv_seg);
  std::free(g.send);
  std::free(g.recv);
}

// Aborts unless `buf` holds `first` at 0 and 0x5a at size - 1 (a long
// measurement's data check); then clears both for the next size.
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

void verify_long(const LCI_request_t& r, int peer, LCI_tag_t tag, size_t length, const char* test) {
  if (r.flag != LCI_OK || r.rank != peer || r.tag != tag || r.type != LCI_LONG ||
      r.data.lbuffer.length != length) {
    std::fprintf(stderr,
                 "lci_pingpong: %s: last completion has flag %d rank %d tag %u type %d length %zu, "
                 "expected rank %d tag %u type %d length %zu\n",
                 test, static_cast<int>(r.flag), r.rank, r.tag, static_cast<int>(r.type),
                 r.type == LCI_LONG ? r.data.lbuffer.length : size_t{0}, peer, tag,
                 static_cast<int>(LCI_LONG), length);
    std::exit(1);
  }
}

// LCI_sendl / LCI_recvl ping-pong; byte 0 of rank 0's pings is 0xa5 on the
// last one, 0x5a otherwise.
result long_pingpong(context& c, long_regions& g, size_t size) {
  const double timeout_s = c.opt->timeout_s;
  LCI_lbuffer_t src{g.send_seg, g.send, size};
  LCI_lbuffer_t dst{g.recv_seg, g.recv, size};
  result r = pingpong_loop(
      c,
      [&] {
        check(LCI_recvl(c.ep, dst, c.peer, tag_long, c.comps->one(), nullptr), "LCI_recvl");
      },
      [&] {
        post_retry([&] { return LCI_sendl(c.ep, src, c.peer, tag_long, nullptr, nullptr); },
                   "LCI_sendl", timeout_s);
      },
      [&](bool last) {
        if (size) g.send[0] = last ? static_cast<char>(0xa5) : 0x5a;
      },
      [&] { return size == 0 || g.recv[0] == static_cast<char>(0xa5); });
  verify_long(c.comps->last(), c.peer, tag_long, size, "long");
  if (size) g.send[0] = 0x5a;
  LCI_barrier();  // rank 1's last send has landed before rank 0 looks
  check_bytes(g.recv, size, c.rank == 0 ? 0x5a : static_cast<char>(0xa5), "long");
  LCI_barrier();
  return r;
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

// LCI_putl ping-pong into the peer's receive region.
result putl_pingpong(context& c, long_regions& g, size_t size) {
  const double timeout_s = c.opt->timeout_s;
  LCI_lbuffer_t src{g.send_seg, g.send, size};
  LCI_lbuffer_t dst{g.peer_recv_seg, reinterpret_cast<void*>(g.peer_recv), size};
  result r = onesided_loop(
      c,
      [&](LCI_tag_t tag) {
        post_retry(
            [&] {
              return LCI_putl(c.ep, src, nullptr, c.peer, tag, dst, LCI_DEFAULT_COMP_REMOTE,
                              nullptr);
            },
            "LCI_putl", timeout_s);
      },
      [&](bool) {});
  verify_long(c.comps->last(), c.peer, tag_os_last, size, "putl");
  if (c.comps->last().data.lbuffer.address != g.recv) {
    std::fprintf(stderr, "lci_pingpong: putl: target completion names %p, not %p\n",
                 c.comps->last().data.lbuffer.address, static_cast<void*>(g.recv));
    std::exit(1);
  }
  LCI_barrier();
  check_bytes(g.recv, size, 0x5a, "putl");
  LCI_barrier();
  return r;
}

// getl's target-side sink: the kind of the message port, reached through an
// explicit remote completion handle. Rank 0 issues gets in batches of
// getl_batch and waits (untimed) for rank 1's ack of each batch, so at most
// one batch of target completions is ever outstanding (a synchronizer of
// threshold getl_batch must not be signalled past it; gets need no target
// progress, so without the ack they could run ahead of rank 1).
class getl_sink {
 public:
  explicit getl_sink(comp_kind kind) : kind_(kind), batch_(static_cast<size_t>(getl_batch)) {
    switch (kind_) {
      case comp_kind::sync:
        check(LCI_sync_create(LCI_UR_DEVICE, static_cast<int>(getl_batch), &comp_),
              "LCI_sync_create");
        break;
      case comp_kind::queue: check(LCI_queue_create(LCI_UR_DEVICE, &comp_), "LCI_queue_create"); break;
      case comp_kind::handler:
        check(LCI_handler_create(LCI_UR_DEVICE, getl_sink_handler, &comp_), "LCI_handler_create");
        break;
    }
  }
  ~getl_sink() {
    if (kind_ == comp_kind::sync)
      LCI_sync_free(&comp_);
    else if (kind_ == comp_kind::queue)
      LCI_queue_free(&comp_);
  }
  getl_sink(const getl_sink&) = delete;
  getl_sink& operator=(const getl_sink&) = delete;
  uintptr_t handle() const { return reinterpret_cast<uintptr_t>(comp_); }

  // Waits for the target completions of one batch; true if it held the last
  // ping.
  bool wait_batch(double timeout_s) {
    bool seen = false;
    long count = 0;
    bench::spin_until(
        [&] {
          LCI_progress(LCI_UR_DEVICE);
          switch (kind_) {
            case comp_kind::sync:
              if (LCI_sync_test(comp_, batch_.data()) == LCI_OK) {
                count = getl_batch;
                for (const LCI_request_t& q : batch_) seen = seen || q.tag == tag_os_last;
              }
              break;
            case comp_kind::queue: {
              LCI_request_t q;
              while (count < getl_batch && LCI_queue_pop(comp_, &q) == LCI_OK) {
                ++count;
                seen = seen || q.tag == tag_os_last;
              }
              break;
            }
            case comp_kind::handler:
              count = static_cast<long>(g_getl_count);
              seen = g_getl_seen_last;
              break;
          }
          return count == getl_batch;
        },
        timeout_s, "getl target completions");
    // Only rank 0's next batch, which needs our ack, can signal again.
    g_getl_count = 0;
    g_getl_seen_last = false;
    return seen;
  }

 private:
  comp_kind kind_;
  LCI_comp_t comp_ = nullptr;
  std::vector<LCI_request_t> batch_;
};

// Rank 0 gets `size` bytes of rank 1's send region into its receive region,
// one get at a time (issue, then wait for the origin completion); the figure
// is the time of one get, not halved: per batch of getl_batch gets, the
// median (or mean) over timed batches. Warm-up and time budget as
// timed_loop; the last batch's gets carry tag_os_last.
result getl_latency(context& c, long_regions& g, getl_sink* sink, size_t size) {
  const bench::options& opt = *c.opt;
  const double timeout_s = opt.timeout_s;
  result r{0, 0};
  LCI_short_t ack;
  std::memset(&ack, 0, sizeof(ack));
  if (c.rank == 1) {
    for (;;) {
      const bool last = sink->wait_batch(timeout_s);
      post_retry([&] { return LCI_sends(c.ep, ack, c.peer, tag_short); }, "LCI_sends", timeout_s);
      if (last) break;
    }
  } else {
    LCI_lbuffer_t remote{g.peer_send_seg, reinterpret_cast<void*>(g.peer_send), size};
    auto batch = [&](bool last) {
      const LCI_tag_t tag = last ? tag_os_last : tag_os;
      for (long k = 0; k < getl_batch; ++k) {
        post_retry(
            [&] {
              LCI_lbuffer_t local{g.recv_seg, g.recv, size};
              return LCI_getl(c.ep, &local, size, c.comps->one(), c.peer, tag, remote,
                              g.peer_sink, nullptr);
            },
            "LCI_getl", timeout_s);
        c.comps->wait_one(timeout_s);
      }
    };
    auto wait_ack = [&] {
      check(LCI_recvs(c.ep, c.peer, tag_short, c.comps->one(), nullptr), "LCI_recvs");
      c.comps->wait_one(timeout_s);
    };
    const long warm_batches = (opt.warmup + getl_batch - 1) / getl_batch;
    const long timed_batches = std::max<long>(1, (opt.iters + getl_batch - 1) / getl_batch);
    double t0 = bench::now_s();
    for (long b = 0; b < warm_batches && bench::now_s() - t0 <= opt.max_time_s / 2; ++b) {
      batch(false);
      wait_ack();
    }
    std::vector<double> times;
    double timed_s = 0;
    t0 = bench::now_s();
    for (long b = 0; b < timed_batches; ++b) {
      const bool last = b + 1 == timed_batches || bench::now_s() - t0 > opt.max_time_s;
      const double t = bench::now_s();
      batch(last);
      const double dt = bench::now_s() - t;
      verify_long(c.comps->last(), c.peer, last ? tag_os_last : tag_os, size, "getl");
      times.push_back(dt);
      timed_s += dt;
      wait_ack();
      if (last) break;
    }
    check_bytes(g.recv, size, 0x5a, "getl");
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    const double per_batch = opt.median ? med : timed_s / static_cast<double>(n);
    r = {per_batch / static_cast<double>(getl_batch) * 1e6,
         static_cast<long>(n) * getl_batch};
  }
  LCI_barrier();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bench::options opt;
  comp_kind kind = comp_kind::sync;
  long rate_windows = 2000;
  bool only_medium = false;
  // --proto: which measurements run; the default is the original set.
  struct protos {
    bool short_ = true, medium = true, msgrate = true;
    bool long_ = false, putm = false, putl = false, getl = false;
  } proto;
  std::vector<bench::extra_option> extra = {
      {"--only-medium", nullptr, "run only the medium ping-pong (e.g. under callgrind_rtt)",
       [&](const char*) { return only_medium = true; }},
      {"--comp", "KIND", "completion of the message port: sync (default), queue, handler",
       [&](const char* v) {
         std::string s = v;
         if (s == "sync")
           kind = comp_kind::sync;
         else if (s == "queue")
           kind = comp_kind::queue;
         else if (s == "handler")
           kind = comp_kind::handler;
         else
           return false;
         return true;
       }},
      {"--windows", "N", "timed windows in the message-rate test (default 2000)",
       [&](const char* v) { return (rate_windows = std::atol(v)) > 0; }},
      {"--medium-size", "BYTES", "accepted for symmetry with ofi_pingpong; ignored",
       [&](const char*) { return true; }},
      {"--rma-caps", nullptr, "accepted for symmetry with ofi_pingpong; ignored",
       [&](const char*) { return true; }},
      {"--proto", "LIST",
       "comma list of measurements: short, medium, msgrate (the default set), long\n"
       "                         (LCI_sendl/recvl), putm (LCI_putma), putl (LCI_putl), getl\n"
       "                         (LCI_getl; latency = completion time of one get, not halved),\n"
       "                         or all. long/putl/getl use registered buffers of 16 KiB ..\n"
       "                         4 MiB, or --min-size (at least 16 KiB) .. --max-size (at most\n"
       "                         64 MiB) when --max-size is given; putm uses the medium sizes",
       [&](const char* v) {
         protos p;
         p.short_ = p.medium = p.msgrate = false;
         std::string list = v ? v : "";
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
           else if (name == "long")
             p.long_ = true;
           else if (name == "putm")
             p.putm = true;
           else if (name == "putl")
             p.putl = true;
           else if (name == "getl")
             p.getl = true;
           else if (name == "all")
             p.short_ = p.medium = p.msgrate = p.long_ = p.putm = p.putl = p.getl = true;
           else
             return false;
           pos = comma + 1;
         }
         proto = p;
         return true;
       }},
  };
  bench::parse_options(argc, argv,
                       "LCI one-way ping-pong latency (LCI_sends/recvs, LCI_sendm/recvm) and\n"
                       "8-byte LCI_sendm message rate between two ranks.",
                       opt, extra);

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
  const bool any_long = proto.long_ || proto.putl || proto.getl;
  // Long-buffer sizes (long, putl, getl): 16 KiB .. 4 MiB by default.
  constexpr size_t long_cap = size_t(64) << 20;
  const size_t long_max = opt.max_size ? opt.max_size : size_t(4) << 20;
  const size_t long_min = std::min(std::max(opt.min_size, size_t(16) << 10), long_max);
  if (any_long && long_max > long_cap) {
    std::fprintf(stderr, "lci_pingpong: --max-size %zu is above 64 MiB, the long-buffer limit\n",
                 long_max);
    LCI_finalize();
    return 2;
  }
  if (opt.max_size == 0 || opt.max_size > medium) opt.max_size = medium;
  if (opt.min_size > opt.max_size) opt.min_size = opt.max_size;
  if (tag_window_base + 2 * static_cast<LCI_tag_t>(opt.window) >
      static_cast<LCI_tag_t>(LCI_MAX_TAG)) {
    std::fprintf(stderr, "lci_pingpong: --window %d needs tags above LCI_MAX_TAG %d\n", opt.window,
                 LCI_MAX_TAG);
    return 1;
  }

  {
    completions comps(kind, opt.window);
    LCI_plist_t plist;
    check(LCI_plist_create(&plist), "LCI_plist_create");
    check(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG), "LCI_plist_set_match_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, comps.type()),
          "LCI_plist_set_comp_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, comps.type()),
          "LCI_plist_set_comp_type");
    // putm/putl: target-side completions (default remote completion) go to
    // the same object as receives.
    if (proto.putm || proto.putl)
      check(LCI_plist_set_default_comp(plist, comps.one()), "LCI_plist_set_default_comp");
    LCI_endpoint_t ep;
    check(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist), "LCI_endpoint_init");
    LCI_plist_free(&plist);

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
    if (rank == 0) {
      out.config("impl", std::string("lci (LCI ") + std::to_string(LCI_VERSION_MAJOR) + "." +
                             std::to_string(LCI_VERSION_MINOR) +
                             " API), completion: " + comp_name(kind));
      out.config("sizes", "short " + std::to_string(LCI_SHORT_SIZE) + " B; medium up to " +
                              std::to_string(LCI_MEDIUM_SIZE) + " B");
      out.config("iterations", std::to_string(opt.iters) + " timed + " +
                                   std::to_string(opt.warmup) + " warm-up per size, at most " +
                                   bench::fixed(opt.max_time_s, 2) +
                                   " s timed (+ half that of warm-up)");
      out.config("statistic", opt.median ? "median over batches (64 round trips, 4 windows)"
                                         : "mean over all timed iterations");
      out.config("message rate", std::to_string(rate_windows) + " windows of " +
                                     std::to_string(opt.window) + " x 8 B, 1 ack per window");
      out.config("pinning", opt.pin ? "rank 0 on cpu " + std::to_string(cpu) : "off");
      out.config("units", "latency: one-way us (round trip / 2); rate: million messages/s");
      if (any_long)
        out.config("long sizes", std::to_string(long_min) + " .. " + std::to_string(long_max) +
                                     " B, registered buffers (long, putl, getl)");
      if (proto.putm || proto.putl)
        out.config("one-sided", "putm/putl: ping-pong, target-side completion to the default "
                                "completion object; one-way us (round trip / 2)");
      if (proto.getl)
        out.config("getl", "latency = completion time of one LCI_getl (issue to origin "
                           "completion), us, NOT halved");
    }
    LCI_barrier();

    auto report = [&](const char* test, size_t size, result r, long planned, const char* unit) {
      if (rank != 0) return;
      if (r.timed < planned) out.capped(test, size, r.timed, planned);
      out.row(test, size, r.value, unit);
    };
    if (!only_medium && proto.short_)
      report("short", LCI_SHORT_SIZE, short_pingpong(c), opt.iters, "us");
    if (proto.medium)
      for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
        report("medium", size, medium_pingpong(c, size, send_buf, recv_buf), opt.iters, "us");
    if (!only_medium && proto.msgrate)
      report("msgrate", 8, message_rate(c, rate_windows, send_buf, recv_buf), rate_windows,
             "Mmsg/s");
    if (!only_medium && proto.putm)
      for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
        report("putm_latency", size, putm_pingpong(c, size, send_buf), opt.iters, "us");
    if (!only_medium && any_long) {
      std::unique_ptr<getl_sink> sink;
      if (proto.getl) sink.reset(new getl_sink(kind));
      long_regions g;
      setup_long_regions(c, g, long_max, sink ? sink->handle() : 0);
      const std::vector<size_t> sizes = bench::size_ladder(long_min, long_max);
      if (proto.long_)
        for (size_t size : sizes)
          report("long_latency", size, long_pingpong(c, g, size), opt.iters, "us");
      if (proto.putl)
        for (size_t size : sizes)
          report("putl_latency", size, putl_pingpong(c, g, size), opt.iters, "us");
      if (proto.getl)
        for (size_t size : sizes)
          report("getl_latency", size, getl_latency(c, g, sink.get(), size), opt.iters, "us");
      release_long_regions(g);
    }

    LCI_endpoint_free(&ep);
    std::free(send_buf);
    std::free(recv_buf);
  }
  check(LCI_finalize(), "LCI_finalize");
  return 0;
}

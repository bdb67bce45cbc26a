// lci_bw: long-message bandwidth and latency through the LCI 1.7 API, the
// same measurements as ofi_rma_bw (the raw-libfabric reference), sizes
// 64 KiB .. 64 MiB in powers of 4:
//   sendl_bw   rank 0 sends windows of W LCI_sendl, waits for their W
//              completions and for rank 1's ack (LCI_sends), which rank 1
//              sends once the W matching LCI_recvl have completed; rank 1
//              keeps the next window's receives posted. GB/s (1e9 B/s);
//   sendl_lat  LCI_sendl / LCI_recvl ping-pong, receives posted ahead;
//              one-way us;
//   putl_bw    rank 0 puts windows of W LCI_putl into rank 1's registered
//              buffer, waits for their W local completions and for rank 1's
//              ack, which rank 1 sends once the W target completions (its
//              endpoint's default queue) have arrived. GB/s;
//   putl_lat   LCI_putl ping-pong: each side waits for the peer's put to
//              complete at its target queue, then puts back; one-way us;
//   getl_lat   (--tests getl) rank 0 LCI_getl's from rank 1's registered
//              target buffer, one get at a time; the completion time of one
//              get, us, NOT halved (see get_latency()).
// The put target is a segment registered by the peer, serialized and sent
// at start-up in a medium message (LCI_sendm).
//
// Buffers are allocated once: with LCI_lbuffer_alloc (registered once), or
// with --segment-all as plain memory named with LCI_SEGMENT_ALL, which LCI
// registers on the fly through its registration cache (every message after
// the first is a cache hit); the put target is then registered explicitly
// (a remote buffer cannot be LCI_SEGMENT_ALL).
//
// One endpoint on LCI_UR_DEVICE, both ports completing through queues: the
// command port (sendl/putl at the origin) to one, the message port (recvl,
// the ack, puts at the target) to another, which is also its default
// completion object. Waits loop LCI_progress + LCI_queue_pop. The last
// iteration is marked in the first byte of the data; the rest of the
// target buffer is checked after each measurement.
//
// Run with exactly two ranks: lcrun -n 2 lci_bw [--csv] [--segment-all].
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"
#include "lci_common.hpp"
#include "lci.h"

namespace {

constexpr LCI_tag_t tag_data = 1;
constexpr LCI_tag_t tag_ack = 2;
constexpr LCI_tag_t tag_segment = 3;
constexpr LCI_tag_t tag_get_last = 4;  // the gets of getl_lat's last batch
constexpr long getl_batch = 64;

using lci_bench::check;
using lci_bench::fail;
using lci_bench::post_retry;

// The byte at offset i of rank r's source buffer (byte 0 is the marker).
inline unsigned char pattern(int rank, size_t i) {
  return static_cast<unsigned char>(i * 131 + (i >> 12) + static_cast<size_t>(rank) * 17);
}

// Samples (every 4093rd byte and the last, not the marker byte 0) of the
// first `size` bytes of `buf` against rank `writer`'s pattern.
bool check_pattern(const unsigned char* buf, size_t size, int writer) {
  for (size_t i = 4093; i < size; i += 4093)
    if (buf[i] != pattern(writer, i)) return false;
  return size < 2 || buf[size - 1] == pattern(writer, size - 1);
}

// What a rank tells its peer about its put target.
struct target_info {
  char segment[256];  // LCI_segment_serialize output
  uint64_t address;
  uint64_t sink;  // its message-port queue, the remote completion of gets
};

struct context {
  LCI_endpoint_t ep;
  LCI_comp_t local_cq;   // command port: sendl/putl completions
  LCI_comp_t remote_cq;  // message port: recvl, ack, put targets
  int rank, peer;
  const bench::options* opt;
  LCI_lbuffer_t src, dst;  // this rank's buffers (dst: receives and put target)
  LCI_lbuffer_t remote;    // the peer's put target (deserialized segment)
  uintptr_t peer_sink;     // the peer's message-port queue
};

// A measurement's figure (rank 0) and how many timed iterations it took.
struct result {
  double value;
  long timed;
};

// Pops n entries from `cq`, progressing meanwhile; checks each one's flag
// and type and leaves the last in *last.
void wait_queue(LCI_comp_t cq, int n, LCI_data_type_t type, double timeout_s, const char* what,
                LCI_request_t* last = nullptr) {
  int got = 0;
  LCI_request_t r;
  bench::spin_until(
      [&] {
        LCI_progress(LCI_UR_DEVICE);
        while (got < n && LCI_queue_pop(cq, &r) == LCI_OK) {
          if (r.flag != LCI_OK || r.type != type) {
            std::fprintf(stderr, "lci_bw: %s: completion with flag %d type %d\n", what,
                         static_cast<int>(r.flag), static_cast<int>(r.type));
            std::exit(1);
          }
          ++got;
        }
        return got == n;
      },
      timeout_s, what);
  if (last) *last = r;
}

void send_ack(context& c) {
  LCI_short_t s;
  std::memset(&s, 0, sizeof(s));
  post_retry([&] { return LCI_sends(c.ep, s, c.peer, tag_ack); }, "LCI_sends", c.opt->timeout_s);
}

void post_ack(context& c) {
  check(LCI_recvs(c.ep, c.peer, tag_ack, c.remote_cq, nullptr), "LCI_recvs");
}

void post_recvl(context& c, size_t size) {
  LCI_lbuffer_t into = c.dst;
  into.length = size;
  check(LCI_recvl(c.ep, into, c.peer, tag_data, c.remote_cq, nullptr), "LCI_recvl");
}

void send_long(context& c, size_t size) {
  LCI_lbuffer_t from = c.src;
  from.length = size;
  post_retry([&] { return LCI_sendl(c.ep, from, c.peer, tag_data, c.local_cq, nullptr); },
             "LCI_sendl", c.opt->timeout_s);
}

void put_long(context& c, size_t size) {
  LCI_lbuffer_t from = c.src;
  from.length = size;
  LCI_lbuffer_t to = c.remote;
  to.length = size;
  post_retry(
      [&] {
        return LCI_putl(c.ep, from, c.local_cq, c.peer, tag_data, to, LCI_DEFAULT_COMP_REMOTE,
                        nullptr);
      },
      "LCI_putl", c.opt->timeout_s);
}

unsigned char* src_bytes(context& c) { return static_cast<unsigned char*>(c.src.address); }
unsigned char* dst_bytes(context& c) { return static_cast<unsigned char*>(c.dst.address); }

void verify(context& c, size_t size, const char* test) {
  if (!check_pattern(dst_bytes(c), size, c.peer)) {
    std::fprintf(stderr, "lci_bw: %s %zu: rank %d's buffer does not hold the peer's data\n", test,
                 size, c.rank);
    std::exit(1);
  }
}

// Ping-pong; `put` selects putl (target completion) or sendl/recvl. Rank 1
// posts its next receive before it answers, so every message finds it.
result latency(context& c, size_t size, bool put) {
  const bench::options& opt = *c.opt;
  const double t = opt.timeout_s;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 1);
  auto send = [&] { put ? put_long(c, size) : send_long(c, size); };
  auto post = [&] {
    if (!put) post_recvl(c, size);
  };
  // A put's arrival and a receive both complete on the message-port queue.
  auto wait_arrival = [&] { wait_queue(c.remote_cq, 1, LCI_LONG, t, "an arrival"); };
  auto wait_sent = [&] { wait_queue(c.local_cq, 1, LCI_LONG, t, "a local completion"); };
  src_bytes(c)[0] = 0;
  dst_bytes(c)[0] = 0;
  if (c.rank == 1) post();
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(i);
      src_bytes(c)[0] = last ? 1 : 0;
      post();
      send();
      wait_arrival();
      wait_sent();
      if (last) break;
    } else {
      wait_arrival();
      const bool last = dst_bytes(c)[0] != 0;
      if (!last) post();
      send();
      wait_sent();
      if (last) break;
    }
  }
  loop.finish(i);
  LCI_barrier();
  verify(c, size, put ? "putl_lat" : "sendl_lat");
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// Windows of W messages from rank 0, one ack per window from rank 1.
result bandwidth(context& c, size_t size, long windows, bool put) {
  const bench::options& opt = *c.opt;
  const double t = opt.timeout_s;
  const int w = opt.window;
  bench::timed_loop loop(std::max<long>(1, opt.warmup / 4), windows, opt.max_time_s, 1);
  auto post_window = [&] {
    if (!put)
      for (int j = 0; j < w; ++j) post_recvl(c, size);
  };
  src_bytes(c)[0] = 0;
  dst_bytes(c)[0] = 0;
  if (c.rank == 1) post_window();
  long k = 0;
  for (; k < loop.total(); ++k) {
    if (c.rank == 0) {
      const bool last = loop.next_is_last(k);
      src_bytes(c)[0] = last ? 1 : 0;
      post_ack(c);
      for (int j = 0; j < w; ++j) put ? put_long(c, size) : send_long(c, size);
      wait_queue(c.local_cq, w, LCI_LONG, t, "a window's local completions");
      wait_queue(c.remote_cq, 1, LCI_IMMEDIATE, t, "an ack");
      if (last) break;
    } else {
      wait_queue(c.remote_cq, w, LCI_LONG, t, "a window's arrivals");
      const bool last = dst_bytes(c)[0] != 0;
      if (!last) post_window();
      send_ack(c);
      if (last) break;
    }
  }
  loop.finish(k);
  LCI_barrier();
  if (c.rank == 1) verify(c, size, put ? "putl_bw" : "sendl_bw");
  const double bytes = static_cast<double>(size) * w;
  return {bytes / loop.per_iteration(opt.median) / 1e9, loop.timed()};
}

// Sends this rank's put target to the peer and turns the peer's into a
// remote buffer (segment exchange through a medium message).
void exchange_targets(context& c, LCI_segment_t dst_segment) {
  target_info mine, theirs;
  std::memset(&mine, 0, sizeof(mine));
  check(LCI_segment_serialize(dst_segment, mine.segment), "LCI_segment_serialize");
  mine.address = reinterpret_cast<uint64_t>(c.dst.address);
  mine.sink = reinterpret_cast<uintptr_t>(c.remote_cq);
  LCI_mbuffer_t into{&theirs, sizeof(theirs)};
  check(LCI_recvm(c.ep, into, c.peer, tag_segment, c.remote_cq, nullptr), "LCI_recvm");
  LCI_mbuffer_t msg{&mine, sizeof(mine)};
  post_retry([&] { return LCI_sendm(c.ep, msg, c.peer, tag_segment); }, "LCI_sendm",
             c.opt->timeout_s);
  wait_queue(c.remote_cq, 1, LCI_MEDIUM, c.opt->timeout_s, "the peer's segment");
  LCI_segment_t seg;
  check(LCI_segment_deserialize(theirs.segment, &seg), "LCI_segment_deserialize");
  c.remote = LCI_lbuffer_t{seg, reinterpret_cast<void*>(theirs.address), c.dst.length};
  c.peer_sink = static_cast<uintptr_t>(theirs.sink);
}

// getl_lat: rank 0 gets `size` bytes of rank 1's put target (which rank 1
// first fills with its pattern) into its own, one LCI_getl at a time (issue,
// then wait for the local completion). The figure is the time of one get,
// not halved: per batch of getl_batch gets, the median (or mean) over timed
// batches. Target completions go to rank 1's message-port queue (an
// explicit remote completion handle); rank 1 acks each batch, untimed, so
// at most one batch of them is outstanding (gets need no target progress and
// could otherwise run ahead of rank 1). Warm-up and time budget as
// bench::timed_loop; the last batch's gets carry tag_get_last.
result get_latency(context& c, size_t size) {
  const bench::options& opt = *c.opt;
  const double t = opt.timeout_s;
  if (c.rank == 1)
    std::memcpy(dst_bytes(c), src_bytes(c), size);
  else
    std::memset(dst_bytes(c), 0, size);
  LCI_barrier();
  result r{0, 0};
  if (c.rank == 1) {
    for (;;) {
      LCI_request_t last;
      wait_queue(c.remote_cq, getl_batch, LCI_LONG, t, "getl target completions", &last);
      send_ack(c);
      if (last.tag == tag_get_last) break;
    }
  } else {
    LCI_lbuffer_t from = c.remote;
    from.length = size;
    auto batch = [&](bool last) {
      const LCI_tag_t tag = last ? tag_get_last : tag_data;
      for (long k = 0; k < getl_batch; ++k) {
        post_retry(
            [&] {
              LCI_lbuffer_t into = c.dst;
              into.length = size;
              return LCI_getl(c.ep, &into, size, c.local_cq, c.peer, tag, from, c.peer_sink,
                              nullptr);
            },
            "LCI_getl", t);
        wait_queue(c.local_cq, 1, LCI_LONG, t, "a get's completion");
      }
    };
    auto batch_acked = [&](bool last) {
      post_ack(c);
      batch(last);
      wait_queue(c.remote_cq, 1, LCI_IMMEDIATE, t, "an ack");
    };
    const long warm_batches = (opt.warmup + getl_batch - 1) / getl_batch;
    const long timed_batches = std::max<long>(1, (opt.iters + getl_batch - 1) / getl_batch);
    double t0 = bench::now_s();
    for (long b = 0; b < warm_batches && bench::now_s() - t0 <= opt.max_time_s / 2; ++b)
      batch_acked(false);
    std::vector<double> times;
    t0 = bench::now_s();
    for (long b = 0; b < timed_batches; ++b) {
      const bool last = b + 1 == timed_batches || bench::now_s() - t0 > opt.max_time_s;
      post_ack(c);
      const double start = bench::now_s();
      batch(last);
      times.push_back(bench::now_s() - start);
      wait_queue(c.remote_cq, 1, LCI_IMMEDIATE, t, "an ack");
      if (last) break;
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    double total = 0;
    for (double x : times) total += x;
    const double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    const double per_batch = opt.median ? med : total / static_cast<double>(n);
    r = {per_batch / static_cast<double>(getl_batch) * 1e6, static_cast<long>(n) * getl_batch};
  }
  LCI_barrier();
  if (c.rank == 0) verify(c, size, "getl_lat");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  lci_bench::set_program("lci_bw");
  bench::options opt;
  opt.iters = 1000;
  opt.warmup = 20;
  opt.min_size = 64 << 10;
  opt.max_size = 64 << 20;
  opt.window = 16;
  opt.max_time_s = 0.25;
  long windows = 100;
  bool segment_all = false;
  std::string tests = "sendl,putl";
  std::vector<bench::extra_option> extra = {
      {"--windows", "N", "timed windows per size in the bandwidth tests (default 100)",
       [&](const char* v) { return (windows = std::atol(v)) > 0; }},
      {"--segment-all", nullptr, "local buffers named LCI_SEGMENT_ALL (registration cache)",
       [&](const char*) { return segment_all = true; }},
      {"--tests", "LIST", "comma list of sendl, putl, getl (default sendl,putl)",
       [&](const char* v) {
         tests = v;
         return tests.find("sendl") != std::string::npos ||
                tests.find("putl") != std::string::npos || tests.find("getl") != std::string::npos;
       }},
      {"--completion", "KIND", "accepted for symmetry with ofi_rma_bw; ignored",
       [&](const char*) { return true; }},
  };
  bench::parse_options(argc, argv,
                       "LCI long-message bandwidth (windows of W) and one-way latency between two\n"
                       "ranks: LCI_sendl/LCI_recvl and LCI_putl into a registered remote buffer;\n"
                       "with --tests getl also LCI_getl latency (one get, not halved).\n"
                       "Sizes: powers of 4 from --min-size to --max-size.",
                       opt, extra);
  if (opt.min_size < 2) opt.min_size = 2;  // byte 0 marks the last iteration

  check(LCI_initialize(), "LCI_initialize");
  if (LCI_NUM_PROCESSES != 2) {
    std::fprintf(stderr, "lci_bw: needs exactly 2 ranks (run: lcrun -n 2 lci_bw), got %d\n",
                 LCI_NUM_PROCESSES);
    LCI_finalize();
    return 1;
  }
  const int rank = LCI_RANK;
  const int cpu = opt.pin ? bench::pin_to_cpu(rank) : -1;
  const size_t bytes = (opt.max_size + 4095) / 4096 * 4096;
  {
    context c{};
    c.rank = rank;
    c.peer = 1 - rank;
    c.opt = &opt;
    check(LCI_queue_create(LCI_UR_DEVICE, &c.local_cq), "LCI_queue_create");
    check(LCI_queue_create(LCI_UR_DEVICE, &c.remote_cq), "LCI_queue_create");
    LCI_plist_t plist;
    check(LCI_plist_create(&plist), "LCI_plist_create");
    check(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG), "LCI_plist_set_match_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE),
          "LCI_plist_set_comp_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE),
          "LCI_plist_set_comp_type");
    check(LCI_plist_set_default_comp(plist, c.remote_cq), "LCI_plist_set_default_comp");
    check(LCI_endpoint_init(&c.ep, LCI_UR_DEVICE, plist), "LCI_endpoint_init");
    LCI_plist_free(&plist);

    // Buffers: registered once, or plain memory for LCI_SEGMENT_ALL. The
    // put target is registered either way (dst_segment).
    LCI_segment_t dst_segment = nullptr;
    if (segment_all) {
      void* s = std::aligned_alloc(4096, bytes);
      void* d = std::aligned_alloc(4096, bytes);
      if (!s || !d) {
        std::fprintf(stderr, "lci_bw: cannot allocate 2 x %zu bytes\n", bytes);
        return 1;
      }
      c.src = LCI_lbuffer_t{LCI_SEGMENT_ALL, s, bytes};
      c.dst = LCI_lbuffer_t{LCI_SEGMENT_ALL, d, bytes};
      check(LCI_memory_register(LCI_UR_DEVICE, d, bytes, &dst_segment), "LCI_memory_register");
    } else {
      post_retry([&] { return LCI_lbuffer_alloc(LCI_UR_DEVICE, bytes, &c.src); },
                 "LCI_lbuffer_alloc", opt.timeout_s);
      post_retry([&] { return LCI_lbuffer_alloc(LCI_UR_DEVICE, bytes, &c.dst); },
                 "LCI_lbuffer_alloc", opt.timeout_s);
      dst_segment = c.dst.segment;
    }
    for (size_t i = 0; i < bytes; ++i) src_bytes(c)[i] = pattern(rank, i);
    std::memset(c.dst.address, 0, bytes);
    exchange_targets(c, dst_segment);
    LCI_barrier();

    bench::printer out(segment_all ? "lcisa" : "lci", opt.csv);
    if (rank == 0) {
      out.config("impl", std::string("lci (LCI ") + std::to_string(LCI_VERSION_MAJOR) + "." +
                             std::to_string(LCI_VERSION_MINOR) + " API), local buffers: " +
                             (segment_all ? "LCI_SEGMENT_ALL (registration cache)"
                                          : "LCI_lbuffer_alloc (registered once)"));
      out.config("iterations",
                 std::to_string(opt.iters) + " timed + " + std::to_string(opt.warmup) +
                     " warm-up round trips per size, " + std::to_string(windows) + " windows of " +
                     std::to_string(opt.window) + " for bandwidth; at most " +
                     bench::fixed(opt.max_time_s, 2) + " s timed (+ half that of warm-up)");
      out.config("statistic", opt.median ? "median over iterations (round trips, windows)"
                                         : "mean over all timed iterations");
      out.config("pinning", opt.pin ? "rank 0 on cpu " + std::to_string(cpu) : "off");
      out.config("units", "bandwidth: GB/s (1e9 B/s); latency: one-way us (round trip / 2)");
    }
    auto report = [&](const char* test, size_t size, result r, long planned, const char* unit) {
      if (rank != 0) return;
      if (r.timed < planned) out.capped(test, size, r.timed, planned);
      out.row(test, size, r.value, unit);
    };
    const bool do_sendl = tests.find("sendl") != std::string::npos;
    const bool do_putl = tests.find("putl") != std::string::npos;
    const bool do_getl = tests.find("getl") != std::string::npos;
    for (size_t size : bench::size_ladder(opt.min_size, opt.max_size, 4)) {
      if (do_sendl) {
        report("sendl_bw", size, bandwidth(c, size, windows, false), windows, "GB/s");
        report("sendl_lat", size, latency(c, size, false), opt.iters, "us");
      }
      if (do_putl) {
        report("putl_bw", size, bandwidth(c, size, windows, true), windows, "GB/s");
        report("putl_lat", size, latency(c, size, true), opt.iters, "us");
      }
      if (do_getl) report("getl_lat", size, get_latency(c, size), opt.iters, "us");
    }

    LCI_barrier();
    LCI_memory_deregister(&c.remote.segment);
    if (segment_all) {
      LCI_memory_deregister(&dst_segment);
      std::free(c.src.address);
      std::free(c.dst.address);
    } else {
      LCI_lbuffer_free(c.src);
      LCI_lbuffer_free(c.dst);
    }
    LCI_endpoint_free(&c.ep);
    LCI_queue_free(&c.local_cq);
    LCI_queue_free(&c.remote_cq);
  }
  check(LCI_finalize(), "LCI_finalize");
  return 0;
}

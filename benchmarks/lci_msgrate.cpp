// lci_msgrate: thread-scaling message rate through the LCI 1.7 API.
//
// T threads per rank (1, 2, 4, ... --max-threads, or --threads LIST);
// thread t of rank 0 streams windows of W LCI_sendm of one size to thread t
// of rank 1, which answers each complete window with one 8-byte ack. Thread
// t uses tags 2t (data) and 2t+1 (ack). Rank 1 keeps two windows of
// LCI_recvm posted (a synchronizer of threshold W per window), so messages
// find their receives posted; it acks a window first, then re-posts it.
//
// Modes (--device, --progress):
//   shared      all threads share LCI_UR_DEVICE and one endpoint;
//   per-thread  thread t has its own device (LCI_device_init, made by the
//               main thread before the threads start) and endpoint;
//   senders     each thread calls LCI_progress on its device while it waits;
//   thread      one dedicated progress thread polls every device in use;
//               the workers only test their synchronizers.
//
// Timing (rank 0): each sender thread runs untimed warm-up windows, meets
// the other senders at a thread barrier, then runs timed windows until
// --windows or --max-time; the last window is marked in the first byte of
// its messages, and one untimed window uses up the receives rank 1 posted
// ahead. Total rate = all timed messages / (latest end - earliest start);
// per-thread = total / T.
//
// Waiting loops yield the CPU every 64 empty polls (bench::poll_until), so
// runs with more threads than cores (oversubscription) make progress.
//
// Run with exactly two ranks: lcrun -n 2 lci_msgrate [--csv] [--threads 1,2,4].
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "lci_common.hpp"
#include "lci.h"

namespace {

using lci_bench::check;
using lci_bench::fail;

struct config {
  int window = 64;
  long windows = 1000000;  // bounded by max_time
  long warmup_windows = 16;
  double max_time_s = 0.5;
  double timeout_s = 30;
  bool per_thread_device = false;
  bool progress_thread = false;
};

// What thread t owns: its device, endpoint, synchronizers and buffers.
struct lane {
  LCI_device_t dev;
  LCI_endpoint_t ep;
  LCI_comp_t one;     // threshold 1: the ack (rank 0)
  LCI_comp_t win[2];  // threshold W: a window of receives (rank 1), by parity
  std::vector<LCI_request_t> reqs;
  char* send_buf;
  char* recv_buf;  // 2 windows x W slots x max size
};

class worker {
 public:
  worker(const config& c, lane& l, int t, int rank, size_t size, size_t slot)
      : c_(c), l_(l), rank_(rank), peer_(1 - rank), size_(size), slot_(slot),
        data_tag_(static_cast<LCI_tag_t>(2 * t)), ack_tag_(static_cast<LCI_tag_t>(2 * t + 1)) {}

  void progress() {
    if (!c_.progress_thread) LCI_progress(l_.dev);
  }

  void wait(LCI_comp_t s) {
    bench::poll_until(
        [&] {
          progress();
          return LCI_sync_test(s, l_.reqs.data()) == LCI_OK;
        },
        c_.timeout_s, "a synchronizer");
  }

  void send(LCI_tag_t tag, size_t size) {
    LCI_mbuffer_t src{l_.send_buf, size};
    bench::poll_until(
        [&] {
          LCI_error_t rc = LCI_sendm(l_.ep, src, peer_, tag);
          if (rc == LCI_OK) return true;
          if (rc != LCI_ERR_RETRY) fail("LCI_sendm", rc);
          progress();
          return false;
        },
        c_.timeout_s, "LCI_sendm to accept a message");
  }

  void post_window(long k) {
    for (int j = 0; j < c_.window; ++j) {
      LCI_mbuffer_t dst{l_.recv_buf + slot_ * static_cast<size_t>((k & 1) * c_.window + j), size_};
      check(LCI_recvm(l_.ep, dst, peer_, data_tag_, l_.win[k & 1], nullptr), "LCI_recvm");
    }
  }

  // Rank 0's side; returns what it timed.
  bench::thread_rate sender(bench::spin_barrier& bar) {
    bench::thread_rate r;
    LCI_mbuffer_t ack{l_.recv_buf, 8};
    long warm = c_.warmup_windows;
    const double t_warm = bench::now_s();
    for (long k = 0;; ++k) {
      if (k < warm && k > 0 && bench::now_s() - t_warm > c_.max_time_s / 2) warm = k;
      if (k == warm) {
        bar.wait([&] { progress(); });
        r.start = bench::now_s();
      }
      const bool last = k >= warm && (k - warm + 1 >= c_.windows ||
                                      bench::now_s() - r.start > c_.max_time_s);
      l_.send_buf[0] = last ? 1 : 0;
      check(LCI_recvm(l_.ep, ack, peer_, ack_tag_, l_.one, nullptr), "LCI_recvm");
      for (int j = 0; j < c_.window; ++j) send(data_tag_, size_);
      wait(l_.one);
      if (last) {
        r.end = bench::now_s();
        r.messages = (k - warm + 1) * c_.window;
        break;
      }
    }
    // Untimed: the window rank 1 has already posted.
    l_.send_buf[0] = 0;
    for (int j = 0; j < c_.window; ++j) send(data_tag_, size_);
    return r;
  }

  void receiver() {
    post_window(0);
    post_window(1);
    long k = 0;
    for (;; ++k) {
      wait(l_.win[k & 1]);
      const bool last = l_.recv_buf[slot_ * static_cast<size_t>((k & 1) * c_.window)] != 0;
      send(ack_tag_, 8);
      if (last) break;
      post_window(k + 2);
    }
    wait(l_.win[(k + 1) & 1]);
    const LCI_request_t& q = l_.reqs[0];
    if (q.flag != LCI_OK || q.rank != peer_ || q.tag != data_tag_ ||
        q.data.mbuffer.length != size_) {
      std::fprintf(stderr, "lci_msgrate: a receive has rank %d tag %u length %zu, expected %d %u %zu\n",
                   q.rank, q.tag, q.data.mbuffer.length, peer_, data_tag_, size_);
      std::exit(1);
    }
  }

 private:
  const config& c_;
  lane& l_;
  int rank_, peer_;
  size_t size_, slot_;
  LCI_tag_t data_tag_, ack_tag_;
};

}  // namespace

int main(int argc, char** argv) {
  lci_bench::set_program("lci_msgrate");
  bench::options opt;
  opt.max_size = 8192;
  opt.max_time_s = 0.5;
  config c;
  int max_threads = 4;
  size_t factor = 8;
  std::vector<int> thread_list;
  std::vector<bench::extra_option> extra = {
      {"--max-threads", "N", "threads per rank: 1, 2, 4, ... N (default 4)",
       [&](const char* v) { return (max_threads = std::atoi(v)) >= 1 && max_threads <= 256; }},
      {"--threads", "LIST", "threads per rank, a comma list (overrides --max-threads)",
       [&](const char* v) { return bench::parse_int_list(v, 1, 256, &thread_list); }},
      {"--device", "KIND", "shared (default: LCI_UR_DEVICE) or per-thread (LCI_device_init each)",
       [&](const char* v) {
         std::string s = v;
         c.per_thread_device = s == "per-thread";
         return s == "shared" || s == "per-thread";
       }},
      {"--progress", "KIND", "senders (default: the waiting threads) or thread (a progress thread)",
       [&](const char* v) {
         std::string s = v;
         c.progress_thread = s == "thread";
         return s == "senders" || s == "thread";
       }},
      {"--windows", "N", "at most N timed windows per thread and measurement (default 1000000)",
       [&](const char* v) { return (c.windows = std::atol(v)) > 0; }},
      {"--size-factor", "F", "size ladder factor between --min-size and --max-size (default 8)",
       [&](const char* v) { return (factor = std::strtoul(v, nullptr, 10)) >= 2; }},
  };
  bench::parse_options(argc, argv,
                       "LCI thread-scaling message rate: T threads per rank, thread t of rank 0\n"
                       "streams windows of W LCI_sendm to thread t of rank 1 (one ack per\n"
                       "window). Reports million messages/s in total and per thread.",
                       opt, extra);
  c.window = opt.window;
  c.max_time_s = opt.max_time_s;
  c.timeout_s = opt.timeout_s;
  c.warmup_windows = std::max<long>(1, opt.warmup / opt.window);
  if (thread_list.empty()) thread_list = bench::thread_ladder(max_threads);
  const int nlanes = *std::max_element(thread_list.begin(), thread_list.end());
  // Per-thread devices: a smaller packet pool each (16 devices x the default
  // 8192 packets of 12 KiB would map 1.6 GB per rank). An existing value wins.
  if (c.per_thread_device) setenv("LCI_SERVER_NUM_PKTS", "2048", 0);

  check(LCI_initialize(), "LCI_initialize");
  if (LCI_NUM_PROCESSES != 2) {
    std::fprintf(stderr, "lci_msgrate: needs exactly 2 ranks, got %d\n", LCI_NUM_PROCESSES);
    LCI_finalize();
    return 1;
  }
  const int rank = LCI_RANK;
  if (opt.pin) bench::pin_to_cpu(rank);
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  opt.max_size = std::min(opt.max_size, medium);
  opt.min_size = std::min(opt.min_size, opt.max_size);
  const std::vector<size_t> sizes = bench::size_ladder(opt.min_size, opt.max_size, factor);
  const size_t slot = std::max<size_t>(8, opt.max_size);

  // Devices and endpoints in the same order on both ranks (device creation
  // is collective).
  std::vector<lane> lanes(static_cast<size_t>(nlanes));
  LCI_endpoint_t shared_ep = nullptr;
  auto make_ep = [](LCI_device_t dev) {
    LCI_plist_t plist;
    check(LCI_plist_create(&plist), "LCI_plist_create");
    check(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG), "LCI_plist_set_match_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC),
          "LCI_plist_set_comp_type");
    check(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_SYNC),
          "LCI_plist_set_comp_type");
    LCI_endpoint_t ep;
    check(LCI_endpoint_init(&ep, dev, plist), "LCI_endpoint_init");
    LCI_plist_free(&plist);
    return ep;
  };
  if (!c.per_thread_device) shared_ep = make_ep(LCI_UR_DEVICE);
  for (lane& l : lanes) {
    if (c.per_thread_device) {
      check(LCI_device_init(&l.dev), "LCI_device_init");
      l.ep = make_ep(l.dev);
    } else {
      l.dev = LCI_UR_DEVICE;
      l.ep = shared_ep;
    }
    check(LCI_sync_create(l.dev, 1, &l.one), "LCI_sync_create");
    for (LCI_comp_t& s : l.win) check(LCI_sync_create(l.dev, c.window, &s), "LCI_sync_create");
    l.reqs.resize(static_cast<size_t>(c.window));
    const size_t bytes = (2 * static_cast<size_t>(c.window) * slot + 4095) / 4096 * 4096;
    l.send_buf = static_cast<char*>(std::aligned_alloc(4096, 4096 + slot / 4096 * 4096));
    l.recv_buf = static_cast<char*>(std::aligned_alloc(4096, bytes));
    if (!l.send_buf || !l.recv_buf) {
      std::fprintf(stderr, "lci_msgrate: out of memory\n");
      return 1;
    }
    std::memset(l.send_buf, 0x5a, 4096 + slot / 4096 * 4096);
    std::memset(l.recv_buf, 0, bytes);
  }

  const std::string mode = std::string(c.per_thread_device ? "per-thread" : "shared") + "+" +
                           (c.progress_thread ? "progress-thread" : "senders");
  bench::rate_printer out("lci", opt.csv);
  if (rank == 0) {
    bench::printer cfg("lci", opt.csv);
    std::string threads;
    for (int t : thread_list) threads += (threads.empty() ? "" : ",") + std::to_string(t);
    cfg.config("impl", "lci (LCI " + std::to_string(LCI_VERSION_MAJOR) + "." +
                           std::to_string(LCI_VERSION_MINOR) + " API), LCI_sendm/LCI_recvm, sync");
    cfg.config("mode", mode + " (device + progress)");
    cfg.config("threads", threads + " per rank, thread t of rank 0 -> thread t of rank 1");
    cfg.config("window", std::to_string(c.window) + " messages in flight per thread, 1 ack each");
    cfg.config("time", "at most " + bench::fixed(c.max_time_s, 2) +
                           " s timed per measurement (+ warm-up)");
    cfg.config("units", "million messages/s (total over threads, and total / threads)");
  }
  LCI_barrier();

  for (size_t size : sizes) {
    for (int T : thread_list) {
      std::vector<bench::thread_rate> rates(static_cast<size_t>(T));
      bench::spin_barrier bar(T);
      std::atomic<bool> stop{false};
      std::thread progress;
      if (c.progress_thread) {
        std::vector<LCI_device_t> devs;
        for (int t = 0; t < T; ++t) {
          LCI_device_t d = lanes[static_cast<size_t>(t)].dev;
          if (std::find(devs.begin(), devs.end(), d) == devs.end()) devs.push_back(d);
        }
        progress = std::thread([devs, &stop] {
          unsigned idle = 0;
          while (!stop.load(std::memory_order_relaxed)) {
            bool did = false;
            for (LCI_device_t d : devs) did |= LCI_progress(d) == LCI_OK;
            if (did) {
              idle = 0;
            } else if (++idle % 64 == 0) {
              sched_yield();
            }
          }
        });
      }
      std::vector<std::thread> threads;
      for (int t = 0; t < T; ++t)
        threads.emplace_back([&, t] {
          worker w(c, lanes[static_cast<size_t>(t)], t, rank, size, slot);
          if (rank == 0)
            rates[static_cast<size_t>(t)] = w.sender(bar);
          else
            w.receiver();
        });
      for (std::thread& th : threads) th.join();
      stop.store(true);
      if (progress.joinable()) progress.join();
      // Packets of the last sends return to their pools here.
      for (int t = 0; t < T; ++t) LCI_progress(lanes[static_cast<size_t>(t)].dev);
      LCI_barrier();
      if (rank == 0) out.row("msgrate", mode, size, T, bench::total_rate(rates));
    }
  }

  for (lane& l : lanes) {
    LCI_sync_free(&l.one);
    for (LCI_comp_t& s : l.win) LCI_sync_free(&s);
    if (c.per_thread_device) {
      LCI_endpoint_free(&l.ep);
    }
    std::free(l.send_buf);
    std::free(l.recv_buf);
  }
  if (shared_ep) LCI_endpoint_free(&shared_ep);
  LCI_barrier();
  if (c.per_thread_device)
    for (lane& l : lanes) LCI_device_free(&l.dev);
  check(LCI_finalize(), "LCI_finalize");
  return 0;
}

// ofi_pingpong: the raw-libfabric reference for lci_pingpong.
//
// It opens the provider the way the LCI library does (RDM endpoint, 64-bit
// immediate data in an FI_CQ_FORMAT_DATA queue, FI_THREAD_SAFE domain,
// manual progress driven by fi_cq_read, untagged fi_recv into pre-posted
// buffers) and does the least work that protocol allows, so its figures
// are the floor that LCI is compared against:
//   short    32-byte ping-pong (what LCI_sends sends), one-way latency;
//   medium   ping-pong per size; fi_injectdata up to the provider's inject
//            size, else fi_senddata from a registered buffer (the send
//            completion is awaited before the buffer is reused);
//   msgrate  rank 0 streams windows of W 8-byte messages, rank 1 answers
//            each window with one 8-byte ack; messages/s over all windows.
// A received buffer is re-posted as soon as its completion is read (LCI
// re-posts a fresh packet at the same point). It asks for FI_MSG only;
// --rma-caps adds the RMA capabilities the library also asks for, to check
// that they do not move the provider onto another path.
//
// Run with exactly two ranks: lcrun -n 2 ofi_pingpong [--csv].
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "ofi_common.hpp"

namespace {

// --settle (bench::settle_channel): the replies rank 1 has sent.
bench::settle_channel g_settle;
uint64_t g_replies = 0;

lci::bootstrap::bootstrap* g_boot = nullptr;
bool g_rate_backoff = std::getenv("OFI_RATE_BACKOFF") != nullptr;

// Set in a message's header by rank 0 on the last iteration of a
// measurement (see bench::timed_loop).
constexpr uint32_t stop_bit = 1u << 31;

using ofi_bench::check;
using ofi_bench::fail;

// One RDM endpoint (ofi_bench::rdm_base) with its buffers, registered
// once: the send buffer, then `nrecv` receive buffers of `buf_size` bytes
// each, in one slab. A posted receive's context is its buffer address; a
// send's context is `&send_ctx_`. Single-threaded: one thread posts and
// polls.
class rdm_endpoint : public ofi_bench::rdm_base {
 public:
  rdm_endpoint(lci::bootstrap::bootstrap& boot, size_t buf_size, size_t want_recvs, bool rma_caps,
               const std::string& kvs_key = "ofi_pingpong")
      : rdm_base(boot.size(), rma_caps),
        buf_size_(buf_size),
        nrecv_(std::max<size_t>(1, std::min(want_recvs, rx_size()))),
        inject_size_(inject_size()) {
    const size_t slab_bytes = buf_size_ * (nrecv_ + 1);
    slab_ = static_cast<char*>(allocate(slab_bytes));
    desc_ = fi_mr_desc(register_buffer(slab_, slab_bytes, FI_SEND | FI_RECV, 1));
    exchange_addresses(boot, kvs_key);

    for (size_t i = 0; i < nrecv_; ++i) post_recv(recv_buffer(i), buf_size_, desc_);
    // Every receive is posted before any peer sends.
    boot.barrier();
  }

  size_t posted_recvs() const { return nrecv_; }
  uint64_t recvs_done() const { return recvs_done_; }
  // True (once) if a message with stop_bit arrived since the last call.
  bool take_stop() {
    const bool s = stop_seen_;
    stop_seen_ = false;
    return s;
  }

  // Sends len bytes from the send buffer to `rank` with 64-bit immediate
  // data (rank in the upper half, like LCI). Retries while the provider is
  // out of resources, progressing meanwhile.
  void send(int rank, size_t len, uint32_t header, double timeout_s) {
    const uint64_t data = rank_bits() | header;
    const fi_addr_t dest = addr(rank);
    if (len <= inject_size_) {
      ofi_bench::post_until_accepted([&] { return fi_injectdata(ep_, slab_, len, data, dest); },
                                     [&] { poll(); }, "fi_injectdata", timeout_s);
      return;
    }
    // The buffer is about to be reused: its previous send must be done.
    wait_sends_done(timeout_s);
    ofi_bench::post_until_accepted(
        [&] { return fi_senddata(ep_, slab_, len, desc_, data, dest, &send_ctx_); },
        [&] { poll(); }, "fi_senddata", timeout_s);
    ++sends_pending_;
  }

  void wait_sends_done(double timeout_s) {
    bench::spin_until([&] { return sends_pending_ == 0 || (poll(), sends_pending_ == 0); },
                      timeout_s, "a send completion");
  }

  // Progresses until `target` receives in total have completed.
  void wait_recvs(uint64_t target, double timeout_s) {
    bench::spin_until([&] { return recvs_done_ >= target || (poll(), recvs_done_ >= target); },
                      timeout_s, "a message from the peer");
  }

  // With idle backoff, empty polls pause 64, 256, 256 ... times before the
  // next read: on shm a receiver that polls without pause contends with the
  // sender for the provider's lock, so streaming is fastest with a backoff.
  void set_idle_backoff(bool on) {
    idle_backoff_ = on;
    idle_pauses_ = 0;
  }

  // Reads up to a batch of completions; re-posts each received buffer.
  void poll() {
    constexpr int batch = 16;
    fi_cq_data_entry entries[batch];
    const ssize_t n = read_cq(entries, batch);
    if (n == 0) {
      if (idle_backoff_) {
        for (unsigned i = 0; i < idle_pauses_; ++i) bench::cpu_pause();
        idle_pauses_ = idle_pauses_ ? std::min(idle_pauses_ * 4, 256u) : 64;
      }
      return;
    }
    idle_pauses_ = 0;
    for (ssize_t i = 0; i < n; ++i) {
      void* ctx = entries[i].op_context;
      if (ctx == &send_ctx_) {
        --sends_pending_;
      } else {
        ++recvs_done_;
        if (entries[i].data & stop_bit) stop_seen_ = true;
        post_recv(ctx, buf_size_, desc_);
      }
    }
  }

 private:
  char* recv_buffer(size_t i) { return slab_ + buf_size_ * (i + 1); }

  bool idle_backoff_ = false;
  unsigned idle_pauses_ = 0;
  void* desc_ = nullptr;
  char* slab_ = nullptr;
  size_t buf_size_;
  size_t nrecv_;
  size_t inject_size_;
  char send_ctx_ = 0;  // its address marks send completions
  uint64_t recvs_done_ = 0;
  long sends_pending_ = 0;
  bool stop_seen_ = false;
};

// A measurement's figure (rank 0) and how many timed iterations it took.
struct result {
  double value;
  long timed;
};

// Ping-pong of `size` bytes; value: one-way latency in microseconds.
// noinline: compare instructions collects inside this function only.
__attribute__((noinline)) result pingpong(rdm_endpoint& ep, int rank, size_t size, uint32_t header,
                const bench::options& opt) {
  const int peer = 1 - rank;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 64);
  uint64_t expect = ep.recvs_done();
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (rank == 0) {
      const bool last = loop.next_is_last(i);
      ep.send(peer, size, header | (last ? stop_bit : 0), opt.timeout_s);
      bench::uncounted_settle(g_settle, ++g_replies, opt.timeout_s);
      ep.wait_recvs(++expect, opt.timeout_s);
      if (last) break;
    } else {
      ep.wait_recvs(++expect, opt.timeout_s);
      const bool last = ep.take_stop();
      ep.send(peer, size, header, opt.timeout_s);
      g_settle.replied(++g_replies);
      if (last) break;
    }
  }
  loop.finish(i);
  ep.wait_sends_done(opt.timeout_s);
  g_boot->barrier();
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// Windows of W 8-byte messages from rank 0, one 8-byte ack per window from
// rank 1. value: millions of messages per second.
result message_rate(rdm_endpoint& ep, int rank, long windows, const bench::options& opt) {
  const int peer = 1 - rank;
  const int w = opt.window;
  bench::timed_loop loop(std::max<long>(1, opt.warmup / w), windows, opt.max_time_s, 4);
  uint64_t expect = ep.recvs_done();
  ep.set_idle_backoff(true);
  long k = 0;
  for (; k < loop.total(); ++k) {
    if (rank == 0) {
      const uint32_t flag = loop.next_is_last(k) ? stop_bit : 0;
      for (int j = 0; j < w; ++j) ep.send(peer, 8, static_cast<uint32_t>(j) | flag, opt.timeout_s);
      ep.wait_recvs(++expect, opt.timeout_s);
      if (flag) break;
    } else {
      expect += static_cast<uint64_t>(w);
      ep.wait_recvs(expect, opt.timeout_s);
      const bool last = ep.take_stop();
      ep.send(peer, 8, 0xffffu, opt.timeout_s);
      if (last) break;
    }
  }
  loop.finish(k);
  ep.set_idle_backoff(false);
  ep.wait_sends_done(opt.timeout_s);
  g_boot->barrier();
  return {w / loop.per_iteration(opt.median) / 1e6, loop.timed()};
}

// Thread-scaling message rate (--rate-threads): thread t owns endpoint t
// (its own fabric, domain, CQ) and talks to thread t of the peer, the raw
// counterpart of lci_msgrate --device per-thread. The protocol of
// message_rate() above per thread; rank 0's senders meet at a thread
// barrier after their warm-up windows and stop after --max-time (the last
// window carries stop_bit). Waits yield every 64 empty polls.
bench::thread_rate rate_sender(rdm_endpoint& ep, size_t size, long windows,
                               const bench::options& opt, bench::spin_barrier& bar) {
  const int w = opt.window;
  bench::thread_rate r;
  uint64_t expect = ep.recvs_done();
  ep.set_idle_backoff(g_rate_backoff);
  long warm = std::max<long>(1, opt.warmup / w);
  const double t_warm = bench::now_s();
  for (long k = 0;; ++k) {
    if (k < warm && k > 0 && bench::now_s() - t_warm > opt.max_time_s / 2) warm = k;
    if (k == warm) {
      bar.wait();
      r.start = bench::now_s();
    }
    const bool last =
        k >= warm && (k - warm + 1 >= windows || bench::now_s() - r.start > opt.max_time_s);
    const uint32_t flag = last ? stop_bit : 0;
    for (int j = 0; j < w; ++j) ep.send(1, size, static_cast<uint32_t>(j) | flag, opt.timeout_s);
    ++expect;
    bench::poll_until([&] { return ep.recvs_done() >= expect || (ep.poll(), ep.recvs_done() >= expect); },
                      opt.timeout_s, "an ack");
    if (last) {
      r.end = bench::now_s();
      r.messages = (k - warm + 1) * w;
      break;
    }
  }
  ep.set_idle_backoff(false);
  ep.wait_sends_done(opt.timeout_s);
  return r;
}

void rate_receiver(rdm_endpoint& ep, const bench::options& opt) {
  uint64_t expect = ep.recvs_done();
  ep.set_idle_backoff(g_rate_backoff);
  for (;;) {
    expect += static_cast<uint64_t>(opt.window);
    bench::poll_until([&] { return ep.recvs_done() >= expect || (ep.poll(), ep.recvs_done() >= expect); },
                      opt.timeout_s, "a window of messages");
    const bool last = ep.take_stop();
    ep.send(0, 8, 0xffffu, opt.timeout_s);
    if (last) break;
  }
  ep.set_idle_backoff(false);
  ep.wait_sends_done(opt.timeout_s);
}

int run_thread_rates(lci::bootstrap::bootstrap& boot, const std::vector<int>& thread_list,
                     const std::vector<size_t>& sizes, long windows, bool rma_caps,
                     const bench::options& opt) {
  const int rank = boot.rank();
  const int nlanes = *std::max_element(thread_list.begin(), thread_list.end());
  const size_t buf_size = std::max<size_t>(sizes.back(), 32);
  std::vector<std::unique_ptr<rdm_endpoint>> eps;
  for (int t = 0; t < nlanes; ++t)
    eps.push_back(std::make_unique<rdm_endpoint>(boot, buf_size,
                                                 std::max<size_t>(256, 4 * static_cast<size_t>(opt.window)),
                                                 rma_caps, "ofi_rate_" + std::to_string(t)));
  if (eps[0]->posted_recvs() < static_cast<size_t>(opt.window) + 1)
    fail("the provider's receive queue (%zu) is shorter than --window + 1", eps[0]->posted_recvs());
  bench::rate_printer out("ofi", opt.csv);
  if (rank == 0) {
    bench::printer cfg("ofi", opt.csv);
    std::string threads;
    for (int t : thread_list) threads += (threads.empty() ? "" : ",") + std::to_string(t);
    cfg.config("impl", "ofi (raw libfabric), one endpoint per thread");
    cfg.config("provider", eps[0]->provider() + ", inject size " +
                               std::to_string(eps[0]->inject_size()));
    cfg.config("threads", threads + " per rank, thread t of rank 0 -> thread t of rank 1");
    cfg.config("window", std::to_string(opt.window) + " messages in flight per thread, 1 ack each");
    cfg.config("time", "at most " + bench::fixed(opt.max_time_s, 2) +
                           " s timed per measurement (+ warm-up)");
    cfg.config("units", "million messages/s (total over threads, and total / threads)");
  }
  for (size_t size : sizes) {
    for (int T : thread_list) {
      std::vector<bench::thread_rate> rates(static_cast<size_t>(T));
      bench::spin_barrier bar(T);
      std::vector<std::thread> threads;
      for (int t = 0; t < T; ++t)
        threads.emplace_back([&, t] {
          rdm_endpoint& ep = *eps[static_cast<size_t>(t)];
          if (rank == 0)
            rates[static_cast<size_t>(t)] = rate_sender(ep, size, windows, opt, bar);
          else
            rate_receiver(ep, opt);
        });
      for (std::thread& th : threads) th.join();
      boot.barrier();
      if (rank == 0) out.row("msgrate", "per-thread+senders", size, T, bench::total_rate(rates));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ofi_bench::set_program("ofi_pingpong");
  bench::options opt;
  long rate_windows = 2000;
  size_t medium_size = 12224;
  bool rma_caps = false;
  std::vector<int> rate_threads;
  long thread_windows = 1000000;
  bool only_medium = false;
  std::vector<bench::extra_option> extra = {
      {"--only-medium", nullptr, "run only the medium ping-pong (e.g. under compare instructions)",
       [&](const char*) { return only_medium = true; }},
      {"--rate-threads", "LIST",
       "only the thread-scaling message rate, for these thread counts (e.g. 1,2,4); "
       "sizes --min-size..--max-size (default 8) in powers of 8",
       [&](const char* v) { return bench::parse_int_list(v, 1, 256, &rate_threads); }},
      {"--thread-windows", "N", "at most N timed windows per thread in --rate-threads (default 1000000)",
       [&](const char* v) { return (thread_windows = std::atol(v)) > 0; }},
      {"--windows", "N", "timed windows in the message-rate test (default 2000)",
       [&](const char* v) { return (rate_windows = std::atol(v)) > 0; }},
      {"--medium-size", "BYTES",
       "default --max-size: LCI_MEDIUM_SIZE of the library compared (default 12224)",
       [&](const char* v) { return (medium_size = std::strtoul(v, nullptr, 10)) > 0; }},
      {"--rma-caps", nullptr, "also ask for the RMA capabilities the LCI library asks for",
       [&](const char*) { return rma_caps = true; }},
  };
  bench::parse_options(
      argc, argv,
      "Raw libfabric reference: one-way ping-pong latency (short, medium) and\n"
      "8-byte message rate between two ranks, over the provider FI_PROVIDER names.",
      opt, extra);
  const bool max_size_given = opt.max_size != 0;
  if (opt.max_size == 0) opt.max_size = medium_size;
  if (opt.settle) g_settle.open();

  std::unique_ptr<lci::bootstrap::bootstrap> boot = lci::bootstrap::open();
  g_boot = boot.get();
  ofi_bench::set_bootstrap(g_boot);
  const int rank = boot->rank();
  if (boot->size() != 2)
    fail("needs exactly 2 ranks (run: lcrun -n 2 ofi_pingpong), got %d", boot->size());
  const int cpu = opt.pin ? bench::pin_to_cpu(rank) : -1;
  if (!rate_threads.empty())
    return run_thread_rates(*boot, rate_threads,
                            bench::size_ladder(std::min<size_t>(opt.min_size, max_size_given ? opt.max_size : 8),
                                               max_size_given ? opt.max_size : 8, 8),
                            thread_windows, rma_caps, opt);

  const size_t buf_size = std::max<size_t>(opt.max_size, 32);
  const size_t want_recvs = std::max<size_t>(1024, 2 * static_cast<size_t>(opt.window) + 2);
  rdm_endpoint ep(*boot, buf_size, want_recvs, rma_caps);
  if (ep.posted_recvs() < static_cast<size_t>(opt.window) + 1)
    fail("the provider's receive queue (%zu) is shorter than --window + 1", ep.posted_recvs());

  bench::printer out("ofi", opt.csv);
  if (rank == 0) {
    out.config("impl", "ofi (raw libfabric)");
    out.config("provider", ep.provider() + ", inject size " + std::to_string(ep.inject_size()) +
                               ", " + std::to_string(ep.posted_recvs()) + " receives posted" +
                               (rma_caps ? ", RMA caps" : ""));
    out.config("iterations", std::to_string(opt.iters) + " timed + " + std::to_string(opt.warmup) +
                                 " warm-up per size, at most " + bench::fixed(opt.max_time_s, 2) +
                                 " s timed (+ half that of warm-up)");
    out.config("statistic", opt.median ? "median over batches (64 round trips, 4 windows)"
                                       : "mean over all timed iterations");
    out.config("message rate", std::to_string(rate_windows) + " windows of " +
                                   std::to_string(opt.window) + " x 8 B, 1 ack per window");
    out.config("pinning", opt.pin ? "rank 0 on cpu " + std::to_string(cpu) : "off");
    out.config("units", "latency: one-way us (round trip / 2); rate: million messages/s");
  }

  auto report = [&](const char* test, size_t size, result r, long planned, const char* unit) {
    if (rank != 0) return;
    if (r.timed < planned) out.capped(test, size, r.timed, planned);
    out.row(test, size, r.value, unit);
  };
  if (!only_medium) report("short", 32, pingpong(ep, rank, 32, 0, opt), opt.iters, "us");
  for (size_t size : bench::size_ladder(opt.min_size, opt.max_size))
    report("medium", size, pingpong(ep, rank, size, 1, opt), opt.iters, "us");
  if (!only_medium)
    report("msgrate", 8, message_rate(ep, rank, rate_windows, opt), rate_windows, "Mmsg/s");
  return 0;
}

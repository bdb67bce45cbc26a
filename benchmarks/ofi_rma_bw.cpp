// ofi_rma_bw: the raw-libfabric reference for lci_bw: RDMA write bandwidth
// and latency of long transfers between two ranks.
//
// It opens the provider as the LCI library does (RDM endpoint with FI_MSG
// and FI_RMA, 64-bit immediate data, FI_THREAD_SAFE domain, manual progress
// driven by fi_cq_read), registers a source and a target buffer of the
// largest size once, exchanges the target buffer's address and key through
// the bootstrap, and measures, for sizes 64 KiB .. 64 MiB (powers of 4):
//   write_bw      rank 0 writes windows of W messages (fi_write of the whole
//                 size into rank 1's target buffer), waits for their W
//                 completions, then sends a small notification; rank 1
//                 answers each notification with a small ack. GB/s (10^9
//                 bytes/s) over the window, ack included;
//   write_ntf_bw  the same, but a notification follows each write as soon as
//                 its completion is read (what LCI_putl does for its remote
//                 completion); rank 1 acks after W of them;
//   writedata_bw  the same with fi_writedata: every write notifies rank 1
//                 itself (one target completion each, what LCI's long sends
//                 use for their last step), which acks after W of them;
//   write_lat     ping-pong: a write, its completion, then a small
//                 notification message (fi_injectdata) telling the peer the
//                 data is there; the peer answers the same way. One-way us;
//   writedata_lat ping-pong of fi_writedata: the write itself delivers
//                 immediate data to the peer's completion queue (what LCI's
//                 sendl rendezvous uses for its last step). One-way us.
// Writes ask for FI_DELIVERY_COMPLETE (--completion transmit: the
// provider's default), so their completion means the data is in place and a
// notification sent after it cannot overtake it (the provider does not order
// sends after writes). Every measurement checks the target buffer afterwards.
//
// Run with exactly two ranks: lcrun -n 2 ofi_rma_bw [--csv].
#include <rdma/fi_rma.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "ofi_common.hpp"

namespace {

lci::bootstrap::bootstrap* g_boot = nullptr;

// Bit of a message's immediate data set by rank 0 on the last iteration of
// a measurement (see bench::timed_loop).
constexpr uint64_t stop_bit = 1u << 31;

using ofi_bench::fail;

// The byte at offset i of rank r's source buffer.
inline unsigned char pattern(int rank, size_t i) {
  return static_cast<unsigned char>(i * 131 + (i >> 12) + static_cast<size_t>(rank) * 17);
}

// Samples (every 4093rd byte and the last) of the first `size` bytes of
// `buf` against rank `writer`'s pattern.
bool check_pattern(const unsigned char* buf, size_t size, int writer) {
  for (size_t i = 0; i < size; i += 4093)
    if (buf[i] != pattern(writer, i)) return false;
  return size == 0 || buf[size - 1] == pattern(writer, size - 1);
}

// Where a peer's target buffer is, as exchanged through the bootstrap.
struct remote_buffer {
  uint64_t address;  // virtual address, or 0 (offset) without FI_MR_VIRT_ADDR
  uint64_t key;
};

// One RDM endpoint (ofi_bench::rdm_base with the RMA capabilities), its
// two long buffers (source and target, registered once) and a few small
// control buffers. One thread posts and polls.
//
// Completion contexts: a write's is &write_ctx_, a posted receive's is its
// buffer; incoming writedata completions have FI_REMOTE_WRITE set.
class rma_endpoint : public ofi_bench::rdm_base {
 public:
  rma_endpoint(lci::bootstrap::bootstrap& boot, size_t buf_size, bool delivery_complete)
      : rdm_base(boot.size(), true), buf_size_(buf_size), delivery_(delivery_complete) {
    // Page-aligned buffers, touched so that no page fault lands in a timing.
    src_ = static_cast<unsigned char*>(allocate(buf_size_));
    dst_ = static_cast<unsigned char*>(allocate(buf_size_));
    ctrl_ = static_cast<unsigned char*>(allocate(ctrl_bytes));
    for (size_t i = 0; i < buf_size_; ++i) src_[i] = pattern(boot.rank(), i);
    const size_t bytes = (buf_size_ + 4095) / 4096 * 4096;
    const uint64_t all = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    src_mr_ = register_buffer(src_, bytes, all, 1);
    dst_mr_ = register_buffer(dst_, bytes, all, 2);
    ctrl_mr_ = register_buffer(ctrl_, ctrl_bytes, all, 3);

    // Target buffer and address exchange: fi_addr r is rank r.
    remote_buffer mine{virt_addr() ? reinterpret_cast<uint64_t>(dst_) : 0, fi_mr_key(dst_mr_)};
    boot.put("ofi_rma_bw.dst", ofi_bench::to_hex(&mine, sizeof(mine)));
    exchange_addresses(boot, "ofi_rma_bw.addr");
    remotes_.resize(static_cast<size_t>(boot.size()));
    for (int r = 0; r < boot.size(); ++r) {
      std::vector<unsigned char> b = ofi_bench::from_hex(boot.get(r, "ofi_rma_bw.dst"));
      if (b.size() != sizeof(remote_buffer)) fail("rank %d sent a malformed buffer key", r);
      std::memcpy(&remotes_[static_cast<size_t>(r)], b.data(), sizeof(remote_buffer));
    }

    for (size_t i = 0; i < nrecv; ++i) post_recv(recv_slot(i), slot, fi_mr_desc(ctrl_mr_));
    boot.barrier();  // every receive is posted before any peer sends
  }

  const unsigned char* target_buffer() const { return dst_; }
  uint64_t recvs_done() const { return recvs_done_; }
  uint64_t remote_writes_done() const { return remote_writes_done_; }
  long writes_pending() const { return writes_pending_; }
  // True (once) if a message or writedata with stop_bit arrived since the last call.
  bool take_stop() {
    const bool s = stop_seen_;
    stop_seen_ = false;
    return s;
  }

  // Writes the first `len` bytes of the source buffer into `rank`'s target
  // buffer; the completion is counted by wait_writes_done().
  void write(int rank, size_t len, double timeout_s) {
    const remote_buffer& rb = remotes_[static_cast<size_t>(rank)];
    iovec iov{src_, len};
    void* desc = fi_mr_desc(src_mr_);
    fi_rma_iov rma{rb.address, len, rb.key};
    fi_msg_rma msg{};
    msg.msg_iov = &iov;
    msg.desc = &desc;
    msg.iov_count = 1;
    msg.addr = addr(rank);
    msg.rma_iov = &rma;
    msg.rma_iov_count = 1;
    msg.context = &write_ctx_;
    const uint64_t flags = FI_COMPLETION | (delivery_ ? FI_DELIVERY_COMPLETE : 0);
    post([&] { return fi_writemsg(ep_, &msg, flags); }, "fi_writemsg", timeout_s);
    ++writes_pending_;
  }

  // A write that also delivers `header` (with this rank) to the peer's
  // completion queue.
  void writedata(int rank, size_t len, uint32_t header, double timeout_s) {
    const remote_buffer& rb = remotes_[static_cast<size_t>(rank)];
    post(
        [&] {
          return fi_writedata(ep_, src_, len, fi_mr_desc(src_mr_), rank_bits() | header, addr(rank),
                              rb.address, rb.key, &write_ctx_);
        },
        "fi_writedata", timeout_s);
    ++writes_pending_;
  }

  // A small message (8 bytes, injected) carrying `header` as immediate data.
  void notify(int rank, uint32_t header, double timeout_s) {
    post([&] { return fi_injectdata(ep_, ctrl_, 8, rank_bits() | header, addr(rank)); },
         "fi_injectdata", timeout_s);
  }

  void wait_writes_done(double timeout_s) {
    bench::spin_until([&] { return writes_pending_ == 0 || (poll(), writes_pending_ == 0); },
                      timeout_s, "a write completion");
  }
  void wait_recvs(uint64_t target, double timeout_s) {
    bench::spin_until([&] { return recvs_done_ >= target || (poll(), recvs_done_ >= target); },
                      timeout_s, "a message from the peer");
  }
  void wait_remote_writes(uint64_t target, double timeout_s) {
    bench::spin_until(
        [&] { return remote_writes_done_ >= target || (poll(), remote_writes_done_ >= target); },
        timeout_s, "a write from the peer");
  }

  void poll() {
    constexpr int batch = 16;
    fi_cq_data_entry entries[batch];
    const ssize_t n = read_cq(entries, batch);
    for (ssize_t i = 0; i < n; ++i) {
      const fi_cq_data_entry& e = entries[i];
      if (e.flags & FI_REMOTE_WRITE) {
        ++remote_writes_done_;
        if (e.data & stop_bit) stop_seen_ = true;
      } else if (e.op_context == &write_ctx_) {
        --writes_pending_;
      } else if (e.flags & FI_RECV) {
        ++recvs_done_;
        if (e.data & stop_bit) stop_seen_ = true;
        post_recv(e.op_context, slot, fi_mr_desc(ctrl_mr_));
      }
    }
  }

 private:
  static constexpr size_t slot = 64, nrecv = 64, ctrl_bytes = slot * (nrecv + 1);
  // Slot 0 is the source of notifications; 1 .. nrecv are receive buffers.
  unsigned char* recv_slot(size_t i) { return ctrl_ + slot * (i + 1); }

  // Posts until the provider accepts, progressing while it says FI_EAGAIN.
  template <typename Post>
  void post(Post&& op, const char* what, double timeout_s) {
    ofi_bench::post_until_accepted(op, [&] { poll(); }, what, timeout_s);
  }

  fid_mr *src_mr_ = nullptr, *dst_mr_ = nullptr, *ctrl_mr_ = nullptr;
  unsigned char *src_ = nullptr, *dst_ = nullptr, *ctrl_ = nullptr;
  size_t buf_size_;
  bool delivery_;
  std::vector<remote_buffer> remotes_;
  char write_ctx_ = 0;  // its address marks write completions
  uint64_t recvs_done_ = 0;
  uint64_t remote_writes_done_ = 0;
  long writes_pending_ = 0;
  bool stop_seen_ = false;
};

// A measurement's figure (rank 0) and how many timed iterations it took.
struct result {
  double value;
  long timed;
};

// Checks, after a measurement, that the peer's writes landed.
void verify(const rma_endpoint& ep, int rank, size_t size, const char* test) {
  if (!check_pattern(ep.target_buffer(), size, 1 - rank))
    fail("%s %zu: rank %d's target buffer does not hold the peer's data", test, size, rank);
}

// Ping-pong of a write, its completion and a notification; one-way us.
result write_latency(rma_endpoint& ep, int rank, size_t size, const bench::options& opt) {
  const int peer = 1 - rank;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 1);
  uint64_t expect = ep.recvs_done();
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (rank == 0) {
      const bool last = loop.next_is_last(i);
      ep.write(peer, size, opt.timeout_s);
      ep.wait_writes_done(opt.timeout_s);
      ep.notify(peer, last ? stop_bit : 0, opt.timeout_s);
      ep.wait_recvs(++expect, opt.timeout_s);
      if (last) break;
    } else {
      ep.wait_recvs(++expect, opt.timeout_s);
      const bool last = ep.take_stop();
      ep.write(peer, size, opt.timeout_s);
      ep.wait_writes_done(opt.timeout_s);
      ep.notify(peer, 0, opt.timeout_s);
      if (last) break;
    }
  }
  loop.finish(i);
  g_boot->barrier();
  verify(ep, rank, size, "write_lat");
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// Ping-pong of fi_writedata; one-way us.
result writedata_latency(rma_endpoint& ep, int rank, size_t size, const bench::options& opt) {
  const int peer = 1 - rank;
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 1);
  uint64_t expect = ep.remote_writes_done();
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (rank == 0) {
      const bool last = loop.next_is_last(i);
      ep.writedata(peer, size, last ? stop_bit : 0, opt.timeout_s);
      ep.wait_remote_writes(++expect, opt.timeout_s);
      ep.wait_writes_done(opt.timeout_s);  // long done: the reply came after it
      if (last) break;
    } else {
      ep.wait_remote_writes(++expect, opt.timeout_s);
      const bool last = ep.take_stop();
      ep.writedata(peer, size, 0, opt.timeout_s);
      ep.wait_writes_done(opt.timeout_s);
      if (last) break;
    }
  }
  loop.finish(i);
  g_boot->barrier();
  verify(ep, rank, size, "writedata_lat");
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

// How rank 1 learns that a bandwidth window has landed.
enum class window_notice {
  once,      // write_bw: one message after all W writes completed
  each,      // write_ntf_bw: one message after each write completed (LCI_putl's protocol)
  writedata  // writedata_bw: each write carries immediate data itself
};

// Windows of W writes from rank 0 and an ack from rank 1 per window, which
// rank 1 sends once the window's notices (see window_notice) arrived; the
// last window's notices carry stop_bit. GB/s.
result bandwidth(rma_endpoint& ep, int rank, size_t size, long windows, window_notice notice,
                 const bench::options& opt) {
  const int peer = 1 - rank;
  const int w = opt.window;
  const double t = opt.timeout_s;
  bench::timed_loop loop(std::max<long>(1, opt.warmup / 4), windows, opt.max_time_s, 1);
  uint64_t expect = ep.recvs_done();
  uint64_t expect_writes = ep.remote_writes_done();
  long k = 0;
  for (; k < loop.total(); ++k) {
    if (rank == 0) {
      const bool last = loop.next_is_last(k);
      const uint32_t flag = last ? stop_bit : 0;
      for (int j = 0; j < w; ++j) {
        if (notice == window_notice::writedata)
          ep.writedata(peer, size, flag, t);
        else
          ep.write(peer, size, t);
      }
      if (notice == window_notice::each) {
        // A notification as each write completes.
        int notified = 0;
        bench::spin_until(
            [&] {
              ep.poll();
              for (; notified < w - static_cast<int>(ep.writes_pending()); ++notified)
                ep.notify(peer, flag, t);
              return notified == w;
            },
            t, "the window's write completions");
      }
      ep.wait_writes_done(t);
      if (notice == window_notice::once) ep.notify(peer, flag, t);
      ep.wait_recvs(++expect, t);
      if (last) break;
    } else {
      if (notice == window_notice::writedata) {
        expect_writes += static_cast<uint64_t>(w);
        ep.wait_remote_writes(expect_writes, t);
      } else {
        expect += notice == window_notice::each ? static_cast<uint64_t>(w) : 1;
        ep.wait_recvs(expect, t);
      }
      const bool last = ep.take_stop();
      ep.notify(peer, 0, t);
      if (last) break;
    }
  }
  loop.finish(k);
  g_boot->barrier();
  if (rank == 1) verify(ep, rank, size, "a bandwidth test");
  const double bytes = static_cast<double>(size) * w;
  return {bytes / loop.per_iteration(opt.median) / 1e9, loop.timed()};
}

}  // namespace

int main(int argc, char** argv) {
  ofi_bench::set_program("ofi_rma_bw");
  bench::options opt;
  opt.iters = 1000;
  opt.warmup = 20;
  opt.min_size = 64 << 10;
  opt.max_size = 64 << 20;
  opt.window = 16;
  opt.max_time_s = 0.25;
  long windows = 100;
  bool delivery = true;
  std::vector<bench::extra_option> extra = {
      {"--windows", "N", "timed windows per size in the bandwidth test (default 100)",
       [&](const char* v) { return (windows = std::atol(v)) > 0; }},
      {"--completion", "KIND",
       "delivery (default: FI_DELIVERY_COMPLETE, as LCI's puts) or transmit (provider default)",
       [&](const char* v) {
         std::string s = v;
         if (s != "delivery" && s != "transmit") return false;
         delivery = s == "delivery";
         return true;
       }},
  };
  bench::parse_options(
      argc, argv,
      "Raw libfabric reference for lci_bw: RDMA write bandwidth (windows of W writes)\n"
      "and latency (write + notification, and fi_writedata) between two ranks, over the\n"
      "provider FI_PROVIDER names. Sizes: powers of 4 from --min-size to --max-size.",
      opt, extra);

  std::unique_ptr<lci::bootstrap::bootstrap> boot = lci::bootstrap::open();
  g_boot = boot.get();
  ofi_bench::set_bootstrap(g_boot);
  const int rank = boot->rank();
  if (boot->size() != 2)
    fail("needs exactly 2 ranks (run: lcrun -n 2 ofi_rma_bw), got %d", boot->size());
  const int cpu = opt.pin ? bench::pin_to_cpu(rank) : -1;

  rma_endpoint ep(*boot, std::max<size_t>(opt.max_size, 8), delivery);

  bench::printer out("ofi", opt.csv);
  if (rank == 0) {
    out.config("impl", "ofi (raw libfabric RMA)");
    out.config("provider", ep.provider() + ", writes with " +
                               (delivery ? "FI_DELIVERY_COMPLETE" : "default completion"));
    out.config("iterations", std::to_string(opt.iters) + " timed + " + std::to_string(opt.warmup) +
                                 " warm-up round trips per size, " + std::to_string(windows) +
                                 " windows of " + std::to_string(opt.window) +
                                 " for bandwidth; at most " + bench::fixed(opt.max_time_s, 2) +
                                 " s timed (+ half that of warm-up)");
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
  for (size_t size : bench::size_ladder(opt.min_size, opt.max_size, 4)) {
    report("write_bw", size, bandwidth(ep, rank, size, windows, window_notice::once, opt), windows,
           "GB/s");
    report("write_ntf_bw", size, bandwidth(ep, rank, size, windows, window_notice::each, opt),
           windows, "GB/s");
    report("writedata_bw", size, bandwidth(ep, rank, size, windows, window_notice::writedata, opt),
           windows, "GB/s");
    report("write_lat", size, write_latency(ep, rank, size, opt), opt.iters, "us");
    report("writedata_lat", size, writedata_latency(ep, rank, size, opt), opt.iters, "us");
  }
  boot->barrier();
  return 0;
}

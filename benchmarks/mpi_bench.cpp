// mpi_bench: the MPI reference for lci_pingpong and lci_msgrate.
//
//   medium   MPI_Send / MPI_Recv ping-pong per size (one-way us), the last
//            iteration marked in the first byte of the message;
//   msgrate  thread-scaling message rate (--rate-threads LIST, default 1):
//            MPI_THREAD_MULTIPLE, thread t of rank 0 and thread t of rank 1
//            share their own communicator (MPI_Comm_dup, made by the main
//            thread); the sender posts the ack's MPI_Irecv, sends a window
//            of W MPI_Isend and waits for all of them and the ack; the
//            receiver posts W MPI_Irecv, waits, and answers with one 8-byte
//            MPI_Send. Timing and stopping as in lci_msgrate: warm-up
//            windows, a thread barrier, timed windows until --max-time, the
//            last window marked in the first byte. Waits loop MPI_Testall
//            and yield every 64 empty tests (bench::poll_until), like the
//            LCI and raw programs.
//
// Built against MPICH (LCI_WITH_MPI); run with two ranks: mpiexec.hydra -n 2
// mpi_bench.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "mpi_bench: %s failed (%d)\n", what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

struct result {
  double value;
  long timed;
};

// Kept out of line: compare's instruction counts (callgrind) collect exactly
// this function, as they collect the raw and LCI programs' ping-pong loops.
[[gnu::noinline]] result pingpong(int rank, size_t size, char* sbuf, char* rbuf,
                                  const bench::options& opt) {
  const int peer = 1 - rank;
  const int n = static_cast<int>(size);
  bench::timed_loop loop(opt.warmup, opt.iters, opt.max_time_s, 64);
  long i = 0;
  for (; i < loop.total(); ++i) {
    if (rank == 0) {
      const bool last = loop.next_is_last(i);
      sbuf[0] = last ? 1 : 0;
      check(MPI_Send(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD), "MPI_Send");
      check(MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      if (last) break;
    } else {
      check(MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
      const bool last = rbuf[0] != 0;
      sbuf[0] = 0;
      check(MPI_Send(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD), "MPI_Send");
      if (last) break;
    }
  }
  loop.finish(i);
  MPI_Barrier(MPI_COMM_WORLD);
  return {loop.per_iteration(opt.median) * 1e6 / 2.0, loop.timed()};
}

void wait_all(std::vector<MPI_Request>& reqs, int n, double timeout_s) {
  bench::poll_until(
      [&] {
        int done = 0;
        check(MPI_Testall(n, reqs.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
        return done != 0;
      },
      timeout_s, "MPI requests");
}

struct lane {
  MPI_Comm comm;
  std::vector<char> sbuf, rbuf;
  std::vector<MPI_Request> reqs;
};

bench::thread_rate rate_sender(lane& l, size_t size, long windows, const bench::options& opt,
                               bench::spin_barrier& bar) {
  const int w = opt.window;
  bench::thread_rate r;
  long warm = std::max<long>(1, opt.warmup / w);
  const double t_warm = bench::now_s();
  char ack[8];
  for (long k = 0;; ++k) {
    if (k < warm && k > 0 && bench::now_s() - t_warm > opt.max_time_s / 2) warm = k;
    if (k == warm) {
      bar.wait();
      r.start = bench::now_s();
    }
    const bool last =
        k >= warm && (k - warm + 1 >= windows || bench::now_s() - r.start > opt.max_time_s);
    l.sbuf[0] = last ? 1 : 0;
    check(MPI_Irecv(ack, 8, MPI_BYTE, 1, 2, l.comm, &l.reqs[0]), "MPI_Irecv");
    for (int j = 0; j < w; ++j)
      check(MPI_Isend(l.sbuf.data(), static_cast<int>(size), MPI_BYTE, 1, 1, l.comm,
                      &l.reqs[static_cast<size_t>(j) + 1]),
            "MPI_Isend");
    wait_all(l.reqs, w + 1, opt.timeout_s);
    if (last) {
      r.end = bench::now_s();
      r.messages = (k - warm + 1) * w;
      break;
    }
  }
  return r;
}

void rate_receiver(lane& l, size_t size, const bench::options& opt) {
  const int w = opt.window;
  for (;;) {
    for (int j = 0; j < w; ++j)
      check(MPI_Irecv(l.rbuf.data() + static_cast<size_t>(j) * size, static_cast<int>(size),
                      MPI_BYTE, 0, 1, l.comm, &l.reqs[static_cast<size_t>(j)]),
            "MPI_Irecv");
    wait_all(l.reqs, w, opt.timeout_s);
    const bool last = l.rbuf[0] != 0;
    check(MPI_Send(l.sbuf.data(), 8, MPI_BYTE, 0, 2, l.comm), "MPI_Send");
    if (last) break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::options opt;
  std::vector<int> rate_threads;
  bool only_rate = false;
  long windows = 1000000;
  size_t rate_max = 8;
  std::vector<bench::extra_option> extra = {
      {"--rate-threads", "LIST",
       "only the thread-scaling message rate, for these thread counts (e.g. 1,2,4)",
       [&](const char* v) { return only_rate = bench::parse_int_list(v, 1, 256, &rate_threads); }},
      {"--thread-windows", "N", "at most N timed windows per thread (default 1000000)",
       [&](const char* v) { return (windows = std::atol(v)) > 0; }},
      {"--rate-max-size", "BYTES", "message-rate sizes 8 .. BYTES in powers of 8 (default 8)",
       [&](const char* v) { return (rate_max = std::strtoul(v, nullptr, 10)) >= 1; }},
      {"--medium-size", "BYTES", "default --max-size (default 12224, LCI_MEDIUM_SIZE)",
       [&](const char* v) { return (opt.max_size = std::strtoul(v, nullptr, 10)) > 0; }},
  };
  bench::parse_options(argc, argv,
                       "MPI reference: MPI_Send/MPI_Recv one-way ping-pong latency and the\n"
                       "thread-scaling message rate (MPI_THREAD_MULTIPLE, a communicator per\n"
                       "thread pair) between two ranks.",
                       opt, extra);
  if (opt.max_size == 0) opt.max_size = 12224;
  if (rate_threads.empty()) rate_threads = {1};

  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "mpi_bench: needs exactly 2 ranks, got %d\n", size);
    MPI_Finalize();
    return 1;
  }
  if (opt.pin) bench::pin_to_cpu(rank);
  const int max_t = *std::max_element(rate_threads.begin(), rate_threads.end());
  if (max_t > 1 && provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::fprintf(stderr, "mpi_bench: MPI_THREAD_MULTIPLE is not provided\n");
    MPI_Finalize();
    return 1;
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int vlen = 0;
  MPI_Get_library_version(version, &vlen);
  std::string ver(version, static_cast<size_t>(vlen));
  if (size_t nl = ver.find('\n'); nl != std::string::npos) ver.resize(nl);

  bench::printer out("mpi", opt.csv);
  if (rank == 0) {
    out.config("impl", "mpi (" + ver + ")");
    out.config("threading", provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "below MULTIPLE");
    out.config("units", "latency: one-way us (round trip / 2); rate: million messages/s");
  }
  if (!only_rate) {
    std::vector<char> sbuf(opt.max_size + 8, 0x5a), rbuf(opt.max_size + 8, 0);
    for (size_t s : bench::size_ladder(opt.min_size, opt.max_size)) {
      result r = pingpong(rank, s, sbuf.data(), rbuf.data(), opt);
      if (rank == 0) {
        if (r.timed < opt.iters) out.capped("medium", s, r.timed, opt.iters);
        out.row("medium", s, r.value, "us");
      }
    }
  }

  std::vector<lane> lanes(static_cast<size_t>(max_t));
  const size_t slot = std::max<size_t>(8, rate_max);
  for (lane& l : lanes) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &l.comm), "MPI_Comm_dup");
    l.sbuf.assign(slot, 0x5a);
    l.rbuf.assign(slot * static_cast<size_t>(opt.window), 0);
    l.reqs.resize(static_cast<size_t>(opt.window) + 1);
  }
  bench::rate_printer rates_out("mpi", opt.csv);
  for (size_t s : bench::size_ladder(std::min<size_t>(opt.min_size, rate_max), rate_max, 8)) {
    for (int T : rate_threads) {
      std::vector<bench::thread_rate> rates(static_cast<size_t>(T));
      bench::spin_barrier bar(T);
      std::vector<std::thread> threads;
      for (int t = 0; t < T; ++t)
        threads.emplace_back([&, t] {
          lane& l = lanes[static_cast<size_t>(t)];
          if (rank == 0)
            rates[static_cast<size_t>(t)] = rate_sender(l, s, windows, opt, bar);
          else
            rate_receiver(l, s, opt);
        });
      for (std::thread& th : threads) th.join();
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) rates_out.row("msgrate", "comm-per-thread", s, T, bench::total_rate(rates));
    }
  }
  for (lane& l : lanes) MPI_Comm_free(&l.comm);
  MPI_Finalize();
  return 0;
}

// scale_ring: what a job of many ranks costs, measured by the job itself.
// Every rank records when its process started (CLOCK_REALTIME, comparable
// between the processes of one host), initializes LCI, then exchanges
// `--bytes`-byte messages with its k nearest neighbours on each side of a
// ring (--k, default 1: the left and the right one; --all: every rank),
// checks every byte, rank and tag, and meets the others in LCI_barrier.
// --fan-in instead: every other rank sends rank 0 one message and rank 0
// receives them all (N - 1 senders to one rank at once).
// Then each rank sends rank 0 what it measured: the time from its start to
// the end of LCI_initialize, its open file descriptors (/proc/self/fd) and
// its peak resident memory (VmHWM), and rank 0 prints one line:
//
//   scale_ring: N ranks, k=K: all initialized X s after the first start
//   (slowest rank Y s); fds per rank min..max; peak RSS per rank min..max MB;
//   messages checked M
//
// Exit status 0 only if every message arrived intact. Run under lcrun (with
// LCRUN_STATS=1 lcrun adds its PMI counts), mpiexec or by hand.
//
// usage: scale_ring [--k K | --all | --fan-in] [--bytes B]
#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"

namespace {

double realtime_s() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
    --n;  // the directory's own descriptor
  }
  return n;
}

double peak_rss_mb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::atof(line + 6);
  std::fclose(f);
  return kb / 1024;
}

uint8_t pattern(int src, int dst, size_t i) {
  return static_cast<uint8_t>(src * 131 + dst * 7 + static_cast<int>(i) * 29 + 1);
}

struct report {  // what each rank sends rank 0
  double start, initialized, rss_mb;
  int fds, good, bad;
};

void progress_until(LCI_comp_t sync) {
  while (LCI_sync_test(sync, nullptr) != LCI_OK) LCI_progress(LCI_UR_DEVICE);
}

}  // namespace

int main(int argc, char** argv) {
  const double start = realtime_s();
  int k = 1;
  bool all = false, fan_in = false;
  size_t bytes = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--k" && i + 1 < argc)
      k = std::atoi(argv[++i]);
    else if (a == "--all")
      all = true;
    else if (a == "--fan-in")
      fan_in = true;
    else if (a == "--bytes" && i + 1 < argc)
      bytes = static_cast<size_t>(std::atol(argv[++i]));
    else {
      std::fprintf(stderr, "usage: scale_ring [--k K | --all | --fan-in] [--bytes B]\n");
      return 2;
    }
  }
  LCI_initialize();
  const double initialized = realtime_s();
  const int n = LCI_NUM_PROCESSES, me = LCI_RANK;
  if (bytes > static_cast<size_t>(LCI_MEDIUM_SIZE)) bytes = static_cast<size_t>(LCI_MEDIUM_SIZE);

  // The peers: k on each side (distinct, not this rank), or all; with
  // --fan-in rank 0 receives from every rank and the others send to it
  // (peers: whom this rank sends to; from: whom it receives from).
  std::vector<int> peers, from;
  if (fan_in) {
    if (me == 0)
      for (int r = 1; r < n; ++r) from.push_back(r);
    else
      peers.push_back(0);
  } else if (all) {
    for (int r = 0; r < n; ++r)
      if (r != me) peers.push_back(r);
  } else {
    for (int d = 1; d <= k && d < n; ++d) {
      peers.push_back((me + d) % n);
      peers.push_back((me - d + n) % n);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  }

  if (!fan_in) from = peers;
  const int np = static_cast<int>(peers.size()), nf = static_cast<int>(from.size());
  std::vector<std::vector<uint8_t>> in(from.size(), std::vector<uint8_t>(bytes));
  std::vector<uint8_t> out(bytes);
  LCI_comp_t sync = nullptr;
  if (nf > 0) LCI_sync_create(LCI_UR_DEVICE, nf, &sync);
  for (int i = 0; i < nf; ++i)
    LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{in[static_cast<size_t>(i)].data(), bytes},
              from[static_cast<size_t>(i)], 7, sync, nullptr);
  for (int i = 0; i < np; ++i) {
    const int dst = peers[static_cast<size_t>(i)];
    for (size_t b = 0; b < bytes; ++b) out[b] = pattern(me, dst, b);
    while (LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{out.data(), bytes}, dst, 7) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
  }
  std::vector<LCI_request_t> reqs(static_cast<size_t>(std::max(nf, 1)));
  int good = 0, bad = 0;
  if (nf > 0) {
    while (LCI_sync_test(sync, reqs.data()) != LCI_OK) LCI_progress(LCI_UR_DEVICE);
    for (int i = 0; i < nf; ++i) {
      const LCI_request_t& r = reqs[static_cast<size_t>(i)];
      const auto* p = static_cast<const uint8_t*>(r.data.mbuffer.address);
      bool ok = r.flag == LCI_OK && r.tag == 7 && r.data.mbuffer.length == bytes &&
                std::find(from.begin(), from.end(), r.rank) != from.end();
      for (size_t b = 0; ok && b < bytes; ++b) ok = p[b] == pattern(r.rank, me, b);
      if (!ok)
        std::fprintf(stderr, "scale_ring: rank %d: message from rank %d (tag %u, %zu bytes) "
                     "is wrong\n", me, r.rank, static_cast<unsigned>(r.tag),
                     r.data.mbuffer.length);
      good += ok;
      bad += !ok;
    }
    LCI_sync_free(&sync);
  }
  LCI_barrier();

  // Every rank's report to rank 0.
  const report mine{start, initialized, peak_rss_mb(), open_fds(), good, bad};
  int status = bad ? 1 : 0;
  if (me == 0) {
    std::vector<report> all_reports(static_cast<size_t>(n));
    all_reports[0] = mine;
    LCI_comp_t got;
    if (n > 1) {
      LCI_sync_create(LCI_UR_DEVICE, n - 1, &got);
      for (int r = 1; r < n; ++r)
        LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{&all_reports[static_cast<size_t>(r)],
                                                 sizeof(report)},
                  r, 8, got, nullptr);
      progress_until(got);
      LCI_sync_free(&got);
    }
    double first = all_reports[0].start, last = 0, slowest = 0, rss_lo = 1e30, rss_hi = 0;
    int fd_lo = 1 << 30, fd_hi = 0;
    long checked = 0, wrong = 0;
    for (const report& r : all_reports) {
      first = std::min(first, r.start);
      last = std::max(last, r.initialized);
      slowest = std::max(slowest, r.initialized - r.start);
      rss_lo = std::min(rss_lo, r.rss_mb);
      rss_hi = std::max(rss_hi, r.rss_mb);
      fd_lo = std::min(fd_lo, r.fds);
      fd_hi = std::max(fd_hi, r.fds);
      checked += r.good;
      wrong += r.bad;
    }
    std::printf("scale_ring: %d ranks, %s: all initialized %.3f s after the first start "
                "(slowest rank %.3f s); fds per rank %d..%d; peak RSS per rank %.1f..%.1f MB; "
                "messages checked %ld, wrong %ld\n",
                n, fan_in ? "fan-in" : all ? "all peers" : ("k=" + std::to_string(k)).c_str(),
                last - first,
                slowest, fd_lo, fd_hi, rss_lo, rss_hi, checked, wrong);
    if (wrong) status = 1;
  } else {
    while (LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{const_cast<report*>(&mine), sizeof(report)},
                     0, 8) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
  }
  LCI_barrier();
  LCI_finalize();
  return status;
}

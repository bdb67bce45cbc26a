// Traffic between ranks placed on two "hosts" (network namespaces joined by a
// veth pair, see run_netns.sh); also runs on one machine. Every byte and every
// request field is checked. Each rank prints, for every peer it sent payload
// to, one line
//   two_hosts: payload <from> -> <to>: <bytes>
// so the script can check that the byte counters of the links grew by at
// least the payload that crossed them.
//
// usage: two_hosts pingpong    [--iters N]                 (ranks 0 and 1)
//        two_hosts many_to_one [--count M] [--size S]      (ranks 1.. to rank 0)
//        two_hosts long        [--sizes A,B,...] [--reps R] (ranks 0 and 1, both ways)
//        two_hosts mixed       [--iters N] [--count M] [--size S] [--sizes A,B,...]
//                              [--reps R]                  (every rank with every other)
//        common: [--hosts H] [--watchdog SECONDS]
//   pingpong     N round trips of medium messages of 1 byte to LCI_MEDIUM_SIZE
//   many_to_one  every rank but 0 sends M medium messages of S bytes (at most
//                LCI_MEDIUM_SIZE) to rank 0, which receives them with recvmn
//                posted while they arrive
//   long         sendl/recvl of each size R times in each direction
//   mixed        every rank with every other: N rounds of medium messages of
//                1 byte to LCI_MEDIUM_SIZE to each peer, then many_to_one (M
//                of S bytes), then sendl/recvl of each size R times in both
//                directions of every pair
//   --hosts H    the job's layout: rank r runs on host r mod H (as lcrun
//                --hosts H places it). With it, every phase checks which
//                transport carries the device's traffic to each rank
//                (LCIX_transport_of: native shared memory for the ranks of
//                this host, this one included, unless LCI_SHM=0; the network
//                for the others) and, with LCIX_transport_counts read before
//                and after the phase, that a transport no rank is routed to
//                received nothing; mixed also checks that each transport
//                received at least the messages of the ranks routed to it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "lci.h"
#include "harness.hpp"

using namespace lci_test;

namespace {

std::map<int, uint64_t> g_payload_to;  // peer rank -> payload bytes sent to it
// peer rank -> messages received from it (a long message counts once: at
// least its announcement arrives as a message)
std::map<int, uint64_t> g_received_from;

void report_payload() {
  for (const auto& [to, bytes] : g_payload_to)
    printf("two_hosts: payload %d -> %d: %llu\n", LCI_RANK, to,
           static_cast<unsigned long long>(bytes));
  fflush(stdout);
}

// Posts a receive of a medium message into `buf` and returns its request.
LCI_request_t recv_medium(comp& cq, void* buf, size_t cap, int from, LCI_tag_t tag,
                          const char* what) {
  LCI_mbuffer_t b{buf, cap};
  OK(LCI_recvm(LCI_UR_ENDPOINT, b, from, tag, cq.handle(), buf));
  return cq.take1(what);
}

void send_medium(void* buf, size_t len, int to, LCI_tag_t tag) {
  LCI_mbuffer_t b{buf, len};
  RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, to, tag));
  g_payload_to[to] += len;
}

void check_medium(const LCI_request_t& r, int from, LCI_tag_t tag, size_t len, uint32_t seed,
                  const void* ctx) {
  EXPECT(r.flag == LCI_OK && r.rank == from && r.tag == tag && r.type == LCI_MEDIUM &&
             r.data.mbuffer.length == len && r.user_context == ctx,
         "request {flag %d, rank %d, tag %u, type %d, length %zu}, expected rank %d tag %u "
         "length %zu",
         static_cast<int>(r.flag), r.rank, r.tag, static_cast<int>(r.type), r.data.mbuffer.length,
         from, tag, len);
  if (r.data.mbuffer.length == len && r.data.mbuffer.address != nullptr) {
    size_t bad = mismatch(r.data.mbuffer.address, len, seed);
    EXPECT(bad == SIZE_MAX, "byte %zu of %zu differs", bad, len);
  }
}

void pingpong(long iters) {
  if (LCI_NUM_PROCESSES < 2) die("pingpong needs 2 ranks");
  if (LCI_RANK > 1) return;
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t sizes[] = {1, 64, 1000, 4096 < medium ? 4096 : medium, medium};
  std::vector<uint8_t> out(medium), in(medium);
  comp cq(LCI_COMPLETION_QUEUE);
  const int peer = 1 - LCI_RANK;
  for (long i = 0; i < iters; ++i) {
    phase("pingpong round trip %ld", i);
    const size_t len = sizes[static_cast<size_t>(i) % std::size(sizes)];
    const LCI_tag_t tag = static_cast<LCI_tag_t>(i % 1000);
    const uint32_t ping = seed_of(1, static_cast<uint32_t>(i)),
                   pong = seed_of(2, static_cast<uint32_t>(i));
    if (LCI_RANK == 0) {
      fill(out.data(), len, ping);
      send_medium(out.data(), len, peer, tag);
      memset(in.data(), 0, len);
      check_medium(recv_medium(cq, in.data(), medium, peer, tag, "pong"), peer, tag, len, pong,
                   in.data());
      ++g_received_from[peer];
    } else {
      memset(in.data(), 0, len);
      check_medium(recv_medium(cq, in.data(), medium, peer, tag, "ping"), peer, tag, len, ping,
                   in.data());
      ++g_received_from[peer];
      fill(out.data(), len, pong);
      send_medium(out.data(), len, peer, tag);
    }
  }
}

void many_to_one(long count, size_t size) {
  const int n = LCI_NUM_PROCESSES;
  if (n < 2) die("many_to_one needs at least 2 ranks");
  if (size > static_cast<size_t>(LCI_MEDIUM_SIZE) || size == 0)
    die("--size %zu is not 1 to LCI_MEDIUM_SIZE (%d)", size, LCI_MEDIUM_SIZE);
  if (count > LCI_MAX_TAG || count > static_cast<long>(k_ctrl_tag))
    die("--count %ld is above the tags available", count);
  comp cq(LCI_COMPLETION_QUEUE);
  LCI_barrier();
  if (LCI_RANK != 0) {
    std::vector<uint8_t> out(size);
    for (long i = 0; i < count; ++i) {
      phase("many_to_one send %ld", i);
      fill(out.data(), size, seed_of(static_cast<uint32_t>(LCI_RANK), static_cast<uint32_t>(i)));
      send_medium(out.data(), size, 0, static_cast<LCI_tag_t>(i));
    }
    return;
  }
  // Rank 0: receives are posted while the messages already stream in, so both
  // the "receive first" and the "message first" paths of matching run.
  const size_t total = static_cast<size_t>(count) * static_cast<size_t>(n - 1);
  std::vector<uint8_t> seen(total, 0);
  auto context = [&](int from, long i) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(from - 1) *
                                       static_cast<uintptr_t>(count) +
                                   static_cast<uintptr_t>(i) + 1);
  };
  size_t got = 0;
  auto drain = [&](const deadline& d, bool all) {
    LCI_request_t r;
    while (got < total) {
      if (LCI_queue_pop(cq.handle(), &r) != LCI_OK) {
        if (!all) return;
        progress(d, "many_to_one receives");
        continue;
      }
      ++got;
      const uintptr_t k = reinterpret_cast<uintptr_t>(r.user_context);
      if (k == 0 || k > total) {
        EXPECT(false, "user_context %p is none of ours", r.user_context);
        continue;
      }
      const int from = static_cast<int>((k - 1) / static_cast<uintptr_t>(count)) + 1;
      const long i = static_cast<long>((k - 1) % static_cast<uintptr_t>(count));
      EXPECT(!seen[k - 1], "message %ld from rank %d completed twice", i, from);
      seen[k - 1] = 1;
      ++g_received_from[from];
      check_medium(r, from, static_cast<LCI_tag_t>(i), size,
                   seed_of(static_cast<uint32_t>(from), static_cast<uint32_t>(i)),
                   context(from, i));
      if (r.flag == LCI_OK && r.data.mbuffer.address != nullptr)
        EXPECT(LCI_mbuffer_free(r.data.mbuffer) == LCI_OK, "mbuffer_free");
    }
  };
  deadline d(2 * k_wait_s);
  for (long i = 0; i < count; ++i) {
    phase("many_to_one post %ld", i);
    for (int from = 1; from < n; ++from)
      RETRY(LCI_recvmn(LCI_UR_ENDPOINT, from, static_cast<LCI_tag_t>(i), cq.handle(),
                       context(from, i)));
    if (i % 16 == 15) {
      LCI_progress(LCI_UR_DEVICE);
      drain(d, false);
    }
  }
  phase("many_to_one wait");
  drain(d, true);
  for (size_t k = 0; k < total; ++k)
    EXPECT(seen[k], "message %zu from rank %zu never arrived", k % static_cast<size_t>(count),
           k / static_cast<size_t>(count) + 1);
}

void long_exchange(const std::vector<size_t>& sizes, long reps) {
  if (LCI_NUM_PROCESSES < 2) die("long needs 2 ranks");
  if (LCI_RANK > 1) return;
  const int peer = 1 - LCI_RANK;
  comp cq(LCI_COMPLETION_QUEUE);
  uint32_t round = 0;
  for (size_t size : sizes) {
    for (long rep = 0; rep < reps; ++rep, ++round) {
      phase("long %zu bytes, repetition %ld", size, rep);
      // Alternate registered and on-the-fly (LCI_SEGMENT_ALL) buffers.
      const bool odd = round % 2 != 0;
      lbuf src(odd ? mem_kind::seg_all : mem_kind::registered, size);
      lbuf dst(odd ? mem_kind::registered : mem_kind::seg_all, size);
      const LCI_tag_t tag = round % 1000;
      const uint32_t mine = seed_of(3, static_cast<uint32_t>(LCI_RANK), round);
      const uint32_t theirs = seed_of(3, static_cast<uint32_t>(peer), round);
      fill(src.data(), size, mine);
      RETRY(LCI_recvl(LCI_UR_ENDPOINT, dst.view(), peer, tag, cq.handle(), &dst));
      RETRY(LCI_sendl(LCI_UR_ENDPOINT, src.view(), peer, tag, cq.handle(), &src));
      g_payload_to[peer] += size;
      bool sent = false, received = false;
      for (const LCI_request_t& r : cq.take(2, "long send and receive")) {
        if (r.user_context == &src) {
          sent = true;
          EXPECT(r.flag == LCI_OK && r.type == LCI_LONG && r.data.lbuffer.length == size,
                 "send request {flag %d, type %d, length %zu}", static_cast<int>(r.flag),
                 static_cast<int>(r.type), r.data.lbuffer.length);
        } else if (r.user_context == &dst) {
          received = true;
          ++g_received_from[peer];
          EXPECT(r.flag == LCI_OK && r.rank == peer && r.tag == tag && r.type == LCI_LONG &&
                     r.data.lbuffer.length == size && r.data.lbuffer.address == dst.data(),
                 "receive request {flag %d, rank %d, tag %u, type %d, length %zu}",
                 static_cast<int>(r.flag), r.rank, r.tag, static_cast<int>(r.type),
                 r.data.lbuffer.length);
        }
      }
      EXPECT(sent && received, "sent %d received %d", sent, received);
      size_t bad = mismatch(dst.data(), size, theirs);
      EXPECT(bad == SIZE_MAX, "byte %zu of %zu differs", bad, size);
    }
  }
}

// Every rank with every other, on whichever transport the pair shares:
// medium messages, many_to_one, then long messages both ways of every pair.
void mixed(long iters, long count, size_t size, const std::vector<size_t>& long_sizes,
           long reps) {
  const int n = LCI_NUM_PROCESSES, me = LCI_RANK;
  if (n < 2) die("mixed needs at least 2 ranks");
  if (iters > static_cast<long>(k_ctrl_tag) || iters > LCI_MAX_TAG)
    die("--iters %ld is above the tags available", iters);
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t sizes[] = {1, 64, 1000, 4096 < medium ? 4096 : medium, medium};
  {
    // Medium messages: in each round every rank posts a receive from every
    // peer, sends to every peer and waits for its receives.
    comp cq(LCI_COMPLETION_QUEUE);
    std::vector<std::vector<uint8_t>> in(static_cast<size_t>(n), std::vector<uint8_t>(medium));
    std::vector<uint8_t> out(medium);
    LCI_barrier();
    for (long i = 0; i < iters; ++i) {
      phase("mixed medium round %ld", i);
      const size_t len = sizes[static_cast<size_t>(i) % std::size(sizes)];
      const LCI_tag_t tag = static_cast<LCI_tag_t>(i);
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        uint8_t* buf = in[static_cast<size_t>(p)].data();
        memset(buf, 0, len);
        LCI_mbuffer_t b{buf, medium};
        RETRY(LCI_recvm(LCI_UR_ENDPOINT, b, p, tag, cq.handle(), buf));
      }
      for (int k = 1; k < n; ++k) {
        // Peers in a different order on every rank, so that no rank is
        // everyone's first target.
        const int p = (me + k) % n;
        fill(out.data(), len,
             seed_of(5, static_cast<uint32_t>(me), static_cast<uint32_t>(p),
                     static_cast<uint32_t>(i)));
        send_medium(out.data(), len, p, tag);
      }
      for (const LCI_request_t& r : cq.take(static_cast<size_t>(n - 1), "mixed medium receives")) {
        int from = -1;
        for (int p = 0; p < n; ++p)
          if (p != me && r.user_context == in[static_cast<size_t>(p)].data()) from = p;
        if (from < 0) {
          EXPECT(false, "user_context %p is none of ours", r.user_context);
          continue;
        }
        check_medium(r, from, tag, len,
                     seed_of(5, static_cast<uint32_t>(from), static_cast<uint32_t>(me),
                             static_cast<uint32_t>(i)),
                     in[static_cast<size_t>(from)].data());
        ++g_received_from[from];
      }
    }
  }
  // Every rank has received all of the above before anyone passes the
  // barrier in many_to_one, so its tags cannot meet a late medium message.
  many_to_one(count, size);
  // Long messages: in step d every rank sends to rank me+d and receives from
  // rank me-d (mod n), so every ordered pair meets once per size and repetition.
  LCI_barrier();
  comp cq(LCI_COMPLETION_QUEUE);
  uint32_t round = 0;
  for (size_t len : long_sizes) {
    for (long rep = 0; rep < reps; ++rep) {
      for (int d = 1; d < n; ++d, ++round) {
        const int to = (me + d) % n, from = (me - d + n) % n;
        phase("mixed long %zu bytes, repetition %ld, to %d, from %d", len, rep, to, from);
        const bool odd = round % 2 != 0;
        lbuf src(odd ? mem_kind::seg_all : mem_kind::registered, len);
        lbuf dst(odd ? mem_kind::registered : mem_kind::seg_all, len);
        const LCI_tag_t tag = round % 1000;
        fill(src.data(), len, seed_of(6, static_cast<uint32_t>(me), static_cast<uint32_t>(to), round));
        RETRY(LCI_recvl(LCI_UR_ENDPOINT, dst.view(), from, tag, cq.handle(), &dst));
        RETRY(LCI_sendl(LCI_UR_ENDPOINT, src.view(), to, tag, cq.handle(), &src));
        g_payload_to[to] += len;
        bool sent = false, received = false;
        for (const LCI_request_t& r : cq.take(2, "mixed long send and receive")) {
          if (r.user_context == &src) {
            sent = true;
            EXPECT(r.flag == LCI_OK && r.type == LCI_LONG && r.data.lbuffer.length == len,
                   "send request {flag %d, type %d, length %zu}", static_cast<int>(r.flag),
                   static_cast<int>(r.type), r.data.lbuffer.length);
          } else if (r.user_context == &dst) {
            received = true;
            ++g_received_from[from];
            EXPECT(r.flag == LCI_OK && r.rank == from && r.tag == tag && r.type == LCI_LONG &&
                       r.data.lbuffer.length == len && r.data.lbuffer.address == dst.data(),
                   "receive request {flag %d, rank %d, tag %u, type %d, length %zu}",
                   static_cast<int>(r.flag), r.rank, r.tag, static_cast<int>(r.type),
                   r.data.lbuffer.length);
          } else {
            EXPECT(false, "user_context %p is none of ours", r.user_context);
          }
        }
        EXPECT(sent && received, "sent %d received %d", sent, received);
        size_t bad = mismatch(dst.data(), len,
                              seed_of(6, static_cast<uint32_t>(from), static_cast<uint32_t>(me), round));
        EXPECT(bad == SIZE_MAX, "byte %zu of %zu from rank %d differs", bad, len, from);
      }
    }
  }
}

// The transports of LCI_UR_DEVICE as the job's layout predicts them (rank r
// on host r mod hosts), and its message counters around one phase.
struct transports {
  int hosts = 0;  // 0: no layout given, nothing checked
  bool native_on = true;
  LCIX_transport_counts_t before{};

  LCIX_transport_t expected(int rank) const {
    return native_on && rank % hosts == LCI_RANK % hosts ? LCIX_TRANSPORT_NATIVE
                                                         : LCIX_TRANSPORT_NETWORK;
  }

  void start() {
    if (!hosts) return;
    phase("transport routes");
    const int n = LCI_NUM_PROCESSES;
    for (int r = 0; r < n; ++r) {
      const LCIX_transport_t t = LCIX_transport_of(LCI_UR_DEVICE, r);
      EXPECT(t == expected(r), "rank %d (host %d, this rank on host %d) goes through %s, expected %s",
             r, r % hosts, LCI_RANK % hosts, name(t), name(expected(r)));
    }
    EXPECT(LCIX_transport_of(LCI_UR_DEVICE, -1) == LCIX_TRANSPORT_NETWORK, "rank -1");
    EXPECT(LCIX_transport_of(LCI_UR_DEVICE, n) == LCIX_TRANSPORT_NETWORK, "rank %d", n);
    OK(LCIX_transport_counts(LCI_UR_DEVICE, &before));
    // No rank sends the phase's messages before every rank has read its
    // counters (or this one would have counted an early message already).
    LCI_barrier();
  }

  // Each transport received at least the messages of the ranks routed to it
  // (more: protocol and control messages), and one no rank is routed to
  // received none.
  void finish() {
    if (!hosts) return;
    phase("transport counters");
    LCIX_transport_counts_t after{};
    OK(LCIX_transport_counts(LCI_UR_DEVICE, &after));
    EXPECT(after.native_received >= before.native_received &&
               after.network_received >= before.network_received,
           "counters went down: native %llu -> %llu, network %llu -> %llu",
           static_cast<unsigned long long>(before.native_received),
           static_cast<unsigned long long>(after.native_received),
           static_cast<unsigned long long>(before.network_received),
           static_cast<unsigned long long>(after.network_received));
    const uint64_t native = after.native_received - before.native_received;
    const uint64_t network = after.network_received - before.network_received;
    uint64_t want_native = 0, want_network = 0;
    int native_ranks = 0, network_ranks = 0;
    for (int r = 0; r < LCI_NUM_PROCESSES; ++r) {
      const auto it = g_received_from.find(r);
      const uint64_t got = it == g_received_from.end() ? 0 : it->second;
      if (expected(r) == LCIX_TRANSPORT_NATIVE) {
        want_native += got;
        ++native_ranks;
      } else {
        want_network += got;
        ++network_ranks;
      }
    }
    printf("two_hosts: rank %d received %llu messages from ranks expected on native shared "
           "memory, %llu from ranks expected on the network; native_received +%llu, "
           "network_received +%llu\n",
           LCI_RANK, static_cast<unsigned long long>(want_native),
           static_cast<unsigned long long>(want_network),
           static_cast<unsigned long long>(native),
           static_cast<unsigned long long>(network));
    fflush(stdout);
    EXPECT(native >= want_native, "native_received grew by %llu, but %llu messages came from "
           "ranks expected on native shared memory",
           static_cast<unsigned long long>(native), static_cast<unsigned long long>(want_native));
    EXPECT(network >= want_network, "network_received grew by %llu, but %llu messages came from "
           "ranks expected on the network",
           static_cast<unsigned long long>(network),
           static_cast<unsigned long long>(want_network));
    EXPECT(native_ranks > 0 || native == 0,
           "no rank is routed through native shared memory, yet it received %llu messages",
           static_cast<unsigned long long>(native));
    EXPECT(network_ranks > 0 || network == 0,
           "no rank is routed through the network, yet it received %llu messages",
           static_cast<unsigned long long>(network));
  }

  static const char* name(LCIX_transport_t t) {
    return t == LCIX_TRANSPORT_NATIVE ? "native" : t == LCIX_TRANSPORT_NETWORK ? "network" : "?";
  }
};

[[noreturn]] void usage_error(const char* what) {
  fprintf(stderr,
          "two_hosts: %s\nusage: two_hosts pingpong|many_to_one|long|mixed [--iters N] "
          "[--count M] [--size S] [--sizes A,B,...] [--reps R] [--hosts H] "
          "[--watchdog SECONDS]\n",
          what);
  exit(2);
}

long parse_long(const char* text, const char* name) {
  char* end = nullptr;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1)
    usage_error((std::string(name) + " needs a positive number").c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage_error("no mode");
  const std::string mode = argv[1];
  long iters = 2000, count = 5000, reps = 2, size = 4096;
  double watchdog = 240;
  transports routes;
  std::vector<size_t> sizes = {1 << 20, 16 << 20};
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--iters")
      iters = parse_long(v, "--iters");
    else if (a == "--count")
      count = parse_long(v, "--count");
    else if (a == "--size")
      size = parse_long(v, "--size");
    else if (a == "--reps")
      reps = parse_long(v, "--reps");
    else if (a == "--hosts")
      routes.hosts = static_cast<int>(parse_long(v, "--hosts"));
    else if (a == "--watchdog")
      watchdog = static_cast<double>(parse_long(v, "--watchdog"));
    else if (a == "--sizes") {
      sizes.clear();
      std::string list = v;
      for (size_t pos = 0; pos <= list.size();) {
        size_t comma = list.find(',', pos);
        if (comma == std::string::npos) comma = list.size();
        sizes.push_back(
            static_cast<size_t>(parse_long(list.substr(pos, comma - pos).c_str(), "--sizes")));
        pos = comma + 1;
      }
    } else {
      usage_error(("unknown option " + a).c_str());
    }
  }
  if (mode != "pingpong" && mode != "many_to_one" && mode != "long" && mode != "mixed")
    usage_error(("unknown mode " + mode).c_str());
  if (mode == "mixed" && !routes.hosts) usage_error("mixed needs --hosts");
  // Whether the job runs with the native transport (LCI_SHM, 1 by default).
  const char* shm = routes.hosts ? getenv("LCI_SHM") : nullptr;
  if (shm != nullptr) {
    if (strcmp(shm, "0") != 0 && strcmp(shm, "1") != 0)
      usage_error("LCI_SHM must be 0 or 1 (or unset) for --hosts to predict the transports");
    routes.native_on = strcmp(shm, "1") == 0;
  }

  harness_init(watchdog);
  routes.start();
  if (mode == "pingpong")
    pingpong(iters);
  else if (mode == "many_to_one")
    many_to_one(count, static_cast<size_t>(size));
  else if (mode == "long")
    long_exchange(sizes, reps);
  else
    mixed(iters, count, static_cast<size_t>(size), sizes, reps);
  routes.finish();
  report_payload();
  return harness_finish(("two_hosts " + mode).c_str());
}

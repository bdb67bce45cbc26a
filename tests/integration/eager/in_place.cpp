// Messages read in place on the native transport (LCI_SHM_IN_PLACE): a short
// or medium message whose receive already waits is copied from its ring
// cell straight into the receive; every other arrival takes a packet. Two
// ranks on one host, LCI_TEST_HOOKS=1 (LCIT_native_received counts the
// in-place deliveries). Each rank in turn receives while the other sends,
// for each completion type (queue, synchronizer, handler):
//   - recvm and recvs waiting, every size class of the inline copy (0 to
//     17 bytes, and up to LCI_MEDIUM_SIZE): delivered in place unless
//     LCI_SHM_IN_PLACE=0 or the completion is a handler;
//   - recvmn waiting: never in place (the caller gets a packet);
//   - messages sent before their receives were posted: through packets.
// Always: the bytes, rank, tag, length and user context of every request.
// The receiver reads the counters, then lets the sender start (a short
// message), so nothing else reaches it between its two readings.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness.hpp"
#include "lci.h"
#include "test_hooks.h"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_go = 900;
const size_t k_sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64, 1000};

struct counts {
  uint64_t total = 0, in_place = 0;
};
counts read_counts() {
  counts c;
  OK(LCIT_native_received(LCI_UR_DEVICE, &c.total, &c.in_place));
  return c;
}

std::vector<size_t> sizes() {
  std::vector<size_t> v(std::begin(k_sizes), std::end(k_sizes));
  v.push_back(static_cast<size_t>(LCI_MEDIUM_SIZE));
  return v;
}

enum class kind { recvm, recvs, recvmn };
const char* kind_name(kind k) {
  return k == kind::recvm ? "recvm" : k == kind::recvs ? "recvs" : "recvmn";
}

// The short "go" the receiver sends once it has read its counters.
void send_go(int to) {
  LCI_short_t s{};
  RETRY(LCI_sends(LCI_UR_ENDPOINT, s, to, k_go));
}
void wait_go(int from) {
  comp go(LCI_COMPLETION_QUEUE);
  OK(LCI_recvs(LCI_UR_ENDPOINT, from, k_go, go.handle(), nullptr));
  go.take1("the receiver's go");
}

void sync_ranks() {
  const char x = 0;
  allgather(&x, 1);
}

uint32_t seed(int src, kind k, size_t i, int round) {
  return seed_of(static_cast<uint32_t>(src), static_cast<uint32_t>(k), static_cast<uint32_t>(i),
                 static_cast<uint32_t>(round));
}

void send_all(endpoint_under_test& e, int to, kind k, int round) {
  const std::vector<size_t> sz = sizes();
  for (size_t i = 0; i < sz.size(); ++i) {
    const LCI_tag_t tag = static_cast<LCI_tag_t>(100 + i);
    if (k == kind::recvs) {
      LCI_short_t s;
      fill(&s, sizeof(s), seed(LCI_RANK, k, i, round));
      RETRY(LCI_sends(e.ep, s, to, tag));
    } else {
      std::vector<char> buf(sz[i] ? sz[i] : 1);
      fill(buf.data(), sz[i], seed(LCI_RANK, k, i, round));
      LCI_mbuffer_t b{buf.data(), sz[i]};
      RETRY(LCI_sendm(e.ep, b, to, tag));
    }
  }
}

// Posts the receives of one round; `bufs` holds recvm's buffers.
void post_all(endpoint_under_test& e, comp& c, int from, kind k,
              std::vector<std::vector<char>>& bufs) {
  const std::vector<size_t> sz = sizes();
  bufs.assign(sz.size(), {});
  for (size_t i = 0; i < sz.size(); ++i) {
    const LCI_tag_t tag = static_cast<LCI_tag_t>(100 + i);
    void* ctx = reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + i));
    switch (k) {
      case kind::recvs:
        OK(LCI_recvs(e.ep, from, tag, c.handle(), ctx));
        break;
      case kind::recvm: {
        bufs[i].assign(sz[i] + 16, static_cast<char>(k_sentinel));
        LCI_mbuffer_t b{bufs[i].data(), sz[i]};
        OK(LCI_recvm(e.ep, b, from, tag, c.handle(), ctx));
        break;
      }
      case kind::recvmn:
        OK(LCI_recvmn(e.ep, from, tag, c.handle(), ctx));
        break;
    }
  }
}

// Checks the completions of one round (any order) and frees recvmn's packets.
void check_all(endpoint_under_test& e, comp& c, int from, kind k, int round,
               std::vector<std::vector<char>>& bufs) {
  const std::vector<size_t> sz = sizes();
  std::vector<LCI_request_t> rs = c.take(sz.size(), "the round's messages");
  std::vector<int> seen(sz.size(), 0);
  for (const LCI_request_t& r : rs) {
    const size_t i = static_cast<size_t>(reinterpret_cast<uintptr_t>(r.user_context)) - 0x1000;
    EXPECT(i < sz.size(), "%s %s: a request with user context %p", e.name, kind_name(k),
           r.user_context);
    if (i >= sz.size()) continue;
    ++seen[i];
    EXPECT(r.flag == LCI_OK && r.rank == from && r.tag == 100 + i,
           "%s %s size %zu: flag %d rank %d tag %u", e.name, kind_name(k), sz[i],
           static_cast<int>(r.flag), r.rank, r.tag);
    const uint32_t s = seed(from, k, i, round);
    if (k == kind::recvs) {
      EXPECT(r.type == LCI_IMMEDIATE, "%s recvs: type %d", e.name, static_cast<int>(r.type));
      EXPECT(mismatch(&r.data.immediate, sizeof(LCI_short_t), s) == SIZE_MAX,
             "%s recvs %zu: wrong bytes", e.name, i);
      continue;
    }
    EXPECT(r.type == LCI_MEDIUM && r.data.mbuffer.length == sz[i],
           "%s %s size %zu: type %d length %zu", e.name, kind_name(k), sz[i],
           static_cast<int>(r.type), r.data.mbuffer.length);
    EXPECT(mismatch(r.data.mbuffer.address, sz[i], s) == SIZE_MAX,
           "%s %s size %zu: wrong bytes", e.name, kind_name(k), sz[i]);
    if (k == kind::recvm) {
      EXPECT(r.data.mbuffer.address == bufs[i].data(), "%s recvm: not the posted buffer", e.name);
      EXPECT(not_byte(bufs[i].data(), sz[i], sz[i] + 16, k_sentinel) == SIZE_MAX,
             "%s recvm size %zu: wrote past the message", e.name, sz[i]);
    } else {
      OK(LCI_mbuffer_free(r.data.mbuffer));
    }
  }
  for (size_t i = 0; i < sz.size(); ++i)
    EXPECT(seen[i] == 1, "%s %s size %zu: completed %d times", e.name, kind_name(k), sz[i],
           seen[i]);
}

}  // namespace

int main() {
  harness_init(240);
  EXPECT(LCI_NUM_PROCESSES == 2, "run on 2 ranks (got %d)", LCI_NUM_PROCESSES);
  const int peer = 1 - LCI_RANK;
  const char* env = getenv("LCI_SHM_IN_PLACE");
  const bool enabled = env == nullptr || strcmp(env, "0") != 0;
  std::vector<endpoint_under_test> eps = endpoints_under_test();
  const size_t n = sizes().size();
  int round = 0;
  for (endpoint_under_test& e : eps) {
    comp c(e.type, e.type == LCI_COMPLETION_SYNC ? static_cast<int>(n) : 1);
    for (kind k : {kind::recvm, kind::recvs, kind::recvmn}) {
      for (int receiver = 0; receiver < 2; ++receiver, ++round) {
        // Receives posted first, then the counters, then the go.
        std::vector<std::vector<char>> bufs;
        if (LCI_RANK == receiver) {
          post_all(e, c, peer, k, bufs);
          const counts before = read_counts();
          send_go(peer);
          check_all(e, c, peer, k, round, bufs);
          const counts after = read_counts();
          const uint64_t expected =
              enabled && k != kind::recvmn && e.type != LCI_COMPLETION_HANDLER ? n : 0;
          EXPECT(after.in_place - before.in_place == expected,
                 "%s %s: %llu of %zu messages delivered in place, expected %llu", e.name,
                 kind_name(k), static_cast<unsigned long long>(after.in_place - before.in_place),
                 n, static_cast<unsigned long long>(expected));
          EXPECT(after.total - before.total >= n, "%s %s: %llu messages counted, sent %zu",
                 e.name, kind_name(k),
                 static_cast<unsigned long long>(after.total - before.total), n);
        } else {
          wait_go(peer);
          send_all(e, peer, k, round);
        }
        sync_ranks();
      }
      // Sent before the receives exist: they wait in the matching table
      // (the barrier's progress polls them in).
      ++round;
      send_all(e, peer, k, round);
      LCI_barrier();
      std::vector<std::vector<char>> bufs;
      post_all(e, c, peer, k, bufs);
      check_all(e, c, peer, k, round, bufs);
      sync_ranks();
    }
  }
  return harness_finish(enabled ? "in_place" : "in_place (LCI_SHM_IN_PLACE=0)");
}

// Exact-rank receives and their matching order (lci/core/rank_fifo.hpp: a
// short list per source rank, used while the matching table holds nothing
// from that rank; the table otherwise). Two ranks; each in turn receives
// while the other sends, for each completion type (queue, synchronizer,
// handler: a handler's receive is completed through a packet, the others
// in place on the native transport):
//   - same tag: 10 receives (more than a list holds) with one tag, then 10
//     messages with that tag: receive i gets message i;
//   - mixed tags: receives with tags 5 6 7 5 8 6, messages sent as
//     7 6 5 8 5 6: each receive gets the message of its tag in posting order
//     (a message takes an entry from the middle of a list);
//   - unexpected first: two messages arrive before any receive (they wait
//     in the table), then receives for their tag and another are posted
//     (the table's path while it holds them), then more messages.
// Always: the bytes, rank, tag, length, buffer and user context; every
// message received exactly once. With --ordered (the native transport,
// whose ring keeps one sender's messages in order) also the order: the k-th
// receive with a tag gets the k-th message with that tag. (The API leaves
// the order of two messages with the same key open; libfabric's providers
// may deliver them in either order.)
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <functional>
#include <set>
#include <vector>

#include "harness.hpp"
#include "lci.h"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_go = 900, k_sent = 901;
constexpr size_t k_len = 40;

uint32_t seed(LCI_tag_t tag, int occurrence, int round) {
  return seed_of(tag, static_cast<uint32_t>(occurrence), static_cast<uint32_t>(round), 77);
}

// A message: which one it is (tag, occurrence of its tag, round) in its
// first 12 bytes, then the pattern of that message (two messages' patterns
// alone may coincide: pat() keeps 8 bits of the difference of two seeds).
struct msg_id {
  uint32_t tag, occurrence, round;
};
void fill_msg(char* b, LCI_tag_t tag, int occurrence, int round) {
  const msg_id id{static_cast<uint32_t>(tag), static_cast<uint32_t>(occurrence),
                  static_cast<uint32_t>(round)};
  memcpy(b, &id, sizeof id);
  fill(b + sizeof id, k_len - sizeof id, seed(tag, occurrence, round));
}
// The occurrence that b holds, or -1 if b is not an intact message of
// `tag` in `round`.
int occurrence_of(const char* b, LCI_tag_t tag, int round) {
  msg_id id;
  memcpy(&id, b, sizeof id);
  if (id.tag != tag || id.round != static_cast<uint32_t>(round) || id.occurrence > 64) return -1;
  const int o = static_cast<int>(id.occurrence);
  return mismatch(b + sizeof id, k_len - sizeof id, seed(tag, o, round)) == SIZE_MAX ? o : -1;
}

void send_short(int to, LCI_tag_t tag) {
  LCI_short_t s{};
  RETRY(LCI_sends(LCI_UR_ENDPOINT, s, to, tag));
}
void recv_short(int from, LCI_tag_t tag, const char* what) {
  comp c(LCI_COMPLETION_QUEUE);
  OK(LCI_recvs(LCI_UR_ENDPOINT, from, tag, c.handle(), nullptr));
  c.take1(what);
}

// The receiver's side of one case: receives with `tags` (in this order)
// into buffers of their own, user context i + 1; `before` is called after
// they are posted (it lets the sender start). Each receive i, the k-th with
// its tag, must get the k-th message with that tag (fill_msg).
bool g_ordered = false;

void receive_all(endpoint_under_test& e, int from, const std::vector<LCI_tag_t>& tags, int round,
                 const std::function<void()>& before) {
  const size_t n = tags.size();
  comp c(e.type, e.type == LCI_COMPLETION_SYNC ? static_cast<int>(n) : 1);
  std::vector<std::vector<char>> bufs(n, std::vector<char>(k_len, 0));
  for (size_t i = 0; i < n; ++i)
    RETRY(LCI_recvm(e.ep, LCI_mbuffer_t{bufs[i].data(), k_len}, from, tags[i], c.handle(),
                    reinterpret_cast<void*>(i + 1)));
  before();
  const std::vector<LCI_request_t> got = c.take(n, "the receives");
  std::vector<bool> seen(n, false);
  std::set<uint64_t> taken;  // (tag, occurrence) of the messages received
  for (const LCI_request_t& r : got) {
    const size_t i = reinterpret_cast<uintptr_t>(r.user_context) - 1;
    EXPECT(i < n, "a request with user context %p", r.user_context);
    if (i >= n) continue;
    EXPECT(!seen[i], "receive %zu completed twice", i);
    seen[i] = true;
    int k = 0;  // the k-th receive of its tag
    for (size_t j = 0; j < i; ++j) k += tags[j] == tags[i];
    const int o = occurrence_of(bufs[i].data(), tags[i], round);
    EXPECT(o >= 0, "%s: receive %zu (tag %u) holds no intact message of its tag", e.name, i,
           static_cast<unsigned>(tags[i]));
    if (o >= 0)
      EXPECT(taken.insert(static_cast<uint64_t>(tags[i]) << 32 | static_cast<uint32_t>(o)).second,
             "%s: message #%d of tag %u received twice", e.name, o,
             static_cast<unsigned>(tags[i]));
    if (g_ordered)
      EXPECT(o == k, "%s: receive %zu, #%d of tag %u, got message #%d of its tag", e.name,
             i, k, static_cast<unsigned>(tags[i]), o);
    EXPECT(r.flag == LCI_OK && r.rank == from && r.tag == tags[i] && r.type == LCI_MEDIUM,
           "%s: receive %zu: flag %d rank %d tag %u type %d", e.name, i, static_cast<int>(r.flag),
           r.rank, static_cast<unsigned>(r.tag), static_cast<int>(r.type));
    EXPECT(r.data.mbuffer.address == bufs[i].data() && r.data.mbuffer.length == k_len,
           "%s: receive %zu: buffer %p length %zu", e.name, i, r.data.mbuffer.address,
           r.data.mbuffer.length);
  }
}

// The sender's side: messages with `tags` in this order, the k-th with its
// tag carrying occurrence k (fill_msg).
void send_all(endpoint_under_test& e, int to, const std::vector<LCI_tag_t>& tags, int round) {
  std::vector<int> count(1024, 0);
  std::vector<char> buf(k_len);
  for (LCI_tag_t t : tags) {
    fill_msg(buf.data(), t, count[t]++, round);
    RETRY(LCI_sendm(e.ep, LCI_mbuffer_t{buf.data(), k_len}, to, t));
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) g_ordered |= strcmp(argv[i], "--ordered") == 0;
  harness_init(240);
  EXPECT(LCI_NUM_PROCESSES == 2, "run on 2 ranks (got %d)", LCI_NUM_PROCESSES);
  if (LCI_NUM_PROCESSES != 2) return harness_finish("rank_lists");
  const int peer = 1 - LCI_RANK;
  std::vector<endpoint_under_test> eps = endpoints_under_test();
  int round = 0;
  for (endpoint_under_test& e : eps) {
    for (int receiver = 0; receiver < 2; ++receiver) {
      const bool me = LCI_RANK == receiver;
      // Same tag, more receives than a list holds.
      phase("%s: same tag, receiver %d", e.name, receiver);
      const std::vector<LCI_tag_t> same(10, 200);
      ++round;
      if (me)
        receive_all(e, peer, same, round, [&] { send_short(peer, k_go); });
      else {
        recv_short(peer, k_go, "the go");
        send_all(e, peer, same, round);
      }
      // Mixed tags, messages in another order.
      phase("%s: mixed tags, receiver %d", e.name, receiver);
      ++round;
      if (me)
        receive_all(e, peer, {5, 6, 7, 5, 8, 6}, round, [&] { send_short(peer, k_go); });
      else {
        recv_short(peer, k_go, "the go");
        send_all(e, peer, {7, 6, 5, 8, 5, 6}, round);
      }
      // Unexpected messages first.
      phase("%s: unexpected first, receiver %d", e.name, receiver);
      ++round;
      if (me) {
        recv_short(peer, k_sent, "the sender's first messages");
        // Two of tag 300 wait (the first two receives of that tag take
        // them); the rest come after the go.
        receive_all(e, peer, {301, 300, 300, 300, 301}, round,
                    [&] { send_short(peer, k_go); });
      } else {
        send_all(e, peer, {300, 300}, round);
        send_short(peer, k_sent);
        recv_short(peer, k_go, "the go");
        std::vector<char> buf(k_len);
        // The third of tag 300 and the two of tag 301.
        fill_msg(buf.data(), 301, 0, round);
        RETRY(LCI_sendm(e.ep, LCI_mbuffer_t{buf.data(), k_len}, peer, 301));
        fill_msg(buf.data(), 300, 2, round);
        RETRY(LCI_sendm(e.ep, LCI_mbuffer_t{buf.data(), k_len}, peer, 300));
        fill_msg(buf.data(), 301, 1, round);
        RETRY(LCI_sendm(e.ep, LCI_mbuffer_t{buf.data(), k_len}, peer, 301));
      }
    }
  }
  return harness_finish("rank_lists");
}

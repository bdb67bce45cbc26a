// Malformed messages (exactly 2 ranks, LCI_TEST_HOOKS=1): rank 1 sends rank 0
// messages with headers and payloads no LCI process would send
// (LCIT_send_raw): unknown kinds and control kinds, an endpoint index that
// does not exist, truncated headers, counts and lengths larger than the
// message, rendezvous ids that name no operation, a getv reply longer than
// any piggy-back buffer. Between rounds of them it sends ordinary checked
// traffic (sendm, sendl, putla). Rank 0 must survive, receive every ordinary
// message intact, and count exactly one drop per malformed message
// (LCIT_dropped_messages); its warnings name the field and rank 1.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr double k_short_wait_s = 20;
constexpr int k_rounds = 4;
constexpr size_t k_medium = 1000;
constexpr size_t k_long = size_t(128) << 10;

// The header layout of the wire format: | kind:4 | endpoint:12 | tag:16 |.
uint32_t imm(uint32_t kind, uint32_t endpoint, uint32_t tag) {
  return kind << 28 | (endpoint & 0xfffu) << 16 | (tag & 0xffffu);
}
constexpr uint32_t k_ep = 0;  // LCI_UR_ENDPOINT is the first endpoint created
enum : uint32_t { k_short = 0, k_medium_kind = 1, k_rts = 2, k_am_short = 3, k_am_short_c = 4,
                  k_am_medium_c = 6, k_rts_alloc = 8, k_notify = 9, k_control = 15 };
enum : uint32_t { k_rtr = 1, k_fin = 2, k_nack = 3, k_gfence = 4, k_getv_reply = 5, k_abort = 6 };
constexpr uint64_t k_no_id = (uint64_t(1) << 28) - 1;  // a valid id no operation has

struct raw {
  const char* what;
  uint32_t imm;
  std::vector<char> bytes;
};

template <typename... T>
std::vector<char> words(T... v) {
  std::vector<char> out;
  out.reserve(sizeof...(v) * sizeof(uint64_t));
  for (uint64_t x : {static_cast<uint64_t>(v)...}) {
    const char* p = reinterpret_cast<const char*>(&x);
    out.insert(out.end(), p, p + sizeof(x));
  }
  return out;
}
std::vector<char> zeros(size_t n) { return std::vector<char>(n, 0); }
// Two 32-bit values in one 64-bit word (little endian: a first).
uint64_t pair32(uint32_t a, uint32_t b) { return uint64_t{a} | uint64_t{b} << 32; }

// Every message here must be dropped by rank 0 as it arrives.
std::vector<raw> malformed() {
  std::vector<raw> m;
  for (uint32_t kind : {10u, 11u, 12u, 13u, 14u})
    m.push_back({"unknown kind", imm(kind, k_ep, 90), zeros(16)});
  for (uint32_t sub : {0u, 7u, 15u, 4095u})
    m.push_back({"unknown control kind", imm(k_control, sub, 0), zeros(32)});
  m.push_back({"no such endpoint", imm(k_medium_kind, 4000, 90), zeros(64)});
  m.push_back({"no such endpoint (putla)", imm(k_rts_alloc, 4000, 90),
               words(1, 100, 0, pair32(0, 0))});
  m.push_back({"no trailer", imm(k_am_medium_c, k_ep, 90), zeros(8)});
  // Short messages carry exactly LCI_SHORT_SIZE bytes (and puts' a trailer).
  m.push_back({"short length", imm(k_short, k_ep, 90), zeros(3)});
  m.push_back({"puts length", imm(k_am_short, k_ep, 90), zeros(LCI_SHORT_SIZE + 8)});
  m.push_back({"puts with completion length", imm(k_am_short_c, k_ep, 90), zeros(16)});
  m.push_back({"truncated RTS", imm(k_rts, k_ep, 90), zeros(10)});
  m.push_back({"truncated putla RTS", imm(k_rts_alloc, k_ep, 90), zeros(31)});
  // rts_payload: send_id, size, comp, {count, piggy_length}
  m.push_back({"RTS count", imm(k_rts, k_ep, 90), words(1, 1 << 20, 0, pair32(0xffffffffu, 0))});
  m.push_back({"RTS piggy-back length", imm(k_rts, k_ep, 90),
               words(1, 0, 0, pair32(1, 0xffffffffu), 8)});
  m.push_back({"putva RTS count", imm(k_rts_alloc, k_ep, 90),
               words(1, 1 << 20, 0, pair32(1000, 0))});
  // notify_payload: comp, segment, address, length, reply_id, {type, count}
  m.push_back({"truncated notify", imm(k_notify, k_ep, 90), zeros(20)});
  m.push_back({"notify type", imm(k_notify, k_ep, 90), words(0, 0, 0, 0, 0, pair32(77, 0))});
  m.push_back({"notify count", imm(k_notify, k_ep, 90),
               words(0, 0, 0, 0, 0, pair32(LCI_IOVEC, 0x10000000u))});
  m.push_back({"notify piggy-back length", imm(k_notify, k_ep, 90),
               words(0, 0, 0x1000, uint64_t(1) << 40, 0, pair32(LCI_IOVEC, 0))});
  m.push_back({"getv notify length", imm(k_notify, k_ep, 90),
               words(0, 0, 0x1000, uint64_t(1) << 40, 1, pair32(LCI_IOVEC, 0))});
  // rtr_payload: send_id, recv_id, {count, pad}, count x {address, rkey, length}
  m.push_back({"truncated RTR", imm(k_control, k_rtr, 0), zeros(8)});
  m.push_back({"RTR count", imm(k_control, k_rtr, 0), words(0, 0, pair32(100000, 0), 1, 2, 3)});
  m.push_back({"RTR id", imm(k_control, k_rtr, 0), words(k_no_id, 0, pair32(1, 0), 1, 2, 3)});
  m.push_back({"RTR id out of range", imm(k_control, k_rtr, 0),
               words(uint64_t(1) << 40, 0, pair32(1, 0), 1, 2, 3)});
  m.push_back({"truncated FIN", imm(k_control, k_fin, 0), zeros(4)});
  m.push_back({"FIN id", imm(k_control, k_fin, 0), words(k_no_id)});
  m.push_back({"FIN id out of range", imm(k_control, k_fin, 0), words(~uint64_t(0))});
  m.push_back({"refusal id", imm(k_control, k_nack, 0), words(k_no_id)});
  m.push_back({"abort id", imm(k_control, k_abort, 0), words(k_no_id)});
  m.push_back({"getv reply id", imm(k_control, k_getv_reply, 0), words(k_no_id, 1, 2)});
  m.push_back({"truncated getv reply", imm(k_control, k_getv_reply, 0), zeros(7)});
  m.push_back({"truncated gfence", imm(k_control, k_gfence, 0), zeros(12)});
  m.push_back({"gfence endpoint", imm(k_control, k_gfence, 0), words(pair32(1u << 20, 1), 0)});
  return m;
}

void sender() {
  const std::vector<raw> bad = malformed();
  comp lc(LCI_COMPLETION_QUEUE);
  lbuf lb(mem_kind::registered, k_long);
  std::vector<char> medium(k_medium);
  for (int round = 0; round < k_rounds; ++round) {
    phase("round %d: malformed messages, then ordinary ones", round);
    for (const raw& r : bad)
      RETRY(LCIT_send_raw(LCI_UR_ENDPOINT, 0, r.imm, r.bytes.data(), r.bytes.size()));
    const uint32_t tag = static_cast<uint32_t>(100 + round);
    fill(medium.data(), k_medium, seed_of(1, tag));
    LCI_mbuffer_t mb{medium.data(), k_medium};
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, mb, 0, tag));
    fill(lb.data(), k_long, seed_of(2, tag));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, lb.view(), 0, tag, lc.handle(), nullptr));
    EXPECT(lc.take1("the sendl's completion", k_short_wait_s).flag == LCI_OK, "sendl failed");
    for (const raw& r : bad)
      RETRY(LCIT_send_raw(LCI_UR_ENDPOINT, 0, r.imm, r.bytes.data(), r.bytes.size()));
    fill(lb.data(), k_long, seed_of(3, tag));
    RETRY(LCI_putla(LCI_UR_ENDPOINT, lb.view(), lc.handle(), 0, tag, LCI_DEFAULT_COMP_REMOTE,
                    nullptr));
    EXPECT(lc.take1("the putla's completion", k_short_wait_s).flag == LCI_OK, "putla failed");
  }
  allgather_u64(bad.size() * 2 * k_rounds);
}

// `before`: the drops counted before the barrier that the sender leaves to
// start sending (it may leave it, and send, before this rank does).
void receiver(uint64_t before) {
  comp lc(LCI_COMPLETION_QUEUE);
  auto ur = comp::borrow_queue(LCI_UR_CQ);
  std::vector<char> medium(k_medium);
  lbuf lb(mem_kind::registered, k_long);
  for (int round = 0; round < k_rounds; ++round) {
    phase("round %d: receive the ordinary messages", round);
    const uint32_t tag = static_cast<uint32_t>(100 + round);
    memset(medium.data(), 0, k_medium);
    LCI_mbuffer_t mb{medium.data(), k_medium};
    RETRY(LCI_recvm(LCI_UR_ENDPOINT, mb, 1, tag, lc.handle(), nullptr));
    const LCI_request_t m = lc.take1("the medium message", k_short_wait_s);
    EXPECT(m.flag == LCI_OK && m.data.mbuffer.length == k_medium, "recvm {flag %d, %zu bytes}",
           m.flag, m.data.mbuffer.length);
    size_t bad = mismatch(medium.data(), k_medium, seed_of(1, tag));
    EXPECT(bad == SIZE_MAX, "byte %zu of the medium message differs", bad);
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, lb.view(), 1, tag, lc.handle(), nullptr));
    const LCI_request_t l = lc.take1("the long message", k_short_wait_s);
    EXPECT(l.flag == LCI_OK && l.data.lbuffer.length == k_long, "recvl {flag %d, %zu bytes}",
           l.flag, l.data.lbuffer.length);
    bad = mismatch(lb.data(), k_long, seed_of(2, tag));
    EXPECT(bad == SIZE_MAX, "byte %zu of the long message differs", bad);
    const LCI_request_t t = ur->take1("the putla", k_short_wait_s);
    EXPECT(t.flag == LCI_OK && t.tag == tag && t.rank == 1 && t.data.lbuffer.length == k_long,
           "putla target {flag %d, tag %u, rank %d, %zu bytes}", t.flag, t.tag, t.rank,
           t.data.lbuffer.length);
    if (t.flag == LCI_OK && t.data.lbuffer.length == k_long) {
      bad = mismatch(t.data.lbuffer.address, k_long, seed_of(3, tag));
      EXPECT(bad == SIZE_MAX, "byte %zu of the putla differs", bad);
    }
    if (t.data.lbuffer.address) LCI_lbuffer_free(t.data.lbuffer);
  }
  const uint64_t sent = allgather_u64(0)[1];
  // The malformed messages may still be arriving after the last putla
  // completed here: drive progress until all are counted (bounded).
  deadline d(k_short_wait_s);
  while (LCIT_dropped_messages() - before < sent && !d.passed()) LCI_progress(LCI_UR_DEVICE);
  const uint64_t dropped = LCIT_dropped_messages() - before;
  EXPECT(dropped == sent, "rank 0 dropped %llu of the %llu malformed messages",
         static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(sent));
  size_t queued = 0;
  LCI_queue_len(LCI_UR_CQ, &queued);
  EXPECT(queued == 0, "%zu completions of malformed messages reached the default queue", queued);
}

}  // namespace

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  const char* hooks = getenv("LCI_TEST_HOOKS");
  if (!hooks || strcmp(hooks, "1") != 0) die("needs LCI_TEST_HOOKS=1");
  const uint64_t before = LCIT_dropped_messages();
  LCI_barrier();
  if (LCI_RANK == 0)
    receiver(before);
  else
    sender();
  return harness_finish("header_validation");
}

// A rogue rank of the job on the native transport (exactly 3 ranks on one
// host, LCI_SHM=1, LCI_TEST_HOOKS=1). Rank 2 writes forged cells into rank
// 0's ring with the ring's own protocol (LCIT_native_forge): a message
// longer than any receive buffer, sources that are no rank of this host, a
// read reply and a write acknowledgement that answer nothing, pipelined
// writes outside every registration (wrong address, range, key), a read
// of an unregistered buffer, an unknown kind, a notice with a payload, a
// write whose destination it changes right after publishing it, and a
// flood of read requests larger than any peer may have outstanding, while
// it does not drain its own ring. Meanwhile ranks 0 and 1 exchange checked
// traffic (medium messages both ways, a long message).
//
// Rank 0 must count exactly one drop per forged cell (a range where the
// outcome is a race), keep its unregistered buffer untouched and its
// registered one holding only bytes the rogue was allowed to write, hand
// out no pool buffer that starts with the forged bytes, keep at most one
// operation table of unanswered requests per peer, receive all of rank 1's
// traffic intact, and answer every queued request once the rogue drains.
//
// Every wait is bounded; a hang ends in the watchdog and fails the test.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;
#include "test_hooks.h"

namespace {

constexpr double k_short_wait_s = 30;
constexpr size_t k_region = size_t(64) << 10;  // rank 0's registered and unregistered buffers
constexpr size_t k_medium = 1000;
constexpr size_t k_long = size_t(256) << 10;
constexpr int k_pings = 200;
constexpr int k_races = 20;
constexpr uint32_t k_op_slots = 1024;  // the transport's operation table (native.hpp)
constexpr int k_flood = 3000;
constexpr uint8_t k_forged = 0xAB;

struct region {  // what rank 0 tells the others
  uint64_t registered = 0, key = 0, unregistered = 0;
};

// rank 0's registration, parsed from its serialized segment
// ("lci-seg1:<group>:<base>:<length>:<rkey>:<owner handle>:<virt>").
uint64_t key_of(const char* text) {
  int group = 0;
  uint64_t base = 0, length = 0, rkey = 0;
  if (sscanf(text, "lci-seg1:%d:%" SCNx64 ":%" SCNx64 ":%" SCNx64, &group, &base, &length,
             &rkey) != 4)
    die("unexpected segment text \"%s\"", text);
  return rkey;
}

// Medium messages both ways between ranks 0 and 1, and a long one from 1 to 0,
// every byte checked: the traffic that must go on beside the forged cells.
void honest_traffic(int peer, int round) {
  comp cq(LCI_COMPLETION_QUEUE);
  std::vector<char> out(k_medium), in(k_medium);
  for (int i = 0; i < k_pings; ++i) {
    const LCI_tag_t tag = static_cast<LCI_tag_t>(round * 1000 + i);
    const bool first = LCI_RANK == 0;
    for (int step = 0; step < 2; ++step) {
      if ((step == 0) == first) {
        fill(out.data(), k_medium, seed_of(LCI_RANK, tag));
        LCI_mbuffer_t mb{out.data(), k_medium};
        RETRY(LCI_sendm(LCI_UR_ENDPOINT, mb, peer, tag));
      } else {
        memset(in.data(), 0, k_medium);
        LCI_mbuffer_t mb{in.data(), k_medium};
        RETRY(LCI_recvm(LCI_UR_ENDPOINT, mb, peer, tag, cq.handle(), nullptr));
        const LCI_request_t r = cq.take1("a medium message of the honest peer", k_short_wait_s);
        EXPECT(r.flag == LCI_OK && r.rank == peer && r.data.mbuffer.length == k_medium,
               "recvm {flag %d, rank %d, %zu bytes}", r.flag, r.rank, r.data.mbuffer.length);
        const size_t bad = mismatch(in.data(), k_medium, seed_of(peer, tag));
        EXPECT(bad == SIZE_MAX, "byte %zu of medium message %d differs", bad, i);
      }
    }
  }
  lbuf lb(mem_kind::registered, k_long);
  const LCI_tag_t tag = static_cast<LCI_tag_t>(round * 1000 + 999);
  if (LCI_RANK == 1) {
    fill(lb.data(), k_long, seed_of(7, tag));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, lb.view(), 0, tag, cq.handle(), nullptr));
    EXPECT(cq.take1("the sendl", k_short_wait_s).flag == LCI_OK, "sendl failed");
  } else {
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, lb.view(), 1, tag, cq.handle(), nullptr));
    const LCI_request_t r = cq.take1("the long message of the honest peer", k_short_wait_s);
    EXPECT(r.flag == LCI_OK && r.rank == 1 && r.data.lbuffer.length == k_long,
           "recvl {flag %d, rank %d, %zu bytes}", r.flag, r.rank, r.data.lbuffer.length);
    const size_t bad = mismatch(lb.data(), k_long, seed_of(7, tag));
    EXPECT(bad == SIZE_MAX, "byte %zu of the long message differs", bad);
  }
}

// Publishes one forged cell in rank 0's ring, waiting (without progress:
// the rogue does not drain its own ring) while that ring is full.
void forge(const LCIT_native_cell& c, const void* payload = nullptr, size_t n = 0,
           uint64_t retarget = 0) {
  deadline d(k_short_wait_s);
  LCI_error_t rc;
  while ((rc = LCIT_native_forge(LCI_UR_DEVICE, 0, &c, payload, n, retarget)) == LCI_ERR_RETRY)
    d.check("room in rank 0's ring");
  if (rc != LCI_OK) die("LCIT_native_forge: %d (is rank 0 served by the native transport?)", rc);
}

LCIT_native_cell cell(uint8_t kind, uint32_t length = 0) {
  LCIT_native_cell c{};
  c.kind = kind;
  c.src = 2;
  c.length = length;
  return c;
}

// The forged cells whose fate is certain: each is dropped by rank 0.
int forge_certain(const region& r) {
  std::vector<char> junk(size_t(64) << 10, static_cast<char>(k_forged));
  int n = 0;
  const uint32_t medium_tag = 77;
  // A message longer than any receive buffer (and than a cell).
  LCIT_native_cell c = cell(LCIT_CELL_MESSAGE, static_cast<uint32_t>(junk.size()));
  c.imm = 1u << 28 | medium_tag;  // a medium message on endpoint 0
  forge(c, junk.data(), junk.size()), ++n;
  // Sources that are no rank of this host.
  for (int32_t src : {-1, 3, 7, 99999, INT32_MIN}) {
    c = cell(LCIT_CELL_MESSAGE, 16);
    c.src = src;
    c.imm = 1u << 28 | medium_tag;
    forge(c, junk.data(), 16), ++n;
  }
  // Answers to operations rank 0 never started: a read reply aimed at the
  // unregistered buffer, a write acknowledgement.
  c = cell(LCIT_CELL_READ_REPLY, 64);
  c.address = r.unregistered;
  c.op = 0x0000000100000003ull;
  forge(c, junk.data(), 64), ++n;
  c = cell(LCIT_CELL_WRITE_ACK);
  c.op = 0x0000000700000001ull;
  forge(c), ++n;
  // Pipelined writes outside every registration: the unregistered buffer
  // with the right key, past the end of the registered one, a wrong key.
  c = cell(LCIT_CELL_WRITE_DATA, 64);
  c.address = r.unregistered;
  c.key = r.key;
  forge(c, junk.data(), 64), ++n;
  c.address = r.registered + k_region - 10;
  forge(c, junk.data(), 64), ++n;
  c.address = r.registered;
  c.key = r.key ^ 0x5a5a;
  forge(c, junk.data(), 64), ++n;
  // A read of the unregistered buffer.
  c = cell(LCIT_CELL_READ_REQUEST, 64);
  c.address = r.unregistered;
  c.key = r.key;
  forge(c), ++n;
  // An unknown kind, unknown flags, a notice with a payload.
  c = cell(42);
  forge(c), ++n;
  c = cell(LCIT_CELL_MESSAGE, 16);
  c.flags = 0x80;
  forge(c, junk.data(), 16), ++n;
  c = cell(LCIT_CELL_WRITE_NOTICE, 5);
  forge(c, junk.data(), 5), ++n;
  return n;
}

void rogue(const region& r) {
  phase("forged cells whose fate is certain");
  const int certain = forge_certain(r);
  allgather_u64(static_cast<uint64_t>(certain));  // S2
  allgather_u64(0);                               // S3

  phase("writes whose destination changes after publication");
  std::vector<char> bytes(64);
  fill(bytes.data(), bytes.size(), seed_of(9, 9));
  for (int i = 0; i < k_races; ++i) {
    LCIT_native_cell c = cell(LCIT_CELL_WRITE_DATA, 64);
    c.address = r.registered + static_cast<uint64_t>(i) * 64;
    c.key = r.key;
    c.op = 0x0000000900000000ull | static_cast<uint64_t>(i);
    forge(c, bytes.data(), bytes.size(), r.unregistered + static_cast<uint64_t>(i) * 64);
  }
  allgather_u64(k_races);  // S4
  allgather_u64(0);        // S5

  phase("a flood of read requests, own ring not drained");
  for (int i = 0; i < k_flood; ++i) {
    LCIT_native_cell c = cell(LCIT_CELL_READ_REQUEST, 64);
    c.address = r.registered;
    c.key = r.key;
    c.op = 0x0000000b00000000ull | static_cast<uint64_t>(i);
    forge(c);
  }
  allgather_u64(k_flood);  // S6
}

// The phases are separated by allgathers S1..S6. A phase's forged cells are
// published by the rogue after it leaves the allgather before it and before
// it enters the one after it, in the ring that also carries its allgather
// messages: so rank 0 takes each count before its part of the allgather
// that lets the rogue start, and reads it after the one that ends the phase.
void victim(char* registered, char* unregistered) {
  const uint64_t before1 = LCIT_dropped_messages();
  allgather_u64(0);  // S1: the rogue starts
  phase("traffic with rank 1 beside forged cells whose fate is certain");
  honest_traffic(1, 1);
  const uint64_t certain = allgather_u64(0)[2];  // S2
  const uint64_t dropped1 = LCIT_dropped_messages() - before1;
  EXPECT(dropped1 == certain, "rank 0 dropped %llu of the %llu forged cells",
         static_cast<unsigned long long>(dropped1), static_cast<unsigned long long>(certain));

  phase("writes whose destination changes after publication");
  const uint64_t before2 = LCIT_dropped_messages();
  allgather_u64(0);                            // S3: the rogue starts
  const uint64_t races = allgather_u64(0)[2];  // S4
  const uint64_t dropped2 = LCIT_dropped_messages() - before2;
  // Each is taken with the address it had when read (registered: written;
  // changed: dropped), never written to the changed one.
  EXPECT(dropped2 <= races, "%llu drops for %llu racing writes",
         static_cast<unsigned long long>(dropped2), static_cast<unsigned long long>(races));
  size_t bad = not_byte(unregistered, 0, k_region, k_sentinel);
  EXPECT(bad == SIZE_MAX, "byte %zu of the unregistered buffer was written", bad);
  std::vector<char> expect(64);
  fill(expect.data(), expect.size(), seed_of(9, 9));
  size_t written = 0;
  for (size_t i = 0; i < static_cast<size_t>(races); ++i) {
    const char* at = registered + i * 64;
    if (memcmp(at, expect.data(), 64) == 0)
      ++written;
    else
      EXPECT(not_byte(at, 0, 64, k_sentinel) == SIZE_MAX,
             "registered bytes %zu..%zu hold neither the sentinel nor the write", i * 64,
             i * 64 + 63);
  }
  EXPECT(written + dropped2 == races, "%zu racing writes landed and %llu were dropped, of %llu",
         written, static_cast<unsigned long long>(dropped2),
         static_cast<unsigned long long>(races));
  bad = not_byte(registered, races * 64, k_region, k_sentinel);
  EXPECT(bad == SIZE_MAX, "byte %zu of the registered buffer was written", bad);

  phase("traffic with rank 1 beside a flood of read requests");
  const uint64_t before3 = LCIT_dropped_messages();
  allgather_u64(0);  // S5: the rogue starts
  honest_traffic(1, 3);
  size_t pending = 0;
  int in_flight = 0;
  OK(LCIT_native_state(LCI_UR_DEVICE, &pending, &in_flight));
  EXPECT(pending <= k_op_slots, "%zu unanswered requests queued (bound %u)", pending, k_op_slots);
  const uint64_t flood = allgather_u64(0)[2];  // S6
  const uint64_t dropped3 = LCIT_dropped_messages() - before3;
  OK(LCIT_native_state(LCI_UR_DEVICE, &pending, &in_flight));
  EXPECT(pending <= k_op_slots, "%zu unanswered requests queued (bound %u)", pending, k_op_slots);
  // Kept at most: the bound, a ring of replies, and a ring of requests
  // taken after the rogue (in S6) drained its ring and so made room.
  const uint64_t kept_at_most = k_op_slots + 2 * 256;
  EXPECT(dropped3 <= flood && dropped3 + kept_at_most >= flood,
         "%llu of %llu flooding requests dropped (at most %llu may be kept)",
         static_cast<unsigned long long>(dropped3), static_cast<unsigned long long>(flood),
         static_cast<unsigned long long>(kept_at_most));
  EXPECT(in_flight == 0, "%d pipelined operations of rank 0 in flight", in_flight);

  phase("fresh pool buffers");
  std::vector<LCI_mbuffer_t> mbs;
  for (int i = 0; i < 64; ++i) {
    LCI_mbuffer_t mb;
    if (LCI_mbuffer_alloc(LCI_UR_DEVICE, &mb) != LCI_OK) break;
    mbs.push_back(mb);
  }
  int forged_starts = 0;
  for (const LCI_mbuffer_t& mb : mbs)
    forged_starts += not_byte(mb.address, 0, 16, k_forged) == SIZE_MAX;
  EXPECT(forged_starts == 0, "%d of %zu fresh pool buffers start with the forged bytes",
         forged_starts, mbs.size());
  for (LCI_mbuffer_t& mb : mbs) LCI_mbuffer_free(mb);
}

}  // namespace

int main() {
  harness_init(180);
  if (LCI_NUM_PROCESSES != 3) die("needs exactly 3 ranks");
  const char* hooks = getenv("LCI_TEST_HOOKS");
  if (!hooks || strcmp(hooks, "1") != 0) die("needs LCI_TEST_HOOKS=1");

  // Rank 0's buffers: one registered for remote access, one not.
  std::vector<char> registered(k_region, static_cast<char>(k_sentinel));
  std::vector<char> unregistered(k_region, static_cast<char>(k_sentinel));
  LCI_segment_t seg = nullptr;
  char text[256] = "";
  if (LCI_RANK == 0) {
    OK(LCI_memory_register(LCI_UR_DEVICE, registered.data(), k_region, &seg));
    OK(LCI_segment_serialize(seg, text));
  }
  const std::vector<std::vector<char>> texts = allgather(text, sizeof text);
  region r;
  r.key = key_of(texts[0].data());
  r.registered = allgather_u64(reinterpret_cast<uintptr_t>(registered.data()))[0];
  r.unregistered = allgather_u64(reinterpret_cast<uintptr_t>(unregistered.data()))[0];
  if (LCIX_transport_of(LCI_UR_DEVICE, 0) != LCIX_TRANSPORT_NATIVE)
    die("rank 0 is not served by the native transport (run with LCI_SHM=1 on one host)");

  if (LCI_RANK == 0) {
    victim(registered.data(), unregistered.data());
  } else if (LCI_RANK == 1) {
    allgather_u64(0);  // S1
    phase("traffic with rank 0 beside forged cells");
    honest_traffic(0, 1);
    for (int s = 2; s <= 5; ++s) allgather_u64(0);  // S2..S5
    honest_traffic(0, 3);
    allgather_u64(0);  // S6
  } else {
    allgather_u64(0);  // S1
    rogue(r);
  }

  // Every queued answer goes out once the rogue drains its ring.
  phase("the queued answers drain");
  allgather_u64(0);
  if (LCI_RANK == 0) {
    deadline d(k_short_wait_s);
    size_t pending = 1;
    while (pending != 0 && !d.passed()) {
      LCI_progress(LCI_UR_DEVICE);
      OK(LCIT_native_state(LCI_UR_DEVICE, &pending, nullptr));
    }
    EXPECT(pending == 0, "%zu answers still queued at the end", pending);
  } else if (LCI_RANK == 2) {
    // The answers to requests it never made are dropped here.
    deadline d(k_short_wait_s);
    while (!d.passed() && LCIT_dropped_messages() == 0) LCI_progress(LCI_UR_DEVICE);
    EXPECT(LCIT_dropped_messages() > 0, "the rogue dropped none of the answers it never asked for");
  }
  allgather_u64(0);
  if (seg) OK(LCI_memory_deregister(&seg));
  return harness_finish("rogue_rank");
}

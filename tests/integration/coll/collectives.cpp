// The LCIX collectives: barrier, bcastm, bcastl, allreducem, allreducel.
//
// For each completion type of the message port (queue, synchronizer,
// handler, and NONE, where nothing may be signalled), on its own rank+tag
// endpoint, the program runs several rounds of every operation with one tag
// reused by all of them back to back: broadcasts from every root with
// lengths from 0 bytes to LCI_MEDIUM_SIZE (medium) and to 1.5 MiB (long,
// registered and LCI_SEGMENT_ALL buffers), allreduces of 1 element, a few,
// LCI_MEDIUM_SIZE bytes (medium) and over 1 MiB (long), and two collectives
// in flight at once on different tags. Every received byte or element, the
// bytes past each buffer, and every completion field are checked.
//
// A barrier is checked for synchronizing: in round k rank k % n enters late,
// after driving progress for a while, and every other rank tells it (on
// another endpoint) when its barrier completed; no such message may arrive
// before the late rank entered.
//
// Options: --rounds N (default 2), --long-max BYTES (default 1.5 MiB).
#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_tag = 7;        // every collective of the main sequence
constexpr LCI_tag_t k_tag_side = 8;   // the second collective in flight
constexpr LCI_tag_t k_tag_notice = 9; // barrier notices, on LCI_UR_ENDPOINT
int g_rounds = 2;
size_t g_long_max = 3 * 512 * 1024;

// The reduction: element-wise sum of uint64_t (memcpy: buffers may be
// unaligned), and a count of calls.
std::atomic<long> g_op_calls{0};
uint64_t g_allreduces = 0;  // allreduces started on this rank
void sum_u64(void* dest, const void* src, size_t length) {
  g_op_calls.fetch_add(1, std::memory_order_relaxed);
  auto* d = static_cast<char*>(dest);
  const auto* s = static_cast<const char*>(src);
  for (size_t i = 0; i + 8 <= length; i += 8) {
    uint64_t a, b;
    memcpy(&a, d + i, 8);
    memcpy(&b, s + i, 8);
    a += b;
    memcpy(d + i, &a, 8);
  }
}
// Element i of rank r's contribution in collective `seq`, and the sum.
uint64_t elem(uint32_t seq, int r, size_t i) {
  return (static_cast<uint64_t>(seq) << 40) ^ (static_cast<uint64_t>(r + 1) * 0x9E3779B97F4A7C15ull) ^
         (i * 0xD1B54A32D192ED03ull);
}
uint64_t elem_sum(uint32_t seq, size_t i) {
  uint64_t s = 0;
  for (int r = 0; r < LCI_NUM_PROCESSES; ++r) s += elem(seq, r, i);
  return s;
}

struct port_setup {
  LCI_comp_type_t type;
  LCI_endpoint_t ep = nullptr;
  std::unique_ptr<comp> c;   // for NONE: a queue that must stay empty
  LCI_comp_t handle() const { return c->handle(); }
};

LCI_endpoint_t make_endpoint(LCI_comp_type_t msg_type, LCI_comp_type_t cmd_type) {
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, msg_type));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, cmd_type));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));
  return ep;
}

// Drives a started collective to completion.
void drive(LCIX_collective_t h, const char* what) {
  if (LCI_NUM_PROCESSES == 1)
    EXPECT(h == nullptr, "%s: one process, but the start call left a handle", what);
  deadline d;
  while (h) {
    LCIX_coll_progress(&h);
    if (h) progress(d, what);
  }
}
void drive2(LCIX_collective_t a, LCIX_collective_t b, const char* what) {
  deadline d;
  while (a || b) {
    if (a) LCIX_coll_progress(&a);
    if (b) LCIX_coll_progress(&b);
    if (a || b) progress(d, what);
  }
}

// Takes the collective's completion (none for a NONE port) and checks it.
// Exactly one completion per collective: nothing else may be pending.
LCI_request_t take_completion(port_setup& p, const char* what) {
  LCI_request_t r;
  memset(&r, 0, sizeof(r));
  if (p.type == LCI_COMPLETION_NONE) {
    EXPECT(p.c->pending() == 0, "%s: a NONE port signalled", what);
    r.flag = LCI_OK;
    r.rank = -1;
    return r;
  }
  r = p.c->take1(what);
  EXPECT(p.c->pending() == 0, "%s: more than one completion", what);
  return r;
}

void check_common(port_setup& p, const LCI_request_t& r, LCI_tag_t tag, LCI_data_type_t type,
                  void* ctx, const char* what) {
  if (p.type == LCI_COMPLETION_NONE) return;
  EXPECT(r.flag == LCI_OK, "%s: flag %d", what, static_cast<int>(r.flag));
  EXPECT(r.rank == -1, "%s: rank %d, not -1", what, r.rank);
  EXPECT(r.tag == tag, "%s: tag %u, not %u", what, r.tag, tag);
  EXPECT(r.type == type, "%s: type %d, not %d", what, static_cast<int>(r.type),
         static_cast<int>(type));
  EXPECT(r.user_context == ctx, "%s: user_context %p, not %p", what, r.user_context, ctx);
}
void check_mbuffer(port_setup& p, const LCI_request_t& r, const LCI_mbuffer_t& b,
                   const char* what) {
  if (p.type == LCI_COMPLETION_NONE) return;
  EXPECT(r.data.mbuffer.address == b.address && r.data.mbuffer.length == b.length,
         "%s: buffer {%p, %zu}, not {%p, %zu}", what, r.data.mbuffer.address,
         r.data.mbuffer.length, b.address, b.length);
}
void check_lbuffer(port_setup& p, const LCI_request_t& r, const LCI_lbuffer_t& b,
                   const char* what) {
  if (p.type == LCI_COMPLETION_NONE) return;
  EXPECT(same_lbuffer(r.data.lbuffer, b), "%s: buffer {%p, %p, %zu}, not {%p, %p, %zu}", what,
         (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length,
         (void*)b.segment, b.address, b.length);
}

uint32_t g_seq = 0;  // collectives run so far (same on every rank)
void* ctx_of(uint32_t seq) { return reinterpret_cast<void*>(static_cast<uintptr_t>(0xC0110000u + seq)); }

// ---- barrier ------------------------------------------------------------------

// Round k: rank k % n enters late; the others notify it when they are through.
void test_barrier(port_setup& p, int round) {
  const int n = LCI_NUM_PROCESSES, late = round % n;
  const uint32_t seq = ++g_seq;
  phase("barrier round %d (late rank %d), %s port", round, late, comp_name(p.type));
  LCI_comp_t notices = nullptr;
  std::vector<int> got(static_cast<size_t>(n), 0);
  if (LCI_RANK == late) {
    OK(LCI_queue_create(LCI_UR_DEVICE, &notices));
    for (int r = 0; r < n; ++r)
      if (r != late) OK(LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{&got[static_cast<size_t>(r)], sizeof(int)}, r,
                                  k_tag_notice, notices, nullptr));
    const auto until = steady::now() + std::chrono::milliseconds(n > 1 ? 100 : 0);
    deadline d;
    while (steady::now() < until) {
      progress(d, "late rank's delay");
      LCI_request_t r;
      EXPECT(LCI_queue_pop(notices, &r) == LCI_ERR_RETRY,
             "rank %d finished the barrier before rank %d entered it", r.rank, late);
    }
  }
  LCIX_collective_t h = nullptr;
  OK(LCIX_barrier(p.ep, k_tag, p.handle(), ctx_of(seq), &h));
  drive(h, "barrier");
  LCI_request_t r = take_completion(p, "barrier");
  check_common(p, r, k_tag, LCI_MEDIUM, ctx_of(seq), "barrier");
  check_mbuffer(p, r, LCI_mbuffer_t{nullptr, 0}, "barrier");
  if (LCI_RANK == late) {
    deadline d;
    for (int k = 0; k < n - 1;) {
      LCI_request_t q;
      if (LCI_queue_pop(notices, &q) == LCI_OK)
        ++k;
      else
        progress(d, "barrier notices");
    }
    OK(LCI_queue_free(&notices));
  } else {
    int one = 1;
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{&one, sizeof(one)}, late, k_tag_notice));
  }
}

// ---- broadcast ----------------------------------------------------------------

constexpr size_t k_pad = 16;  // sentinel bytes past every buffer

void test_bcastm(port_setup& p, int root, size_t len) {
  const uint32_t seq = ++g_seq;
  phase("bcastm root %d, %zu bytes, %s port", root, len, comp_name(p.type));
  std::vector<uint8_t> buf(len + k_pad, k_sentinel);
  if (LCI_RANK == root) fill(buf.data(), len, seq);
  LCI_mbuffer_t b{buf.data(), len};
  LCIX_collective_t h = nullptr;
  OK(LCIX_bcastm(p.ep, b, root, k_tag, p.handle(), ctx_of(seq), &h));
  drive(h, "bcastm");
  LCI_request_t r = take_completion(p, "bcastm");
  check_common(p, r, k_tag, LCI_MEDIUM, ctx_of(seq), "bcastm");
  check_mbuffer(p, r, b, "bcastm");
  const size_t bad = mismatch(buf.data(), len, seq);
  EXPECT(bad == SIZE_MAX, "bcastm: byte %zu of %zu wrong", bad, len);
  EXPECT(not_byte(buf.data(), len, len + k_pad, k_sentinel) == SIZE_MAX,
         "bcastm: bytes past the buffer changed");
}

void test_bcastl(port_setup& p, int root, size_t len, mem_kind kind) {
  const uint32_t seq = ++g_seq;
  phase("bcastl root %d, %zu bytes, %s, %s port", root, len, mem_name(kind), comp_name(p.type));
  lbuf mem(kind, len + k_pad);
  if (LCI_RANK == root) fill(mem.data(), len, seq);
  LCI_lbuffer_t b = mem.view(len);
  LCIX_collective_t h = nullptr;
  OK(LCIX_bcastl(p.ep, b, root, k_tag, p.handle(), ctx_of(seq), &h));
  drive(h, "bcastl");
  LCI_request_t r = take_completion(p, "bcastl");
  check_common(p, r, k_tag, LCI_LONG, ctx_of(seq), "bcastl");
  check_lbuffer(p, r, b, "bcastl");
  const size_t bad = mismatch(mem.data(), len, seq);
  EXPECT(bad == SIZE_MAX, "bcastl: byte %zu of %zu wrong", bad, len);
  EXPECT(not_byte(mem.data(), len, len + k_pad, k_sentinel) == SIZE_MAX,
         "bcastl: bytes past the buffer changed");
}

// ---- allreduce ----------------------------------------------------------------

void fill_elems(void* p, size_t count, uint32_t seq) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t v = elem(seq, LCI_RANK, i);
    memcpy(static_cast<char*>(p) + i * 8, &v, 8);
  }
}
size_t bad_elem(const void* p, size_t count, uint32_t seq) {
  for (size_t i = 0; i < count; ++i) {
    uint64_t v;
    memcpy(&v, static_cast<const char*>(p) + i * 8, 8);
    if (v != elem_sum(seq, i)) return i;
  }
  return SIZE_MAX;
}

// Starts an allreducem, retrying while no buffer is free.
LCIX_collective_t start_allreducem(port_setup& p, LCI_mbuffer_t b, LCI_tag_t tag, void* ctx) {
  LCIX_collective_t h = nullptr;
  deadline d;
  LCI_error_t rc;
  ++g_allreduces;
  while ((rc = LCIX_allreducem(p.ep, b, sum_u64, tag, p.handle(), ctx, &h)) == LCI_ERR_RETRY)
    progress(d, "LCIX_allreducem: a free buffer");
  ok(rc, "LCIX_allreducem");
  return h;
}

void test_allreducem(port_setup& p, size_t count) {
  const uint32_t seq = ++g_seq;
  const size_t len = count * 8;
  phase("allreducem %zu elements, %s port", count, comp_name(p.type));
  std::vector<uint8_t> buf(len + k_pad, k_sentinel);
  fill_elems(buf.data(), count, seq);
  LCI_mbuffer_t b{buf.data(), len};
  drive(start_allreducem(p, b, k_tag, ctx_of(seq)), "allreducem");
  LCI_request_t r = take_completion(p, "allreducem");
  check_common(p, r, k_tag, LCI_MEDIUM, ctx_of(seq), "allreducem");
  check_mbuffer(p, r, b, "allreducem");
  const size_t bad = bad_elem(buf.data(), count, seq);
  EXPECT(bad == SIZE_MAX, "allreducem: element %zu of %zu wrong", bad, count);
  EXPECT(not_byte(buf.data(), len, len + k_pad, k_sentinel) == SIZE_MAX,
         "allreducem: bytes past the buffer changed");
}

void test_allreducel(port_setup& p, size_t count, mem_kind kind) {
  const uint32_t seq = ++g_seq;
  const size_t len = count * 8;
  phase("allreducel %zu elements, %s, %s port", count, mem_name(kind), comp_name(p.type));
  lbuf mem(kind, len + k_pad);
  fill_elems(mem.data(), count, seq);
  LCI_lbuffer_t b = mem.view(len);
  LCIX_collective_t h = nullptr;
  ++g_allreduces;
  OK(LCIX_allreducel(p.ep, b, sum_u64, k_tag, p.handle(), ctx_of(seq), &h));
  drive(h, "allreducel");
  LCI_request_t r = take_completion(p, "allreducel");
  check_common(p, r, k_tag, LCI_LONG, ctx_of(seq), "allreducel");
  check_lbuffer(p, r, b, "allreducel");
  const size_t bad = bad_elem(mem.data(), count, seq);
  EXPECT(bad == SIZE_MAX, "allreducel: element %zu of %zu wrong", bad, count);
  EXPECT(not_byte(mem.data(), len, len + k_pad, k_sentinel) == SIZE_MAX,
         "allreducel: bytes past the buffer changed");
}

// An allreducem on k_tag and a bcastm on k_tag_side in flight at once, each
// signalling its own completion object (a synchronizer of threshold 1 takes
// one signal at a time).
void test_two_in_flight(port_setup& p, int root) {
  const uint32_t seq_a = ++g_seq, seq_b = ++g_seq;
  phase("allreducem and bcastm (root %d) at once, %s port", root, comp_name(p.type));
  const size_t count = 5, blen = 300;
  std::vector<uint8_t> abuf(count * 8), bbuf(blen, k_sentinel);
  fill_elems(abuf.data(), count, seq_a);
  if (LCI_RANK == root) fill(bbuf.data(), blen, seq_b);
  port_setup side;
  side.type = p.type;
  side.ep = p.ep;
  side.c.reset(new comp(p.type == LCI_COMPLETION_NONE ? LCI_COMPLETION_QUEUE : p.type));
  LCIX_collective_t a = start_allreducem(p, LCI_mbuffer_t{abuf.data(), abuf.size()}, k_tag,
                                         ctx_of(seq_a));
  LCIX_collective_t b = nullptr;
  OK(LCIX_bcastm(p.ep, LCI_mbuffer_t{bbuf.data(), blen}, root, k_tag_side, side.handle(),
                 ctx_of(seq_b), &b));
  drive2(a, b, "two collectives");
  LCI_request_t ra = take_completion(p, "two collectives: allreducem");
  check_common(p, ra, k_tag, LCI_MEDIUM, ctx_of(seq_a), "two collectives: allreducem");
  check_mbuffer(p, ra, LCI_mbuffer_t{abuf.data(), abuf.size()}, "two collectives: allreducem");
  LCI_request_t rb = take_completion(side, "two collectives: bcastm");
  check_common(side, rb, k_tag_side, LCI_MEDIUM, ctx_of(seq_b), "two collectives: bcastm");
  check_mbuffer(side, rb, LCI_mbuffer_t{bbuf.data(), blen}, "two collectives: bcastm");
  EXPECT(bad_elem(abuf.data(), count, seq_a) == SIZE_MAX, "two collectives: allreducem wrong");
  EXPECT(mismatch(bbuf.data(), blen, seq_b) == SIZE_MAX, "two collectives: bcastm wrong");
  side.ep = nullptr;
}

void run_port(port_setup& p) {
  const int n = LCI_NUM_PROCESSES;
  const size_t medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t mcounts[] = {1, 3, medium / 8};
  const size_t lcounts[] = {1, 1000, g_long_max / 8 + 5};
  const size_t msizes[] = {0, 1, 7, 1000, medium};
  const size_t lsizes[] = {0, 1, 4099, 65536 + 11, g_long_max};
  for (int round = 0; round < g_rounds; ++round) {
    test_barrier(p, round);
    test_barrier(p, round + 1);
    for (int root = 0; root < n; ++root)
      for (size_t len : msizes) test_bcastm(p, root, len);
    for (size_t count : mcounts) test_allreducem(p, count);
    test_barrier(p, round + 2);
    int k = 0;
    for (int root = 0; root < n; ++root)
      for (size_t len : lsizes) {
        // The largest size from one root per round (time).
        if (len == g_long_max && root != (round + p.type) % n) continue;
        test_bcastl(p, root, len, ++k % 2 ? mem_kind::lalloc : mem_kind::seg_all);
      }
    for (size_t count : lcounts)
      test_allreducel(p, count, (round + static_cast<int>(count)) % 2 ? mem_kind::lalloc
                                                                      : mem_kind::seg_all);
    test_two_in_flight(p, (round + 1) % n);
    // Alternating kinds back to back on one tag.
    test_allreducem(p, 2);
    test_bcastl(p, n - 1, 100, mem_kind::seg_all);
    test_allreducel(p, 2, mem_kind::lalloc);
    test_bcastm(p, 0, 10);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      g_rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--long-max") && i + 1 < argc)
      g_long_max = strtoull(argv[++i], nullptr, 10);
    else {
      fprintf(stderr, "usage: collectives [--rounds N] [--long-max BYTES]\n");
      return 2;
    }
  }
  harness_init(240);
  const LCI_comp_type_t types[] = {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC,
                                   LCI_COMPLETION_HANDLER, LCI_COMPLETION_NONE};
  std::vector<port_setup> ports;
  for (LCI_comp_type_t t : types) {
    port_setup p;
    p.type = t;
    // Command ports: the same type, except NONE for the handler endpoint too
    // (the internal sends must complete whatever the command port says).
    p.ep = make_endpoint(t, t == LCI_COMPLETION_HANDLER ? LCI_COMPLETION_NONE : t);
    p.c.reset(new comp(t == LCI_COMPLETION_NONE ? LCI_COMPLETION_QUEUE : t));
    ports.push_back(std::move(p));
  }
  const auto t0 = steady::now();
  for (auto& p : ports) run_port(p);
  const double secs = std::chrono::duration<double>(steady::now() - t0).count();
  // A tree reduction folds each of the n-1 contributions that travel exactly
  // once: n-1 operator calls per allreduce over the job.
  const auto calls = allgather_u64(static_cast<uint64_t>(g_op_calls.load()));
  uint64_t total = 0;
  for (auto c : calls) total += c;
  const uint64_t expected = g_allreduces * static_cast<uint64_t>(LCI_NUM_PROCESSES - 1);
  EXPECT(total == expected, "the reduction operator ran %llu times in all, not %llu",
         static_cast<unsigned long long>(total), static_cast<unsigned long long>(expected));
  if (LCI_RANK == 0)
    printf("collectives: %u collectives per rank in %.2f s, %llu operator calls in all\n", g_seq,
           secs, static_cast<unsigned long long>(total));
  LCI_barrier();
  for (auto& p : ports) OK(LCI_endpoint_free(&p.ep));
  ports.clear();
  return harness_finish("collectives");
}

// The soak program: every rank streams traffic of the chosen kinds to every
// other rank while its progress threads follow a pattern, optionally with a
// rank killed mid-run (LCI_PEER_FAILURE=continue under lcrun --keep-going).
//
// usage: soak --threads 1|2|4 --pattern busy|10ms|bursts
//             --traffic medium|long|putget|iovec|am|mixed
//             --failure abort|continue [--messages M] [--timeout S]
//
// Per rank, T progress threads call LCI_progress on LCI_UR_DEVICE:
//   busy    back to back (yielding when idle);
//   10ms    once every 10 ms, the rank computing (sleeping) in between;
//   bursts  back to back for 20 ms, then 100 ms without progress.
// The main thread never calls LCI_progress: it issues operations, keeps
// receives posted and takes completions from its queues; on LCI_ERR_RETRY it
// moves on to other work and comes back.
//
// Traffic, per ordered pair of ranks and kind, M operations numbered by a
// sequence number (each message starts with a header naming its source,
// kind and sequence; the rest is a pattern of those):
//   medium  LCI_sendm into LCI_recvm (a window of receives per source);
//   long    LCI_sendl into LCI_recvl;
//   putget  LCI_putl and LCI_putm into the target's registered region (one
//           area per sequence number; the target checks the area at its
//           remote completion) and LCI_getl of the target's pattern area;
//   iovec   LCI_sendv (piggy-back bytes and two long buffers) into LCI_recvv;
//   am      LCI_puts, LCI_putma and LCI_putla to a handler at the target
//           (an endpoint whose message port is a handler);
//   mixed   all of them at once.
// Every byte received or read is checked; every completion is checked to
// arrive exactly once (a token per operation, and a (source, kind,
// sequence) bitmap at the receiver); every rank registered with
// LCIX_on_peer_failure counts the ranks reported failed.
//
// --failure continue: rank 1 raises SIGKILL on itself after it has issued a
// third of its operations. The others must report rank 1 failed and no
// other rank; their operations with rank 1 complete once, with LCI_OK and
// their bytes or LCI_ERR_FATAL naming rank 1; everything among the living
// arrives. --failure abort: no rank may be reported failed.
//
// A combination the library does not support (docs/failure.md, "Limits":
// over libfabric's shm provider a transfer in flight to a dead rank waits
// for ever) ends at once with status 2 and a line saying so.
//
// Each rank prints one line of counts and exits 0 only if every check held.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

enum kind { k_medium, k_long, k_putget, k_iovec, k_am, k_nkinds };
const char* const k_kind_names[k_nkinds] = {"medium", "long", "putget", "iovec", "am"};
const LCI_tag_t k_tags[k_nkinds] = {11, 12, 13, 14, 15};

constexpr uint32_t k_magic = 0x534f414b;  // "SOAK"
constexpr int k_victim = 1;
constexpr int k_send_window = 8;  // operations with a local completion in flight, per peer and kind
constexpr int k_recv_window = 16;  // receives posted per source and kind
constexpr size_t k_long_max = size_t(64) << 10;
constexpr size_t k_long_min = size_t(16) << 10;
constexpr size_t k_put_area = size_t(16) << 10;
constexpr size_t k_get_area = size_t(64) << 10;
constexpr size_t k_iov_max = size_t(24) << 10;
constexpr size_t k_am_long_max = size_t(48) << 10;
// libfabric shm copies at most this much of a send at once; a larger one in
// flight to a rank that died waits for ever (docs/failure.md).
constexpr size_t k_shm_inject = 4096;

struct hdr {
  uint32_t magic;
  uint16_t src;
  uint8_t kind;
  uint8_t sub;
  uint32_t seq;
  uint32_t len;
};
static_assert(sizeof(hdr) == 16, "header layout");

// ---- options and the rank's configuration --------------------------------

struct options {
  int threads = 2;
  std::string pattern = "busy";
  std::string traffic = "mixed";
  std::string failure = "abort";
  int messages = 200;
  double timeout = 60;
};
options g_opt;
int g_n = 0, g_me = 0;
bool g_continue = false;
bool g_kinds[k_nkinds] = {};
bool g_ofi_shm = false;  // every peer over libfabric's shm provider
size_t g_medium_max = 0;

uint32_t u(int x) { return static_cast<uint32_t>(x); }
uint32_t seed(int src, int dst, int k, uint32_t seq, uint32_t part = 0) {
  return seed_of(u(src), u(dst), u(k) * 8 + part, seq);
}

// Writes a header and the pattern of (src, dst, k, seq, part) after it.
void make_msg(void* p, size_t len, int src, int dst, int k, uint32_t seq, uint8_t sub,
              uint32_t part = 0) {
  auto* b = static_cast<uint8_t*>(p);
  const uint32_t s = seed(src, dst, k, seq, part);
  for (size_t i = sizeof(hdr); i < len; ++i) b[i] = pat(s, i);
  hdr h{k_magic, static_cast<uint16_t>(src), static_cast<uint8_t>(k), sub, seq, u(int(len))};
  memcpy(p, &h, sizeof(h));
}
// Pattern bytes without a header (the second buffer of an iovec, get areas).
void make_plain(void* p, size_t len, uint32_t s) {
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < len; ++i) b[i] = pat(s, i);
}
bool plain_ok(const void* p, size_t len, uint32_t s, size_t from = 0) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < len; ++i)
    if (b[i] != pat(s, from + i)) return false;
  return true;
}

// Checks a message of kind k that arrived from `src` (`len` bytes); returns
// its sequence number, or -1 (one failed check printed).
long check_msg(const void* p, size_t len, int src, int k, const char* what) {
  hdr h;
  if (len < sizeof(h)) {
    EXPECT(false, "%s from rank %d: %zu bytes, shorter than a header", what, src, len);
    return -1;
  }
  memcpy(&h, p, sizeof(h));
  if (h.magic != k_magic || h.src != src || h.kind != k || h.len != len ||
      h.seq >= u(g_opt.messages)) {
    EXPECT(false,
           "%s from rank %d: header {magic %#x, src %u, kind %u, seq %u, len %u}, %zu bytes "
           "arrived",
           what, src, h.magic, h.src, h.kind, h.seq, h.len, len);
    return -1;
  }
  const uint32_t s = seed(src, g_me, k, h.seq);
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = sizeof(hdr); i < len; ++i)
    if (b[i] != pat(s, i)) {
      EXPECT(false, "%s from rank %d, sequence %u: byte %zu of %zu differs", what, src, h.seq, i,
             len);
      return -1;
    }
  return h.seq;
}

// Message sizes of sequence `seq` (deterministic, spread over the range).
size_t medium_len(uint32_t seq, int src) {
  return sizeof(hdr) + (seq * 131u + u(src) * 17u) % (g_medium_max - sizeof(hdr) + 1);
}
size_t long_len(uint32_t seq) { return k_long_min + (seq * 4099u) % (k_long_max - k_long_min + 1); }
size_t put_len(uint32_t seq) { return 4096 + (seq * 257u) % (k_put_area - 4096 + 1); }
size_t putm_len(uint32_t seq) {
  return sizeof(hdr) + (seq * 61u) % (std::min(g_medium_max, k_put_area) - sizeof(hdr) + 1);
}
size_t get_len(uint32_t seq) { return 1024 + (seq * 509u) % (k_get_area / 2 - 1024 + 1); }
size_t get_off(uint32_t seq) { return (seq * 512u) % (k_get_area / 2); }
size_t iov_len(uint32_t seq, int i) { return 4096 + (seq * 733u + u(i) * 97u) % (k_iov_max - 4096 + 1); }
size_t am_long_len(uint32_t seq) { return k_long_min + (seq * 1031u) % (k_am_long_max - k_long_min + 1); }
// The sub-operation of sequence `seq`: putget 0 putl, 1 putm, 2 getl; am 0
// puts, 1 putma, 2 putla (putma instead over libfabric shm with a victim).
int putget_sub(uint32_t seq) { return static_cast<int>(seq % 3); }
int am_sub(uint32_t seq) {
  const int s = static_cast<int>(seq % 3);
  return s == 2 && g_ofi_shm && g_continue ? 1 : s;
}
uint32_t count_gets() {
  uint32_t n = 0;
  for (uint32_t s = 0; s < u(g_opt.messages); ++s) n += putget_sub(s) == 2 ? 1 : 0;
  return n;
}

// ---- state ----------------------------------------------------------------

// One operation or posted receive; its address is the request's
// user_context. Never reused, so that a second completion is noticed.
struct token {
  int peer;
  int k;
  int slot;
  uint32_t seq;
  int sub;
  std::atomic<bool> done{false};
};
// The state the progress threads and handlers reach is never destroyed: a
// library error that ends the process (exit) from one thread must not
// destroy it under the others.
std::mutex& g_tokens_m = *new std::mutex;
std::deque<token>& g_tokens = *new std::deque<token>;
// `sub`: the sub-operation of a send (0 or more), -1 for a posted receive.
token* new_token(int peer, int k, int slot, uint32_t seq, int sub) {
  std::lock_guard<std::mutex> l(g_tokens_m);
  g_tokens.emplace_back();
  token* t = &g_tokens.back();
  t->peer = peer;
  t->k = k;
  t->slot = slot;
  t->seq = seq;
  t->sub = sub;
  return t;
}
// Drops the newest token, never handed to LCI (the call was refused).
void drop_token(token* t) {
  std::lock_guard<std::mutex> l(g_tokens_m);
  if (t && !g_tokens.empty() && &g_tokens.back() == t) g_tokens.pop_back();
}

// Buffers of one window slot (send side or receive side).
struct slot_bufs {
  std::unique_ptr<lbuf> a, b;
  std::vector<uint8_t> m;  // medium or piggy-back bytes
  LCI_lbuffer_t arr[2];
  bool busy = false;
};

// What this rank sends to one peer, per kind.
struct send_state {
  uint32_t next = 0;      // next sequence number to issue
  uint32_t issued = 0;    // operations accepted by LCI
  uint32_t completed = 0; // of those, complete (done at return, or completion taken)
  uint32_t failed = 0;    // completed with LCI_ERR_FATAL (the victim only)
  bool refused = false;   // LCI refused the peer (failed): nothing more is issued
  int inflight = 0;
  slot_bufs slots[k_send_window];
};
// What this rank receives from one source, per kind.
struct recv_state {
  std::vector<std::atomic<uint8_t>> seen;  // by sequence number
  std::atomic<uint32_t> received{0};       // distinct messages checked
  std::atomic<uint32_t> gets{0};           // putget: remote completions of its gets here
  uint32_t posted = 0;                     // receives posted (medium, long, iovec)
  uint32_t posted_done = 0;                // of those, completed
  uint32_t failed = 0;                     // completed with LCI_ERR_FATAL
  slot_bufs slots[k_recv_window];
  explicit recv_state(size_t m) : seen(m) {}
};
std::vector<std::vector<std::unique_ptr<send_state>>>& g_send =
    *new std::vector<std::vector<std::unique_ptr<send_state>>>;  // [peer][kind]
std::vector<std::vector<std::unique_ptr<recv_state>>>& g_recv =
    *new std::vector<std::vector<std::unique_ptr<recv_state>>>;  // [source][kind]

LCI_comp_t g_lq = nullptr;  // local completions (operations and receives)
LCI_comp_t g_rq = nullptr;  // remote completions of puts and gets at this rank
LCI_comp_t g_handler = nullptr;
LCI_endpoint_t g_ep_am = nullptr;  // message port: the handler
std::vector<uint64_t> g_rq_of;     // every rank's g_rq

std::unique_ptr<lbuf>& g_region = *new std::unique_ptr<lbuf>;  // puts land here: [source][sequence] areas, then the get area
std::vector<remote_region> g_regions;
std::vector<std::vector<uint8_t>>& g_get_ref = *new std::vector<std::vector<uint8_t>>;  // every peer's get area, computed here
size_t put_off(int src, uint32_t seq) {
  return (static_cast<size_t>(src) * u(g_opt.messages) + seq) * k_put_area;
}
size_t get_area_off() { return put_off(g_n, 0); }

// Failures reported by LCIX_on_peer_failure.
std::atomic<uint64_t> g_reported{0};
std::atomic<long> g_false_failures{0};
void on_failure(int rank, void*) {
  if (rank >= 0 && rank < 64) g_reported.fetch_or(uint64_t(1) << rank);
  if (!g_continue || rank != k_victim) {
    g_false_failures.fetch_add(1);
    fprintf(stderr, "rank %d: soak: FALSE FAILURE: rank %d was reported failed (%s mode)\n", g_me,
            rank, g_continue ? "continue" : "abort");
    fflush(stderr);
  }
}

// Buffers handed to the AM handler, freed by the main thread (a handler
// must not call LCI).
std::mutex& g_deferred_m = *new std::mutex;
std::vector<LCI_mbuffer_t>& g_deferred_m_bufs = *new std::vector<LCI_mbuffer_t>;
std::vector<LCI_lbuffer_t>& g_deferred_l_bufs = *new std::vector<LCI_lbuffer_t>;

void mark(int src, int k, long seq, const char* what) {
  if (seq < 0) return;
  recv_state& r = *g_recv[static_cast<size_t>(src)][static_cast<size_t>(k)];
  const uint8_t before = r.seen[static_cast<size_t>(seq)].exchange(1);
  EXPECT(before == 0, "%s from rank %d, sequence %ld, arrived twice", what, src, seq);
  if (before == 0) r.received.fetch_add(1);
}

std::atomic<uint64_t> g_am_failed{0};
void am_handler(LCI_request_t r) {
  if (r.rank < 0 || r.rank >= g_n || r.rank == g_me) {
    EXPECT(false, "an active message names rank %d", r.rank);
    return;
  }
  EXPECT(r.tag == k_tags[k_am], "an active message from rank %d with tag %u", r.rank, r.tag);
  if (r.flag != LCI_OK) {
    // A putla from a rank that died with its data under way: LCI_ERR_FATAL,
    // the buffer (undefined contents) the program's to free.
    EXPECT(g_continue && r.rank == k_victim && r.flag == LCI_ERR_FATAL && r.type == LCI_LONG,
           "an active message from rank %d completed with flag %d, type %d", r.rank, r.flag, r.type);
    g_am_failed.fetch_add(1);
    if (r.type == LCI_LONG && r.data.lbuffer.address) {
      std::lock_guard<std::mutex> l(g_deferred_m);
      g_deferred_l_bufs.push_back(r.data.lbuffer);
    }
    return;
  }
  switch (r.type) {
    case LCI_IMMEDIATE:
      mark(r.rank, k_am, check_msg(r.data.immediate.val, LCI_SHORT_SIZE, r.rank, k_am, "LCI_puts"),
           "LCI_puts");
      break;
    case LCI_MEDIUM: {
      mark(r.rank, k_am,
           check_msg(r.data.mbuffer.address, r.data.mbuffer.length, r.rank, k_am, "LCI_putma"),
           "LCI_putma");
      std::lock_guard<std::mutex> l(g_deferred_m);
      g_deferred_m_bufs.push_back(r.data.mbuffer);
      break;
    }
    case LCI_LONG: {
      mark(r.rank, k_am,
           check_msg(r.data.lbuffer.address, r.data.lbuffer.length, r.rank, k_am, "LCI_putla"),
           "LCI_putla");
      std::lock_guard<std::mutex> l(g_deferred_m);
      g_deferred_l_bufs.push_back(r.data.lbuffer);
      break;
    }
    default:
      EXPECT(false, "an active message from rank %d of type %d", r.rank, r.type);
  }
}

void free_deferred() {
  std::vector<LCI_mbuffer_t> m;
  std::vector<LCI_lbuffer_t> l;
  {
    std::lock_guard<std::mutex> g(g_deferred_m);
    m.swap(g_deferred_m_bufs);
    l.swap(g_deferred_l_bufs);
  }
  for (const LCI_mbuffer_t& b : m) OK(LCI_mbuffer_free(b));
  for (const LCI_lbuffer_t& b : l) OK(LCI_lbuffer_free(b));
}

// ---- progress threads -------------------------------------------------------

std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_progress_calls{0};
void progress_thread(int id) {
  using namespace std::chrono;
  uint64_t calls = 0;
  // Threads of one rank start their pattern at different offsets.
  if (g_opt.pattern != "busy") std::this_thread::sleep_for(milliseconds(id * 3));
  while (!g_stop.load(std::memory_order_relaxed)) {
    if (g_opt.pattern == "busy") {
      ++calls;
      if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) sched_yield();
    } else if (g_opt.pattern == "10ms") {
      ++calls;
      LCI_progress(LCI_UR_DEVICE);
      std::this_thread::sleep_for(milliseconds(10));  // computing
    } else {  // bursts
      const auto end = steady_clock::now() + milliseconds(20);
      while (steady_clock::now() < end && !g_stop.load(std::memory_order_relaxed)) {
        ++calls;
        if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) sched_yield();
      }
      std::this_thread::sleep_for(milliseconds(100));  // computing
    }
  }
  g_progress_calls.fetch_add(calls);
}

// ---- issuing ----------------------------------------------------------------

uint64_t g_issued_total = 0, g_bytes_sent = 0;
uint64_t g_kill_after = 0;

bool peer_refused(LCI_error_t rc, int peer, send_state& s, const char* call) {
  if (rc == LCI_ERR_FATAL && g_continue && peer == k_victim) {
    s.refused = true;
    return true;
  }
  die("%s to rank %d returned %d", call, peer, rc);
}

int free_slot(slot_bufs* slots, int n) {
  for (int i = 0; i < n; ++i)
    if (!slots[i].busy) return i;
  return -1;
}

// Tries to issue the next operation of kind k to `peer`; true if it did.
bool issue_one(int peer, int k) {
  send_state& s = *g_send[static_cast<size_t>(peer)][static_cast<size_t>(k)];
  if (s.refused || s.next >= u(g_opt.messages)) return false;
  const uint32_t seq = s.next;
  const LCI_tag_t tag = k_tags[k];
  LCI_error_t rc = LCI_OK;
  const char* call = "";
  bool local_completion = false;
  token* t = nullptr;
  int si = -1;
  size_t bytes = 0;
  auto slot = [&]() -> slot_bufs* {
    si = free_slot(s.slots, k_send_window);
    return si < 0 ? nullptr : &s.slots[si];
  };
  switch (k) {
    case k_medium: {
      const size_t len = medium_len(seq, g_me);
      std::vector<uint8_t> m(len);
      make_msg(m.data(), len, g_me, peer, k, seq, 0);
      call = "LCI_sendm";
      rc = LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), len}, peer, tag);
      bytes = len;
      break;
    }
    case k_long: {
      slot_bufs* b = slot();
      if (!b) return false;
      if (!b->a) b->a.reset(new lbuf(mem_kind::seg_all, k_long_max));
      const size_t len = long_len(seq);
      make_msg(b->a->data(), len, g_me, peer, k, seq, 0);
      t = new_token(peer, k, si, seq, 0);
      call = "LCI_sendl";
      rc = LCI_sendl(LCI_UR_ENDPOINT, b->a->view(len), peer, tag, g_lq, t);
      local_completion = true;
      bytes = len;
      break;
    }
    case k_putget: {
      const int sub = putget_sub(seq);
      const remote_region& rr = g_regions[static_cast<size_t>(peer)];
      if (sub == 1) {
        const size_t len = putm_len(seq);
        std::vector<uint8_t> m(len);
        make_msg(m.data(), len, g_me, peer, k, seq, 1);
        LCI_mbuffer_t remote{reinterpret_cast<void*>(rr.addr + put_off(g_me, seq)), k_put_area};
        call = "LCI_putm";
        rc = LCI_putm(LCI_UR_ENDPOINT, LCI_mbuffer_t{m.data(), len}, peer, tag, remote,
                      g_rq_of[static_cast<size_t>(peer)]);
        bytes = len;
        break;
      }
      slot_bufs* b = slot();
      if (!b) return false;
      if (!b->a) b->a.reset(new lbuf(mem_kind::registered, k_get_area));
      t = new_token(peer, k, si, seq, sub);
      local_completion = true;
      if (sub == 0) {
        const size_t len = put_len(seq);
        make_msg(b->a->data(), len, g_me, peer, k, seq, 0);
        call = "LCI_putl";
        rc = LCI_putl(LCI_UR_ENDPOINT, b->a->view(len), g_lq, peer, tag,
                      remote_lbuffer(rr, put_off(g_me, seq), len),
                      g_rq_of[static_cast<size_t>(peer)], t);
        bytes = len;
      } else {
        const size_t len = get_len(seq);
        memset(b->a->data(), 0, len);
        LCI_lbuffer_t lb = b->a->view(len);
        call = "LCI_getl";
        rc = LCI_getl(LCI_UR_ENDPOINT, &lb, len, g_lq, peer, tag,
                      remote_lbuffer(rr, get_area_off() + get_off(seq), len),
                      g_rq_of[static_cast<size_t>(peer)], t);
      }
      break;
    }
    case k_iovec: {
      slot_bufs* b = slot();
      if (!b) return false;
      if (!b->a) {
        b->a.reset(new lbuf(mem_kind::registered, k_iov_max));
        b->b.reset(new lbuf(mem_kind::registered, k_iov_max));
      }
      const size_t l0 = iov_len(seq, 0), l1 = iov_len(seq, 1);
      const size_t piggy = std::min<size_t>(LCI_get_iovec_piggy_back_size(2), 64 + seq % 64);
      b->m.resize(piggy);
      make_msg(b->m.data(), piggy, g_me, peer, k, seq, 0);
      make_plain(b->a->data(), l0, seed(g_me, peer, k, seq, 1));
      make_plain(b->b->data(), l1, seed(g_me, peer, k, seq, 2));
      b->arr[0] = b->a->view(l0);
      b->arr[1] = b->b->view(l1);
      t = new_token(peer, k, si, seq, 0);
      call = "LCI_sendv";
      rc = LCI_sendv(LCI_UR_ENDPOINT, LCI_iovec_t{LCI_mbuffer_t{b->m.data(), piggy}, b->arr, 2},
                     peer, tag, g_lq, t);
      local_completion = true;
      bytes = piggy + l0 + l1;
      break;
    }
    case k_am: {
      const int sub = am_sub(seq);
      if (sub == 0) {
        LCI_short_t sh;
        make_msg(sh.val, LCI_SHORT_SIZE, g_me, peer, k, seq, 0);
        call = "LCI_puts";
        rc = LCI_puts(g_ep_am, sh, peer, tag, LCI_DEFAULT_COMP_REMOTE);
        bytes = LCI_SHORT_SIZE;
      } else if (sub == 1) {
        const size_t len = medium_len(seq, g_me + 7);
        std::vector<uint8_t> m(len);
        make_msg(m.data(), len, g_me, peer, k, seq, 1);
        call = "LCI_putma";
        rc = LCI_putma(g_ep_am, LCI_mbuffer_t{m.data(), len}, peer, tag, LCI_DEFAULT_COMP_REMOTE);
        bytes = len;
      } else {
        slot_bufs* b = slot();
        if (!b) return false;
        if (!b->a) b->a.reset(new lbuf(mem_kind::registered, k_am_long_max));
        const size_t len = am_long_len(seq);
        make_msg(b->a->data(), len, g_me, peer, k, seq, 2);
        t = new_token(peer, k, si, seq, 2);
        call = "LCI_putla";
        rc = LCI_putla(g_ep_am, b->a->view(len), g_lq, peer, tag, LCI_DEFAULT_COMP_REMOTE, t);
        local_completion = true;
        bytes = len;
      }
      break;
    }
  }
  if (rc != LCI_OK) drop_token(t);
  if (rc == LCI_ERR_RETRY) return false;
  if (rc != LCI_OK) return peer_refused(rc, peer, s, call);
  ++s.next;
  ++s.issued;
  ++g_issued_total;
  g_bytes_sent += bytes;
  if (local_completion) {
    s.slots[si].busy = true;
    ++s.inflight;
  } else {
    ++s.completed;
  }
  return true;
}

// Keeps the receive window of (src, k) posted; true if it posted one.
bool post_one(int src, int k) {
  if (k != k_medium && k != k_long && k != k_iovec) return false;
  recv_state& r = *g_recv[static_cast<size_t>(src)][static_cast<size_t>(k)];
  if (r.posted >= u(g_opt.messages)) return false;
  if (g_continue && src == k_victim && LCIX_peer_failed(src)) return false;
  const int si = free_slot(r.slots, k_recv_window);
  if (si < 0) return false;
  slot_bufs& b = r.slots[si];
  token* t = new_token(src, k, si, r.posted, -1);
  LCI_error_t rc;
  const char* call;
  if (k == k_medium) {
    b.m.assign(static_cast<size_t>(LCI_MEDIUM_SIZE), 0);
    call = "LCI_recvm";
    rc = LCI_recvm(LCI_UR_ENDPOINT, LCI_mbuffer_t{b.m.data(), b.m.size()}, src, k_tags[k], g_lq, t);
  } else if (k == k_long) {
    if (!b.a) b.a.reset(new lbuf(mem_kind::registered, k_long_max));
    call = "LCI_recvl";
    rc = LCI_recvl(LCI_UR_ENDPOINT, b.a->view(), src, k_tags[k], g_lq, t);
  } else {
    if (!b.a) {
      b.a.reset(new lbuf(mem_kind::registered, k_iov_max));
      b.b.reset(new lbuf(mem_kind::registered, k_iov_max));
    }
    b.m.assign(LCI_get_iovec_piggy_back_size(2), 0);
    b.arr[0] = b.a->view();
    b.arr[1] = b.b->view();
    call = "LCI_recvv";
    rc = LCI_recvv(LCI_UR_ENDPOINT, LCI_iovec_t{LCI_mbuffer_t{b.m.data(), b.m.size()}, b.arr, 2},
                   src, k_tags[k], g_lq, t);
  }
  if (rc != LCI_OK) drop_token(t);
  if (rc == LCI_ERR_RETRY) return false;
  if (rc != LCI_OK) {
    if (rc == LCI_ERR_FATAL && g_continue && src == k_victim) return false;
    die("%s from rank %d returned %d", call, src, rc);
  }
  b.busy = true;
  ++r.posted;
  return true;
}

// ---- completions ------------------------------------------------------------

uint64_t g_failed_ops = 0;

// A completion in g_lq: an operation of this rank or a posted receive.
// True if it is the token's first completion.
bool local_completion(const LCI_request_t& r) {
  auto* t = static_cast<token*>(r.user_context);
  if (!t) {
    EXPECT(false, "a local completion without user_context (flag %d, rank %d, tag %u)", r.flag,
           r.rank, r.tag);
    return false;
  }
  const bool twice = t->done.exchange(true);
  EXPECT(!twice, "the %s operation with rank %d (sequence %u) completed twice",
         k_kind_names[t->k], t->peer, t->seq);
  if (twice) return false;
  if (r.flag != LCI_OK) {
    EXPECT(g_continue && t->peer == k_victim && r.flag == LCI_ERR_FATAL && r.rank == k_victim,
           "the %s operation with rank %d (sequence %u) completed with {flag %d, rank %d}",
           k_kind_names[t->k], t->peer, t->seq, r.flag, r.rank);
    ++g_failed_ops;
  } else {
    EXPECT(r.rank == t->peer, "the %s operation with rank %d completed naming rank %d",
           k_kind_names[t->k], t->peer, r.rank);
  }
  return true;
}

void on_recv_completion(const LCI_request_t& r, token* t) {
  recv_state& rs = *g_recv[static_cast<size_t>(t->peer)][static_cast<size_t>(t->k)];
  slot_bufs& b = rs.slots[t->slot];
  b.busy = false;
  ++rs.posted_done;
  if (r.flag != LCI_OK) {
    ++rs.failed;
    return;
  }
  if (t->k == k_medium) {
    EXPECT(r.type == LCI_MEDIUM && r.data.mbuffer.address == b.m.data(),
           "a medium receive completed with type %d, buffer %p", r.type, r.data.mbuffer.address);
    mark(t->peer, k_medium,
         check_msg(b.m.data(), r.data.mbuffer.length, t->peer, k_medium, "LCI_sendm"), "LCI_sendm");
  } else if (t->k == k_long) {
    EXPECT(r.type == LCI_LONG && r.data.lbuffer.address == b.a->data(),
           "a long receive completed with type %d, buffer %p", r.type, r.data.lbuffer.address);
    mark(t->peer, k_long, check_msg(b.a->data(), r.data.lbuffer.length, t->peer, k_long, "LCI_sendl"),
         "LCI_sendl");
  } else {
    const LCI_iovec_t& v = r.data.iovec;
    if (!(r.type == LCI_IOVEC && v.count == 2 && v.lbuffers == b.arr)) {
      EXPECT(false, "an iovec receive completed with type %d, count %d", r.type, v.count);
      return;
    }
    const long seq = check_msg(b.m.data(), v.piggy_back.length, t->peer, k_iovec, "LCI_sendv");
    if (seq < 0) return;
    const uint32_t sq = static_cast<uint32_t>(seq);
    EXPECT(v.lbuffers[0].length == iov_len(sq, 0) && v.lbuffers[1].length == iov_len(sq, 1) &&
               plain_ok(b.a->data(), iov_len(sq, 0), seed(t->peer, g_me, k_iovec, sq, 1)) &&
               plain_ok(b.b->data(), iov_len(sq, 1), seed(t->peer, g_me, k_iovec, sq, 2)),
           "the iovec from rank %d, sequence %u: lengths %zu %zu or bytes differ", t->peer, sq,
           v.lbuffers[0].length, v.lbuffers[1].length);
    mark(t->peer, k_iovec, seq, "LCI_sendv");
  }
}

void on_send_completion(const LCI_request_t& r, token* t) {
  send_state& s = *g_send[static_cast<size_t>(t->peer)][static_cast<size_t>(t->k)];
  slot_bufs& b = s.slots[t->slot];
  b.busy = false;
  --s.inflight;
  ++s.completed;
  if (r.flag != LCI_OK) {
    ++s.failed;
    return;
  }
  if (t->k == k_putget && t->sub == 2) {
    const size_t len = get_len(t->seq), off = get_off(t->seq);
    EXPECT(memcmp(b.a->data(), g_get_ref[static_cast<size_t>(t->peer)].data() + off, len) == 0,
           "the getl from rank %d, sequence %u (%zu bytes at %zu) read other bytes", t->peer,
           t->seq, len, off);
  }
}

void take_local() {
  LCI_request_t rq[64];
  size_t n = 0;
  OK(LCI_queue_pop_multiple(g_lq, 64, rq, &n));
  for (size_t i = 0; i < n; ++i) {
    const LCI_request_t& r = rq[i];
    auto* t = static_cast<token*>(r.user_context);
    if (!local_completion(r)) continue;
    if (t->sub < 0)  // a posted receive
      on_recv_completion(r, t);
    else
      on_send_completion(r, t);
  }
}

// A completion in g_rq: a putl or putm that landed here, or a getl that read here.
void take_remote() {
  LCI_request_t rq[64];
  size_t n = 0;
  OK(LCI_queue_pop_multiple(g_rq, 64, rq, &n));
  for (size_t i = 0; i < n; ++i) {
    const LCI_request_t& r = rq[i];
    if (r.rank < 0 || r.rank >= g_n || r.rank == g_me) {
      EXPECT(false, "a remote completion names rank %d", r.rank);
      continue;
    }
    if (!(r.flag == LCI_OK && r.tag == k_tags[k_putget])) {
      EXPECT(false, "a remote completion from rank %d: flag %d, tag %u", r.rank, r.flag, r.tag);
      continue;
    }
    const auto base = reinterpret_cast<uintptr_t>(g_region->data());
    uintptr_t addr;
    size_t len;
    if (r.type == LCI_MEDIUM) {
      addr = reinterpret_cast<uintptr_t>(r.data.mbuffer.address);
      len = r.data.mbuffer.length;
    } else if (r.type == LCI_LONG) {
      addr = reinterpret_cast<uintptr_t>(r.data.lbuffer.address);
      len = r.data.lbuffer.length;
    } else {
      EXPECT(false, "a remote completion from rank %d of type %d", r.rank, r.type);
      continue;
    }
    if (addr >= base + get_area_off()) {
      // A getl of this rank's get area.
      EXPECT(r.type == LCI_LONG && addr + len <= base + get_area_off() + k_get_area,
             "a get from rank %d names [%#lx, +%zu)", r.rank, static_cast<unsigned long>(addr), len);
      g_recv[static_cast<size_t>(r.rank)][k_putget]->gets.fetch_add(1);
      continue;
    }
    const size_t off = addr - base;
    const size_t seq = (off - put_off(r.rank, 0)) / k_put_area;
    if (addr < base || off < put_off(r.rank, 0) || seq >= u(g_opt.messages) ||
        off != put_off(r.rank, static_cast<uint32_t>(seq))) {
      EXPECT(false, "a put from rank %d landed at offset %zu, outside its areas", r.rank, off);
      continue;
    }
    const long got = check_msg(reinterpret_cast<void*>(addr), len, r.rank, k_putget,
                               r.type == LCI_LONG ? "LCI_putl" : "LCI_putm");
    EXPECT(got < 0 || static_cast<size_t>(got) == seq, "a put from rank %d for sequence %ld landed in the area of %zu",
           r.rank, got, seq);
    mark(r.rank, k_putget, got, r.type == LCI_LONG ? "LCI_putl" : "LCI_putm");
  }
}

// ---- completion conditions --------------------------------------------------

uint32_t expected_from(int k) {
  if (k != k_putget) return u(g_opt.messages);
  return u(g_opt.messages) - count_gets();  // the puts; the gets are counted apart
}

bool victim_gone(int p) { return g_continue && p == k_victim && LCIX_peer_failed(p); }

bool all_done() {
  if (g_continue && g_me != k_victim && !LCIX_peer_failed(k_victim)) return false;
  for (int p = 0; p < g_n; ++p) {
    if (p == g_me) continue;
    for (int k = 0; k < k_nkinds; ++k) {
      if (!g_kinds[k]) continue;
      const send_state& s = *g_send[static_cast<size_t>(p)][static_cast<size_t>(k)];
      if (s.inflight > 0) return false;
      if (s.next < u(g_opt.messages) && !s.refused && !victim_gone(p)) return false;
      const recv_state& r = *g_recv[static_cast<size_t>(p)][static_cast<size_t>(k)];
      if (r.posted != r.posted_done) return false;
      if (victim_gone(p)) continue;
      if (r.received.load() < expected_from(k)) return false;
      if (k == k_putget && r.gets.load() < count_gets()) return false;
    }
  }
  return true;
}

void print_missing() {
  for (int p = 0; p < g_n; ++p) {
    if (p == g_me) continue;
    for (int k = 0; k < k_nkinds; ++k) {
      if (!g_kinds[k]) continue;
      const send_state& s = *g_send[static_cast<size_t>(p)][static_cast<size_t>(k)];
      const recv_state& r = *g_recv[static_cast<size_t>(p)][static_cast<size_t>(k)];
      fprintf(stderr,
              "rank %d: soak: %s with rank %d%s: issued %u of %d (%d in flight%s), received %u of "
              "%u%s, receives posted %u, completed %u\n",
              g_me, k_kind_names[k], p, LCIX_peer_failed(p) ? " (failed)" : "", s.issued,
              g_opt.messages, s.inflight, s.refused ? ", refused" : "", r.received.load(),
              expected_from(k), k == k_putget ? (" + gets " + std::to_string(r.gets.load())).c_str() : "",
              r.posted, r.posted_done);
    }
  }
}

// ---- setup --------------------------------------------------------------------

void usage() {
  fprintf(stderr,
          "usage: soak --threads N --pattern busy|10ms|bursts "
          "--traffic medium|long|putget|iovec|am|mixed --failure abort|continue "
          "[--messages M] [--timeout S]\n");
  exit(2);
}

void parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[++i];
    if (a == "--threads")
      g_opt.threads = atoi(v);
    else if (a == "--pattern")
      g_opt.pattern = v;
    else if (a == "--traffic")
      g_opt.traffic = v;
    else if (a == "--failure")
      g_opt.failure = v;
    else if (a == "--messages")
      g_opt.messages = atoi(v);
    else if (a == "--timeout")
      g_opt.timeout = atof(v);
    else
      usage();
  }
  if (g_opt.threads < 1 || g_opt.threads > 64 || g_opt.messages < 3 || g_opt.messages > 100000 ||
      g_opt.timeout <= 0)
    usage();
  if (g_opt.pattern != "busy" && g_opt.pattern != "10ms" && g_opt.pattern != "bursts") usage();
  if (g_opt.failure != "abort" && g_opt.failure != "continue") usage();
  bool known = g_opt.traffic == "mixed";
  for (int k = 0; k < k_nkinds; ++k) {
    g_kinds[k] = g_opt.traffic == "mixed" || g_opt.traffic == k_kind_names[k];
    known = known || g_opt.traffic == k_kind_names[k];
  }
  if (!known) usage();
  g_continue = g_opt.failure == "continue";
}

// Refuses (status 2, one line) a combination the library does not support.
void refuse_unsupported() {
  const char* shm = getenv("LCI_SHM");
  const char* prov = getenv("FI_PROVIDER");
  g_ofi_shm = shm && strcmp(shm, "0") == 0 && prov && strcmp(prov, "shm") == 0;
  const char* why = nullptr;
  if (g_continue) {
    const char* pf = getenv("LCI_PEER_FAILURE");
    if (!pf || strcmp(pf, "continue") != 0) why = "--failure continue needs LCI_PEER_FAILURE=continue";
    if (g_ofi_shm && (g_kinds[k_long] || g_kinds[k_putget] || g_kinds[k_iovec]))
      why = "over libfabric's shm provider a long message, put or get in flight to a rank that "
            "died waits for ever (docs/failure.md, Limits): with a rank killed only medium and am "
            "traffic is supported there";
  }
  if (why) {
    if (g_me == 0)
      fprintf(stderr, "soak: unsupported combination (%s traffic, %s): %s\n",
              g_opt.traffic.c_str(), g_opt.failure.c_str(), why);
    fflush(stderr);
    OK(LCI_finalize());
    exit(2);
  }
}

void setup() {
  g_n = LCI_NUM_PROCESSES;
  g_me = LCI_RANK;
  if (g_n < 2 || g_n > 64) die("runs on 2 to 64 ranks");
  if (g_continue && g_n < 3) die("--failure continue runs on at least 3 ranks");
  g_medium_max = static_cast<size_t>(LCI_MEDIUM_SIZE);
  if (g_ofi_shm && g_continue) g_medium_max = std::min(g_medium_max, k_shm_inject);
  const size_t m = static_cast<size_t>(g_opt.messages);
  g_send.resize(static_cast<size_t>(g_n));
  g_recv.resize(static_cast<size_t>(g_n));
  for (int p = 0; p < g_n; ++p)
    for (int k = 0; k < k_nkinds; ++k) {
      g_send[static_cast<size_t>(p)].emplace_back(new send_state);
      g_recv[static_cast<size_t>(p)].emplace_back(new recv_state(m));
    }
  OK(LCI_queue_create(LCI_UR_DEVICE, &g_lq));
  OK(LCI_queue_create(LCI_UR_DEVICE, &g_rq));
  g_rq_of = allgather_u64(reinterpret_cast<uintptr_t>(g_rq));

  // The endpoint of active messages: its message port is the handler.
  OK(LCI_handler_create(LCI_UR_DEVICE, &am_handler, &g_handler));
  LCI_plist_t pl;
  OK(LCI_plist_create(&pl));
  OK(LCI_plist_set_comp_type(pl, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE));
  OK(LCI_plist_set_comp_type(pl, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER));
  OK(LCI_plist_set_default_comp(pl, g_handler));
  OK(LCI_endpoint_init(&g_ep_am, LCI_UR_DEVICE, pl));
  OK(LCI_plist_free(&pl));

  // The registered region: every source's put areas, then the get area.
  const size_t len = get_area_off() + k_get_area;
  g_region.reset(new lbuf(mem_kind::registered, len));
  make_plain(g_region->data() + get_area_off(), k_get_area, seed(g_me, g_me, k_putget, 0, 7));
  g_regions = exchange_regions(g_region->segment(), g_region->data(), len);
  g_get_ref.resize(static_cast<size_t>(g_n));
  for (int p = 0; p < g_n; ++p) {
    g_get_ref[static_cast<size_t>(p)].resize(k_get_area);
    make_plain(g_get_ref[static_cast<size_t>(p)].data(), k_get_area, seed(p, p, k_putget, 0, 7));
  }
  OK(LCIX_on_peer_failure(&on_failure, nullptr));

  uint64_t total = 0;
  for (int k = 0; k < k_nkinds; ++k) total += g_kinds[k] ? m * u(g_n - 1) : 0;
  g_kill_after = total / 3;
}

}  // namespace

int main(int argc, char** argv) {
  parse(argc, argv);
  harness_init(g_opt.timeout + 60);
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  refuse_unsupported();
  phase("setup");
  setup();
  OK(LCI_barrier());

  const auto t0 = steady::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < g_opt.threads; ++i) threads.emplace_back(progress_thread, i);

  phase("traffic");
  const deadline d(g_opt.timeout);
  while (!all_done()) {
    bool did = false;
    for (int p = 0; p < g_n; ++p) {
      if (p == g_me) continue;
      for (int k = 0; k < k_nkinds; ++k) {
        if (!g_kinds[k]) continue;
        for (int i = 0; i < 4 && post_one(p, k); ++i) did = true;
        if (issue_one(p, k)) did = true;
      }
    }
    take_local();
    take_remote();
    free_deferred();
    if (g_continue && g_me == k_victim && g_issued_total >= g_kill_after) {
      fprintf(stderr, "rank %d: soak: raising SIGKILL after %llu operations\n", g_me,
              static_cast<unsigned long long>(g_issued_total));
      fflush(stderr);
      raise(SIGKILL);
    }
    if (d.passed()) {
      g_stop = true;
      print_missing();
      die("the traffic did not complete within %.0f s (%s)", g_opt.timeout,
          g_continue && !LCIX_peer_failed(k_victim) ? "rank 1 not reported failed" : "see above");
    }
    if (!did) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  phase("stopping the progress threads");
  g_stop = true;
  for (std::thread& t : threads) t.join();
  const double secs = std::chrono::duration<double>(steady::now() - t0).count();
  free_deferred();

  // No living rank reported failed (and in abort mode, none at all).
  for (int p = 0; p < g_n; ++p)
    if (p != g_me && !(g_continue && p == k_victim))
      EXPECT(!LCIX_peer_failed(p), "rank %d, alive, is marked failed", p);
  EXPECT(g_false_failures.load() == 0, "%ld false failure reports", g_false_failures.load());
  if (g_continue)
    EXPECT(g_reported.load() == (uint64_t(1) << k_victim),
           "the failure callback reported ranks %#llx, expected rank %d alone",
           static_cast<unsigned long long>(g_reported.load()), k_victim);

  uint64_t received = 0, posted_failed = g_am_failed.load(), send_failed = 0;
  for (int p = 0; p < g_n; ++p)
    for (int k = 0; k < k_nkinds; ++k) {
      received += g_recv[static_cast<size_t>(p)][static_cast<size_t>(k)]->received.load() +
                  g_recv[static_cast<size_t>(p)][static_cast<size_t>(k)]->gets.load();
      posted_failed += g_recv[static_cast<size_t>(p)][static_cast<size_t>(k)]->failed;
      send_failed += g_send[static_cast<size_t>(p)][static_cast<size_t>(k)]->failed;
    }

  phase("finalize");
  const LCI_error_t brc = LCI_barrier();
  EXPECT(brc == (g_continue ? LCI_ERR_FATAL : LCI_OK), "LCI_barrier returned %d", brc);
  g_region.reset();
  g_send.clear();
  g_recv.clear();
  OK(LCI_endpoint_free(&g_ep_am));
  OK(LCI_queue_free(&g_lq));
  OK(LCI_queue_free(&g_rq));
  OK(LCI_finalize());
  const long failures = g_failures.load();
  const char* shm = getenv("LCI_SHM");
  const char* prov = getenv("FI_PROVIDER");
  const char* cma = getenv("LCI_SHM_CMA");
  const char* transport = shm && strcmp(shm, "0") == 0 ? (prov ? prov : "ofi")
                          : cma && strcmp(cma, "0") == 0 ? "native-nocma"
                                                         : "native";
  printf("rank %d: soak %s: %s threads %d pattern %s traffic %s failure %s: %llu operations "
         "(%llu bytes), %llu received, %llu failed with rank %d, %llu progress calls, %ld checks, "
         "%ld failed, %ld false failures, %.1f s\n",
         g_me, failures ? "FAILED" : "passed", transport, g_opt.threads, g_opt.pattern.c_str(),
         g_opt.traffic.c_str(), g_opt.failure.c_str(),
         static_cast<unsigned long long>(g_issued_total),
         static_cast<unsigned long long>(g_bytes_sent), static_cast<unsigned long long>(received),
         static_cast<unsigned long long>(send_failed + posted_failed), k_victim,
         static_cast<unsigned long long>(g_progress_calls.load()), g_checks.load(), failures,
         g_false_failures.load(), secs);
  return failures ? 1 : 0;
}

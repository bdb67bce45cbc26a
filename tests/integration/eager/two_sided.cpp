// Two-sided short and medium messages between all ranks, from T threads per
// rank, for every completion type, both match types, sizes 0 ... LCI_MEDIUM_SIZE,
// with the receive posted before the message arrives and after it.
//
// Every received byte and every request field is checked: flag, rank, tag,
// type, data (address and length), user_context; send-side requests of
// LCI_sendmc too. Exits non-zero on the first run with a failure.
//
// usage: two_sided [--threads T]
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lci.h"

namespace {

int g_threads = 1;

enum class op { short_msg, medium_copy, medium_lci_buffer, medium_with_completion };
const char* op_name(op o) {
  switch (o) {
    case op::short_msg: return "sends/recvs";
    case op::medium_copy: return "sendm/recvm";
    case op::medium_lci_buffer: return "sendmn(mbuffer)/recvmn";
    case op::medium_with_completion: return "sendmc/recvm";
  }
  return "?";
}
using lci_test::comp_name;
using lci_test::thread_barrier;

constexpr int msgs_per_peer = 2;

unsigned char pattern(int src, int dst, LCI_tag_t tag, size_t i) {
  return static_cast<unsigned char>(src * 31 + dst * 17 + tag * 7 + i * 13 + 1);
}

LCI_tag_t tag_of(int src, int thread, int k) {
  return static_cast<LCI_tag_t>((src * g_threads + thread) * msgs_per_peer + k);
}

// One expected completion: what it must look like once it arrives.
struct slot {
  LCI_request_t req;
  std::atomic<int> done{0};
  int peer = 0;
  LCI_tag_t tag = 0;
  std::vector<unsigned char> buffer;  // recvm target / sendmc source
  void* sent_address = nullptr;
};

void on_handler(LCI_request_t r) {
  auto* s = static_cast<slot*>(r.user_context);
  s->req = r;
  s->done.store(1, std::memory_order_release);
}

// The completion objects one thread uses for one run.
struct comps {
  LCI_comp_type_t type;
  LCI_comp_t recv = nullptr, send = nullptr;
  int expected;
  comps(LCI_comp_type_t t, int n) : type(t), expected(n) {
    switch (t) {
      case LCI_COMPLETION_QUEUE:
        LCI_queue_create(LCI_UR_DEVICE, &recv);
        LCI_queue_create(LCI_UR_DEVICE, &send);
        break;
      case LCI_COMPLETION_SYNC:
        LCI_sync_create(LCI_UR_DEVICE, n, &recv);
        LCI_sync_create(LCI_UR_DEVICE, n, &send);
        break;
      default:
        LCI_handler_create(LCI_UR_DEVICE, on_handler, &recv);
        LCI_handler_create(LCI_UR_DEVICE, on_handler, &send);
    }
  }
  ~comps() {
    if (type == LCI_COMPLETION_QUEUE) {
      size_t len = 1;
      LCI_queue_len(recv, &len);
      EXPECT(len == 0, "receive queue holds %zu extra entries", len);
      LCI_queue_free(&recv);
      LCI_queue_free(&send);
    } else if (type == LCI_COMPLETION_SYNC) {
      EXPECT(LCI_sync_test(recv, nullptr) == LCI_ERR_RETRY, "sync triggered again");
      LCI_sync_free(&recv);
      LCI_sync_free(&send);
    }
  }
};

// Waits until all `slots` completed through `comp` (driving progress), and
// copies each request into its slot (found through user_context).
void wait_all(LCI_comp_type_t type, LCI_comp_t comp, std::vector<slot>& slots) {
  const size_t n = slots.size();
  if (n == 0) return;
  if (type == LCI_COMPLETION_QUEUE) {
    size_t got = 0;
    while (got < n) {
      LCI_request_t r;
      if (LCI_queue_pop(comp, &r) == LCI_OK) {
        auto* s = static_cast<slot*>(r.user_context);
        EXPECT(s >= slots.data() && s < slots.data() + n, "user_context %p is not ours",
               r.user_context);
        if (!(s >= slots.data() && s < slots.data() + n)) return;
        EXPECT(s->done.load() == 0, "completed twice");
        s->req = r;
        s->done.store(1);
        ++got;
      } else {
        LCI_progress(LCI_UR_DEVICE);
      }
    }
  } else if (type == LCI_COMPLETION_SYNC) {
    std::vector<LCI_request_t> reqs(n);
    while (LCI_sync_test(comp, reqs.data()) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
    for (auto& r : reqs) {
      auto* s = static_cast<slot*>(r.user_context);
      EXPECT(s >= slots.data() && s < slots.data() + n, "user_context %p is not ours",
             r.user_context);
      if (!(s >= slots.data() && s < slots.data() + n)) return;
      EXPECT(s->done.load() == 0, "completed twice");
      s->req = r;
      s->done.store(1);
    }
  } else {
    for (auto& s : slots)
      while (!s.done.load(std::memory_order_acquire)) LCI_progress(LCI_UR_DEVICE);
  }
}

struct run_spec {
  LCI_endpoint_t ep;
  LCI_match_t match;
  LCI_comp_type_t comp;
  op kind;
  size_t size;
  bool late;  // receives posted after the messages were sent
};

void post_receives(const run_spec& rs, int /*me*/, int /*thread*/, comps& c,
                   std::vector<slot>& rslots) {
  for (auto& s : rslots) {
    int from = rs.match == LCI_MATCH_TAG ? LCI_RANK_ANY : s.peer;
    LCI_error_t rc;
    switch (rs.kind) {
      case op::short_msg:
        rc = LCI_recvs(rs.ep, from, s.tag, c.recv, &s);
        break;
      case op::medium_lci_buffer:
        rc = LCI_recvmn(rs.ep, from, s.tag, c.recv, &s);
        break;
      default: {
        LCI_mbuffer_t b;
        b.address = s.buffer.data();
        b.length = s.buffer.size();
        rc = LCI_recvm(rs.ep, b, from, s.tag, c.recv, &s);
      }
    }
    EXPECT(rc == LCI_OK, "receive post returned %d", rc);
  }
}

void send_all(const run_spec& rs, int me, int /*thread*/, comps& c, std::vector<slot>& sslots) {
  for (auto& s : sslots) {
    const int to = s.peer;
    LCI_error_t rc;
    if (rs.kind == op::short_msg) {
      LCI_short_t v;
      for (size_t i = 0; i < LCI_SHORT_SIZE; ++i) v.val[i] = static_cast<char>(pattern(me, to, s.tag, i));
      while ((rc = LCI_sends(rs.ep, v, to, s.tag)) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
    } else if (rs.kind == op::medium_lci_buffer) {
      LCI_mbuffer_t b;
      while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &b) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
      EXPECT(b.length == static_cast<size_t>(LCI_MEDIUM_SIZE), "mbuffer length %zu", b.length);
      for (size_t i = 0; i < rs.size; ++i)
        static_cast<unsigned char*>(b.address)[i] = pattern(me, to, s.tag, i);
      b.length = rs.size;
      while ((rc = LCI_sendmn(rs.ep, b, to, s.tag)) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
    } else {
      for (size_t i = 0; i < rs.size; ++i) s.buffer[i] = pattern(me, to, s.tag, i);
      LCI_mbuffer_t b;
      b.address = rs.size ? s.buffer.data() : nullptr;
      b.length = rs.size;
      s.sent_address = b.address;
      if (rs.kind == op::medium_with_completion)
        while ((rc = LCI_sendmc(rs.ep, b, to, s.tag, c.send, &s)) == LCI_ERR_RETRY)
          LCI_progress(LCI_UR_DEVICE);
      else
        while ((rc = LCI_sendm(rs.ep, b, to, s.tag)) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
    }
    EXPECT(rc == LCI_OK, "send returned %d", rc);
  }
}

void check_receives(const run_spec& rs, int me, std::vector<slot>& rslots) {
  for (auto& s : rslots) {
    const LCI_request_t& r = s.req;
    EXPECT(s.done.load() == 1, "receive from %d tag %u never completed", s.peer, s.tag);
    EXPECT(r.flag == LCI_OK, "flag %d", r.flag);
    EXPECT(r.rank == s.peer, "rank %d, expected %d", r.rank, s.peer);
    EXPECT(r.tag == s.tag, "tag %u, expected %u", r.tag, s.tag);
    EXPECT(r.user_context == &s, "user_context");
    if (rs.kind == op::short_msg) {
      EXPECT(r.type == LCI_IMMEDIATE, "type %d", r.type);
      bool ok = true;
      for (size_t i = 0; i < LCI_SHORT_SIZE; ++i)
        ok &= static_cast<unsigned char>(r.data.immediate.val[i]) == pattern(s.peer, me, s.tag, i);
      EXPECT(ok, "short payload from %d differs", s.peer);
      continue;
    }
    EXPECT(r.type == LCI_MEDIUM, "type %d", r.type);
    EXPECT(r.data.mbuffer.length == rs.size, "length %zu, expected %zu", r.data.mbuffer.length,
           rs.size);
    const auto* got = static_cast<const unsigned char*>(r.data.mbuffer.address);
    if (rs.kind == op::medium_lci_buffer) {
      EXPECT(got != nullptr, "recvmn delivered no buffer");
    } else {
      EXPECT(got == s.buffer.data(), "recvm delivered %p, not the posted buffer", (const void*)got);
    }
    if (!got) continue;
    bool ok = true;
    const size_t n = std::min(rs.size, r.data.mbuffer.length);
    for (size_t i = 0; i < n; ++i) ok &= got[i] == pattern(s.peer, me, s.tag, i);
    EXPECT(ok, "%zu-byte payload from %d differs", rs.size, s.peer);
    if (rs.kind != op::medium_lci_buffer) {
      // Bytes past the message are untouched.
      bool untouched = true;
      for (size_t i = rs.size; i < s.buffer.size(); ++i) untouched &= s.buffer[i] == 0xEE;
      EXPECT(untouched, "recvm wrote past the message");
    } else {
      LCI_mbuffer_t b = r.data.mbuffer;
      EXPECT(LCI_mbuffer_free(b) == LCI_OK, "mbuffer_free");
    }
  }
}

void check_send_completions(const run_spec& rs, std::vector<slot>& sslots) {
  for (auto& s : sslots) {
    const LCI_request_t& r = s.req;
    EXPECT(r.flag == LCI_OK, "send flag %d", r.flag);
    EXPECT(r.rank == s.peer, "send rank %d, expected %d", r.rank, s.peer);
    EXPECT(r.tag == s.tag, "send tag %u", r.tag);
    EXPECT(r.type == LCI_MEDIUM, "send type %d", r.type);
    EXPECT(r.data.mbuffer.address == s.sent_address, "send address");
    EXPECT(r.data.mbuffer.length == rs.size, "send length %zu", r.data.mbuffer.length);
    EXPECT(r.user_context == &s, "send user_context");
  }
}

void thread_run(const run_spec& rs, int thread, thread_barrier& tb) {
  const int me = LCI_RANK, n = LCI_NUM_PROCESSES;
  const int count = n * msgs_per_peer;
  comps c(rs.comp, count);
  std::vector<slot> rslots(static_cast<size_t>(count)), sslots(static_cast<size_t>(count));
  const size_t cap = rs.kind == op::short_msg ? 0 : static_cast<size_t>(LCI_MEDIUM_SIZE);
  for (int p = 0; p < n; ++p)
    for (int k = 0; k < msgs_per_peer; ++k) {
      slot& r = rslots[static_cast<size_t>(p * msgs_per_peer + k)];
      r.peer = p;
      r.tag = tag_of(p, thread, k);
      r.buffer.assign(cap, 0xEE);
      slot& s = sslots[static_cast<size_t>(p * msgs_per_peer + k)];
      s.peer = p;
      s.tag = tag_of(me, thread, k);
      s.buffer.assign(rs.size, 0);
    }
  auto everyone_sync = [&] {
    tb.wait();
    if (thread == 0) LCI_barrier();
    tb.wait();
  };
  if (!rs.late) {
    post_receives(rs, me, thread, c, rslots);
    everyone_sync();
    send_all(rs, me, thread, c, sslots);
  } else {
    send_all(rs, me, thread, c, sslots);
    everyone_sync();
    post_receives(rs, me, thread, c, rslots);
  }
  wait_all(rs.comp, c.recv, rslots);
  check_receives(rs, me, rslots);
  if (rs.kind == op::medium_with_completion) {
    wait_all(rs.comp, c.send, sslots);
    check_send_completions(rs, sslots);
  }
  everyone_sync();
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) g_threads = atoi(argv[++i]);
  }
  LCI_initialize();
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t sizes[] = {0, 1, 8, 63, 64, 65, 1000, 4095, 4096, 4097, m - 1, m};
  const LCI_match_t matches[] = {LCI_MATCH_RANKTAG, LCI_MATCH_TAG};
  const LCI_comp_type_t types[] = {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC,
                                   LCI_COMPLETION_HANDLER};
  const op ops[] = {op::short_msg, op::medium_copy, op::medium_lci_buffer,
                    op::medium_with_completion};
  int runs = 0;
  for (LCI_match_t match : matches)
    for (LCI_comp_type_t comp : types) {
      LCI_plist_t plist;
      LCI_plist_create(&plist);
      LCI_plist_set_match_type(plist, match);
      LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, comp);
      LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, comp);
      LCI_endpoint_t ep;
      LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
      LCI_plist_free(&plist);
      for (op kind : ops)
        for (size_t size : sizes) {
          if (kind == op::short_msg && size != 0) continue;
          for (bool late : {false, true}) {
            run_spec rs{ep, match, comp, kind, kind == op::short_msg ? LCI_SHORT_SIZE : size,
                        late};
            thread_barrier tb(g_threads);
            std::vector<std::thread> threads;
            for (int t = 1; t < g_threads; ++t)
              threads.emplace_back([&, t] { thread_run(rs, t, tb); });
            thread_run(rs, 0, tb);
            for (auto& th : threads) th.join();
            ++runs;
            if (lci_test::g_failures.load()) {
              fprintf(stderr, "rank %d: FAILED run: %s, %s match, %s completion, %zu bytes, %s\n",
                      LCI_RANK, op_name(kind), match == LCI_MATCH_TAG ? "tag" : "rank+tag",
                      comp_name(comp), rs.size, late ? "receive after arrival" : "receive first");
              return 1;
            }
          }
        }
      LCI_endpoint_free(&ep);
    }
  LCI_finalize();
  printf("rank %d: two_sided passed: %d runs, %ld checks, %d threads\n", LCI_RANK, runs,
         lci_test::g_checks.load(), g_threads);
  return 0;
}

// The one owner of each peer's state (see peer_failure.hpp).
#include "lci/core/peer_failure.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "lci/util/clock.hpp"
#include "lci/util/log.hpp"

namespace lci {

std::atomic<bool> g_any_peer_failed{false};
std::atomic<bool> g_any_peer_troubled{false};
std::atomic<uint32_t> g_peer_failure_epoch{0};

namespace {

// One rank's state, on its own cache line (the transports' threads report
// and read it concurrently).
struct alignas(64) peer_slot {
  std::atomic<uint8_t> state{0};            // peer_state
  std::atomic<uint8_t> reported{0};         // callback ran
  std::atomic<int64_t> suspected_since{0};  // steady clock, ns: when it became suspected
};

struct failure_state {
  bool continues = false;
  int nranks = 0;
  std::unique_ptr<peer_slot[]> peers;
  std::mutex callback_lock;
  void (*fn)(int, void*) = nullptr;
  void* ctx = nullptr;
};

failure_state g_state;

bool confirms_death(net::evidence e) {
  switch (e) {
    case net::evidence::pid_gone:
    case net::evidence::listener_refuses:
    case net::evidence::declared:
      return true;
    default:
      return false;
  }
}

void declare_dead(int rank, const char* why) {
  peer_slot& p = g_state.peers[rank];
  if (p.state.exchange(static_cast<uint8_t>(peer_state::dead), std::memory_order_acq_rel) ==
      static_cast<uint8_t>(peer_state::dead))
    return;
  LCI_WARN("rank %d failed (%s); LCI_PEER_FAILURE=continue: the operations that involve it "
           "complete with LCI_ERR_FATAL and the others go on",
           rank, why);
  g_any_peer_troubled.store(true, std::memory_order_release);
  g_any_peer_failed.store(true, std::memory_order_release);
  g_peer_failure_epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace

bool peer_failure_continues() { return g_state.continues; }

void peer_failure_initialize(int nranks, bool continue_on_failure) {
  g_state.continues = continue_on_failure;
  g_state.nranks = nranks;
  g_state.peers.reset(new peer_slot[static_cast<size_t>(nranks)]);
  g_any_peer_failed.store(false, std::memory_order_relaxed);
  g_any_peer_troubled.store(false, std::memory_order_relaxed);
}

void peer_failure_finalize() {
  std::lock_guard<std::mutex> g(g_state.callback_lock);
  g_state.fn = nullptr;
  g_state.ctx = nullptr;
}

peer_state peer_state_of(int rank) {
  if (rank < 0 || rank >= g_state.nranks || !g_state.peers) return peer_state::alive;
  return static_cast<peer_state>(g_state.peers[rank].state.load(std::memory_order_acquire));
}

bool peer_failed(int rank) { return peer_state_of(rank) == peer_state::dead; }

bool peer_suspected_slow(int rank) { return peer_state_of(rank) == peer_state::suspected; }

void report_evidence(int rank, net::evidence e, const char* why) {
  if (rank < 0 || rank >= g_state.nranks || !g_state.peers) return;
  peer_slot& p = g_state.peers[rank];
  if (confirms_death(e)) {
    declare_dead(rank, why);
    return;
  }
  uint8_t s = p.state.load(std::memory_order_acquire);
  switch (e) {
    case net::evidence::connection_broke:
      if (s != static_cast<uint8_t>(peer_state::alive)) return;
      p.suspected_since.store(now_ns(), std::memory_order_relaxed);
      if (!p.state.compare_exchange_strong(s, static_cast<uint8_t>(peer_state::suspected),
                                           std::memory_order_acq_rel))
        return;
      g_any_peer_troubled.store(true, std::memory_order_release);
      LCI_LOG(info, "rank %d suspected (%s): waiting for an authentic message from it or a "
              "proof of its death", rank, why);
      return;
    case net::evidence::authentic_message:
      if (s != static_cast<uint8_t>(peer_state::suspected) ||
          !p.state.compare_exchange_strong(s, static_cast<uint8_t>(peer_state::alive),
                                           std::memory_order_acq_rel))
        return;
      LCI_LOG(info, "rank %d is alive (%s): no longer suspected; the sends held for it go out",
              rank, why);
      g_peer_failure_epoch.fetch_add(1, std::memory_order_acq_rel);
      return;
    case net::evidence::still_silent: {
      if (s != static_cast<uint8_t>(peer_state::suspected)) return;
      const int64_t since = now_ns() - p.suspected_since.load(std::memory_order_relaxed);
      if (since < suspicion_grace_ns) return;
      char line[200];
      snprintf(line, sizeof line, "no authentic message from it for %lld s since its connection "
               "broke, despite probes: %s", static_cast<long long>(since / 1000000000), why);
      declare_dead(rank, line);
      return;
    }
    default:
      return;
  }
}

void mark_peer_failed(int rank, const char* why) {
  report_evidence(rank, net::evidence::declared, why);
}

void run_peer_failure_callbacks() {
  void (*fn)(int, void*);
  void* ctx;
  {
    std::lock_guard<std::mutex> g(g_state.callback_lock);
    fn = g_state.fn;
    ctx = g_state.ctx;
  }
  if (!fn) return;
  for (int r = 0; r < g_state.nranks; ++r)
    if (peer_failed(r) && g_state.peers[r].reported.exchange(1, std::memory_order_acq_rel) == 0)
      fn(r, ctx);
}

int peer_failure_ranks() { return g_state.nranks; }

void set_peer_failure_callback(void (*fn)(int, void*), void* ctx) {
  {
    std::lock_guard<std::mutex> g(g_state.callback_lock);
    g_state.fn = fn;
    g_state.ctx = ctx;
  }
  // Ranks that failed before: the next LCI_progress reports them too.
  if (g_any_peer_failed.load(std::memory_order_acquire))
    g_peer_failure_epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace lci

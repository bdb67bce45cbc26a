// Peers that failed (see peer_failure.hpp).
#include "lci/core/peer_failure.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "lci/util/log.hpp"

namespace lci {

std::atomic<bool> g_any_peer_failed{false};
std::atomic<uint32_t> g_peer_failure_epoch{0};

namespace {

struct failure_state {
  bool continues = false;
  int nranks = 0;
  std::unique_ptr<std::atomic<uint8_t>[]> failed;    // per rank: known dead
  std::unique_ptr<std::atomic<uint8_t>[]> reported;  // per rank: callback ran
  std::mutex callback_lock;
  void (*fn)(int, void*) = nullptr;
  void* ctx = nullptr;
};

failure_state g_state;

}  // namespace

bool peer_failure_continues() { return g_state.continues; }

void peer_failure_initialize(int nranks, bool continue_on_failure) {
  g_state.continues = continue_on_failure;
  g_state.nranks = nranks;
  g_state.failed.reset(new std::atomic<uint8_t>[static_cast<size_t>(nranks)]);
  g_state.reported.reset(new std::atomic<uint8_t>[static_cast<size_t>(nranks)]);
  for (int r = 0; r < nranks; ++r) {
    g_state.failed[r].store(0, std::memory_order_relaxed);
    g_state.reported[r].store(0, std::memory_order_relaxed);
  }
  g_any_peer_failed.store(false, std::memory_order_relaxed);
}

void peer_failure_finalize() {
  std::lock_guard<std::mutex> g(g_state.callback_lock);
  g_state.fn = nullptr;
  g_state.ctx = nullptr;
}

bool peer_failed(int rank) {
  return rank >= 0 && rank < g_state.nranks && g_state.failed &&
         g_state.failed[rank].load(std::memory_order_acquire) != 0;
}

void mark_peer_failed(int rank, const char* why) {
  if (rank < 0 || rank >= g_state.nranks || !g_state.failed) return;
  if (g_state.failed[rank].exchange(1, std::memory_order_acq_rel) != 0) return;
  LCI_WARN("rank %d failed (%s); LCI_PEER_FAILURE=continue: the operations that involve it "
           "complete with LCI_ERR_FATAL and the others go on",
           rank, why);
  g_any_peer_failed.store(true, std::memory_order_release);
  g_peer_failure_epoch.fetch_add(1, std::memory_order_acq_rel);
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
    if (g_state.failed[r].load(std::memory_order_acquire) &&
        g_state.reported[r].exchange(1, std::memory_order_acq_rel) == 0)
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

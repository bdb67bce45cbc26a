// Peers that failed (see peer_failure.hpp).
#include "lci/core/peer_failure.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "lci/comp/signal.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/request.hpp"
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

// The rank a matching key names (LCI_RANK_ANY for a tag-matching endpoint's).
int key_rank(uint64_t key) { return static_cast<int>(static_cast<uint32_t>(key >> 32)); }

// The receive c, posted for a rank that failed, completes with the error.
void fail_receive(device& d, recv_ctx* c, int rank) {
  LCI_request_t r = make_request(rank, static_cast<LCI_tag_t>(c->node.key & 0xffffu), c->type,
                                 c->user_context);
  r.flag = LCI_ERR_FATAL;
  switch (c->type) {
    case LCI_IOVEC: r.data.iovec = c->iov; break;
    case LCI_LONG: r.data.lbuffer = LCI_lbuffer_t{c->segment, c->buffer, 0}; break;
    case LCI_MEDIUM: r.data.mbuffer = LCI_mbuffer_t{c->want_packet ? nullptr : c->buffer, 0}; break;
    default: memset(&r.data, 0, sizeof(r.data)); break;
  }
  const LCI_comp_t comp = c->comp;
  d.put_ctx(c);
  if (comp) comp_signal(comp, r);
}

// What device d holds for `rank`: receives posted for it complete with
// LCI_ERR_FATAL; its messages waiting for a receive and the control
// messages queued to it are freed.
void sweep_rank(device& d, int rank) {
  std::vector<match_node*> nodes;
  d.table->remove_if([rank](const match_node* n) { return key_rank(n->key) == rank; }, &nodes);
  int receives = 0, messages = 0;
  for (match_node* n : nodes) {
    if (n->kind == match_kind::recv) {
      fail_receive(d, reinterpret_cast<recv_ctx*>(n), rank);
      ++receives;
    } else {
      d.put_packet(reinterpret_cast<packet*>(n));
      ++messages;
    }
  }
  const int queued = d.drop_backlog_to(rank);
  LCI_LOG(info,
          "device %d: rank %d failed: %d posted receive(s) completed with LCI_ERR_FATAL, %d "
          "waiting message(s) and %d queued control message(s) freed",
          d.group_index, rank, receives, messages, queued);
}

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

void sweep_failed_peers(device& d) {
  if (!d.failure_lock.try_lock()) return;  // another thread sweeps this device
  const uint32_t epoch = g_peer_failure_epoch.load(std::memory_order_acquire);
  for (int r = 0; r < g_state.nranks; ++r) {
    if (!g_state.failed[r].load(std::memory_order_acquire) || d.swept[static_cast<size_t>(r)])
      continue;
    d.swept[static_cast<size_t>(r)] = 1;
    sweep_rank(d, r);
  }
  d.failure_epoch_seen.store(epoch, std::memory_order_release);
  d.failure_lock.unlock();
  // The program's callback, once per failed rank, on whichever thread
  // sweeps first.
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

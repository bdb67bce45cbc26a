// Endpoint: the immutable binding of a device to matching and completion
// properties, plus the counters its fences read.
//
// Fence counters: `pending` counts operations this process started on the
// endpoint that have not completed locally (packet sends, rendezvous, RDMA);
// LCI_fence_wait waits for it to drain. For LCI_gfence_wait every operation
// with an effect at a peer is counted at the origin (issued[peer]) and at the
// target once it completed there (done[origin]). Both are sharded by thread
// so that threads sending to the same peer do not share a cache line.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "lci.h"

namespace lci {

struct device;

inline constexpr uint32_t endpoint_magic = 0x4c434945u;
inline constexpr int counter_shards = 16;

// Per-peer counters, one row per shard; a thread always uses the same shard.
class peer_counters {
 public:
  explicit peer_counters(int npeers)
      : npeers_(npeers), rows_(new row[counter_shards]) {
    for (int s = 0; s < counter_shards; ++s) {
      rows_[s].counts.reset(new std::atomic<uint64_t>[static_cast<size_t>(npeers)]);
      for (int p = 0; p < npeers; ++p) rows_[s].counts[p].store(0, std::memory_order_relaxed);
    }
  }
  void add(int peer) {
    rows_[shard()].counts[peer].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t total(int peer) const {
    uint64_t sum = 0;
    for (int s = 0; s < counter_shards; ++s)
      sum += rows_[s].counts[peer].load(std::memory_order_acquire);
    return sum;
  }

 private:
  static int shard() {
    static std::atomic<int> next{0};
    thread_local int mine = next.fetch_add(1, std::memory_order_relaxed) % counter_shards;
    return mine;
  }
  struct alignas(64) row {
    std::unique_ptr<std::atomic<uint64_t>[]> counts;
  };
  int npeers_;
  std::unique_ptr<row[]> rows_;
};

struct endpoint {
  endpoint(int npeers) : issued(npeers), done(npeers) {}
  uint32_t magic = endpoint_magic;
  uint32_t index = 0;
  device* dev = nullptr;
  LCI_match_t match_type = LCI_MATCH_RANKTAG;
  LCI_comp_type_t cmd_comp_type = LCI_COMPLETION_QUEUE;
  LCI_comp_type_t msg_comp_type = LCI_COMPLETION_QUEUE;
  LCI_comp_t default_comp = nullptr;

  alignas(64) std::atomic<int64_t> pending{0};
  peer_counters issued;  // operations with a target-side effect, by target
  peer_counters done;    // such operations completed here, by origin
  // gfence: the latest round each origin announced, and its issued count.
  std::unique_ptr<std::atomic<uint32_t>[]> gfence_round;
  std::unique_ptr<std::atomic<uint64_t>[]> gfence_issued;
  uint32_t gfence_my_round = 0;

  // LCI_endpoint_free may come while sends from the endpoint are still in
  // flight (legal: they complete into their own completion objects). The
  // endpoint then retires instead of being deleted: `retired` is added to
  // `pending`, and whichever of the free and the last end_local() sees the
  // count reach exactly `retired` deletes it.
  static constexpr int64_t retired = int64_t{1} << 62;

  void start_local() { pending.fetch_add(1, std::memory_order_relaxed); }
  void end_local() {
    // acq_rel: the deleting thread must see every other thread's last use.
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == retired + 1) delete this;
  }
  // Operations started here and not yet complete locally (LCI_fence_wait).
  int64_t in_flight() const { return pending.load(std::memory_order_acquire) & (retired - 1); }
  // Deletes the endpoint now, or when its last operation completes.
  void retire() {
    if (pending.fetch_add(retired, std::memory_order_acq_rel) == 0) delete this;
  }
};

}  // namespace lci

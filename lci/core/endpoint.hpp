// Endpoint: the immutable binding of a device to matching and completion
// properties, plus the counters its fences read.
//
// Fence counters: `pending` counts operations this process started on the
// endpoint that have not completed locally (packet sends, rendezvous, RDMA);
// LCI_fence_wait waits for it to drain. For LCI_gfence_wait every operation
// with an effect at a peer is counted at the origin (issued[peer]) and at the
// target once it completed there (done[origin]). Both are kept in rows by
// thread so that threads sending to the same peer do not share a cache line.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "lci.h"

namespace lci {

struct device;
struct comp_ref;

// How a one-sided message's remote completion handle is resolved (the
// LCI 2 interface's rcomp registry); nullptr: the completion registry.
using comp_lookup_fn = bool (*)(uint64_t handle, LCI_comp_t* out, comp_ref* ref);

// Completion-object type of an endpoint that accepts any kind (the LCI 2
// interface's endpoints); never the type of an object.
inline constexpr int comp_type_any = 0x41;

inline constexpr uint32_t endpoint_magic = 0x4c434945u;
// Per-peer counters. The first `owned_rows` threads that count (process-wide)
// each own one row: a count is a plain load and store there, no locked
// instruction, since only the owner writes it. Later threads share the
// `shared_rows` rows and count with an atomic add. Readers (LCI_gfence_wait)
// sum all rows with acquire loads.
inline constexpr int owned_rows = 16;
inline constexpr int shared_rows = 4;

class peer_counters {
 public:
  explicit peer_counters(int npeers) : npeers_(npeers), rows_(new row[owned_rows + shared_rows]) {
    const size_t nlines = (static_cast<size_t>(npeers) + per_line - 1) / per_line;
    for (int s = 0; s < owned_rows + shared_rows; ++s) {
      rows_[s].lines.reset(new line[nlines]);  // value-initialized: all zero
    }
  }
  void add(int peer) {
    const int r = row_of_thread();
    std::atomic<uint64_t>& c = rows_[r].at(peer);
    if (__builtin_expect(r < owned_rows, 1))
      // release: pairs with total()'s acquire, like the add below.
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    else
      c.fetch_add(1, std::memory_order_release);
  }
  uint64_t total(int peer) const {
    uint64_t sum = 0;
    for (int s = 0; s < owned_rows + shared_rows; ++s)
      sum += rows_[s].at(peer).load(std::memory_order_acquire);
    return sum;
  }

 private:
  // The calling thread's row: owned for the first owned_rows threads, then
  // one of the shared rows. Fixed for the thread's life.
  static int row_of_thread() {
    const int r = t_row;
    return __builtin_expect(r >= 0, 1) ? r : assign_row();
  }
  [[gnu::noinline]] static int assign_row() {
    static std::atomic<int> next{0};
    const int n = next.fetch_add(1, std::memory_order_relaxed);
    t_row = n < owned_rows ? n : owned_rows + n % shared_rows;
    return t_row;
  }
  // Constant-initialized, initial-exec: one %fs-relative load, no guard and
  // no __tls_get_addr call on the per-message path.
  static inline thread_local int t_row __attribute__((tls_model("initial-exec"))) = -1;
  // Rows are arrays of whole cache lines, so no two rows share a line.
  static constexpr size_t per_line = 8;
  struct alignas(64) line {
    std::atomic<uint64_t> c[per_line] = {};
  };
  struct alignas(64) row {
    std::unique_ptr<line[]> lines;
    std::atomic<uint64_t>& at(int peer) {
      return lines[static_cast<size_t>(peer) / per_line].c[static_cast<size_t>(peer) % per_line];
    }
    const std::atomic<uint64_t>& at(int peer) const {
      return lines[static_cast<size_t>(peer) / per_line].c[static_cast<size_t>(peer) % per_line];
    }
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
  // The limits every build's argument checks compare against
  // (lci/api/check.hpp), on the line the call loads anyway: the largest
  // rank a send may name and a receive may match on (any value, LCI_RANK_ANY
  // included, on an endpoint that ignores the rank), and LCI_MEDIUM_SIZE.
  uint32_t send_rank_max = 0;
  uint32_t recv_rank_max = 0;
  uint32_t medium_max = 0;
  // LCI_comp_type_t values, or comp_type_any (an int, since that is none).
  int cmd_comp_type = LCI_COMPLETION_QUEUE;
  int msg_comp_type = LCI_COMPLETION_QUEUE;
  LCI_comp_t default_comp = nullptr;
  // The matching key's parts: the rank (else any rank) and the tag bits
  // (0: any tag; the mask of each half of a wide tag). LCI_MATCH_TAG
  // endpoints ignore the rank.
  bool match_rank = true;
  uint32_t tag_mask = 0xffffu;
  // Tags up to 2^32-1 (the LCI 2 interface's endpoints): one beyond 16 bits
  // is sent in a `tagged` message (protocol.hpp) and matched in full. The
  // C API's endpoints send the lower 16 bits of a tag, as LCI 1.7 does
  // (LCI_MAX_TAG is 65535).
  bool wide_tags = false;
  // The user_context of the requests that arrivals at this endpoint make at
  // the target (nullptr; the LCI 2 interface marks them): active messages
  // carry it, a put's or get's notification the byte after it.
  void* target_context = nullptr;
  comp_lookup_fn lookup_comp = nullptr;

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

inline endpoint* to_endpoint(LCI_endpoint_t e) { return reinterpret_cast<endpoint*>(e); }

}  // namespace lci

// Device: one independent set of communication resources.
//
// A device owns (and destroys in reverse order): the backend context, one
// registered slab of packets with its pool, a pool of receive descriptors,
// the matching table and the backlog. Devices share nothing, so threads
// that use different devices never touch the same lock.
//
// Threads: every member may be used by any thread. The progress engine is
// guarded by `progress_lock` (a try-lock: a thread that finds it held
// returns at once). The backlog has its own lock, taken only when the
// backlog is non-empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "lci.h"
#include "lci/backend/backend.hpp"
#include "lci/comp/wait.hpp"
#include "lci/core/protocol.hpp"
#include "lci/match/match_table.hpp"
#include "lci/mem/packet_pool.hpp"

namespace lci {

inline constexpr uint32_t device_magic = 0x4c434944u;

// A receive posted before its message arrived (recvs, recvm, recvmn).
struct recv_ctx {
  match_node node;
  LCI_comp_t comp;        // nullptr: signal nothing
  void* user_context;
  void* buffer;           // recvm: the caller's buffer
  size_t capacity;        // recvm: its length
  msg_kind kind;          // what the receive expects
  bool want_packet;       // recvmn: hand the packet to the caller
  bool heap;              // allocated with new (the descriptor pool was empty)
};

// An operation the backend refused for now, retried by progress.
struct backlog_op {
  enum class op : uint8_t { recv } what;
  packet* pkt;
};

class spin_try_lock {
 public:
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void lock() {
    while (!try_lock()) cpu_relax();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

struct device {
  explicit device(int group_index);
  ~device();
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  // ---- hot, read-mostly -------------------------------------------------
  uint32_t magic = device_magic;
  int group_index;
  size_t max_inject = 0;
  std::unique_ptr<net::backend_device> net;
  char* slab = nullptr;          // packets, packet_size bytes each
  size_t slab_bytes = 0;
  size_t packet_size = 0;
  net::mr slab_mr;
  std::unique_ptr<packet_pool> packets;
  std::unique_ptr<match_table> table;
  char* ctx_slab = nullptr;      // receive descriptors
  size_t ctx_slab_bytes = 0;
  std::unique_ptr<packet_pool> ctxs;

  // ---- contended, each on its own cache line ----------------------------
  alignas(64) spin_try_lock progress_lock;
  alignas(64) std::atomic<int> recv_deficit{0};   // receive packets not re-posted yet
  alignas(64) std::atomic<int> backlog_size{0};
  spin_try_lock backlog_lock;
  std::deque<backlog_op> backlog;

  // True if p points into this device's packet slab.
  bool owns_packet(const void* p) const {
    return static_cast<const char*>(p) >= slab && static_cast<const char*>(p) < slab + slab_bytes;
  }
  packet* get_packet() { return static_cast<packet*>(packets->get()); }
  void put_packet(packet* p) { packets->put(p); }

  recv_ctx* get_ctx() {
    auto* c = static_cast<recv_ctx*>(ctxs->get());
    if (__builtin_expect(c != nullptr, 1)) {
      c->heap = false;
      return c;
    }
    c = new recv_ctx;
    c->heap = true;
    return c;
  }
  void put_ctx(recv_ctx* c) {
    if (__builtin_expect(!c->heap, 1))
      ctxs->put(c);
    else
      delete c;
  }

  // Posts a packet as a receive buffer (or queues it in the backlog).
  void post_recv_packet(packet* p);
  void push_backlog(const backlog_op& op);

  // One pass of the progress engine; true if it did any work.
  bool progress();

 private:
  void post_initial_receives();
  bool drain_backlog();
  bool refill_receives();
};

// Devices by group index, for LCI_mbuffer_free of buffers from any device.
device* device_of_buffer(const void* address);

}  // namespace lci

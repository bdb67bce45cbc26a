// Decisions the verbs backend makes from what a device reports, as pure
// functions of plain data (no device needed; tests/unit/test_ibv.cpp):
// which device and port, which GID, how big each queue is, the send
// credits that keep the queues from overflowing, what a work-request id
// means, and the QP number -> rank map used on every receive.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lci/backend/ibv/wire.hpp"

namespace lci::ibv {

// ---- device and port -------------------------------------------------------
struct port_info {
  int number = 0;        // 1-based
  bool active = false;   // IBV_PORT_ACTIVE
  int link_layer = 0;    // IBV_LINK_LAYER_*
};
struct device_info {
  std::string name;
  std::vector<port_info> ports;
};
struct port_choice {
  int device = -1;  // index into the list; -1: none (why in `error`)
  int port = 0;
  std::string error;
};

// The first ACTIVE port of the first device, or of the device named
// `want_device` (empty: any), or exactly port `want_port` (0: any).
inline port_choice choose_port(const std::vector<device_info>& devs, const std::string& want_device,
                               int want_port) {
  port_choice c;
  bool named_found = false;
  for (size_t d = 0; d < devs.size(); ++d) {
    if (!want_device.empty() && devs[d].name != want_device) continue;
    named_found = true;
    for (const port_info& p : devs[d].ports) {
      if (want_port && p.number != want_port) continue;
      if (!p.active) continue;
      c.device = static_cast<int>(d);
      c.port = p.number;
      return c;
    }
  }
  if (!want_device.empty() && !named_found)
    c.error = "no verbs device named \"" + want_device + "\" (LCI_IBV_DEVICE)";
  else if (devs.empty())
    c.error = "no active verbs device found (no verbs device present)";
  else if (want_port)
    c.error = "port " + std::to_string(want_port) + " (LCI_IBV_PORT) is not active on " +
              (want_device.empty() ? std::string("any verbs device") : want_device);
  else
    c.error = "no active verbs device found (no port in state ACTIVE)";
  return c;
}

// ---- GID -------------------------------------------------------------------
struct gid_entry {
  int index = 0;
  uint8_t raw[16] = {};
  bool roce_v2 = false;  // IBV_GID_TYPE_ROCE_V2
};

// The GID index to use: `override` if >= 0 (LCI_IBV_GID_IDX); on an
// Ethernet (RoCE) port, the first RoCE v2 entry that is an IPv4-mapped
// address (routable, what most RoCE fabrics are configured for); otherwise
// index 0 (InfiniBand, or RoCE with only link-local/v1 entries).
inline int choose_gid(const std::vector<gid_entry>& table, bool roce, int override_index) {
  if (override_index >= 0) return override_index;
  if (roce)
    for (const gid_entry& g : table)
      if (g.roce_v2 && gid_is_ipv4_mapped(g.raw)) return g.index;
  return 0;
}

// ---- queue sizes -----------------------------------------------------------
struct device_limits {  // from ibv_device_attr
  int max_qp_wr = 0;
  int max_sge = 0;
  int max_cqe = 0;
  int max_srq_wr = 0;
  int max_srq_sge = 0;
  int max_qp_rd_atom = 0;       // responder resources per QP
  int max_qp_init_rd_atom = 0;  // initiator depth per QP
};
struct queue_wish {
  uint32_t sq_depth = 256;      // send work requests in flight per QP
  uint32_t srq_depth = 4096;    // posted receives
  uint32_t max_inline = 256;    // inline bytes asked of each QP
  uint32_t rd_atomic = 16;      // RDMA reads in flight per QP
};
struct queue_plan {
  uint32_t sq_depth = 0;      // max_send_wr of each QP
  uint32_t srq_depth = 0;     // max_wr of the SRQ
  uint32_t cq_size = 0;       // cqe of the one CQ
  uint32_t send_credits = 0;  // sends in flight over all QPs (CQ room left by the SRQ)
  uint32_t max_sge = 1;       // one scatter-gather element per request
  uint32_t max_inline = 0;    // asked of ibv_create_qp (it may give less)
  uint8_t rd_atomic = 1;      // max_rd_atomic = max_dest_rd_atomic
  bool ok = false;
  std::string error;
};

// Every queue within the device's limits, and a CQ that cannot overflow:
// at most srq_depth receive completions and send_credits send completions
// are ever outstanding, and their sum is <= cq_size.
inline queue_plan plan_queues(const device_limits& lim, int nranks, const queue_wish& w = {}) {
  queue_plan p;
  auto clamp = [](uint64_t v, int64_t hi) -> uint32_t {
    if (hi <= 0) return 0;
    return static_cast<uint32_t>(v < static_cast<uint64_t>(hi) ? v : static_cast<uint64_t>(hi));
  };
  if (lim.max_sge < 1 || lim.max_qp_wr < 2 || lim.max_cqe < 4 || lim.max_srq_wr < 2 ||
      lim.max_srq_sge < 1) {
    p.error = "device limits too small (needs max_qp_wr >= 2, max_cqe >= 4, an SRQ of >= 2 "
              "requests and one scatter-gather element)";
    return p;
  }
  p.sq_depth = clamp(w.sq_depth, lim.max_qp_wr);
  // Receives take at most half of the CQ, so that sends always have room.
  p.srq_depth = clamp(w.srq_depth, lim.max_srq_wr - 1);  // some devices reject max_srq_wr itself
  p.srq_depth = clamp(p.srq_depth, lim.max_cqe / 2);
  if (p.srq_depth < 1) p.srq_depth = 1;
  const uint64_t all_sends = static_cast<uint64_t>(p.sq_depth) * static_cast<uint64_t>(nranks > 0 ? nranks : 1);
  p.cq_size = clamp(p.srq_depth + all_sends, lim.max_cqe);
  p.send_credits = p.cq_size - p.srq_depth;
  p.max_inline = w.max_inline;
  const int rd = lim.max_qp_rd_atom < lim.max_qp_init_rd_atom ? lim.max_qp_rd_atom : lim.max_qp_init_rd_atom;
  p.rd_atomic = static_cast<uint8_t>(clamp(w.rd_atomic, rd > 0 ? rd : 1));
  if (p.rd_atomic < 1) p.rd_atomic = 1;
  p.ok = p.sq_depth >= 1 && p.send_credits >= 1;
  if (!p.ok) p.error = "no room for sends in the completion queue";
  return p;
}

// Inline sizes tried in turn when ibv_create_qp refuses the one asked for
// (devices do not report their limit before a QP exists): halve, down to 32,
// then 0.
inline uint32_t next_inline_try(uint32_t refused) { return refused >= 64 ? refused / 2 : 0; }

// ---- send credits ----------------------------------------------------------
// A bounded count of free slots (a QP's send queue, or the CQ's room for
// send completions). Every work request posted to a send queue is
// signalled, so each one comes back as exactly one completion, successful
// or not, and gives its slot back then: post -> acquire(), completion ->
// release(). A refused acquire is net::status::retry, before verbs would
// overflow the queue (ENOMEM).
class credits {
 public:
  explicit credits(int n = 0) : free_(n) {}
  void reset(int n) { free_.store(n, std::memory_order_relaxed); }
  bool try_acquire() {
    if (free_.fetch_sub(1, std::memory_order_acquire) > 0) return true;
    free_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void release(int n = 1) { free_.fetch_add(n, std::memory_order_release); }
  int available() const { return free_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> free_;
};

// Both the QP's and the device's credits, or neither.
inline bool acquire_send_slot(credits& qp, credits& device) {
  if (!qp.try_acquire()) return false;
  if (device.try_acquire()) return true;
  qp.release();
  return false;
}

// ---- work-request ids ------------------------------------------------------
// Send-side requests carry the caller's ctx (an aligned pointer: even), or
// 0 for an inject (no completion reported). Receives carry 2 * slot + 1
// (odd): the slot records the buffer, so that a receive consumed by an RDMA
// write with immediate data can be posted again by the backend itself.
inline uint64_t recv_wr_id(uint32_t slot) { return 2 * static_cast<uint64_t>(slot) + 1; }
inline bool is_recv_wr_id(uint64_t id) { return id & 1; }
inline uint32_t recv_slot_of(uint64_t id) { return static_cast<uint32_t>(id >> 1); }
inline uint64_t send_wr_id(void* ctx) { return reinterpret_cast<uint64_t>(ctx); }
inline constexpr uint64_t inject_wr_id = 0;

// ---- QP number -> rank -----------------------------------------------------
// Open addressing, linear probing, at most half full; filled at set-up
// (before any poll), read-only afterwards. A receive completion names the
// local QP it arrived on; the QP to rank r only ever carries r's messages.
class qpn_map {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    keys_.assign(cap, empty);
    ranks_.assign(cap, -1);
    mask_ = cap - 1;
  }
  bool insert(uint32_t qpn, int rank) {
    if (keys_.empty() || qpn == empty) return false;
    for (size_t i = hash(qpn);; i = (i + 1) & mask_) {
      if (keys_[i] == qpn) return false;
      if (keys_[i] == empty) {
        keys_[i] = qpn;
        ranks_[i] = rank;
        return true;
      }
    }
  }
  int find(uint32_t qpn) const {  // -1 if unknown
    if (keys_.empty()) return -1;
    for (size_t i = hash(qpn);; i = (i + 1) & mask_) {
      if (keys_[i] == qpn) return ranks_[i];
      if (keys_[i] == empty) return -1;
    }
  }

 private:
  static constexpr uint32_t empty = 0xFFFFFFFFu;
  size_t hash(uint32_t q) const { return (q * 2654435761u) & mask_; }
  std::vector<uint32_t> keys_;
  std::vector<int> ranks_;
  size_t mask_ = 0;
};

}  // namespace lci::ibv

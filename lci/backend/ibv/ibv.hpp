// libibverbs backend: one verbs context per LCI device, reliable-connected
// queue pairs to every rank, one shared receive queue, one completion queue.
//
// Layout of the objects (created in this order, destroyed in reverse):
// context -> protection domain -> completion queue -> shared receive queue
// -> one RC QP per rank (the QP to oneself is connected to itself). Memory
// registrations belong to the protection domain and are released by their
// owners (the core's registration cache and packet slab) before the device
// goes.
//
// Connection: every QP is created, exchanged through the bootstrap (see
// wire.hpp) and moved RESET -> INIT -> RTR -> RTS at start-up (qp_attr.hpp).
// LCI_IBV_ON_DEMAND=1 is accepted but not yet on-demand: see lci/backend/ibv/README.md.
//
// Data path (all inline; no allocation, no system call, no lock but
// libibverbs' own per-queue locks and a short spin around the receive-slot
// free list):
// - inject: SEND_WITH_IMM with IBV_SEND_INLINE (len <= max_inline_data);
// - post_send: SEND_WITH_IMM from registered memory;
// - post_write / post_write_imm / post_read: RDMA WRITE, WRITE_WITH_IMM,
//   READ. An RC write's completion means the target acknowledged it, and a
//   later message on the same QP cannot overtake it, so `delivered` needs no
//   extra work here;
// - every send-side request is signalled; credits (plan.hpp) bound what is
//   in flight per QP and over the CQ, so a post returns retry instead of
//   overflowing either;
// - the source rank of a receive comes from the QP it arrived on (qpn_map):
//   the 32-bit immediate data is all protocol header.
//
// Threading: posts from many threads (libibverbs locks each queue); poll()
// is called under the device's progress try-lock.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "lci/backend/ibv/plan.hpp"
#include "lci/backend/ibv/wire.hpp"
#include "lci/backend/net_types.hpp"
#include "lci/bootstrap/bootstrap.hpp"

namespace lci::ibv {

using net::completion;
using net::completion_kind;
using net::status;

class ibv_device final {
 public:
  // Opens the device/port chosen by choose_port (LCI_IBV_DEVICE,
  // LCI_IBV_PORT) and connects to the device of the same group index on
  // every rank through the bootstrap (collective). Fatal, with the verbs
  // call and errno, if any step fails.
  ibv_device(bootstrap::bootstrap& boot, int group_index, const net::settings& s);
  ~ibv_device();
  ibv_device(const ibv_device&) = delete;
  ibv_device& operator=(const ibv_device&) = delete;

  const char* provider_name() const { return provider_.c_str(); }
  size_t max_inject() const { return max_inline_; }
  size_t rx_queue_size() const { return plan_.srq_depth; }
  // The most one work request moves (mr_attr.hpp); the core splits RDMA
  // transfers into pieces no longer than this.
  size_t max_message_size() const { return max_msg_size_; }

  // Remote access only where asked for, no write access for a source (see
  // mr_attr.hpp); a failure returns an empty mr.
  net::mr register_memory(void* addr, size_t len, net::mr_access access);
  void deregister_memory(net::mr& m);

  status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    peer& p = peers_[static_cast<size_t>(rank)];
    if (__builtin_expect(!acquire_send_slot(p.sq, send_credits_), 0)) return status::retry;
    ibv_sge sge;
    sge.addr = reinterpret_cast<uint64_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = 0;  // inline: the data is copied into the request
    ibv_send_wr wr;
    wr.wr_id = inject_wr_id;
    wr.next = nullptr;
    wr.sg_list = &sge;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    wr.imm_data = imm_to_wire(imm);
    return post(p, wr, "ibv_post_send(inline send)");
  }

  status post_send(int rank, const void* buf, size_t len, void* desc, uint32_t imm, void* ctx) {
    peer& p = peers_[static_cast<size_t>(rank)];
    if (__builtin_expect(!acquire_send_slot(p.sq, send_credits_), 0)) return status::retry;
    ibv_sge sge = make_sge(buf, len, desc);
    ibv_send_wr wr;
    wr.wr_id = send_wr_id(ctx);
    wr.next = nullptr;
    wr.sg_list = &sge;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = imm_to_wire(imm);
    return post(p, wr, "ibv_post_send(send)");
  }

  status post_recv(void* buf, size_t len, void* desc, void* ctx);

  // RDMA write. `delivered`: see the class comment (RC gives it for free).
  status post_write(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                    uint64_t rkey, void* ctx, bool /*delivered*/) {
    return post_rdma(rank, IBV_WR_RDMA_WRITE, buf, len, desc, raddr, rkey, 0, ctx,
                     "ibv_post_send(RDMA write)");
  }

  // RDMA write whose immediate data lands in the target's CQ (consuming one
  // of its posted receives, which the target's backend posts again).
  status post_write_imm(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                        uint64_t rkey, uint32_t imm, void* ctx) {
    return post_rdma(rank, IBV_WR_RDMA_WRITE_WITH_IMM, buf, len, desc, raddr, rkey,
                     imm_to_wire(imm), ctx, "ibv_post_send(RDMA write with immediate)");
  }

  status post_read(int rank, void* buf, size_t len, void* desc, uint64_t raddr, uint64_t rkey,
                   void* ctx) {
    return post_rdma(rank, IBV_WR_RDMA_READ, buf, len, desc, raddr, rkey, 0, ctx,
                     "ibv_post_send(RDMA read)");
  }

  // Verbs RDMA always names virtual addresses.
  uint64_t remote_address(const void* /*base*/, const void* addr) const {
    return reinterpret_cast<uint64_t>(addr);
  }
  bool uses_virtual_addresses() const { return true; }
  // Plain verbs registrations pin the pages; on-demand paging ones do not.
  bool registrations_pin() const { return !odp_; }

  int poll(completion* out, int max) {
    constexpr int batch = 16;
    ibv_wc wc[batch];
    if (max > batch) max = batch;
    net::annotate_poll(this);
    const int n = ibv_poll_cq(cq_, max, wc);
    if (__builtin_expect(n <= 0, 1)) {
      if (n == 0) return 0;
      poll_failed(n);
    }
    int k = 0;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& w = wc[i];
      if (__builtin_expect(w.status != IBV_WC_SUCCESS, 0)) {
        k += on_failed_wc(w, &out[k]);
        continue;
      }
      if (is_recv_wr_id(w.wr_id)) {
        completion& c = out[k++];
        const uint32_t slot = recv_slot_of(w.wr_id);
        c.src_rank = qpns_.find(w.qp_num);
        c.imm = (w.wc_flags & IBV_WC_WITH_IMM) ? imm_from_wire(w.imm_data) : 0;
        c.length = w.byte_len;
        if (w.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
          c.kind = completion_kind::remote_write;
          c.ctx = nullptr;
          repost_slot(slot);  // the buffer was not touched: post it again
        } else {
          c.kind = completion_kind::recv;
          c.sealed = false;
          c.ctx = slots_[slot].ctx;
          free_slot(slot);
        }
        continue;
      }
      // A send-side request finished: give its credits back.
      const int rank = qpns_.find(w.qp_num);
      if (__builtin_expect(rank >= 0, 1)) peers_[static_cast<size_t>(rank)].sq.release();
      send_credits_.release();
      if (w.wr_id == inject_wr_id) continue;  // nobody waits for an inject
      completion& c = out[k++];
      c.ctx = reinterpret_cast<void*>(w.wr_id);
      c.kind = (w.opcode == IBV_WC_RDMA_WRITE || w.opcode == IBV_WC_RDMA_READ)
                   ? completion_kind::rma_done
                   : completion_kind::send_done;
    }
    return k;
  }

 private:
  struct peer {
    ibv_qp* qp = nullptr;
    credits sq;  // free slots of this QP's send queue
  };
  struct recv_slot {
    void* ctx = nullptr;
    uint64_t addr = 0;
    uint32_t length = 0;
    uint32_t lkey = 0;
  };

  static ibv_sge make_sge(const void* buf, size_t len, void* desc) {
    // The core never posts more than max_message_size(): a longer length
    // would be cut to its low 32 bits, so it is a bug, never sent.
    if (__builtin_expect(len > UINT32_MAX, 0)) length_overflow(len);
    ibv_sge sge;
    sge.addr = reinterpret_cast<uint64_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = desc ? static_cast<ibv_mr*>(desc)->lkey : 0;
    return sge;
  }

  status post(peer& p, ibv_send_wr& wr, const char* what) {
    net::annotate_post(this);
    ibv_send_wr* bad = nullptr;
    const int rc = ibv_post_send(p.qp, &wr, &bad);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error(p, rc, what);
  }

  status post_rdma(int rank, ibv_wr_opcode op, const void* buf, size_t len, void* desc,
                   uint64_t raddr, uint64_t rkey, uint32_t wire_imm, void* ctx, const char* what) {
    peer& p = peers_[static_cast<size_t>(rank)];
    if (__builtin_expect(!acquire_send_slot(p.sq, send_credits_), 0)) return status::retry;
    ibv_sge sge = make_sge(buf, len, desc);
    ibv_send_wr wr;
    wr.wr_id = send_wr_id(ctx);
    wr.next = nullptr;
    wr.sg_list = &sge;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = wire_imm;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = static_cast<uint32_t>(rkey);
    return post(p, wr, what);
  }

  // Cold paths (ibv.cpp).
  status on_post_error(peer& p, int rc, const char* what);
  [[noreturn]] void poll_failed(int rc);
  [[noreturn]] static void length_overflow(size_t len);
  int on_failed_wc(const ibv_wc& w, completion* out);
  void repost_slot(uint32_t slot);
  void free_slot(uint32_t slot) {
    lock_slots();
    free_slots_.push_back(slot);
    unlock_slots();
  }
  void lock_slots() {
    while (slot_lock_.test_and_set(std::memory_order_acquire)) __builtin_ia32_pause();
  }
  void unlock_slots() { slot_lock_.clear(std::memory_order_release); }

  void open_port(const net::settings& s);
  void create_queues(int nranks, bool use_odp);
  void connect_all(bootstrap::bootstrap& boot, int group_index, bool on_demand);

  // Hot.
  ibv_cq* cq_ = nullptr;
  ibv_srq* srq_ = nullptr;
  std::unique_ptr<peer[]> peers_;  // one per rank
  qpn_map qpns_;
  credits send_credits_;
  size_t max_inline_ = 0;
  size_t max_msg_size_ = 0;
  std::vector<recv_slot> slots_;
  std::vector<uint32_t> free_slots_;  // reserved to slots_.size(): push never allocates
  std::atomic_flag slot_lock_ = ATOMIC_FLAG_INIT;

  // Cold.
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  int nranks_ = 0;
  uint8_t port_ = 0;
  uint8_t gid_index_ = 0;
  port_address local_{};
  queue_plan plan_;
  bool odp_ = false;
  std::atomic<bool> error_logged_{false};
  std::string provider_;
};

}  // namespace lci::ibv

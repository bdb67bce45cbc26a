// libfabric backend: one RDM endpoint per LCI device.
//
// Layout of the objects (created in this order, destroyed in reverse):
// fabric -> domain -> completion queue, address vector -> endpoint.
// The address vector is a table filled in rank order at start-up, so a
// rank is an index into `addrs_`.
//
// Immediate data is 64 bits on libfabric: the low 32 bits are the protocol
// header, the high 32 bits carry the sender's rank (the verbs backend learns
// the rank from the queue pair instead).
//
// Threading: the domain is opened FI_THREAD_SAFE, so posts from many threads
// are safe; poll() is called under the device's progress try-lock.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <string>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/bootstrap/bootstrap.hpp"

namespace lci::ofi {

using net::completion;
using net::completion_kind;
using net::status;

class ofi_device final {
 public:
  // Opens the provider and connects to the device of the same group index on
  // every rank through the bootstrap (collective).
  ofi_device(bootstrap::bootstrap& boot, int group_index);
  ~ofi_device();
  ofi_device(const ofi_device&) = delete;
  ofi_device& operator=(const ofi_device&) = delete;

  const char* provider_name() const { return provider_.c_str(); }
  size_t max_inject() const { return max_inject_; }
  size_t rx_queue_size() const { return rx_size_; }

  net::mr register_memory(void* addr, size_t len);
  void deregister_memory(net::mr& m);

  status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    ssize_t rc = fi_injectdata(ep_, buf, len, make_data(imm), addrs_[rank]);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_injectdata", rc);
  }

  status post_send(int rank, const void* buf, size_t len, void* desc, uint32_t imm, void* ctx) {
    ssize_t rc = fi_senddata(ep_, buf, len, desc, make_data(imm), addrs_[rank], ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_senddata", rc);
  }

  status post_recv(void* buf, size_t len, void* desc, void* ctx) {
    ssize_t rc = fi_recv(ep_, buf, len, desc, FI_ADDR_UNSPEC, ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_recv", rc);
  }

  int poll(completion* out, int max) {
    constexpr int batch = 16;
    fi_cq_data_entry entries[batch];
    if (max > batch) max = batch;
    ssize_t n = fi_cq_read(cq_, entries, static_cast<size_t>(max));
    if (n <= 0) {
      if (n == -FI_EAGAIN || n == 0) return 0;
      on_cq_error(n);
      return 0;
    }
    for (ssize_t i = 0; i < n; ++i) {
      const fi_cq_data_entry& e = entries[i];
      completion& c = out[i];
      c.ctx = e.op_context;
      if (e.flags & FI_RECV) {
        c.kind = completion_kind::recv;
        c.imm = static_cast<uint32_t>(e.data);
        c.src_rank = static_cast<int>(e.data >> 32);
        c.length = e.len;
      } else {
        c.kind = completion_kind::send_done;
      }
    }
    return static_cast<int>(n);
  }

 private:
  uint64_t make_data(uint32_t imm) const { return rank_bits_ | imm; }
  status on_post_error(const char* call, ssize_t rc);
  [[noreturn]] void on_cq_error(ssize_t rc);

  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fi_info* info_ = nullptr;
  std::vector<fi_addr_t> addrs_;
  uint64_t rank_bits_ = 0;
  size_t max_inject_ = 0;
  size_t rx_size_ = 0;
  bool mr_local_ = false, mr_endpoint_ = false, mr_prov_key_ = false;
  uint64_t next_key_ = 1;
  std::string provider_;
};

}  // namespace lci::ofi

// ofi_common: what the raw-libfabric benchmarks (ofi_pingpong, ofi_rma_bw)
// share: the fatal-error path, the hex coding of bootstrap values, and one
// RDM endpoint opened the way the LCI library opens its provider.
//
// rdm_base opens, in this order, fabric, domain, completion queue (64-bit
// immediate data, FI_CQ_FORMAT_DATA, no wait object), address vector (a
// table of the job's ranks) and endpoint (bound to both, enabled), from
// hints asking for an RDM endpoint with FI_MSG (plus the RMA capabilities
// when asked), an FI_THREAD_SAFE domain and manual progress. Memory
// registered through it is closed by its destructor after the endpoint and
// before the address vector, and memory it allocated is freed after that;
// everything else is closed in reverse order of creation.
// The programs derive their endpoint classes from it and add buffers and
// the completion handling of their protocol. One thread posts and polls.
//
// fail() prints "<program>: message" and, once set_bootstrap() has named
// the job's bootstrap, aborts the whole job through it.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"
#include "lci/bootstrap/bootstrap.hpp"

namespace ofi_bench {

// The program's name in messages (set first thing in main) and the job's
// bootstrap, through which fail() aborts every rank (set once it is open).
void set_program(const char* name);
void set_bootstrap(lci::bootstrap::bootstrap* boot);

[[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Fails with "<what> failed: <libfabric message>" unless rc is 0.
void check(int rc, const char* what);

// Bootstrap values are hex text.
inline std::string to_hex(const void* data, size_t len) {
  return lci::bootstrap::encode_hex(data, len);
}
// Fails on text that is not hex.
std::vector<unsigned char> from_hex(const std::string& s);

// Calls `op` (a posting call returning 0, -FI_EAGAIN or an error) until the
// provider accepts it, calling `progress` after each FI_EAGAIN; fails on any
// other error and after timeout_s seconds.
template <typename Op, typename Progress>
void post_until_accepted(Op&& op, Progress&& progress, const char* what, double timeout_s) {
  bench::spin_until(
      [&] {
        const ssize_t rc = op();
        if (rc == 0) return true;
        if (rc != -FI_EAGAIN) fail("%s: %s", what, fi_strerror(static_cast<int>(-rc)));
        progress();
        return false;
      },
      timeout_s, what);
}

class rdm_base {
 public:
  // Opens the endpoint for a job of `ranks` ranks; fails if no provider
  // offers what the hints ask for or carries fewer than 8 bytes of
  // immediate data.
  rdm_base(int ranks, bool rma_caps);
  ~rdm_base();
  rdm_base(const rdm_base&) = delete;
  rdm_base& operator=(const rdm_base&) = delete;

  const std::string& provider() const { return provider_; }
  size_t inject_size() const { return inject_size_; }
  size_t rx_size() const { return info_->rx_attr->size; }

 protected:
  // `bytes` (rounded up to whole pages) of zeroed, page-aligned memory,
  // freed by the destructor after every registration is closed.
  void* allocate(size_t bytes);

  // Registers `len` bytes at `buf` for `access` (with `requested_key` where
  // the provider leaves keys to the caller), bound to the endpoint where the
  // provider asks for that; closed by the destructor.
  fid_mr* register_buffer(void* buf, size_t len, uint64_t access, uint64_t requested_key);

  // True if remote addresses are virtual addresses (else offsets).
  bool virt_addr() const { return virt_addr_; }

  // Publishes this endpoint's address under `key`, fences, and inserts every
  // rank's address, so that fi_addr r is rank r. Values the caller put
  // before the call are visible to every rank after it.
  void exchange_addresses(lci::bootstrap::bootstrap& boot, const std::string& key);

  // Posts a receive of `len` bytes into `buf` (its completion context is
  // `buf`); a refused post is retried at once: with one receive consumed per
  // completion, the queue always has room for its re-post.
  void post_recv(void* buf, size_t len, void* desc) {
    for (int tries = 0; tries < 1000000; ++tries) {
      const ssize_t rc = fi_recv(ep_, buf, len, desc, FI_ADDR_UNSPEC, buf);
      if (rc == 0) return;
      if (rc != -FI_EAGAIN) fail("fi_recv: %s", fi_strerror(static_cast<int>(-rc)));
    }
    fail("fi_recv kept returning FI_EAGAIN");
  }

  // Reads a batch of completions into `entries`: the count (at least 1), or
  // 0 if there was none; fails on a completion error. Inline: it runs on
  // every poll of the measured loops.
  ssize_t read_cq(fi_cq_data_entry* entries, size_t count) {
    const ssize_t n = fi_cq_read(cq_, entries, count);
    if (n > 0) return n;
    if (n == 0 || n == -FI_EAGAIN) return 0;
    cq_error(n);
  }

  // Immediate data with this rank in the upper half (as LCI's header).
  uint64_t rank_bits() const { return rank_bits_; }
  fi_addr_t addr(int rank) const { return addrs_[static_cast<size_t>(rank)]; }

  fid_ep* ep_ = nullptr;
  fid_cq* cq_ = nullptr;

 private:
  [[noreturn]] void cq_error(ssize_t rc);

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  std::vector<fid_mr*> mrs_;
  std::vector<void*> buffers_;
  size_t inject_size_ = 0;
  bool prov_key_ = false, mr_endpoint_ = false, virt_addr_ = false;
  std::vector<fi_addr_t> addrs_;
  uint64_t rank_bits_ = 0;
  std::string provider_;
};

}  // namespace ofi_bench
